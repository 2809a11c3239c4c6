"""The memory browser's text filter, sorts and duplicate groups, through plain GET forms
(no JavaScript): memories from the real pipeline over small transcripts, three of which
say the same decision."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from axiom.config import AxiomConfig
from axiom.conflicts.commands import resolve
from axiom.conflicts.queries import list_conflicts
from axiom.entries.queries import EntryFilter, list_entries, list_entry_groups
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.store.db import Database
from tests.conflicts.support import run_sessions
from tests.conflicts.test_as_of import APRIL, MARCH

SAID = {
    "s1": ["Decision: we will use DuckDB for the event store.", "Decision: we deploy on Fridays."],
    "s2": ["Decision: we will use DuckDB for the event store.", "Decision: keep 100% of logs."],
    "s3": ["Decision: we will use  duckdb for the event store."],  # case and spacing differ
}


def said_in_sessions(db: Database, said: dict[str, list[str]]) -> None:
    """Session n (from 0) says its texts on March n+1st, 2026; processed in that order."""
    for n, (sid, texts) in enumerate(said.items()):
        messages = tuple(
            Message(i, "user", text, timestamp=f"2026-03-0{n + 1}T10:0{i}:00Z")
            for i, text in enumerate(texts)
        )
        ingest_transcripts(db, [Transcript(sid, "p", "json", messages)])
        process_session(db, sid, configured_pipeline(AxiomConfig(data_dir=db.path.parent)))


@pytest.fixture
def memories(site) -> list[tuple[str, str]]:
    """(title, entry id) of every entry, oldest first."""
    said_in_sessions(site, SAID)
    with site.read() as conn:
        return [(e.title, e.entry_id) for e in list_entries(conn)]


def rows(page: str) -> list[str]:
    """The lead entry id of each row, in order."""
    return re.findall(r'<tr class="memory[^"]*" data-entry="(ent_[0-9a-f]+)"', page)


def titles(site, ids: list[str]) -> list[str]:
    with site.read() as conn:
        return [e.title for e in list_entries(conn) if e.entry_id in ids]


def get(client, **params) -> str:
    response = client.get(reverse("viewer-entries"), params)
    assert response.status_code == 200
    return response.content.decode()


def test_it_leads_each_row_with_the_memory_text_not_the_id(client, memories):
    page = get(client)
    first_cells = re.findall(
        r'<td class="memory-text">\s*<a href="/entries/(ent_\w+)/"[^>]*>([^<]+)</a>', page
    )
    assert len(first_cells) == len(rows(page)) and all(text.strip() for _, text in first_cells)
    assert "<th>Memory</th>" in page and "<th>Id</th>" not in page


def test_the_same_text_said_three_times_is_one_row_with_a_count_and_its_members(
    client, site, memories
):
    page = get(client)
    duckdb_ids = [i for t, i in memories if "duckdb" in t.lower()]
    assert len(duckdb_ids) == 3 and len(rows(page)) == len(memories) - 2
    group = re.search(r'<tr class="memory group".*?</tr>', page, re.S).group(0)
    assert '<span class="count">×3</span>' in group and "<details" in group
    assert sorted(re.findall(r'href="/entries/(ent_\w+)/"><code>', group)) == sorted(duckdb_ids)
    each = get(client, dups="each")
    assert sorted(rows(each)) == sorted(i for _, i in memories) and "<details" not in each


def test_the_text_filter_matches_words_case_aside_and_percent_literally(client, site, memories):
    assert titles(site, rows(get(client, q="FRIDAYS"))) == ["We deploy on Fridays"]
    assert len(rows(get(client, q="100%"))) == 1
    assert rows(get(client, q="%")) == rows(get(client, q="100%"))  # % is not a wildcard
    empty = get(client, q="nothing like this")
    assert rows(empty) == [] and "No memories match these filters." in empty
    assert 'value="fridays"' in get(client, q="fridays")  # the form keeps what was typed


def test_sorts_newest_oldest_stage_and_type(client, site, memories):
    newest, oldest = rows(get(client, dups="each")), rows(get(client, dups="each", sort="oldest"))
    assert newest == list(reversed(oldest))
    with site.read() as conn:
        every = list_entries(conn)
    assert oldest == [e.entry_id for e in every]
    rank = {s: n for n, s in enumerate(("raw", "working", "candidate", "verified", "certified"))}
    by_id = {e.entry_id: e for e in every}
    staged = [rank[by_id[i].stage] for i in rows(get(client, dups="each", sort="stage"))]
    assert staged == sorted(staged, reverse=True)
    typed = [by_id[i].entry_type for i in rows(get(client, dups="each", sort="type"))]
    assert typed == sorted(typed)
    assert '<option value="stage" selected>' in get(client, sort="stage")
    assert rows(get(client, sort="bogus")) == rows(get(client))  # unknown sort: newest


def test_grouping_filtering_and_sorting_happen_in_the_query(site, memories):
    with site.read() as conn:
        groups = list_entry_groups(conn, EntryFilter(text="duckdb"), sort="oldest")
        each = list_entry_groups(conn, EntryFilter(text="duckdb"), group=False)
        paged = list_entry_groups(conn, EntryFilter(), group=False, limit=2, offset=2)
    assert [g.count for g in groups] == [3] and len(groups[0].members) == 3
    assert [g.count for g in each] == [1, 1, 1] and all(g.members == [] for g in each)
    assert len(paged) == 2


def test_htmx_gets_only_the_rows_and_the_pager_keeps_every_control(client, memories):
    response = client.get(
        reverse("viewer-entries"),
        {"q": "duckdb", "stage": "", "sort": "oldest", "dups": "group"},
        HTTP_HX_REQUEST="true",
    )
    fragment = response.content.decode()
    assert "<html" not in fragment and "<form" not in fragment and len(rows(fragment)) == 1
    assert response["HX-Push-Url"] == "/entries/?q=duckdb&sort=oldest"  # defaults left out


def test_as_of_narrows_the_list_and_rides_along_in_the_form(client, memories):
    before = get(client, as_of="2026-03-01", dups="each")
    assert len(rows(before)) == 2  # only s1 had been said by the end of March 1st
    assert '<input type="hidden" name="as_of" value="2026-03-01">' in before
    assert len(rows(get(client, as_of="2026-03-02", q="duckdb"))) == 1
    assert '<span class="count">×2</span>' in get(client, as_of="2026-03-02", q="duckdb")


def test_a_memory_shows_when_it_was_said_and_when_it_was_recorded(client, site, memories) -> None:
    """The bitemporal view: the source's time (March 2026, from the messages) beside the
    time Axiom recorded the memory (today), both on the memory's page and in its JSON."""
    _title, entry_id = memories[0]
    with site.read() as conn:
        entry = next(e for e in list_entries(conn) if e.entry_id == entry_id)
    assert entry.said_at is not None and entry.said_at.strftime("%Y-%m") == "2026-03"
    assert entry.to_json()["said_at"].startswith("2026-03")
    page = client.get(reverse("viewer-entry", args=[entry_id])).content.decode()
    said = re.search(r'<time class="said" datetime="([^"]+)"', page)
    recorded = re.search(r'<time class="recorded" datetime="([^"]+)"', page)
    assert said and said.group(1).startswith("2026-03-0")
    assert recorded and recorded.group(1)[:10] == entry.created_ts.strftime("%Y-%m-%d")


def test_the_list_and_the_dashboard_date_memories_by_when_they_were_said(client, memories) -> None:
    """Said in March 2026 (the messages' time), recorded today: the list's "When" column
    and the dashboard's recent memories show March."""
    listed = get(client)
    when = re.findall(r'<td class="nowrap muted">(\d{4}-\d{2}-\d{2})</td>', listed)
    assert when and all(day.startswith("2026-03-0") for day in when)
    members = re.findall(r'<span class="muted">(\d{4}-\d{2}-\d{2}) \d{2}:\d{2}</span>', listed)
    assert members and all(day.startswith("2026-03-0") for day in members)
    board = client.get(reverse("viewer-dashboard")).content.decode()
    recent = re.findall(r"· (\d{4}-\d{2}-\d{2})</span>", board)
    assert recent and all(day.startswith("2026-03-0") for day in recent)


def test_the_list_sorts_by_when_memories_were_said_not_recorded(client, site) -> None:
    """A session imported after another but said before it sorts below it ("newest")
    and above it ("oldest"), as the dates the list (and the dashboard) show read."""
    for sid, day, text in (
        ("said-later", "09", "Decision: we will use Redis for the job queue."),
        ("said-earlier", "02", "Decision: we will use Caddy in front of the web."),
    ):
        message = Message(0, "user", text, timestamp=f"2026-03-{day}T10:00:00Z")
        ingest_transcripts(site, [Transcript(sid, "p", "json", (message,))])
        process_session(site, sid, configured_pipeline())
    for sort, expected in (
        ("newest", ["2026-03-09", "2026-03-02"]),
        ("oldest", ["2026-03-02", "2026-03-09"]),
    ):
        for dups in ("group", "each"):
            page = get(client, sort=sort, dups=dups)
            assert (
                re.findall(r'<td class="nowrap muted">(\d{4}-\d{2}-\d{2})</td>', page) == expected
            )
    board = client.get(reverse("viewer-dashboard")).content.decode()
    assert re.findall(r"· (\d{4}-\d{2}-\d{2})</span>", board) == ["2026-03-09", "2026-03-02"]


def test_as_of_the_status_filter_lists_each_memory_by_its_status_then(
    client, site, tmp_path
) -> None:
    """Both sides were contested on 04-20 (the conflict was resolved later): the memory list
    finds them under that status, not under today's (active / superseded), one per row."""
    run_sessions(site, tmp_path, {"march": [MARCH], "april": [APRIL]})
    with site.read() as conn:
        (conflict,) = list_conflicts(conn, "open")
    resolve(site, conflict.conflict_id, "keep_newer", "ana")

    contested = get(client, as_of="2026-04-20", status="contested")
    assert sorted(titles(site, rows(contested))) == sorted([MARCH.text, APRIL.text])
    assert "Each memory is shown on its own" in contested
    assert rows(get(client, as_of="2026-04-20", status="active")) == []
    assert len(rows(get(client, status="active"))) == 1  # today: the kept side only
    assert "Each memory is shown on its own" not in get(client, status="active")
