-- The work a build took: the sum of its pipeline stages (analysis outside the write lock
-- included). finished_at - started_at is only the write, which holds both events at once
-- when a build is written in one flush. Owned by axiom.builds.projector; rebuilt by replay.
ALTER TABLE build_runs ADD COLUMN work_ms DOUBLE;
-- Replay the builds projector so runs stored before fill work_ms as a rebuild would: its fold
-- skips the runs and metrics it finds stored and updates each run's finish.
DELETE FROM projection_offsets WHERE projector_name = 'builds';
