-- Events a projector could not apply (axiom/store/projection.py): the projector records
-- the failure here and moves on, so one poison event no longer jams every projection.
-- Derived like the tables it describes: rebuild clears a projector's rows and replays.
CREATE TABLE IF NOT EXISTS projection_errors (
  projector_name VARCHAR NOT NULL,
  event_id       VARCHAR NOT NULL,
  event_type     VARCHAR NOT NULL,
  event_ts       TIMESTAMP NOT NULL,
  error          VARCHAR NOT NULL,
  PRIMARY KEY (projector_name, event_id)
);
