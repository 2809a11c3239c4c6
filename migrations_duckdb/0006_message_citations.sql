-- Message-level citations: one per ingested message, the span being the whole message, so
-- a search hit on a raw message carries a citation that opens it (`cite`, /c/<id>/,
-- GET /api/v1/citations/{id}) like an entry's evidence span does.
--
-- They live beside `citations` rather than in it with a NULL entry_id: `citations` means
-- "a span some memory cites" to the pages that mark cited spans, and DuckDB 1.4.4 refuses
-- `ALTER COLUMN entry_id DROP NOT NULL` while idx_citations_entry exists, and aborts the
-- process when the index is dropped, the column altered and the index re-created in one
-- transaction (the migration runner's). Ids share one namespace with `citations`
-- (axiom/evidence/citations.py checks both tables) and are 8-10 characters long where
-- entry citations are 6-8, so adding these never takes an id an entry span had.
CREATE TABLE IF NOT EXISTS message_citations (
  citation_id   VARCHAR PRIMARY KEY,
  span_key      VARCHAR NOT NULL UNIQUE,
  session_id    VARCHAR NOT NULL,
  message_index INTEGER NOT NULL,
  span_end      INTEGER NOT NULL,
  quote_hash    VARCHAR NOT NULL,
  created_at    TIMESTAMP NOT NULL
);

-- The citations projector now also folds `session_ingested`: replay it from the start so
-- sessions ingested before this migration get their message citations. Entry citations
-- are unaffected: their ids are looked up by span_key and inserts do nothing on conflict.
DELETE FROM projection_offsets WHERE projector_name = 'citations';
