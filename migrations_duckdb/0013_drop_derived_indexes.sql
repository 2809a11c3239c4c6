-- Secondary indexes of the derived tables whose filters match many rows (a type, a stage,
-- a status) or that no read filters on. DuckDB 1.4 writes a table's ART indexes again
-- whole at every checkpoint, and every writer checkpoints at commit: on a table of a
-- million rows, two such indexes made a commit of a thousand new rows cost ~200 ms
-- instead of ~40 (README, "Session 25"). Their reads scan as fast, skipping row groups by
-- their min/max. Kept: the primary and unique keys, the citations' `entry_id` and the
-- edges' `(src_id, rel_type)` / `(dst_id, rel_type)`, point lookups of a few rows.
DROP INDEX IF EXISTS idx_sessions_started;
DROP INDEX IF EXISTS idx_entries_type;
DROP INDEX IF EXISTS idx_entries_stage;
DROP INDEX IF EXISTS idx_entities_type_key;
DROP INDEX IF EXISTS idx_entities_status;
DROP INDEX IF EXISTS idx_edges_rel;
DROP INDEX IF EXISTS idx_outbox_status;
DROP INDEX IF EXISTS idx_conflict_facts_type;
