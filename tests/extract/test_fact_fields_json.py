"""ExtractedEntry's fact fields round-trip through JSON, and old payloads read unchanged."""

from __future__ import annotations

import pytest

from axiom.extract.types import ExtractedEntry, ExtractedEvidence, FactFields


def _entry(fact: FactFields | None = None) -> ExtractedEntry:
    return ExtractedEntry.create(
        "s",
        "fact",
        "Rate limit is now 100 per minute",
        "c",
        (ExtractedEvidence(0, "q"),),
        fact=fact,
    )


def test_fact_fields_round_trip_through_json() -> None:
    entry = _entry(FactFields("rate limit of the api", "100 per minute", "50 per minute"))
    data = entry.to_json()
    assert data["subject"] == "rate limit of the api" and "negated" not in data
    assert ExtractedEntry.from_json(data) == entry
    negation = _entry(FactFields("cache", None, "Redis", negated=True))
    assert ExtractedEntry.from_json(negation.to_json()) == negation


def test_an_old_payload_without_fact_keys_reads_as_none_and_keeps_its_id() -> None:
    old = _entry().to_json()
    assert set(old) == {"entry_id", "type", "title", "content", "evidence", "task"}
    entry = ExtractedEntry.from_json(old)
    assert (entry.subject, entry.value, entry.previous_value, entry.negated) == (
        None,
        None,
        None,
        False,
    )
    assert entry.entry_id == _entry(FactFields("x", "y")).entry_id


def test_malformed_fact_fields_are_refused() -> None:
    data = _entry().to_json()
    with pytest.raises(ValueError):
        ExtractedEntry.from_json({**data, "subject": 3})
    with pytest.raises(ValueError):
        ExtractedEntry.from_json({**data, "negated": "yes"})
