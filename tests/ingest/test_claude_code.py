from __future__ import annotations

import json
from pathlib import Path

from axiom.ingest.claude_code import parse_claude_code
from axiom.ingest.formats import parse_file


def _line(**kw) -> str:  # type: ignore[no-untyped-def]
    base = {"type": "user", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z"}
    base.update(kw)
    return json.dumps(base, ensure_ascii=False)


def test_it_reads_the_sample_session(sample_session: Path) -> None:
    parsed = parse_claude_code(sample_session)
    assert parsed.issues == []
    (t,) = parsed.transcripts
    assert t.title == "Event store on DuckDB, importer and first blocked task"
    assert t.project == "-home-dev-axiom"
    roles = [m.role for m in t.messages]
    assert roles[:3] == ["user", "assistant", "user"]
    assert "tool_result" in roles
    todo = next(m for m in t.messages if m.tool_calls and m.tool_calls[0].name == "TodoWrite")
    assert todo.tool_calls[0].input["todos"][0]["content"] == "Write the events migration"
    thinking = t.messages[1]
    assert thinking.meta["thinking"].startswith("Embedded options")
    assert "Decision: we will use DuckDB" in thinking.text
    assert [m.index for m in t.messages] == list(range(len(t.messages)))


def test_malformed_lines_are_reported_with_line_numbers_and_the_rest_is_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        "\n".join(
            [
                _line(message={"role": "user", "content": "first"}),
                "{not json",
                "[1, 2]",
                _line(type="assistant", message={"role": "assistant", "content": "second"}),
                _line(message="not an object"),
            ]
        )
    )
    parsed = parse_claude_code(path)
    assert [m.text for m in parsed.transcripts[0].messages] == ["first", "second"]
    assert [(i.line, i.reason.split(" (")[0]) for i in parsed.issues] == [
        (2, "not valid JSON"),
        (3, "line is not a JSON object"),
        (5, "'message' is missing or not an object"),
    ]
    assert str(parsed.issues[0]).startswith(f"{path}:2: ")


def test_invalid_utf8_is_reported_and_the_line_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = _line(message={"role": "user", "content": "café "}).encode()
    path.write_bytes(good.replace("café".encode(), b"caf\xff"))
    parsed = parse_claude_code(path)
    assert parsed.transcripts[0].messages[0].text == "caf\ufffd "
    assert "invalid UTF-8" in parsed.issues[0].reason and parsed.issues[0].line == 1


def test_an_empty_file_is_a_clear_issue(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    parsed = parse_file(path)
    assert parsed.transcripts == []
    assert str(parsed.issues[0]) == f"{path}: file is empty"


def test_a_file_with_only_other_line_types_is_a_clear_issue(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "file-history-snapshot"}) + "\n")
    assert parse_file(path).issues[0].reason == "no user or assistant messages found"


def test_a_ten_megabyte_message_is_kept_whole(tmp_path: Path) -> None:
    big = "x" * (10 * 1024 * 1024)
    path = tmp_path / "s.jsonl"
    path.write_text(_line(message={"role": "user", "content": [{"type": "text", "text": big}]}))
    (t,) = parse_claude_code(path).transcripts
    assert len(t.messages[0].text) == len(big)


def test_sessions_sharing_a_file_are_split_by_session_id(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        _line(message={"role": "user", "content": "a"})
        + "\n"
        + _line(sessionId="s2", message={"role": "user", "content": "b"})
    )
    assert sorted(t.session_id for t in parse_claude_code(path).transcripts) == ["s1", "s2"]


def test_a_summary_without_session_id_titles_the_session_holding_its_leaf(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"type": "summary", "summary": "Earlier session", "leafUuid": "zz"}),
                json.dumps({"type": "summary", "summary": "About B", "leafUuid": "b2"}),
                _line(sessionId="A", uuid="a1", message={"role": "user", "content": "first A"}),
                _line(sessionId="B", uuid="b1", message={"role": "user", "content": "first B"}),
                _line(sessionId="B", uuid="b2", message={"role": "user", "content": "then B"}),
            ]
        )
    )
    titles = {t.session_id: t.title for t in parse_claude_code(path).transcripts}
    # A's title comes from its own first line, not from a summary of another session.
    assert titles == {"A": "first A", "B": "About B"}


def test_a_summary_without_any_anchor_titles_a_file_of_one_session(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(
        json.dumps({"type": "summary", "summary": "The one"})
        + "\n"
        + _line(uuid="u1", message={"role": "user", "content": "hello"})
    )
    (t,) = parse_claude_code(path).transcripts
    assert t.title == "The one"


def test_the_project_is_the_claude_folder_else_the_working_directory(tmp_path: Path) -> None:
    """In Claude Code's projects folder the project is the folder's name (Claude Code names
    it after the working directory). Elsewhere (an upload kept under a random folder, a
    backup folder) the lines' `cwd` names it the same way, so the session's tasks join the
    ones imported from `~/.claude/projects`; without a cwd the folder's name stays."""
    line = _line(cwd="/home/mina/my.app", message={"role": "user", "content": "hello"})
    claude = tmp_path / "-home-mina-my-app" / "s1.jsonl"
    upload = tmp_path / "04eacc28482bb83a" / "s1.jsonl"
    bare = tmp_path / "backup" / "s1.jsonl"
    for path, text in ((claude, line), (upload, line), (bare, _line(message={"content": "hi"}))):
        path.parent.mkdir()
        path.write_text(text + "\n")
    assert parse_claude_code(claude).transcripts[0].project == "-home-mina-my-app"
    assert parse_claude_code(upload).transcripts[0].project == "-home-mina-my-app"
    assert parse_claude_code(bare).transcripts[0].project == "backup"
    windows = tmp_path / "C--Users-mina-app" / "s1.jsonl"
    windows.parent.mkdir()
    windows.write_text(_line(cwd="C:\\Users\\mina\\app", message={"content": "hi"}) + "\n")
    assert parse_claude_code(windows).transcripts[0].project == "C--Users-mina-app"
