"""Task pages: the list and its status filter, blocked tasks, task detail with its history
and the blocker graph drawn as inline SVG."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from django.urls import reverse

from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.tasks.queries import BlockerView, TaskDetail, TaskSummary, list_tasks
from viewer.blocker_graph import NODE_W, build_blocker_graph, shorten


@pytest.fixture
def processed(site, sample_session: Path) -> str:
    (sid,) = import_paths(site, [sample_session]).session_ids
    process_session(site, sid, configured_pipeline())
    return sid


@pytest.fixture
def chain(site) -> None:
    """Release notes → Deploy → "rotate the certificates", a condition that a later session
    resolves to the task "Rotate the certificates", itself blocked by OPS-9."""
    first = Transcript(
        "chain-1",
        "shop",
        "json",
        (
            Message(index=0, role="user", text="Deploy is blocked by rotate the certificates."),
            Message(index=1, role="user", text="Release notes are blocked by deploy."),
        ),
    )
    second = Transcript(
        "chain-2",
        "shop",
        "json",
        (Message(index=0, role="user", text="Rotate the certificates is blocked by OPS-9."),),
    )
    ingest_transcripts(site, [first, second])
    for sid in ("chain-1", "chain-2"):
        process_session(site, sid, configured_pipeline())


def task_id(site, title: str) -> str:
    with site.read() as conn:
        return next(t.task_id for t in list_tasks(conn) if t.title == title)


def titles(page: str) -> list[str]:
    return re.findall(r'<td><a href="/tasks/tsk_\w+/">(.*?)</a></td>', page)


# --- list -----------------------------------------------------------------------------


def test_it_lists_every_task_with_its_status(client, site, processed):
    page = client.get(reverse("viewer-tasks")).content.decode()
    with site.read() as conn:
        expected = [t.title for t in list_tasks(conn)]
    assert titles(page) == expected and len(expected) == 4
    assert '<span class="task-status task-blocked">blocked</span>' in page
    assert 'href="/tasks/blocked/"' in page


def test_the_status_filter_is_a_get_form_that_also_drives_htmx(client, site, processed):
    page = client.get(reverse("viewer-tasks"), {"status": "blocked"}).content.decode()
    assert sorted(titles(page)) == ["Publish the package to the internal index", "배포"]
    assert '<option value="blocked" selected>' in page
    form = re.search(r'<form class="filters"(.*?)>', page, re.S).group(1)
    assert 'method="get"' in form and 'hx-get="/tasks/"' in form
    assert 'hx-target="#task-rows"' in form and 'hx-trigger="change"' in form
    assert 'hx-push-url="true"' in form


def test_htmx_gets_only_the_task_rows(client, site, processed):
    response = client.get(reverse("viewer-tasks"), {"status": "done"}, HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert "<html" not in page and "<form" not in page
    assert titles(page) == ["Write the events migration"]
    assert "HX-Request" in response["Vary"]


def test_an_unknown_status_shows_every_task(client, site, processed):
    page = client.get(reverse("viewer-tasks"), {"status": "<nope>"}).content.decode()
    assert len(titles(page)) == 4 and "<nope>" not in page


def test_an_empty_store_says_so(client, site):
    assert "No tasks yet." in client.get(reverse("viewer-tasks")).content.decode()
    assert "Nothing is blocked." in client.get(reverse("viewer-tasks-blocked")).content.decode()


# --- blocked --------------------------------------------------------------------------


def test_blocked_tasks_show_their_effective_blockers(client, site, processed):
    page = client.get(reverse("viewer-tasks-blocked")).content.decode()
    assert 'Blocked tasks <span class="muted">2</span>' in page
    assert '<span class="kind kind-artifact">artifact</span> PLAT-142' in page
    assert '<span class="kind kind-condition">condition</span> 레지스트리 인증서 교체' in page
    assert f'href="/tasks/{task_id(site, "배포")}/"' in page


def test_a_resolved_condition_shows_what_it_resolved_to(client, site, chain):
    page = client.get(reverse("viewer-tasks-blocked")).content.decode()
    deploy_row = re.search(r"<tr>\s*<td><a[^>]*>Deploy</a>.*?</tr>", page, re.S).group(0)
    rotate = task_id(site, "Rotate the certificates")
    assert f'<a href="/tasks/{rotate}/">Rotate the certificates</a>' in deploy_row
    assert "via “rotate the certificates”, which resolves to it" in deploy_row


# --- detail ---------------------------------------------------------------------------


def test_the_detail_shows_status_blockers_evidence_and_history(client, site, processed):
    title = "Publish the package to the internal index"
    tid = task_id(site, title)
    response = client.get(reverse("viewer-task", args=[tid]))
    page = response.content.decode()
    assert response.status_code == 200
    assert f"<h1>{title}</h1>" in page
    assert '<dt>Status</dt><dd><span class="task-status task-blocked">blocked</span>' in page
    assert "<dt>Priority</dt><dd>low</dd>" in page and "<dt>Aliases</dt><dd>—</dd>" in page
    blockers = re.search(r"Blocked by \(effective\)</h2>\s*<ul.*?</ul>", page, re.S).group(0)
    assert "PLAT-142" in blockers
    assert len(re.findall(rf'<a href="/entries/ent_\w+/">{title}</a>', page)) == 2
    history = re.search(r'<table class="history">(.*?)</table>', page, re.S).group(1)
    events = re.findall(r"<td><code>(\w+)</code></td>", history)
    assert events == [
        "task_created",
        "task_mentioned",
        "task_blockers_set",
        "task_status_changed",
        "task_mentioned",
    ]
    assert "blockers replace: PLAT-142" in history


def test_a_task_opens_by_an_id_prefix(client, site, processed):
    tid = task_id(site, "배포")
    assert client.get(reverse("viewer-task", args=[tid[:10]])).status_code == 200


def test_an_unknown_task_is_a_404_page(client, site):
    response = client.get(reverse("viewer-task", args=["tsk_nothing"]))
    assert response.status_code == 404 and "Not found" in response.content.decode()


def svg_of(page: str) -> str:
    found = re.search(r"<svg .*?</svg>", page, re.S)
    assert found is not None
    return found.group(0)


def test_the_blocker_graph_is_an_inline_svg_in_columns(client, site, chain):
    page = client.get(reverse("viewer-task", args=[task_id(site, "Deploy")])).content.decode()
    svg = svg_of(page)
    nodes = re.findall(
        r'<g class="node kind-(\w+)([^"]*)" transform="translate\(([\d.]+),([\d.]+)\)"[^>]*>'
        r".*?<text[^>]*class=\"label\">(.*?)</text>",
        svg,
        re.S,
    )
    by_label = {  # the label's lines are <tspan>s
        " ".join(re.findall(r">([^<]*)</tspan>", label)): (kind, extra.split(), float(x))
        for kind, extra, x, _, label in nodes
    }
    assert by_label["Release notes"][0] == "task"
    assert by_label["Deploy"][0] == "task" and "is-focus" in by_label["Deploy"][1]
    assert by_label["rotate the certificates"][0] == "condition"
    assert by_label["Rotate the certificates"][0] == "task"
    # Left to right: what it blocks, the task, its declared blocker, what that resolves to.
    xs = [by_label[t][2] for t in ("Release notes", "Deploy", "rotate the certificates")]
    assert xs == sorted(xs) and len(set(xs)) == 3
    assert by_label["Rotate the certificates"][2] > xs[-1]
    assert re.findall(r'class="edge rel-(\w+)"', svg) == ["blocked_by", "blocked_by", "resolves_to"]
    # Other tasks are links; the page's own task is not.
    assert f'<a href="/tasks/{task_id(site, "Release notes")}/">' in svg
    assert f'<a href="/tasks/{task_id(site, "Deploy")}/">' not in svg
    assert "<script" not in svg


def test_a_task_with_nothing_around_it_has_no_graph(client, site, processed):
    tid = task_id(site, "Write the events migration")
    page = client.get(reverse("viewer-task", args=[tid])).content.decode()
    assert "<svg" not in page and "Nothing blocks this task, and it blocks nothing." in page


@pytest.fixture
def hostile(site) -> str:
    transcript = Transcript(
        "hostile-tasks",
        "p",
        "json",
        (Message(index=0, role="user", text="Deploy is blocked by <img src=x onerror=alert(1)>."),),
    )
    ingest_transcripts(site, [transcript])
    process_session(site, "hostile-tasks", configured_pipeline())
    return task_id(site, "Deploy")


def test_blocker_titles_are_escaped_in_lists_and_the_graph(client, site, hostile):
    for url in (reverse("viewer-task", args=[hostile]), reverse("viewer-tasks-blocked")):
        page = client.get(url).content.decode()
        assert "<img" not in page
        assert "&lt;img src=x onerror=alert" in page
    assert "&lt;img src=x" in svg_of(
        client.get(reverse("viewer-task", args=[hostile])).content.decode()
    )


# --- the graph layout, without a database -----------------------------------------------

NOW = datetime(2026, 1, 1)


def summary(task_id: str, title: str, status: str = "blocked") -> TaskSummary:
    return TaskSummary(
        task_id, title, "p", status, None, f"task:p:{title}", "candidate", 0, 0, 0, (), NOW, NOW
    )


def detail(**parts) -> TaskDetail:
    fields = {
        "task": summary("tsk_main", "Main"),
        "blockers": (),
        "effective_blockers": (),
        "suggested_blockers": (),
        "blocking": (),
        "evidence": (),
    }
    return TaskDetail(**{**fields, **parts})


def test_suggested_blockers_are_dashed_and_not_repeated():
    art = BlockerView("art_1", "artifact", "PLAT-1")
    maybe = BlockerView("tsk_other", "task", "Other task", status="pending")
    graph = build_blocker_graph(
        detail(blockers=(art,), effective_blockers=(art,), suggested_blockers=(art, maybe))
    )
    assert [n.key for n in graph.nodes] == ["tsk_main", "art_1", "tsk_other"]
    assert [e.rel for e in graph.edges] == ["blocked_by", "suggested"]
    assert graph.nodes[2].caption == "task · pending" and graph.nodes[2].href == "/tasks/tsk_other/"


def test_a_placeholder_condition_is_marked():
    unknown = BlockerView("cnd_x", "condition", "unknown blocker", "open", auto_placeholder=True)
    graph = build_blocker_graph(detail(blockers=(unknown,), effective_blockers=(unknown,)))
    assert graph.nodes[1].placeholder and graph.nodes[1].caption == "condition · placeholder"


def test_a_cycle_is_drawn_as_a_loop_under_the_nodes():
    other = summary("tsk_b", "B")
    back = BlockerView("tsk_b", "task", "B", status="blocked")
    graph = build_blocker_graph(
        detail(blocking=(other,), blockers=(back,), effective_blockers=(back,))
    )
    assert [e.backward for e in graph.edges] == [False, True]
    assert graph.height > 2 * 8 + 46  # room for the loop


def test_nothing_around_a_task_is_an_empty_graph():
    assert build_blocker_graph(detail()).nodes == []


def test_long_titles_are_shortened_to_fit_a_node():
    assert shorten("short", NODE_W) == "short"
    long_en = shorten("word " * 40, NODE_W - 16)
    assert long_en.endswith("…") and len(long_en) < 40
    # Wide (Korean) characters take about twice the room of Latin ones.
    long_ko = shorten("레지스트리 인증서 교체 " * 5, NODE_W - 16)
    assert long_ko.endswith("…") and len(long_ko) < len(long_en)
