-- Secondary indexes of the derived tables that no read scans through: those on a type, a
-- stage or a status (their filters match too many rows for an index scan, or carry other
-- conditions, which DuckDB 1.4 does not use an index with), the edges' two-column ones
-- (DuckDB 1.4 scans through single-column indexes only) and two nothing filters on.
-- DuckDB 1.4 writes a table's ART indexes again whole at every checkpoint, and every
-- writer checkpoints at commit: on tables of a million rows, the commit of a build-like
-- unit took ~470 ms with them, ~170 without (README, "Session 25"). Kept: the primary and
-- unique keys, and `citations.entry_id` (a point lookup per search result).
DROP INDEX IF EXISTS idx_sessions_started;
DROP INDEX IF EXISTS idx_entries_type;
DROP INDEX IF EXISTS idx_entries_stage;
DROP INDEX IF EXISTS idx_entities_type_key;
DROP INDEX IF EXISTS idx_entities_status;
DROP INDEX IF EXISTS idx_edges_src_rel;
DROP INDEX IF EXISTS idx_edges_dst_rel;
DROP INDEX IF EXISTS idx_edges_rel;
DROP INDEX IF EXISTS idx_outbox_status;
DROP INDEX IF EXISTS idx_conflict_facts_type;
