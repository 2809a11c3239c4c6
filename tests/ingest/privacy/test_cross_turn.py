"""A private region that spans turns hides every turn it covers, and an unclosed one hides
the rest of the session, in Markdown, generic JSON and Claude Code files alike; tags in
code still do nothing. Checked in the DuckDB store after a real import."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.ingest.importer import import_paths
from axiom.ingest.privacy.filter import OpenRegion, PrivacyFilter
from axiom.ingest.session_queries import list_messages
from axiom.store.db import Database

SPANNING = [
    ("user", "here is context <private>\nmy secret diary entry"),
    ("assistant", "the private reply about the diary"),
    ("user", "end of it </private> and public again"),
    ("assistant", "fine"),
]
UNCLOSED = [
    ("user", "public start [private] the rest is mine"),
    ("assistant", "my reply to the private part"),
    ("user", "still private, nothing closes it"),
]
IN_CODE = [
    ("user", "the tag is written `<private>` like that"),
    ("assistant", "ok, and this stays public"),
]
SECRETS = ("secret diary", "private reply", "end of it", "rest is mine", "my reply", "still")


def _stored(db: Database, sid: str) -> tuple[list[str], dict]:
    with db.read() as conn:
        texts = [m.text for m in list_messages(conn, sid)]
        meta = json.loads(
            conn.execute("SELECT meta_json FROM sessions WHERE session_id = ?", [sid]).fetchone()[0]
        )
        raw = conn.execute("SELECT string_agg(payload_json::VARCHAR, '') FROM events").fetchone()[0]
    for leaked in SECRETS:
        assert leaked not in raw
    return texts, meta["privacy"]


def _assert_hidden(db: Database, ids: dict[str, str]) -> None:
    texts, counts = _stored(db, ids["spanning"])
    assert texts == ["here is context [PRIVATE]", "[PRIVATE]", "[PRIVATE] and public again", "fine"]
    assert counts == {"private_tag": 1}
    texts, counts = _stored(db, ids["unclosed"])
    assert texts == ["public start [PRIVATE]", "[PRIVATE]", "[PRIVATE]"]
    assert counts == {"private_tag": 1, "private_unclosed": 1}
    texts, counts = _stored(db, ids["in_code"])
    assert texts == [text for _, text in IN_CODE] and counts == {}


def _markdown(turns: list[tuple[str, str]]) -> str:
    return "\n".join(f"{role.capitalize()}: {text}" for role, text in turns) + "\n"


def test_markdown_regions_span_turns(db: Database, tmp_path: Path) -> None:
    for name, turns in (("spanning", SPANNING), ("unclosed", UNCLOSED), ("in_code", IN_CODE)):
        (tmp_path / f"{name}.md").write_text(_markdown(turns))
    import_paths(db, [tmp_path])
    _assert_hidden(db, {"spanning": "spanning", "unclosed": "unclosed", "in_code": "in_code"})


def test_generic_json_regions_span_turns(db: Database, tmp_path: Path) -> None:
    sessions = [
        {"session_id": name, "messages": [{"role": r, "content": t} for r, t in turns]}
        for name, turns in (("spanning", SPANNING), ("unclosed", UNCLOSED), ("in_code", IN_CODE))
    ]
    (tmp_path / "all.json").write_text(json.dumps(sessions))
    import_paths(db, [tmp_path / "all.json"])
    _assert_hidden(db, {"spanning": "spanning", "unclosed": "unclosed", "in_code": "in_code"})


def _claude_line(sid: str, number: int, role: str, content: object) -> str:
    return json.dumps(
        {
            "type": role,
            "sessionId": sid,
            "uuid": f"{sid}-{number}",
            "parentUuid": f"{sid}-{number - 1}" if number else None,
            "timestamp": f"2026-01-01T00:00:{number:02d}Z",
            "message": {"role": role, "content": content},
        }
    )


def test_claude_code_regions_span_turns_and_hide_tool_input_and_thinking(
    db: Database, tmp_path: Path
) -> None:
    folder = tmp_path / "-home-u-proj"
    folder.mkdir()
    for name, turns in (("spanning", SPANNING), ("unclosed", UNCLOSED), ("in_code", IN_CODE)):
        lines = []
        for number, (role, text) in enumerate(turns):
            content: object = text
            if role == "assistant":
                content = [
                    {"type": "thinking", "thinking": f"thinking about {text}"},
                    {"type": "text", "text": text},
                    {
                        "type": "tool_use",
                        "id": f"tu{number}",
                        "name": "Bash",
                        "input": {"command": f"echo {text}", "description": "say it"},
                    },
                ]
            lines.append(_claude_line(name, number, role, content))
        (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    import_paths(db, [folder])
    _assert_hidden(db, {"spanning": "spanning", "unclosed": "unclosed", "in_code": "in_code"})
    with db.read() as conn:
        hidden = list_messages(conn, "spanning")[1]
        public = list_messages(conn, "spanning")[3]
    assert hidden.tool_calls[0]["name"] == "Bash" and hidden.tool_calls[0]["tool_use_id"] == "tu1"
    assert hidden.tool_calls[0]["input"] == {"command": "[PRIVATE]", "description": "[PRIVATE]"}
    assert hidden.meta["thinking"] == "[PRIVATE]"
    assert public.meta["thinking"] == "thinking about fine"
    assert public.tool_calls[0]["input"]["command"] == "echo fine"


def test_the_filter_carries_an_open_region_and_counts_it_once() -> None:
    f = PrivacyFilter()
    first = f.apply("a <private> b <private> c </private> d", carry=True)
    assert first.text == "a [PRIVATE]" and first.open_region == OpenRegion("angle", 1)
    assert first.counts == {}
    middle = f.apply(
        "```\n<private> in code, still inside\n```", inside=first.open_region, carry=True
    )
    assert middle.text == "[PRIVATE]" and middle.counts == {}
    last = f.apply("e </private> f", inside=first.open_region, carry=True)
    assert last.text == "[PRIVATE] f" and last.open_region is None
    assert last.counts == {"private_tag": 1}
    # Without carrying, an unclosed tag still hides the rest of its own text, counted there.
    alone = f.apply("a <private> b")
    assert (alone.text, alone.counts) == ("a [PRIVATE]", {"private_tag": 1, "private_unclosed": 1})
