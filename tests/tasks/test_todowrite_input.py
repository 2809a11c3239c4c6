"""Malformed TodoWrite input becomes `task_input_rejected` events that keep the original
value and say why: never a crash, never a stub task. Real DuckDB file, real pipeline with
the rule extractor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, ToolCall, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database
from axiom.store.event_types import TASK_INPUT_REJECTED
from axiom.tasks.queries import list_tasks
from axiom.tasks.resolver import RejectedInput, TaskMention, TaskResolver

SESSION = "todo-bad-input"


def _call(call_id: str, raw_input: Any) -> ToolCall:
    return ToolCall(tool_use_id=call_id, name="TodoWrite", input=raw_input)


def _transcript() -> Transcript:
    todos = [
        {"content": "Ship the exporter", "status": "in_progress", "priority": "high"},
        {"status": "pending"},  # no content, no activeForm
        {"content": 42, "status": "pending"},  # content a number
        "just a string",  # an item that is a plain string
        {"content": "Tune the cache", "status": "pending", "priority": 5},
        {"content": "Rename the flags", "status": "frobnicated"},
        {"content": "  ", "status": "pending"},  # empty content
        {"content": 7, "activeForm": "Checking the quotas", "status": "in_progress"},
    ]
    calls = [
        (_call("t1", {"todos": todos}),),
        (_call("t2", {"todos": "Ship the exporter"}),),  # todos not a list
        (_call("t3", {"value": ["not", "an", "object"]}),),  # input not an object (parser form)
        (_call("t4", {"items": []}),),  # no todos at all
        (_call("t5", {"todos": todos}),),  # the same list again: nothing new to record
    ]
    messages = [Message(0, "user", "Let us plan the release.", timestamp="2025-04-01T10:00:00Z")]
    for i, tool_calls in enumerate(calls, start=1):
        messages.append(
            Message(
                i,
                "assistant",
                "Updating the todo list.",
                f"2025-04-01T10:0{i}:00Z",
                tool_calls=tool_calls,
            )
        )
    return Transcript(SESSION, "shop", "claude_code", tuple(messages))


def _rejections(db: Database) -> list[dict[str, Any]]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT payload_json FROM events WHERE event_type = ? ORDER BY ts, event_id",
            [TASK_INPUT_REJECTED],
        ).fetchall()
    return [json.loads(r[0]) for r in rows]


def test_malformed_todowrite_input_is_recorded_with_reason_and_original_value(
    db: Database, tmp_path: Path
) -> None:
    ingest_transcripts(db, [_transcript()])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris")

    report = process_session(db, SESSION, pipeline)

    assert report.status == "success"
    with db.read() as conn:
        tasks = {t.title: (t.status, t.priority) for t in list_tasks(conn)}
    # Only the usable items are tasks; nothing became a stub.
    assert tasks == {
        "Ship the exporter": ("in_progress", "high"),
        "Tune the cache": ("pending", None),
        "Rename the flags": ("pending", None),
        "Checking the quotas": ("in_progress", None),
    }

    rejected = _rejections(db)
    seen = {
        (r["field"], json.dumps(r["value"]), r["reason"], r["task_id"] is None) for r in rejected
    }
    assert seen == {
        ("title", json.dumps({"status": "pending"}), "missing_title", True),
        ("title", "42", "title_not_a_string", True),
        ("mention", '"just a string"', "todo_not_an_object", True),
        ("priority", "5", "unknown_priority", False),
        ("status", '"frobnicated"', "unknown_status", False),
        ("title", '"  "', "empty_title", True),
        ("title", "7", "title_not_a_string", False),  # the task came from activeForm
        ("mention", '"Ship the exporter"', "todos_not_a_list", True),
        ("mention", '["not", "an", "object"]', "input_not_an_object", True),
        ("mention", "null", "missing_todos", True),
    }
    assert len(rejected) == len(seen)  # the repeated list is not recorded twice
    assert not any(r["reason"] == "missing_status" for r in rejected)
    by_reason = {r["reason"]: r for r in rejected}
    assert by_reason["todo_not_an_object"]["message_index"] == 1
    assert by_reason["todo_not_an_object"]["tool_use_id"] == "t1"
    assert by_reason["todo_not_an_object"]["item"] == 3
    assert by_reason["todo_not_an_object"]["session_id"] == SESSION
    assert by_reason["todos_not_a_list"]["tool_use_id"] == "t2"
    assert by_reason["unknown_status"]["entry_id"]  # tied to the task's entry
    with db.read() as conn:
        names = {r[0]: r[1] for r in conn.execute(
            "SELECT entity_id, title FROM entities WHERE entity_type = 'task'"
        ).fetchall()}  # fmt: skip
    assert names[by_reason["unknown_status"]["task_id"]] == "Rename the flags"
    assert names[by_reason["unknown_priority"]["task_id"]] == "Tune the cache"


def test_a_rejection_is_recorded_once(conn) -> None:  # type: ignore[no-untyped-def]
    bad = RejectedInput(SESSION, "mention", {"odd": [1, 2]}, "todo_not_an_object", {"item": 0})
    first = TaskResolver(conn, "shop").resolve([], [bad])
    again = TaskResolver(conn, "shop").resolve([], [bad])
    assert [e.event_type for e in first] == [TASK_INPUT_REJECTED]
    assert first[0].payload["value"] == {"odd": [1, 2]}
    assert again == []


def test_a_long_rejected_value_is_stored_cut_to_2000_characters(conn) -> None:  # type: ignore[no-untyped-def]
    long_value = "x" * 5000
    cut = json.dumps(long_value)[:2000] + "…"
    resolver = TaskResolver(conn, "shop")
    events = resolver.resolve(
        [], [RejectedInput(SESSION, "mention", long_value, "todos_not_a_list")]
    )
    events += resolver.resolve(
        [
            TaskMention(
                entry_id="e1",
                session_id=SESSION,
                title="Tune the cache",
                status=long_value,
                priority=None,
                blocked_by=(),
                evidence_aligned=True,
                source="text",
            )
        ]
    )
    rejected = [e for e in events if e.event_type == TASK_INPUT_REJECTED]
    assert [e.payload["reason"] for e in rejected] == ["todos_not_a_list", "unknown_status"]
    stored = [
        json.loads(r[0])["value"]
        for r in conn.execute(
            "SELECT payload_json FROM events WHERE event_type = ? ORDER BY seq",
            [TASK_INPUT_REJECTED],
        ).fetchall()
    ]
    assert stored == [cut, cut]
    assert len(cut) == 2001 and cut.startswith('"xxx')
