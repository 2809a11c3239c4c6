"""Tasks recorded before extraction refused titles that name nothing ("Fix", "Do something
about it") are hidden from task listings by the same rule, written once for Python and
rendered as SQL so the listing still filters and pages in the database."""

from __future__ import annotations

import duckdb
import pytest

from axiom.extract.task_text import vague_title, vague_title_sql
from axiom.tasks.queries import list_tasks
from axiom.tasks.resolver import TaskMention, TaskResolver

TITLES = [
    "Fix",
    "Do it",
    "Handle that",
    "Do something about it",
    "Fix it!",
    "  ",
    "—",
    "Fix the login bug",
    "Deploy",
    "Do it for the API",
    "Rotate the signing keys",
    "로그인 버그 수정",
    "수",
    "Handle that_thing now",
    "Ship v2.1",
]


@pytest.mark.parametrize("title", TITLES)
def test_the_sql_rule_agrees_with_the_extraction_rule(title: str) -> None:
    sql = f"SELECT {vague_title_sql('t')} FROM (SELECT ?::VARCHAR AS t)"
    (sql_says,) = duckdb.connect().execute(sql, [title]).fetchone()
    assert sql_says == vague_title(title), title


def test_old_tasks_with_vague_titles_are_hidden_from_the_list(conn) -> None:
    mentions = [
        TaskMention(f"e{n}", "s1", title, None, evidence_aligned=True)
        for n, title in enumerate(["Fix", "Do something about it", "Fix the login bug"])
    ]
    TaskResolver(conn, "axiom").resolve(mentions)
    assert [t.title for t in list_tasks(conn, hide_vague=True)] == ["Fix the login bug"]
    assert len(list_tasks(conn)) == 3  # the API and CLI still list every task


def test_the_task_page_says_vague_titles_are_hidden_and_shows_them_on_request(client, site) -> None:
    with site.write() as conn:
        TaskResolver(conn, "axiom").resolve(
            [TaskMention("e0", "s1", "Fix", None, evidence_aligned=True)]
        )
    hidden = client.get("/tasks/").content.decode()
    assert ">Fix<" not in hidden and "vague-note" in hidden
    shown = client.get("/tasks/", {"vague": "1"}).content.decode()
    assert ">Fix</a>" in shown and "vague-note" not in shown
