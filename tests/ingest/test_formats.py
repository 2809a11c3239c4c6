from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from axiom.ingest.formats import (
    PARSERS,
    UnknownFormat,
    check_format,
    detect_format,
    discover,
    parse_file,
)
from axiom.ingest.importer import import_paths
from axiom.observability.stats import collect_stats
from axiom.store.db import Database

GENERIC = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}
LOCOMO_FLAT = {
    "speaker_a": "Ann",
    "speaker_b": "Bob",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "hi"}],
}
LOCOMO_NESTED = {"sample_id": "conv-1", "conversation": LOCOMO_FLAT, "qa": []}


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.jsonl", "{}", "claude_code"),
        ("a.JSONL", "{}", "claude_code"),
        ("a.md", "User: hi", "markdown"),
        ("a.markdown", "User: hi", "markdown"),
        ("a.txt", "anything", "markdown"),
        ("a.json", json.dumps(GENERIC), "json"),
        ("a.json", json.dumps([GENERIC, GENERIC]), "json"),
        ("a.json", json.dumps(LOCOMO_FLAT), "locomo"),
        ("a.json", json.dumps(LOCOMO_NESTED), "locomo"),
        ("a.json", json.dumps([LOCOMO_NESTED]), "locomo"),
        ("a.json", json.dumps({"name": "package", "version": "1"}), None),
        ("a.json", "[]", None),
        ("a.json", '{"messages": [', "json"),
        ("a.csv", "role,content", None),
        ("a", "User: hi", None),
    ],
)
def test_detection(tmp_path: Path, name: str, content: str, expected: str | None) -> None:
    assert detect_format(tmp_path / name, content.encode()) == expected


def test_an_unrecognised_json_file_is_an_issue(tmp_path: Path) -> None:
    path = tmp_path / "package.json"
    path.write_text(json.dumps({"name": "x"}))
    parsed = parse_file(path)
    assert parsed.transcripts == []
    assert [str(i) for i in parsed.issues] == [
        f'{path}: unrecognised transcript format: a JSON transcript is an object with "messages",'
        " a list of them, or LoCoMo"
    ]


def test_an_unrecognised_json_file_says_what_json_is_read(tmp_path: Path) -> None:
    """A user's first try is often a ChatGPT export: the issue names it and says which
    JSON shapes are read, instead of a bare "unrecognised"."""
    chatgpt = tmp_path / "conversations.json"
    chatgpt.write_text(json.dumps([{"title": "t", "mapping": {"n1": {"message": None}}}]))
    other = tmp_path / "data.json"
    other.write_text(json.dumps([1, 2]))
    shapes = 'a JSON transcript is an object with "messages", a list of them, or LoCoMo'
    assert parse_file(chatgpt).issues[0].reason == (
        f"unrecognised transcript format: a ChatGPT export (conversations with a "
        f'"mapping") is not a format Axiom reads; {shapes}'
    )
    assert parse_file(other).issues[0].reason == f"unrecognised transcript format: {shapes}"


def test_a_broken_json_file_reports_where_it_breaks(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n"messages": [\n')
    (issue,) = parse_file(path).issues
    assert issue.line == 3 and issue.reason.startswith("not valid JSON (")


def test_forced_formats_and_unknown_names(tmp_path: Path) -> None:
    assert sorted(PARSERS) == ["claude_code", "json", "locomo", "markdown"]
    path = tmp_path / "chat.log"
    path.write_text("User: hi\nAssistant: hello\n")
    assert parse_file(path).issues[0].reason == "unrecognised transcript format"
    (t,) = parse_file(path, "markdown").transcripts
    assert [m.role for m in t.messages] == ["user", "assistant"]
    assert check_format("locomo") == "locomo"
    with pytest.raises(UnknownFormat) as err:
        parse_file(path, "yaml")
    assert str(err.value) == "unknown format 'yaml'; known: claude_code, json, locomo, markdown"
    with pytest.raises(UnknownFormat):
        parse_file(tmp_path / "missing.md", "nope")


def test_discover_walks_every_transcript_suffix(tmp_path: Path) -> None:
    for rel in ["a.jsonl", "b/c.json", "b/d.md", "b/e.markdown", "f.TXT", "g.csv", "h.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    explicit = tmp_path / "g.csv"
    files, issues = discover([tmp_path, explicit, tmp_path / "gone"])
    assert [p.relative_to(tmp_path).as_posix() for p in files] == [
        "a.jsonl",
        "b/c.json",
        "b/d.md",
        "b/e.markdown",
        "f.TXT",
        "g.csv",
    ]
    assert [i.reason for i in issues] == ["no such file or directory"]


def test_a_mixed_folder_imports_once(db: Database, tmp_path: Path, sample_session: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(sample_session, folder / "cc.jsonl")
    (folder / "generic.json").write_text(json.dumps([GENERIC, GENERIC]))
    (folder / "notes.md").write_text("User: hi\n\nAssistant: hello\nthere\n")
    (folder / "convo.json").write_text(json.dumps(LOCOMO_NESTED))
    (folder / "config.json").write_text(json.dumps({"debug": True}))

    first = import_paths(db, [folder])
    assert first.files == 5
    assert [(Path(i.path).name, i.reason) for i in first.issues] == [
        (
            "config.json",
            "unrecognised transcript format: a JSON transcript is an object with"
            ' "messages", a list of them, or LoCoMo',
        )
    ]
    assert first.session_ids == [
        "7f3c9a2e-5b1d-4c8e-9a6f-2d4e8b1c0a57",
        "conv-1-session_1",
        "generic-0",
        "generic-1",
        "notes",
    ]
    with db.read() as conn:
        before = collect_stats(conn)
        sources = dict(conn.execute("SELECT session_id, source FROM sessions").fetchall())
    assert sorted(sources.values()) == ["claude_code", "json", "json", "locomo", "markdown"]
    assert (before["sessions"], before["messages"]) == (5, 12 + 2 + 2 + 2 + 1)

    second = import_paths(db, [folder])
    with db.read() as conn:
        after = collect_stats(conn)
    assert (second.sessions_new, second.sessions_unchanged) == (0, 5)
    assert after == before
