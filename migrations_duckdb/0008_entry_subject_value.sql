-- What a fact or decision entry states (axiom/extract/types.py FactFields), for conflict
-- detection: who or what it is about, the stated value, the value a change replaced, and
-- whether it is a denial ("no longer ..."). NULL/FALSE for entries whose rule stated none
-- and for entries created before these columns existed (their events carry no such keys).
ALTER TABLE entries ADD COLUMN subject VARCHAR;
ALTER TABLE entries ADD COLUMN value VARCHAR;
ALTER TABLE entries ADD COLUMN previous_value VARCHAR;
ALTER TABLE entries ADD COLUMN negated BOOLEAN DEFAULT FALSE;
