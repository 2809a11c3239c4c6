"""The API's answers over real HTTP from `manage.py runserver` (the whole middleware stack
and a real client, no test client): who may write is settled before what was sent, and
sessions page with limit/offset like entries, page/per_page still working."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from axiom.ingest.importer import ingest_transcripts
from axiom.store.api_token import ensure_api_token
from tests.live_server import migrated_store, runserver
from tests.viewer.conftest import synthetic_transcript

APPROVE = "/api/v1/entries/ent_nope/approve"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base URL, API token) of a runserver over a store of 7 sessions."""
    root = tmp_path_factory.mktemp("http")
    data, database = migrated_store(root)
    ingest_transcripts(database, [synthetic_transcript(n) for n in range(7)])
    token = ensure_api_token(data)
    log: Path = root / "runserver.log"
    with runserver(data, log) as base:
        yield base, token
    assert "Traceback" not in log.read_text(), log.read_text()


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_write_without_the_token_is_401_before_its_content_type(
    live: tuple[str, str], content_type: str
) -> None:
    base, token = live
    headers = {"Content-Type": content_type}
    anonymous = requests.post(base + APPROVE, data="approved_by=ana", headers=headers, timeout=30)
    assert anonymous.status_code == 401 and anonymous.json() == {"detail": "Unauthorized"}
    signed = {**headers, "Authorization": f"Bearer {token}"}
    with_token = requests.post(base + APPROVE, data="approved_by=ana", headers=signed, timeout=30)
    assert with_token.status_code == 415
    assert "application/json" in with_token.json()["detail"]
    cross_site = {**headers, "Origin": "http://evil.example"}
    refused = requests.post(base + APPROVE, data="approved_by=ana", headers=cross_site, timeout=30)
    assert refused.status_code == 403  # another page's form: refused before anything else


def test_sessions_page_with_limit_offset_and_page_per_page(live: tuple[str, str]) -> None:
    base, _ = live

    def ids(**query: int) -> tuple[list[str], dict]:
        body = requests.get(f"{base}/api/v1/sessions", params=query, timeout=30).json()
        return [s["session_id"] for s in body["items"]], body

    everything, _ = ids(limit=200)
    assert len(everything) == 7
    window, body = ids(limit=3, offset=3)
    assert window == everything[3:6]
    assert (body["limit"], body["offset"], body["total"], body["has_next"]) == (3, 3, 7, True)
    assert ids(page=2, per_page=3)[0] == window  # the older form, same rows
    assert ids(limit=3, page=2)[0] == window  # mixed: limit sets the page size


@pytest.mark.parametrize("path", ["/api/v1/tasks", "/api/v1/entries", "/api/v1/conflicts"])
@pytest.mark.parametrize("as_of", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"])
def test_an_as_of_past_the_range_of_dates_is_answered_not_500(
    live: tuple[str, str], path: str, as_of: str
) -> None:
    """In UTC the first lies after 9999-12-31: read as the end of time, not a crash (the
    schema documents a date-time, so any valid one gets an answer)."""
    base, _ = live
    answer = requests.get(base + path, params={"as_of": as_of}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert isinstance(answer.json(), list | dict)
