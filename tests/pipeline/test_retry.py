"""A build whose extraction was cut short (LLM timeout, reply that is not JSON) is recorded
as failed with its reason, and `python -m axiom process` runs it again until it succeeds;
after that, processing appends nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from axiom.cli.main import main
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.store.migrate import open_database

GOOD_REPLY = json.dumps(
    {
        "entries": [
            {
                "type": "decision",
                "title": "Use DuckDB for events",
                "content": "The event store is DuckDB.",
                "evidence": [{"messageIndex": 0, "quote": "We decided to use DuckDB for events."}],
            }
        ]
    }
)


def _state() -> tuple[list[tuple], int, int]:
    with open_database().read() as conn:
        builds = conn.execute("SELECT status, error FROM build_runs").fetchall()
        entries = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return builds, entries, events


@pytest.mark.parametrize(
    ("broken", "reason"),
    [({"delay": 1.0}, "timed out after 0.3s"), ({"reply": "I'd rather not."}, "not valid JSON")],
)
def test_a_failed_build_is_retried_by_process_until_it_succeeds(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_llm,
    capsys: pytest.CaptureFixture[str],
    broken: dict,
    reason: str,
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    monkeypatch.setenv("AXIOM_LLM_URL", fake_llm.url)
    monkeypatch.setenv("AXIOM_LLM_TIMEOUT", "0.3")
    messages = (Message(0, "user", "We decided to use DuckDB for events."),)
    ingest_transcripts(open_database(), [Transcript("r1", "demo", "json", messages)])
    for name, value in broken.items():
        setattr(fake_llm, name, value)

    for _attempt in (1, 2):  # each failed attempt is recorded and does not stop the next
        assert main(["process"]) == 1
        assert reason in capsys.readouterr().out
        builds, entries, _ = _state()
        assert len(builds) == 1 and builds[0][0] == "failed" and reason in builds[0][1]
        assert entries == 0
    assert fake_llm.calls == 2

    fake_llm.delay, fake_llm.reply = 0.0, GOOD_REPLY
    assert main(["process"]) == 0
    assert "processed 1 session(s) (1 entries)" in capsys.readouterr().out
    builds, entries, events = _state()
    assert builds == [("success", None)] and entries == 1

    assert main(["process"]) == 0
    assert "1 already up to date" in capsys.readouterr().out
    assert _state() == (builds, entries, events) and fake_llm.calls == 3
    with open_database().read() as conn:
        finished = conn.execute(
            "SELECT json_extract_string(payload_json, '$.status') FROM events"
            " WHERE event_type = 'build_finished' ORDER BY ts"
        ).fetchall()
        failed_metric = conn.execute(
            "SELECT count(*) FROM pipeline_metrics WHERE stage = 'extract' AND NOT success"
        ).fetchone()[0]
    assert [f[0] for f in finished] == ["failed", "failed", "success"]
    assert failed_metric == 2
