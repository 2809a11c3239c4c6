-- The outbox remembers which event last set each job's content, so a newer version of an
-- item (a renamed task, a message whose text changed in a re-import) re-queues its job,
-- while replaying older events (a rebuild) changes nothing. See axiom/outbox/projector.py.
ALTER TABLE vector_outbox ADD COLUMN source_event_id VARCHAR;  -- event that set the content
ALTER TABLE vector_outbox ADD COLUMN content_hash VARCHAR;     -- sha1 of the document text
