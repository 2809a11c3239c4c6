"""TodoWrite items are cited from the list the Claude Code parser writes into the message
text, so their task entries align exactly and graduate; a todo whose text is nowhere in
the session is `not_found`, not `below_threshold`."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.entries.queries import list_entries
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, ToolCall, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database

TODOS = [
    {"content": "Write the events migration", "status": "in_progress"},
    {"content": "스키마 문서를 한국어로 정리하기 🚀", "status": "pending"},
]


def _line(number: int, role: str, content: object) -> str:
    return json.dumps(
        {
            "type": role,
            "sessionId": "todo-1",
            "uuid": f"u{number}",
            "parentUuid": f"u{number - 1}" if number else None,
            "timestamp": f"2026-01-01T00:00:{number:02d}Z",
            "message": {"role": role, "content": content},
        },
        ensure_ascii=False,
    )


def test_todowrite_items_align_exactly_in_the_message_text(db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "-home-u-proj"
    folder.mkdir()
    done = [dict(TODOS[0], status="completed"), TODOS[1]]
    lines = [
        _line(0, "user", "Plan the schema work."),
        _line(
            1,
            "assistant",
            [
                {"type": "text", "text": "Tracking it."},
                {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": TODOS}},
            ],
        ),
        _line(2, "user", "Migration merged."),
        _line(
            3,
            "assistant",
            [{"type": "tool_use", "id": "t2", "name": "TodoWrite", "input": {"todos": done}}],
        ),
    ]
    (folder / "todo-1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (sid,) = import_paths(db, [folder]).session_ids
    process_session(db, sid, Pipeline(extractor=RuleExtractor(), workdir=tmp_path))
    with db.read() as conn:
        texts = dict(conn.execute("SELECT message_index, text FROM messages").fetchall())
        todos = [e for e in list_entries(conn) if e.task and e.task["source"] == "todowrite"]
        others = [e for e in list_entries(conn) if not (e.task and e.task["source"] == "todowrite")]
    assert texts[1] == (
        "Tracking it.\n\nTodoWrite:\n- [in_progress] Write the events migration\n"
        "- [pending] 스키마 문서를 한국어로 정리하기 🚀"
    )
    assert sorted((e.title, e.task["status"], e.stage) for e in todos) == [
        ("Write the events migration", "done", "verified"),
        ("Write the events migration", "in_progress", "verified"),
        ("스키마 문서를 한국어로 정리하기 🚀", "pending", "verified"),
    ]
    for entry in todos:
        (ev,) = entry.evidence
        assert ev["method"] == "exact"
        assert texts[ev["message_index"]][ev["span_start"] : ev["span_end"]] == ev["quote"]
    assert not others  # the list is quoted for its todos, not read again as prose


def test_a_todo_that_is_nowhere_in_the_text_is_not_found(db: Database, tmp_path: Path) -> None:
    call = ToolCall("t1", "TodoWrite", {"todos": [{"content": "Rotate the signing keys"}]})
    messages = (Message(0, "assistant", "Tracking it.", tool_calls=(call,)),)
    ingest_transcripts(db, [Transcript("bare", "demo", "json", messages)])
    process_session(db, "bare", Pipeline(extractor=RuleExtractor(), workdir=tmp_path))
    with db.read() as conn:
        (entry,) = list_entries(conn)
    assert entry.stage == "raw"
    assert entry.evidence[0]["failure_reason"] == "not_found"
