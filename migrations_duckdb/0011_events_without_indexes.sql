-- The event log and its dedupe table without PRIMARY KEY or indexes. DuckDB 1.4 serializes
-- every ART index of a changed table at each checkpoint, and Axiom checkpoints on every
-- close of a write unit, so each write paid for indexes over the whole log
-- (duckdb/duckdb#24848). They bought nothing: uniqueness is kept by the writer
-- (`EventStore.append_many` reads the stored dedupe keys and drops the batch's repeats under
-- the exclusive lock; event ids are `ev_` + a sequence number), and the reads never used
-- them (a key list is a hash join over a scan; ids and times follow insertion order, so a
-- scan's zone maps skip what a lookup by id or time does not need).
-- Rebuilt in insertion order (rowid), with the columns, defaults and NOT NULLs of 0001.
CREATE TABLE events_0011 (
  event_id         VARCHAR NOT NULL,
  seq              BIGINT NOT NULL,
  ts               TIMESTAMP NOT NULL,
  event_type       VARCHAR NOT NULL,
  actor            VARCHAR NOT NULL,
  session_id       VARCHAR,
  payload_json     JSON NOT NULL,
  payload_redacted JSON,
  sensitivity      VARCHAR DEFAULT 'normal',
  checksum         VARCHAR NOT NULL,
  build_id         VARCHAR,
  dedupe_key       VARCHAR,
  created_at       TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO events_0011 SELECT * FROM events ORDER BY rowid;
DROP INDEX IF EXISTS idx_events_ts;
DROP INDEX IF EXISTS idx_events_type;
DROP INDEX IF EXISTS idx_events_session;
DROP TABLE events;
ALTER TABLE events_0011 RENAME TO events;

CREATE TABLE event_dedup_0011 (
  dedupe_key VARCHAR NOT NULL,
  event_id   VARCHAR NOT NULL,
  ts         TIMESTAMP NOT NULL,
  event_type VARCHAR NOT NULL
);
INSERT INTO event_dedup_0011 SELECT * FROM event_dedup ORDER BY rowid;
DROP TABLE event_dedup;
ALTER TABLE event_dedup_0011 RENAME TO event_dedup;
