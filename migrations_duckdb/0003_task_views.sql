-- Read-side views over the task projection (entities / edges written by TaskProjector).
-- Views hold no data, so they survive `rebuild` untouched.

CREATE INDEX IF NOT EXISTS idx_edges_rel ON edges(rel_type);

-- Effective blockers: every `blocked_by` edge of a task, with a blocker that is a
-- condition which `resolves_to` something replaced by what it resolves to (followed
-- transitively, at most 8 hops; a cycle stops at the last entity not yet visited).
-- One row per (task, declared blocker, effective blocker).
CREATE OR REPLACE VIEW v_task_blockers_effective AS
WITH RECURSIVE chain(task_id, declared_id, blocker_id, depth, path) AS (
  SELECT b.src_id, b.dst_id, b.dst_id, 0, [b.dst_id]
  FROM edges b
  WHERE b.rel_type = 'blocked_by'
  UNION ALL
  SELECT c.task_id, c.declared_id, r.dst_id, c.depth + 1, list_append(c.path, r.dst_id)
  FROM chain c
  JOIN edges r ON r.src_id = c.blocker_id AND r.rel_type = 'resolves_to'
  WHERE c.depth < 8 AND NOT list_contains(c.path, r.dst_id)
)
SELECT
  c.task_id,
  c.declared_id                                   AS declared_blocker_id,
  d.entity_type                                   AS declared_blocker_type,
  c.blocker_id                                    AS blocker_id,
  e.entity_type                                   AS blocker_type,
  e.title                                         AS blocker_title,
  json_extract_string(e.current_json, '$.status') AS blocker_status,
  c.depth > 0                                     AS via_resolution,
  coalesce(json_extract(d.current_json, '$.auto_placeholder')::BOOLEAN, FALSE)
                                                  AS auto_placeholder
FROM chain c
LEFT JOIN entities d ON d.entity_id = c.declared_id
LEFT JOIN entities e ON e.entity_id = c.blocker_id
WHERE NOT EXISTS (
  SELECT 1 FROM edges r
  WHERE r.src_id = c.blocker_id AND r.rel_type = 'resolves_to'
    AND NOT list_contains(c.path, r.dst_id) AND c.depth < 8
);

-- Tasks whose folded status is `blocked`, one row per effective blocker.
CREATE OR REPLACE VIEW v_blocked_tasks AS
SELECT
  t.entity_id AS task_id,
  t.title,
  json_extract_string(t.current_json, '$.project')  AS project,
  json_extract_string(t.current_json, '$.priority') AS priority,
  v.declared_blocker_id,
  v.declared_blocker_type,
  v.blocker_id,
  v.blocker_type,
  v.blocker_title,
  v.via_resolution,
  v.auto_placeholder
FROM entities t
LEFT JOIN v_task_blockers_effective v ON v.task_id = t.entity_id
WHERE t.entity_type = 'task'
  AND json_extract_string(t.current_json, '$.status') = 'blocked';

-- Conditions that resolve to another entity (`condition_resolved_to`).
CREATE OR REPLACE VIEW v_resolved_conditions AS
SELECT
  c.entity_id                                       AS condition_id,
  c.title                                           AS condition_text,
  r.dst_id                                          AS target_id,
  t.entity_type                                     AS target_type,
  t.title                                           AS target_title,
  json_extract_string(r.meta_json, '$.reason')      AS reason,
  json_extract_string(r.meta_json, '$.event_id')    AS event_id,
  r.created_at                                      AS resolved_at
FROM edges r
JOIN entities c ON c.entity_id = r.src_id AND c.entity_type = 'condition'
LEFT JOIN entities t ON t.entity_id = r.dst_id
WHERE r.rel_type = 'resolves_to';
