-- Conflicts: what the conflicts table (0002) lacked, and the facts detection compares.
ALTER TABLE conflicts ADD COLUMN status VARCHAR DEFAULT 'open';
ALTER TABLE conflicts ADD COLUMN subject VARCHAR;
ALTER TABLE conflicts ADD COLUMN note VARCHAR;
ALTER TABLE conflicts ADD COLUMN detected_event_id VARCHAR;

-- One row per fact or decision entry: its subject and value as extracted, and whether it
-- is still believed. Owned by axiom.conflicts.projector; rebuilt by replay.
CREATE TABLE IF NOT EXISTS conflict_facts (
  entry_id       VARCHAR PRIMARY KEY,
  session_id     VARCHAR,
  entry_type     VARCHAR NOT NULL,
  title          VARCHAR NOT NULL,
  content        VARCHAR NOT NULL,
  canonical_key  VARCHAR,
  subject        VARCHAR,
  value          VARCHAR,
  previous_value VARCHAR,
  said_at        TIMESTAMP,
  created_ts     TIMESTAMP NOT NULL,
  status         VARCHAR NOT NULL DEFAULT 'active'
);
CREATE INDEX IF NOT EXISTS idx_conflict_facts_type ON conflict_facts(entry_type);

-- When an entry's source was written (its latest quoted message): what "as of" filters on.
ALTER TABLE entries ADD COLUMN said_at TIMESTAMP;
