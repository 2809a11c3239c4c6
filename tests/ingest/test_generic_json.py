from __future__ import annotations

import json
from pathlib import Path

from axiom.ingest.formats import parse_file
from axiom.ingest.generic_json import parse_generic_json
from axiom.ingest.importer import import_paths
from axiom.store.db import Database


def _write(tmp_path: Path, doc: object, name: str = "chat.json") -> Path:
    folder = tmp_path / "my-project"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(doc, ensure_ascii=False))
    return path


def test_a_single_session_object_with_defaults_from_the_path(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "messages": [
                {"role": "User", "content": "How do I rotate logs?\nsecond line"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Use logrotate."},
                        {"type": "image", "source": "…"},
                        {"type": "text", "text": "Or journald."},
                    ],
                    "timestamp": "2026-01-01T00:00:05Z",
                },
            ]
        },
    )
    parsed = parse_generic_json(path, path.read_bytes())
    assert parsed.issues == []
    (t,) = parsed.transcripts
    assert (t.session_id, t.project, t.source) == ("chat", "my-project", "json")
    assert t.title == "How do I rotate logs?"
    assert t.started_at == "2026-01-01T00:00:05Z"
    assert [(m.index, m.role, m.text) for m in t.messages] == [
        (0, "user", "How do I rotate logs?\nsecond line"),
        (1, "assistant", "Use logrotate.\n\nOr journald."),
    ]
    assert t.messages[0].meta == {"role": "User"}


def test_ids_title_project_from_the_object_and_role_aliases(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "session_id": "abc",
            "title": "Logs",
            "project": "ops",
            "messages": [
                {"role": "human", "content": "hi", "timestamp": 1767225600},
                {"role": "model", "content": "hello", "timestamp": 1767225601000, "id": "m2"},
                {"role": "developer", "content": "be brief"},
                {"role": "tool", "content": "exit 0"},
            ],
        },
    )
    (t,) = parse_generic_json(path, path.read_bytes()).transcripts
    assert (t.session_id, t.title, t.project) == ("abc", "Logs", "ops")
    assert [m.role for m in t.messages] == ["user", "assistant", "system", "tool_result"]
    assert t.messages[0].timestamp == "2026-01-01T00:00:00Z"
    assert t.messages[1].timestamp == "2026-01-01T00:00:01Z"
    assert t.messages[1].uuid == "m2"


def test_a_list_is_one_session_per_item_with_indexed_ids(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"messages": [{"role": "user", "content": "a"}]},
            {"session_id": "named", "messages": [{"role": "user", "content": "b"}]},
            {"messages": [{"role": "user", "content": "c"}]},
        ],
        name="export.json",
    )
    parsed = parse_file(path)
    assert parsed.issues == []
    assert [t.session_id for t in parsed.transcripts] == ["export-0", "named", "export-2"]
    assert [t.meta["item"] for t in parsed.transcripts] == [0, 1, 2]


def test_bad_items_are_reported_with_a_json_path_and_the_rest_kept(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {
                "messages": [
                    {"role": "user", "content": "kept"},
                    "not an object",
                    {"content": "no role"},
                    {"role": "narrator", "content": "odd role"},
                    {"role": "user"},
                    {"role": "user", "content": 42},
                    {"role": "user", "content": [{"type": "text", "text": None}]},
                    {"role": "user", "content": "bad time", "timestamp": {"at": 1}},
                    {"role": "assistant", "content": "also kept"},
                ]
            },
            {"messages": "nope"},
            7,
            {"messages": []},
            {"session_id": "export-0", "messages": [{"role": "user", "content": "dup"}]},
        ],
        name="export.json",
    )
    parsed = parse_generic_json(path, path.read_bytes())
    (t,) = parsed.transcripts
    assert [m.text for m in t.messages] == ["kept", "bad time", "also kept"]
    assert [m.index for m in t.messages] == [0, 1, 2]
    assert t.messages[1].timestamp is None
    assert all(i.line is None for i in parsed.issues)
    assert [i.reason for i in parsed.issues] == [
        "[0].messages[1]: message is not an object",
        "[0].messages[2]: 'role' is missing or not a string",
        "[0].messages[3]: unknown role 'narrator'",
        "[0].messages[4]: 'content' is missing",
        "[0].messages[5]: 'content' must be a string or a list of blocks",
        "[0].messages[6].content[0]: text block has no string 'text'",
        "[0].messages[7]: timestamp \"{'at': 1}\" is not a string; dropped",
        "[1].messages: missing or not a list",
        "[2]: session is not an object",
        "[3].messages: no usable messages",
        "[4]: duplicate session_id 'export-0' (first at [0]); skipped",
    ]


def test_wrong_top_level_shapes(tmp_path: Path) -> None:
    for doc, reason in [
        ("text", "top level must be a session object or a list of them"),
        ([], "the list holds no sessions"),
        ({"title": "no messages"}, "messages: missing or not a list"),
    ]:
        path = _write(tmp_path, doc)
        parsed = parse_generic_json(path, path.read_bytes())
        assert parsed.transcripts == []
        assert [i.reason for i in parsed.issues] == [reason]


def test_invalid_json_is_one_issue_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"messages": [\n  {"role": "user", "content": "a"}\n  {"role": "x"}\n]}')
    parsed = parse_file(path)
    assert parsed.transcripts == []
    (issue,) = parsed.issues
    assert issue.line == 3
    assert issue.reason == "not valid JSON (Expecting ',' delimiter at column 3)"
    assert str(issue) == f"{path}:3: not valid JSON (Expecting ',' delimiter at column 3)"


def test_invalid_utf8_is_reported_and_kept_with_replacement(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    doc = json.dumps({"messages": [{"role": "user", "content": "café"}]}, ensure_ascii=False)
    path.write_bytes(
        b"\xef\xbb\xbf" + doc.replace("\n", "").encode().replace("é".encode(), b"\xff")
    )
    parsed = parse_file(path)
    assert parsed.transcripts[0].messages[0].text == "caf\ufffd"
    (issue,) = parsed.issues
    assert issue.line == 1 and "invalid UTF-8" in issue.reason


def test_empty_files(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text("  \n")
    assert [i.reason for i in parse_file(path).issues] == ["file is empty"]
    assert [i.reason for i in parse_generic_json(path, b"").issues] == ["file is empty"]


def test_a_bad_timestamp_drops_the_timestamp_not_the_message(db: Database, tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "session_id": "times",
            "messages": [
                {"role": "user", "content": "late", "timestamp": "9999-12-31T23:59:59-05:00"},
                {"role": "assistant", "content": "odd", "timestamp": {"x": 1}},
                {"role": "user", "content": "fine", "timestamp": "2026-01-01T00:00:00Z"},
            ],
        },
    )
    report = import_paths(db, [path])
    assert [str(i) for i in report.issues] == [
        f"{path}: messages[0]: timestamp '9999-12-31T23:59:59-05:00' is out of range in UTC;"
        " dropped",
        f"{path}: messages[1]: timestamp \"{{'x': 1}}\" is not a string; dropped",
    ]
    assert report.sessions_new == 1 and report.messages == 3
    with db.read() as conn:
        rows = conn.execute(
            "SELECT text, ts FROM messages WHERE session_id = 'times' ORDER BY message_index"
        ).fetchall()
    assert [(text, None if ts is None else ts.isoformat()) for text, ts in rows] == [
        ("late", None),
        ("odd", None),
        ("fine", "2026-01-01T00:00:00"),
    ]


def test_a_cut_string_is_named_once_with_its_column(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"messages": [{"role": "user", "content": "unfinished')
    (issue,) = parse_file(path).issues
    assert issue.reason == "not valid JSON (Unterminated string starting at column 43)"
