"""`POST /api/v1/hooks` through Django's test client: the API token is required, a
payload Axiom cannot use (or naming a transcript outside AXIOM_IMPORT_ROOTS) is a 422 that
stores nothing, a Stop stores its transcript once (queued for a real worker when a broker
is configured, in the request when none is or it does not answer), and a SessionStart
answers with the project's memories and their `mem:` citations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from axiom.agent import drain as hook_spool
from axiom.agent import spool
from axiom.agent.context import HEADER
from axiom.ingest.importer import import_paths
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from config import stores
from tests.queue.conftest import (  # noqa: F401 - fixtures: a real broker and worker
    broker,
    celery_app,
    point_app_at,
    worker,
)

URL = "/api/v1/hooks"
SAMPLE_CWD = "/home/dev/axiom"


@pytest.fixture(autouse=True)
def _transcripts_inside_the_import_roots(monkeypatch, sample_session: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AXIOM_IMPORT_ROOTS", str(sample_session.parent.resolve()))
    monkeypatch.delenv("AXIOM_BROKER_URL", raising=False)  # the broker tests set their own


def post(client, body: object, token: str | None = None):  # type: ignore[no-untyped-def]
    """POST with `token`, the site's API token by default ("" sends none)."""
    token = stores.get_api_token() if token is None else token
    extra = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    return client.post(URL, json.dumps(body), content_type="application/json", **extra)


def hook(event: str, transcript: Path, **extra: object) -> dict:
    payload = {
        "session_id": transcript.stem,
        "transcript_path": str(transcript),
        "cwd": SAMPLE_CWD,
        "hook_event_name": event,
        **extra,
    }
    return {"event": event, "payload": payload}


def counts(db) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        return (
            conn.execute("SELECT count(*) FROM sessions").fetchone()[0],
            conn.execute("SELECT count(*) FROM events").fetchone()[0],
        )


def test_a_wrong_or_missing_token_is_a_401_when_a_token_is_set(
    client, site, settings, sample_session: Path
):
    settings.AXIOM_AUTH_TOKEN = "s3cret-token"
    body = hook("Stop", sample_session, stop_hook_active=False)
    assert post(client, body, "wrong-token").status_code == 401
    assert post(client, body, "").status_code == 401
    assert counts(site) == (0, 0)
    ok = post(client, body, "s3cret-token")
    assert ok.status_code == 200, ok.content
    assert ok.json()["imported"] == [sample_session.stem]


@pytest.mark.parametrize(
    "body",
    [
        {"event": "Stop"},  # no payload
        {"event": "Stop", "payload": ["not", "an", "object"]},
        {"payload": {"session_id": "x"}},  # no event
        {"event": "Stop", "payload": {"transcript_path": "/nowhere/gone.jsonl"}},
    ],
)
def test_a_payload_axiom_cannot_use_is_a_422_and_stores_nothing(client, site, body):
    response = post(client, body)
    assert response.status_code == 422, response.content
    assert "detail" in response.json()
    assert counts(site) == (0, 0)


def test_a_transcript_outside_the_import_roots_is_refused(client, site, tmp_path: Path):
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("{}\n", encoding="utf-8")
    response = post(client, hook("Stop", outside, stop_hook_active=False))
    assert response.status_code == 422, response.content
    assert "outside the import roots" in response.json()["detail"]
    assert counts(site) == (0, 0)


def test_a_stop_stores_its_transcript_once(client, site, sample_session: Path):
    body = hook("Stop", sample_session, stop_hook_active=False)
    first = post(client, body)
    assert first.status_code == 200
    assert first.json() == {
        "accepted": True,
        "event": "Stop",
        "imported": [sample_session.stem],
        "new_sessions": 1,
        "queued": None,
        "context": "",
    }
    stored = counts(site)
    again = post(client, body)
    assert again.status_code == 200
    assert (again.json()["imported"], again.json()["new_sessions"]) == ([sample_session.stem], 0)
    assert counts(site) == stored == (1, stored[1])


def test_session_start_answers_with_the_projects_memories(client, site, sample_session: Path):
    (sid,) = import_paths(site, [sample_session]).session_ids
    process_session(site, sid, configured_pipeline())
    response = post(client, hook("SessionStart", sample_session, source="startup"))
    assert response.status_code == 200
    context = response.json()["context"]
    lines = context.splitlines()
    assert lines[0] == HEADER
    assert 1 <= len(lines) - 1 <= 5
    assert all("(mem:" in line and "verified" in line for line in lines[1:])
    elsewhere = post(client, hook("SessionStart", sample_session, cwd="/some/other/project"))
    assert elsewhere.json()["context"] == ""  # nothing known there: no noise


def session_ids(db) -> list[str]:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        return [r[0] for r in conn.execute("SELECT session_id FROM sessions").fetchall()]


def test_under_a_broker_a_stop_is_answered_at_once_and_the_worker_imports_it(
    client,
    site,
    data_dir: Path,
    sample_session: Path,
    celery_app,  # noqa: F811 - the fixture imported above
    worker,  # noqa: F811 - the fixture imported above
    monkeypatch,
):
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")  # the worker's pipeline, not a model
    body = hook("Stop", sample_session, stop_hook_active=False)
    answer = post(client, body).json()
    assert answer["queued"] and (answer["imported"], answer["new_sessions"]) == ([], 0)
    done = celery_app.AsyncResult(answer["queued"]).get(timeout=60)
    expected = {"payloads": 1, "transcripts": 1, "session_ids": [sample_session.stem]}
    assert done == {**expected, "failed": []}
    assert session_ids(site) == [sample_session.stem]
    again = post(client, body).json()  # the same transcript handed over again
    assert celery_app.AsyncResult(again["queued"]).get(timeout=60) == {**expected, "failed": []}
    assert session_ids(site) == [sample_session.stem]
    assert spool.pending(data_dir) == [] and not (data_dir / "spool" / "failed").exists()
    with site.read() as conn:  # the worker ran the memory pipeline over it
        builds = "SELECT count(*) FROM events WHERE event_type = 'build_finished'"
        assert conn.execute(builds).fetchone()[0] >= 1


def test_a_queued_import_the_broker_loses_waits_in_the_spool(
    client,
    site,
    data_dir: Path,
    sample_session: Path,
    celery_app,  # noqa: F811 - the fixture imported above: a broker, no worker
):
    answer = post(client, hook("Stop", sample_session, stop_hook_active=False)).json()
    assert answer["queued"]
    (record,) = spool.pending(data_dir)
    assert session_ids(site) == []
    assert hook_spool.drain(site, data_dir).session_ids == [sample_session.stem]  # as `up` does
    assert session_ids(site) == [sample_session.stem] and not record.exists()


def test_with_the_broker_down_the_stop_is_imported_in_the_request(
    client,
    site,
    data_dir: Path,
    sample_session: Path,
    celery_app,  # noqa: F811 - the fixture imported above
    monkeypatch,
):
    monkeypatch.setenv("AXIOM_BROKER_URL", "redis://127.0.0.1:9/0")  # nothing listens there
    point_app_at(celery_app, "redis://127.0.0.1:9/0")
    response = post(client, hook("Stop", sample_session, stop_hook_active=False))
    assert response.status_code == 200, response.content
    assert (response.json()["queued"], response.json()["imported"]) == (None, [sample_session.stem])
    assert session_ids(site) == [sample_session.stem]
    assert spool.pending(data_dir) == []  # the record written before the send is gone
