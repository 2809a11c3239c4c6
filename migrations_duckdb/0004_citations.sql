-- One row per cited evidence span. Ids are short (mem: + 6-8 url-safe characters), derived
-- from the span's identity, lengthened only on collision, and never change once assigned.
CREATE TABLE IF NOT EXISTS citations (
  citation_id   VARCHAR PRIMARY KEY,
  span_key      VARCHAR NOT NULL UNIQUE,
  entry_id      VARCHAR NOT NULL,
  session_id    VARCHAR NOT NULL,
  message_index INTEGER NOT NULL,
  span_start    INTEGER NOT NULL,
  span_end      INTEGER NOT NULL,
  quote_hash    VARCHAR NOT NULL,
  method        VARCHAR,
  confidence    DOUBLE,
  created_at    TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_citations_entry ON citations(entry_id);
