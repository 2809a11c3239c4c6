"""As of a time: memories built from messages written by then, conflicts known then."""

from __future__ import annotations

import json
from pathlib import Path

from django.urls import reverse

from axiom.conflicts.commands import resolve
from axiom.conflicts.queries import list_conflicts
from axiom.entries.queries import list_entries
from axiom.store.db import Database
from tests.cli_support import run_cli
from tests.conflicts.support import Said, run_sessions

MARCH = Said(
    "Use Postgres for the reporting warehouse of the finance team", when="2026-03-10T09:00:00Z"
)
APRIL = Said(
    "Switched the reporting warehouse of the finance team from Postgres to ClickHouse",
    when="2026-04-20T16:30:00+02:00",
)


def _setup(db: Database, tmp_path: Path) -> str:
    run_sessions(db, tmp_path, {"march": [MARCH], "april": [APRIL]})
    with db.read() as conn:
        (conflict,) = list_conflicts(conn, "open")
    return conflict.conflict_id


def test_as_of_before_the_second_session_shows_only_the_first(
    client, site: Database, data_dir: Path, tmp_path: Path
) -> None:
    cid = _setup(site, tmp_path)
    resolve(site, cid, "keep_newer", "ana")

    listing = run_cli(data_dir, "entries", "--as-of", "2026-04-15", "--json")
    assert listing.returncode == 0, listing.stderr
    rows = [json.loads(line) for line in listing.stdout.splitlines()]
    assert [(r["title"], r["status"]) for r in rows] == [(MARCH.text, "active")]
    now = [json.loads(line) for line in run_cli(data_dir, "entries", "--json").stdout.splitlines()]
    assert {(r["title"], r["status"]) for r in now} == {
        (MARCH.text, "superseded"),
        (APRIL.text, "active"),
    }
    # The day of the second session counts to its end; the time zone is respected.
    assert (
        run_cli(
            data_dir, "conflicts", "--status", "all", "--as-of", "2026-04-20T14:29Z", "--json"
        ).stdout.strip()
        == "[]"
    )
    (then,) = json.loads(
        run_cli(data_dir, "conflicts", "--status", "all", "--as-of", "2026-04-20", "--json").stdout
    )
    assert then["status"] == "open" and then["resolution"] is None  # resolved later
    assert run_cli(data_dir, "entries", "--as-of", "April").returncode == 1

    page = client.get(reverse("viewer-entries"), {"as_of": "2026-04-15"}).content.decode()
    assert MARCH.text in page and APRIL.text not in page and 'type="date"' in page
    with site.read() as conn:
        ids = {e.title: e.entry_id for e in list_entries(conn)}
    assert (
        client.get(
            reverse("viewer-entry", args=[ids[APRIL.text]]), {"as_of": "2026-04-15"}
        ).status_code
        == 404
    )
    assert (
        cid not in client.get(reverse("viewer-conflicts"), {"as_of": "2026-04-15"}).content.decode()
    )
    assert cid in client.get(reverse("viewer-conflicts"), {"as_of": "2026-05-01"}).content.decode()


def test_the_api_answers_as_of_as_the_cli_does(client, site: Database, tmp_path: Path) -> None:
    cid = _setup(site, tmp_path)
    resolve(site, cid, "keep_newer", "ana")
    then = client.get("/api/v1/entries", {"as_of": "2026-04-20"}).json()
    assert {(r["title"], r["status"]) for r in then} == {
        (MARCH.text, "contested"),  # the conflict was open then, resolved later
        (APRIL.text, "contested"),
    }
    assert [r["title"] for r in client.get("/api/v1/entries", {"as_of": "2026-04-15"}).json()] == [
        MARCH.text
    ]
    assert client.get("/api/v1/conflicts", {"as_of": "2026-04-20T14:29Z"}).json() == []
    [conflict] = client.get("/api/v1/conflicts", {"as_of": "2026-04-20"}).json()
    assert conflict["status"] == "open" and conflict["resolution"] is None
    bad = client.get("/api/v1/conflicts", {"as_of": "April"})
    assert bad.status_code == 422 and "not an ISO 8601 date" in bad.json()["detail"]


def test_as_of_the_status_filter_uses_the_status_then(
    client, site: Database, data_dir: Path, tmp_path: Path
) -> None:
    """Both were contested on 04-20 (the conflict was resolved later): the filter finds
    them by that status, not by today's (active / superseded), and pages after it."""
    cid = _setup(site, tmp_path)
    resolve(site, cid, "keep_newer", "ana")

    def titles(**params: object) -> list[str]:
        rows = client.get("/api/v1/entries", {"as_of": "2026-04-20", **params}).json()
        return [r["title"] for r in rows]

    assert titles(status="contested") == [MARCH.text, APRIL.text]
    assert titles(status="active") == [] and titles(status="superseded") == []
    assert titles(status="contested", limit=1, offset=1) == [APRIL.text]
    assert titles(limit=1) == [MARCH.text]
    shown = run_cli(data_dir, "entries", "--as-of", "2026-04-20", "--status", "contested", "--json")
    assert [json.loads(line)["title"] for line in shown.stdout.splitlines()] == [
        MARCH.text,
        APRIL.text,
    ]
    active = run_cli(data_dir, "entries", "--as-of", "2026-04-20", "--status", "active", "--json")
    assert active.returncode == 0 and active.stdout.strip() == ""
