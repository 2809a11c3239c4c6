"""Memory browser, memory detail with the approve form, citation pages, cited spans in
sessions. The data comes from the real pipeline run over the sample session (and over
small transcripts written here), never from hand-made rows."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from axiom.entries.queries import EntryRow, list_entries
from axiom.evidence.citations import citations_for_entry, get_citation
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, ToolCall, Transcript
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session

SAMPLE_ID = "7f3c9a2e-5b1d-4c8e-9a6f-2d4e8b1c0a57"
DECISION_TITLE = "We will use DuckDB for the event store, with JSON columns (not JSONB)"
XSS_DECISION = "Decision: we will render <script>alert('x')</script> & <b>tags</b> as plain text."


@pytest.fixture
def processed(site, sample_session: Path) -> str:
    (sid,) = import_paths(site, [sample_session]).session_ids
    process_session(site, sid, configured_pipeline())
    # Every sample memory aligns; a TodoWrite call whose list is in no message text (a
    # transcript not read by the Claude Code parser) gives one that cannot: a raw entry.
    todo = ToolCall("t1", "TodoWrite", {"todos": [{"content": "Rotate the signing keys"}]})
    bare = Transcript(
        "bare-todo", "p", "json", (Message(0, "assistant", "Ok.", tool_calls=(todo,)),)
    )
    ingest_transcripts(site, [bare])
    process_session(site, "bare-todo", configured_pipeline())
    return sid


@pytest.fixture
def hostile(site) -> str:
    """A session whose memories carry markup in titles, quotes and task blockers."""
    transcript = Transcript(
        "hostile-1",
        "p",
        "json",
        (
            Message(index=0, role="user", text="How should titles render?"),
            Message(index=1, role="assistant", text=f"Some context.\n{XSS_DECISION}\nMore after."),
            Message(
                index=2, role="user", text="Deploy is blocked by <img src=x onerror=alert(1)>."
            ),
        ),
        title="<i>hostile</i>",
    )
    ingest_transcripts(site, [transcript])
    process_session(site, "hostile-1", configured_pipeline())
    return "hostile-1"


def entries(site, **filters) -> list[EntryRow]:
    with site.read() as conn:
        return list_entries(conn, **filters)


def one(site, **filters) -> EntryRow:
    return entries(site, **filters)[0]


# Oldest first with every duplicate on its own row: the order of `list_entries`.
EACH = {"sort": "oldest", "dups": "each"}


def entry_ids(page: str) -> list[str]:
    return re.findall(r'data-entry="(ent_[0-9a-f]+)"', page)


# --- the memory browser ---------------------------------------------------------------


def test_it_lists_every_entry_with_badges_and_session_links(client, site, processed):
    page = client.get(reverse("viewer-entries"), EACH).content.decode()
    assert entry_ids(page) == [e.entry_id for e in entries(site)]
    assert '<span class="stage stage-verified">verified</span>' in page
    assert '<span class="stage stage-raw">raw</span>' in page
    assert f'href="/sessions/{SAMPLE_ID}/"' in page
    assert html.escape(DECISION_TITLE) in page


def test_the_filter_form_is_a_plain_get_form_that_also_drives_htmx(client, processed):
    page = client.get(reverse("viewer-entries")).content.decode()
    form = re.search(r'<form class="filters"(.*?)>', page, re.S).group(1)
    assert 'method="get"' in form and 'action="/entries/"' in form
    assert 'hx-get="/entries/"' in form
    assert 'hx-target="#entry-rows"' in form
    assert 'hx-trigger="change, input changed delay:300ms from:#memory-q, submit"' in form
    assert 'hx-push-url="true"' in form
    assert '<input id="memory-q" type="search" name="q"' in page
    for name in ("stage", "type", "status", "sort", "dups"):
        assert f'<select name="{name}">' in page
    assert '<tbody id="entry-rows">' in page


def test_filters_narrow_the_rows(client, site, processed):
    response = client.get(
        reverse("viewer-entries"), {"stage": "verified", "type": "task_note", **EACH}
    )
    page = response.content.decode()
    expected = entries(site, stage="verified", entry_type="task_note")
    assert len(expected) >= 2
    assert entry_ids(page) == [e.entry_id for e in expected]
    assert '<option value="verified" selected>' in page
    assert '<option value="task_note" selected>' in page
    raw = entry_ids(
        client.get(reverse("viewer-entries"), {"stage": "raw", **EACH}).content.decode()
    )
    assert raw == [e.entry_id for e in entries(site, stage="raw")]
    contested = client.get(reverse("viewer-entries"), {"status": "contested"}).content.decode()
    assert entry_ids(contested) == [] and "No memories match these filters." in contested


def test_htmx_gets_only_the_rows(client, site, processed):
    response = client.get(
        reverse("viewer-entries"), {"stage": "raw", **EACH}, HTTP_HX_REQUEST="true"
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in page and "<form" not in page and "<thead" not in page
    assert entry_ids(page) == [e.entry_id for e in entries(site, stage="raw")]
    assert "HX-Request" in response["Vary"]


def test_unknown_filter_values_are_ignored(client, site, processed):
    page = client.get(
        reverse("viewer-entries"), {"stage": "bogus", "type": "<x>", **EACH}
    ).content.decode()
    assert entry_ids(page) == [e.entry_id for e in entries(site)]
    assert "&lt;x&gt;" not in page and "<x>" not in page


@pytest.fixture
def many(site) -> str:
    """55 decisions in one session: two pages of the browser."""
    messages = tuple(
        Message(index=n, role="user", text=f"Decision: we will use option number {n:02d}.")
        for n in range(55)
    )
    ingest_transcripts(site, [Transcript("many", "p", "json", messages)])
    process_session(site, "many", configured_pipeline())
    assert len(entries(site)) == 55
    return "many"


def test_it_pages_50_entries_at_a_time_with_plain_and_htmx_links(client, site, many):
    every = [e.entry_id for e in entries(site)]
    first = client.get(reverse("viewer-entries"), EACH).content.decode()
    assert entry_ids(first) == every[:50]
    nxt = "/entries/?sort=oldest&amp;dups=each&amp;page=2"
    assert f'href="{nxt}"' in first and f'hx-get="{nxt}"' in first
    assert "← Previous" not in first
    second = client.get(reverse("viewer-entries"), {"page": 2, **EACH}).content.decode()
    assert "<html" in second and entry_ids(second) == every[50:]
    assert 'href="/entries/?sort=oldest&amp;dups=each"' in second and "Next →" not in second
    fragment = client.get(reverse("viewer-entries"), {"page": 2, **EACH}, HTTP_HX_REQUEST="true")
    assert entry_ids(fragment.content.decode()) == every[50:]
    assert "<html" not in fragment.content.decode()


def test_pager_links_keep_the_filters(client, site, many):
    page = client.get(reverse("viewer-entries"), {"type": "decision"}).content.decode()
    assert 'href="/entries/?type=decision&amp;page=2"' in page
    assert 'hx-get="/entries/?type=decision&amp;page=2"' in page


def test_titles_are_escaped_in_the_list(client, hostile):
    page = client.get(reverse("viewer-entries")).content.decode()
    assert "<script>alert(" not in page and "<b>tags</b>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &lt;b&gt;tags&lt;/b&gt;" in page


# --- memory detail --------------------------------------------------------------------


def test_the_detail_shows_the_entry_its_evidence_and_citation_links(client, site, processed):
    entry = one(site, stage="verified", entry_type="decision")
    response = client.get(reverse("viewer-entry", args=[entry.entry_id]))
    page = response.content.decode()
    assert response.status_code == 200
    assert f"<h1>{html.escape(entry.title)}</h1>" in page
    assert "<dt>Type</dt><dd>decision</dd>" in page
    assert '<span class="stage stage-verified">verified</span>' in page
    assert '<span class="status status-active">active</span>' in page
    assert html.escape(entry.content) in page
    with site.read() as conn:
        (citation_id,) = citations_for_entry(conn, entry.entry_id)
    evidence = entry.evidence[0]
    assert f"<blockquote>{html.escape(evidence['quote'])}</blockquote>" in page
    assert '<span class="method">exact</span>' in page and "confidence 1.00" in page
    assert f'href="/c/{citation_id}/#cited">[{citation_id}]</a>' in page
    assert f'href="/sessions/{SAMPLE_ID}/#m-{evidence["message_index"]}"' in page


def test_unaligned_evidence_shows_why_instead_of_a_link(client, site, processed):
    entry = one(site, stage="raw")
    page = client.get(reverse("viewer-entry", args=[entry.entry_id])).content.decode()
    assert "not aligned: not_found" in page
    assert "/c/" not in page


def test_task_fields_are_shown(client, site, processed):
    entry = next(e for e in entries(site, entry_type="task_note") if e.task["blocked_by"])
    page = client.get(reverse("viewer-entry", args=[entry.entry_id])).content.decode()
    assert "<h2>Task</h2>" in page
    assert "<dt>Status</dt><dd>blocked</dd>" in page
    assert f'<span class="chip">{html.escape(entry.task["blocked_by"][0])}</span>' in page


def test_the_history_is_a_timeline_of_checks_promotions_and_blocks(client, site, processed):
    entry = one(site, stage="verified", entry_type="decision")
    page = client.get(reverse("viewer-entry", args=[entry.entry_id])).content.decode()
    timeline = re.search(r'<ol class="timeline">(.*?)</ol>', page, re.S).group(1)
    kinds = re.findall(r'<li class="event ev-(\w+)">', timeline)
    assert kinds[0] == "entry_created" and "idris_checked" in kinds
    assert kinds.count("entry_promoted") == 3 and kinds[-1] == "promotion_blocked"
    assert "checked</strong> by <code>builtin</code> (builtin-v1)" in timeline
    assert 'promoted</strong> candidate → <span class="stage stage-verified">' in timeline
    assert "blocked</strong> at verified → certified: needs evidence from 2 sessions" in timeline


def test_an_unknown_entry_is_a_404_page(client, site):
    response = client.get(reverse("viewer-entry", args=["ent_nope"]))
    assert response.status_code == 404 and "Not found" in response.content.decode()


def test_quotes_and_titles_are_escaped_on_the_detail(client, site, hostile):
    entry = one(site, entry_type="decision")
    page = client.get(reverse("viewer-entry", args=[entry.entry_id])).content.decode()
    assert "<script>alert(" not in page and "<b>tags</b>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    task = one(site, entry_type="task_note")
    task_page = client.get(reverse("viewer-entry", args=[task.entry_id])).content.decode()
    assert "<img src=x" not in task_page and "&lt;img src=x onerror=alert" in task_page


# --- approval -------------------------------------------------------------------------


def test_the_approve_form_posts_with_a_csrf_token(client, site, processed):
    entry = one(site, stage="verified")
    page = client.get(reverse("viewer-entry", args=[entry.entry_id])).content.decode()
    form = re.search(r'<form class="approve"(.*?)</form>', page, re.S)
    assert form is not None
    url = f"/entries/{entry.entry_id}/approve"
    assert f'method="post" action="{url}"' in form.group(1)
    assert f'hx-post="{url}" hx-target="#entry" hx-swap="outerHTML"' in form.group(1)
    assert re.search(r'<input type="hidden" name="csrfmiddlewaretoken" value="\w+">', form.group(1))
    assert 'name="approved_by"' in form.group(1) and "Your name" in form.group(1)
    assert '<article id="entry">' in page


def test_approving_a_verified_entry_certifies_it_and_shows_the_history(client, site, processed):
    entry = one(site, stage="verified", entry_type="decision")
    response = client.post(
        reverse("viewer-entry-approve", args=[entry.entry_id]),
        {"approved_by": "Ana <b>", "note": "read the transcript"},
    )
    page = response.content.decode()
    assert response.status_code == 200 and "<html" in page
    assert "certified: approved by Ana &lt;b&gt;" in page
    assert '<dt>Stage</dt><dd><span class="stage stage-certified">certified</span>' in page
    assert "approved</strong> by Ana &lt;b&gt;: “read the transcript”" in page
    assert 'verified → <span class="stage stage-certified">certified</span>' in page
    assert one(site, entry_type="decision").stage == "certified"
    # The detail page, read again later, shows the same history.
    again = client.get(reverse("viewer-entry", args=[entry.entry_id])).content.decode()
    assert "approved</strong> by Ana &lt;b&gt;" in again


def test_htmx_approval_returns_only_the_entry(client, site, processed):
    entry = one(site, stage="verified")
    response = client.post(
        reverse("viewer-entry-approve", args=[entry.entry_id]),
        {"approved_by": "ana"},
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<article id="entry">') and "<html" not in page
    assert "certified: approved by ana" in page


def test_approval_needs_a_name(client, site, processed):
    entry = one(site, stage="verified")
    url = reverse("viewer-entry-approve", args=[entry.entry_id])
    plain = client.post(url, {"approved_by": "  "})
    assert plain.status_code == 422
    assert "approved_by must name the person approving" in plain.content.decode()
    htmx = client.post(url, {"approved_by": ""}, HTTP_HX_REQUEST="true")
    assert htmx.status_code == 200  # htmx only swaps 2xx answers
    assert 'class="notice error"' in htmx.content.decode()
    assert one(site, stage="verified").entry_id == entry.entry_id  # nothing certified


def test_approving_an_unknown_entry_is_404_and_get_is_refused(client, site, processed):
    assert client.post("/entries/ent_nope/approve", {"approved_by": "ana"}).status_code == 404
    entry = one(site, stage="verified")
    assert client.get(reverse("viewer-entry-approve", args=[entry.entry_id])).status_code == 405


def test_a_post_without_the_csrf_token_is_refused(site, processed):
    entry = one(site, stage="verified")
    strict = Client(enforce_csrf_checks=True)
    response = strict.post(
        reverse("viewer-entry-approve", args=[entry.entry_id]), {"approved_by": "ana"}
    )
    assert response.status_code == 403
    assert one(site, entry_type="decision").stage == "verified"


# --- citation pages -------------------------------------------------------------------


def mark(page: str) -> str:
    found = re.findall(r'<mark id="cited">(.*?)</mark>', page, re.S)
    assert len(found) == 1, found
    return found[0]


def test_the_citation_page_marks_exactly_the_quote_inside_the_whole_message(
    client, site, processed
):
    entry = one(site, stage="verified", entry_type="decision")
    with site.read() as conn:
        (citation_id,) = citations_for_entry(conn, entry.entry_id)
        citation = get_citation(conn, citation_id)
        (text,) = conn.execute(
            "SELECT text FROM messages WHERE session_id = ? AND message_index = ?",
            [citation.session_id, citation.message_index],
        ).fetchone()
    response = client.get(reverse("viewer-citation", args=[citation_id]))
    page = response.content.decode()
    assert response.status_code == 200
    assert mark(page) == html.escape(entry.evidence[0]["quote"])
    assert mark(page) == html.escape(text[citation.span_start : citation.span_end])
    # The whole message, not a window around the quote, split exactly at the offsets.
    before, after = text[: citation.span_start], text[citation.span_end :]
    whole = f'<div class="text">{html.escape(before)}<mark id="cited">'
    assert whole in page and f"</mark>{html.escape(after)}</div>" in page
    assert f'<a href="/entries/{entry.entry_id}/">{html.escape(entry.title)}</a>' in page
    assert f'href="/sessions/{SAMPLE_ID}/#m-{citation.message_index}"' in page
    assert f"#{citation.message_index} · assistant" in page
    # The script that scrolls to the mark is a static file: the CSP runs no inline script.
    assert '<script src="/static/axiom/citation.js"></script>' in page
    assert "<script>" not in page


def test_citation_ids_work_with_or_without_the_prefix(client, site, processed):
    entry = one(site, stage="verified")
    with site.read() as conn:
        citation_id = citations_for_entry(conn, entry.entry_id)[0]
    bare = citation_id.removeprefix("mem:")
    for ref in (citation_id, bare, f"[{citation_id}]"):
        response = client.get(f"/c/{ref}/")
        assert response.status_code == 200, ref
        assert f"[{citation_id}]" in response.content.decode()
    # `/c/<id>` as written in transcripts and docs redirects to the canonical URL.
    assert client.get(f"/c/{citation_id}").headers["Location"] == f"/c/{citation_id}/"


def test_an_unknown_citation_is_a_404_page(client, site):
    assert client.get("/c/mem:nothere/").status_code == 404
    assert client.get("/c/nothere/").status_code == 404


def test_the_cited_quote_is_escaped(client, site, hostile):
    entry = one(site, entry_type="decision")
    with site.read() as conn:
        (citation_id,) = citations_for_entry(conn, entry.entry_id)
    page = client.get(reverse("viewer-citation", args=[citation_id])).content.decode()
    assert mark(page) == html.escape(XSS_DECISION)
    assert "<script>alert(" not in page and "<b>tags</b>" not in page


# --- cited spans inside the session page ------------------------------------------------


def test_the_session_page_marks_cited_spans_with_links_to_their_citations(client, site, processed):
    page = client.get(reverse("viewer-session", args=[SAMPLE_ID])).content.decode()
    with site.read() as conn:
        rows = conn.execute(
            "SELECT citation_id, message_index, span_start, span_end FROM citations"
            " WHERE session_id = ? ORDER BY message_index, span_start, span_end, citation_id",
            [SAMPLE_ID],
        ).fetchall()
    marked = re.findall(
        r'<a class="cited-span" href="/c/(mem:[\w-]+)/#cited"[^>]*><mark data-citation="\1">(.*?)</mark></a>',
        page,
        re.S,
    )
    # Identical or overlapping spans (two entries citing one sentence) are marked once.
    starts: dict[int, int] = {}
    expected = []
    for citation_id, index, start, end in rows:
        if start < starts.get(index, 0):
            continue
        starts[index] = end
        expected.append(citation_id)
    assert [cid for cid, _ in marked] == expected
    assert len(expected) < len(rows)
    # The marked text is the span and the message reads exactly as before around it.
    assert (
        "Decision: we will use DuckDB for the event store, with JSON columns (not JSONB).</mark>"
        in page
    )
    # The cited tool result (the traceback) is unfolded to show its mark.
    assert '<details class="fold tool-result is-error" open>' in page


def test_marked_session_text_is_still_escaped(client, site, hostile):
    page = client.get(reverse("viewer-session", args=[hostile])).content.decode()
    assert "<mark data-citation=" in page
    assert "<script>alert(" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page


# --- navigation -----------------------------------------------------------------------


def test_the_navigation_links_every_area(client, site):
    page = client.get(reverse("viewer-entries")).content.decode()
    nav = re.search(r'<nav aria-label="Main">(.*?)</nav>', page, re.S).group(1)
    labels = re.findall(r">([^<]+)</a>", nav)
    assert labels == [
        "Dashboard",
        "Sessions",
        "Memories",
        "Tasks",
        "Conflicts",
        "Decisions",
        "Builds",
        "Import",
        "API docs",
    ]
    assert '<a href="/entries/" aria-current="page">Memories</a>' in nav
