-- Derived tables: every row here can be dropped and rebuilt by replaying events.
CREATE TABLE IF NOT EXISTS sessions (
  session_id      VARCHAR PRIMARY KEY,
  project         VARCHAR,
  source          VARCHAR NOT NULL,
  title           VARCHAR,
  started_at      TIMESTAMP,
  ended_at        TIMESTAMP,
  message_count   INTEGER NOT NULL,
  meta_json       JSON,
  ingest_event_id VARCHAR NOT NULL,
  ingested_at     TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at);

CREATE TABLE IF NOT EXISTS messages (
  session_id      VARCHAR NOT NULL,
  message_index   INTEGER NOT NULL,
  role            VARCHAR NOT NULL,
  text            VARCHAR NOT NULL,
  ts              TIMESTAMP,
  uuid            VARCHAR,
  parent_uuid     VARCHAR,
  is_sidechain    BOOLEAN DEFAULT FALSE,
  tool_calls_json JSON,
  meta_json       JSON,
  PRIMARY KEY (session_id, message_index)
);

CREATE TABLE IF NOT EXISTS entries (
  entry_id      VARCHAR PRIMARY KEY,
  created_ts    TIMESTAMP NOT NULL,
  entry_type    VARCHAR NOT NULL,
  title         VARCHAR NOT NULL,
  content_json  JSON NOT NULL,
  stage         VARCHAR NOT NULL,
  status        VARCHAR DEFAULT 'active',
  superseded_by VARCHAR,
  build_id      VARCHAR,
  evidence_json JSON,
  canonical_key VARCHAR,
  session_id    VARCHAR,
  created_at    TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_entries_type ON entries(entry_type);
CREATE INDEX IF NOT EXISTS idx_entries_stage ON entries(stage);

CREATE TABLE IF NOT EXISTS entities (
  entity_id     VARCHAR PRIMARY KEY,
  entity_type   VARCHAR NOT NULL,
  canonical_key VARCHAR NOT NULL,
  title         VARCHAR NOT NULL,
  stage         VARCHAR NOT NULL,
  status        VARCHAR NOT NULL,
  current_json  JSON NOT NULL,
  title_norm    VARCHAR,
  search_text   VARCHAR,
  created_at    TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at    TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_entities_type_key ON entities(entity_type, canonical_key);
CREATE INDEX IF NOT EXISTS idx_entities_status ON entities(status);

CREATE TABLE IF NOT EXISTS entity_aliases (
  entity_type   VARCHAR NOT NULL,
  canonical_key VARCHAR NOT NULL,
  entity_id     VARCHAR NOT NULL,
  is_primary    BOOLEAN DEFAULT FALSE,
  created_at    TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (entity_type, canonical_key)
);

CREATE TABLE IF NOT EXISTS edges (
  edge_id    VARCHAR PRIMARY KEY,
  src_type   VARCHAR NOT NULL,
  src_id     VARCHAR NOT NULL,
  rel_type   VARCHAR NOT NULL,
  dst_type   VARCHAR NOT NULL,
  dst_id     VARCHAR NOT NULL,
  meta_json  JSON,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_edges_src_rel ON edges(src_id, rel_type);
CREATE INDEX IF NOT EXISTS idx_edges_dst_rel ON edges(dst_id, rel_type);

CREATE TABLE IF NOT EXISTS vector_outbox (
  job_id            VARCHAR PRIMARY KEY,
  item_kind         VARCHAR NOT NULL,
  item_id           VARCHAR NOT NULL,
  embedding_version VARCHAR NOT NULL,
  status            VARCHAR NOT NULL,
  attempts          INTEGER DEFAULT 0,
  error             VARCHAR,
  created_at        TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at        TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  UNIQUE (item_kind, item_id, embedding_version)
);
CREATE INDEX IF NOT EXISTS idx_outbox_status ON vector_outbox(status);

CREATE TABLE IF NOT EXISTS build_runs (
  build_id              VARCHAR PRIMARY KEY,
  started_at            TIMESTAMP NOT NULL,
  finished_at           TIMESTAMP,
  extractor_model       VARCHAR NOT NULL,
  extractor_prompt_hash VARCHAR NOT NULL,
  embedder_model        VARCHAR NOT NULL,
  embedding_version     VARCHAR NOT NULL,
  idris_version         VARCHAR NOT NULL,
  schema_version        VARCHAR NOT NULL,
  status                VARCHAR NOT NULL,
  error                 VARCHAR
);

CREATE TABLE IF NOT EXISTS decisions (
  decision_id  VARCHAR PRIMARY KEY,
  ts           TIMESTAMP NOT NULL,
  actor        VARCHAR NOT NULL,
  action       VARCHAR NOT NULL,
  outcome_json JSON,
  confidence   DOUBLE,
  build_id     VARCHAR,
  created_at   TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE IF NOT EXISTS decision_evidence (
  id             VARCHAR PRIMARY KEY,
  decision_id    VARCHAR NOT NULL,
  evidence_kind  VARCHAR NOT NULL,
  evidence_id    VARCHAR NOT NULL,
  evidence_stage VARCHAR NOT NULL,
  role           VARCHAR NOT NULL,
  CHECK (evidence_stage IN ('verified', 'certified'))
);

CREATE TABLE IF NOT EXISTS conflicts (
  conflict_id   VARCHAR PRIMARY KEY,
  older_id      VARCHAR NOT NULL,
  newer_id      VARCHAR NOT NULL,
  conflict_type VARCHAR NOT NULL,
  reason        VARCHAR,
  detected_at   TIMESTAMP NOT NULL,
  resolved_at   TIMESTAMP,
  resolution    VARCHAR,
  resolved_by   VARCHAR
);

CREATE TABLE IF NOT EXISTS pipeline_metrics (
  id         VARCHAR PRIMARY KEY,
  ts         TIMESTAMP NOT NULL,
  stage      VARCHAR NOT NULL,
  latency_ms DOUBLE NOT NULL,
  success    BOOLEAN NOT NULL,
  error      VARCHAR,
  session_id VARCHAR
);
