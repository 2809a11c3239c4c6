-- The event log's secondary indexes served almost no read: DuckDB 1.4 answers the lookups
-- by session and time (`axiom/store/events.py`) with scans, as fast without them on a
-- million events; only a filter on the type alone (`tombstoned`, once per import unit)
-- ran as an index scan, a few ms faster. Every append maintained three more ART indexes
-- and every checkpoint wrote them again (README, "Session 24"). The primary key stays.
DROP INDEX IF EXISTS idx_events_ts;
DROP INDEX IF EXISTS idx_events_type;
DROP INDEX IF EXISTS idx_events_session;
