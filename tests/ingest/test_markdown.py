from __future__ import annotations

from pathlib import Path

from axiom.ingest.formats import parse_file
from axiom.ingest.markdown import parse_markdown


def _parse(tmp_path: Path, text: str, name: str = "talk.md"):  # type: ignore[no-untyped-def]
    folder = tmp_path / "notes"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(text.encode())
    return path, parse_markdown(path, path.read_bytes())


def test_prefixed_turns_keep_multi_line_text_verbatim(tmp_path: Path) -> None:
    text = (
        "User: How do I list files?\n"
        "Also hidden ones.  \n"
        "\n"
        "ASSISTANT:\n"
        "\n"
        "Use:\n"
        "\n"
        "    ls -la\n"
        "\n"
        "That's it.   \n"
        "\n"
        "\n"
        "human:   thanks\n"
        "AI: welcome\n"
        "System: session ended"
    )
    path, parsed = _parse(tmp_path, text)
    assert parsed.issues == []
    (t,) = parsed.transcripts
    assert (t.session_id, t.project, t.source) == ("talk", "notes", "markdown")
    assert t.title == "How do I list files?"
    assert [(m.role, m.text) for m in t.messages] == [
        ("user", "How do I list files?\nAlso hidden ones.  "),
        ("assistant", "Use:\n\n    ls -la\n\nThat's it.   "),
        ("user", "thanks"),
        ("assistant", "welcome"),
        ("system", "session ended"),
    ]
    assert [m.meta for m in t.messages] == [
        {"label": "User", "line": 1},
        {"label": "ASSISTANT", "line": 4},
        {"label": "human", "line": 13},
        {"label": "AI", "line": 14},
        {"label": "System", "line": 15},
    ]
    assert [m.index for m in t.messages] == list(range(5))


def test_heading_turns_make_prefix_lines_content(tmp_path: Path) -> None:
    text = (
        "# Deploy chat\n"
        "\n"
        "## User\n"
        "Deploy with this config:\n"
        "user: root\n"
        "\n"
        "### assistant:\n"
        "Done.\n"
        "## User stories\n"
        "are not a marker\n"
    )
    _, parsed = _parse(tmp_path, text)
    assert parsed.issues == []
    (t,) = parsed.transcripts
    assert t.title == "Deploy chat"
    assert [(m.role, m.text) for m in t.messages] == [
        ("user", "Deploy with this config:\nuser: root"),
        ("assistant", "Done.\n## User stories\nare not a marker"),
    ]


def test_bold_markers_code_fences_and_crlf(tmp_path: Path) -> None:
    text = (
        "**User:** show me yaml\r\n"
        "**Assistant**: here\r\n"
        "```yaml\r\n"
        "user: root\r\n"
        "```\r\n"
        "**User** is not a marker without a colon\r\n"
    )
    _, parsed = _parse(tmp_path, text, name="chat.txt")
    (t,) = parsed.transcripts
    assert [(m.role, m.text) for m in t.messages] == [
        ("user", "show me yaml"),
        (
            "assistant",
            "here\r\n```yaml\r\nuser: root\r\n```\r\n**User** is not a marker without a colon",
        ),
    ]


def test_markers_need_line_start_and_a_colon(tmp_path: Path) -> None:
    text = "User: a\n  Assistant: indented is content\nusers: not a role\nAssistant:b"
    _, parsed = _parse(tmp_path, text)
    (t,) = parsed.transcripts
    assert [m.text for m in t.messages] == [
        "a\n  Assistant: indented is content\nusers: not a role",
        "b",
    ]


def test_an_empty_turn_is_kept_with_empty_text(tmp_path: Path) -> None:
    _, parsed = _parse(tmp_path, "User:\n\nAssistant: hi\n")
    assert [(m.role, m.text) for m in parsed.transcripts[0].messages] == [
        ("user", ""),
        ("assistant", "hi"),
    ]


def test_text_before_the_first_turn_is_reported(tmp_path: Path) -> None:
    path, parsed = _parse(tmp_path, "# Title\n\nexported 2026-01-01\nsource: web\n\nUser: hi\n")
    assert parsed.transcripts[0].title == "Title"
    assert [str(i) for i in parsed.issues] == [
        f"{path}:3: 2 non-blank line(s) before the first turn were skipped"
    ]


def test_no_marker_is_one_issue(tmp_path: Path) -> None:
    path, parsed = _parse(tmp_path, "Just some notes.\nNothing like a chat.\n", name="n.txt")
    assert parsed.transcripts == []
    (issue,) = parsed.issues
    assert issue.line is None and issue.reason.startswith("no turn marker found")
    assert parse_file(path).issues == parsed.issues


def test_invalid_utf8_is_reported_and_kept_with_replacement(tmp_path: Path) -> None:
    path, parsed = _parse(tmp_path, "User: ok\n")
    path.write_bytes(b"User: ok\nAssistant: caf\xe9 au lait\n")
    parsed = parse_file(path)
    assert parsed.transcripts[0].messages[1].text == "caf\ufffd au lait"
    (issue,) = parsed.issues
    assert issue.line == 2 and "invalid UTF-8" in issue.reason


def test_empty_file(tmp_path: Path) -> None:
    path, parsed = _parse(tmp_path, "\n\n")
    assert [i.reason for i in parsed.issues] == ["file is empty"]
    assert [i.reason for i in parse_file(path).issues] == ["file is empty"]


def test_only_newlines_end_lines(tmp_path: Path) -> None:
    _, parsed = _parse(tmp_path, "User: page one\fUser: still one\u2028Assistant: same\nAI: two")
    assert [m.text for m in parsed.transcripts[0].messages] == [
        "page one\fUser: still one\u2028Assistant: same",
        "two",
    ]
