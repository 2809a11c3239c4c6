-- The source of truth. Rows are only ever inserted (see axiom/store/events.py); the one
-- documented exception is `forget`, which rewrites payload_json of targeted events.
CREATE SEQUENCE IF NOT EXISTS events_seq START 1;

CREATE TABLE IF NOT EXISTS events (
  event_id         VARCHAR PRIMARY KEY,
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
CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts);
CREATE INDEX IF NOT EXISTS idx_events_type ON events(event_type);
CREATE INDEX IF NOT EXISTS idx_events_session ON events(session_id);

CREATE TABLE IF NOT EXISTS event_dedup (
  dedupe_key VARCHAR PRIMARY KEY,
  event_id   VARCHAR NOT NULL,
  ts         TIMESTAMP NOT NULL,
  event_type VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS projection_offsets (
  projector_name VARCHAR PRIMARY KEY,
  last_ts        TIMESTAMP,
  last_event_id  VARCHAR
);
