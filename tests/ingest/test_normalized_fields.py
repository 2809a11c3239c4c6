"""Fields of the wrong shape are normalized with a `file:line: reason` warning instead of
being changed silently; checked on what lands in a real DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.ingest.importer import import_paths
from axiom.store.db import Database


def _line(uuid: str, content: object, **extra: object) -> str:
    obj: dict[str, object] = {
        "type": "user",
        "sessionId": "s",
        "uuid": uuid,
        "timestamp": "2025-10-01T10:00:00Z",
        "message": {"role": "user", "content": content},
    }
    obj.update(extra)
    return json.dumps(obj)


def _import(db: Database, path: Path, *lines: str) -> tuple[list[str], list[tuple]]:
    path.write_text("\n".join(lines) + "\n")
    report = import_paths(db, [path])
    with db.read() as conn:
        rows = conn.execute(
            "SELECT text, ts, tool_calls_json, meta_json FROM messages ORDER BY message_index"
        ).fetchall()
    return [str(i) for i in report.issues], rows


def test_content_that_is_a_number_is_stored_as_its_text(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    issues, rows = _import(db, path, _line("n1", 12345), _line("n2", None))
    assert issues == [
        f"{path}:1: 'message.content' is a number, not text; stored as its JSON text",
        f"{path}:2: 'message.content' is missing; stored as empty text",
    ]
    assert [r[0] for r in rows] == ["12345", ""]


def test_blocks_of_the_wrong_shape_are_reported(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    blocks = [{"type": "text", "text": {"nested": 1}}, "stray string", 5, None]
    issues, rows = _import(db, path, _line("b1", blocks))
    assert issues == [
        f"{path}:1: 'message.content[0].text' is a dict, not text; stored as its JSON text",
        f"{path}:1: 'message.content[1]' is a bare string, not a block; kept as text",
        f"{path}:1: 'message.content[2]' is not a block (int); skipped",
        f"{path}:1: 'message.content[3]' is not a block (NoneType); skipped",
    ]
    assert rows[0][0] == '{"nested": 1}\n\nstray string'


def test_timestamps_epoch_numbers_are_read_others_dropped_with_a_warning(
    db: Database, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    issues, rows = _import(
        db,
        path,
        _line("t1", "a", timestamp="yesterday"),
        _line("t2", "b", timestamp=1700000000),
        _line("t3", "c", timestamp=1700000000123),
        _line("t4", "d", timestamp={"a": 1}),
        _line("t5", "e", timestamp=None),
    )
    assert issues == [
        f"{path}:1: timestamp 'yesterday' is not ISO-8601; dropped",
        f"{path}:4: timestamp \"{{'a': 1}}\" is not a string; dropped",
    ]
    assert [str(r[1]) for r in rows] == [
        "None",
        "2023-11-14 22:13:20",
        "2023-11-14 22:13:20.123000",
        "None",
        "None",
    ]


def test_a_byte_order_mark_before_the_first_line_is_dropped(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (_line("m1", "bom first") + "\n").encode())
    report = import_paths(db, [path])
    assert report.issues == [] and report.messages == 1
    with db.read() as conn:
        assert conn.execute("SELECT text FROM messages").fetchall() == [("bom first",)]


def test_nan_and_infinity_become_null_and_stored_json_stays_valid(
    db: Database, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    line = _line("x1", [{"type": "tool_use", "id": "t", "name": "X", "input": {"v": 0, "w": 1}}])
    line = line.replace('"v": 0', '"v": NaN').replace('"w": 1', '"w": -Infinity, "z": 1e400')
    issues, rows = _import(db, path, line)
    assert issues == [
        f"{path}:1: NaN is not valid JSON; stored as null",
        f"{path}:1: -Infinity (or a number too large for a float); stored as null",
        f"{path}:1: Infinity (or a number too large for a float); stored as null",
    ]

    def strict(text: str) -> object:
        return json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))

    (call,) = strict(rows[0][2])  # type: ignore[misc]
    assert call["input"] == {"v": None, "w": None, "z": None}
    with db.read() as conn:
        (payload,) = conn.execute("SELECT payload_json FROM events").fetchone()
    assert "NaN" not in payload and "Infinity" not in payload
    strict(payload)


def test_a_tool_input_that_is_not_an_object_is_kept_under_value(
    db: Database, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    blocks = [
        {"type": "text", "text": "calling"},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": ["ls", "-l"]},
        {"type": "tool_use", "id": "t2", "name": "Bash"},
    ]
    issues, rows = _import(db, path, _line("u1", blocks))
    assert issues == [
        f"{path}:1: 'message.content[1].input' is a list, not an object; kept under 'value'"
    ]
    assert json.loads(rows[0][2]) == [
        {"tool_use_id": "t1", "name": "Bash", "input": {"value": ["ls", "-l"]}},
        {"tool_use_id": "t2", "name": "Bash", "input": {}},
    ]
