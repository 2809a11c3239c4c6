from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from axiom.ingest.formats import detect_format, parse_file
from axiom.ingest.importer import import_paths
from axiom.ingest.locomo import parse_locomo, parse_session_date
from axiom.observability.stats import collect_stats
from axiom.store.db import Database
from tests.locomo_data import LOCOMO_DEV

DEV_FILES = sorted(LOCOMO_DEV.glob("*.json"))
needs_dev = pytest.mark.skipif(len(DEV_FILES) < 2, reason="locomo-dev data not present")


def _sessions(conv: dict) -> list[tuple[int, list[dict]]]:  # type: ignore[type-arg]
    keys = [k for k in conv if re.fullmatch(r"session_\d+", k)]
    return sorted((int(k.split("_")[1]), conv[k]) for k in keys)


@needs_dev
@pytest.mark.parametrize("path", DEV_FILES, ids=lambda p: p.name)
def test_the_dev_files_parse_session_by_session(path: Path) -> None:
    raw = json.loads(path.read_text())
    assert detect_format(path, path.read_bytes()) == "locomo"
    parsed = parse_file(path)
    assert parsed.issues == []
    sessions = _sessions(raw)
    assert len(parsed.transcripts) == len(sessions)
    for t, (n, turns) in zip(parsed.transcripts, sessions, strict=True):
        assert t.session_id == f"conv-{path.stem}-session_{n}"
        assert (t.project, t.source) == ("locomo", "locomo")
        assert t.meta["session"] == n and t.meta["sample_id"] == f"conv-{path.stem}"
        assert t.meta["session_date"] == raw[f"session_{n}_date_time"]
        assert len(t.messages) == len(turns)
        assert [m.meta["dia_id"] for m in t.messages] == [turn["dia_id"] for turn in turns]
        assert [m.meta["speaker"] for m in t.messages] == [turn["speaker"] for turn in turns]
        assert [m.index for m in t.messages] == list(range(len(turns)))
        for m, turn in zip(t.messages, turns, strict=True):
            expected_role = "user" if turn["speaker"] == raw["speaker_a"] else "assistant"
            assert m.role == expected_role
            assert m.text.startswith(turn["text"])
            if turn.get("blip_caption"):
                assert m.text == f"{turn['text']} [image: {turn['blip_caption']}]"
                assert m.meta["blip_caption"] == turn["blip_caption"]
            else:
                assert m.text == turn["text"] and "blip_caption" not in m.meta
            assert "query" not in m.text or "query" in turn["text"]
    total = sum(len(turns) for _, turns in sessions)
    assert sum(len(t.messages) for t in parsed.transcripts) == total


@needs_dev
def test_title_date_and_roles_of_conv_26() -> None:
    parsed = parse_file(LOCOMO_DEV / "26.json")
    first = parsed.transcripts[0]
    assert first.title == "Caroline & Melanie — 8 May 2023"
    assert first.started_at == "2023-05-08T13:56:00"
    m = first.messages[0]
    assert (m.role, m.meta["speaker"], m.meta["session_date"]) == (
        "user",
        "Caroline",
        "1:56 pm on 8 May, 2023",
    )
    assert first.messages[1].role == "assistant" and first.messages[1].meta["speaker"] == "Melanie"
    photo = next(m for m in first.messages if m.meta["dia_id"] == "D1:5")
    assert photo.meta["img_url"] == ["https://i.redd.it/l7hozpetnhlb1.jpg"]
    assert photo.text.endswith(
        " [image: a photo of a dog walking past a wall with a painting of a woman]"
    )


def test_session_dates() -> None:
    assert parse_session_date("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00"
    assert parse_session_date("12:09 am on 13 September, 2023").isoformat() == (
        "2023-09-13T00:09:00"
    )
    assert parse_session_date("8 Sept 2023") is None


@needs_dev
def test_a_list_of_nested_conversations_like_locomo10(tmp_path: Path) -> None:
    items = []
    for path in DEV_FILES:
        raw = json.loads(path.read_text())
        conversation = {k: v for k, v in raw.items() if k.startswith(("speaker_", "session_"))}
        items.append({"sample_id": f"conv-{path.stem}", "conversation": conversation, "qa": []})
    combined = tmp_path / "locomo10.json"
    combined.write_text(json.dumps(items))
    assert detect_format(combined, combined.read_bytes()) == "locomo"
    parsed = parse_file(combined)
    assert parsed.issues == []
    flat = [t for p in DEV_FILES for t in parse_file(p).transcripts]
    assert [t.session_id for t in parsed.transcripts] == [t.session_id for t in flat]
    assert [t.messages for t in parsed.transcripts] == [t.messages for t in flat]


def _turn(speaker: str, dia_id: str, text: str, **kw: object) -> dict[str, object]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **kw}


def test_bad_shapes_are_reported_with_paths_and_the_rest_kept(tmp_path: Path) -> None:
    doc = [
        {
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bob",
                "session_1_date_time": "sometime in spring",
                "session_1": [
                    _turn("Ann", "D1:1", "hi"),
                    "nope",
                    {"speaker": "Bob", "dia_id": "D1:3"},
                    _turn("Eve", "D1:4", "intruder"),
                    {"speaker": "Bob", "text": "no id"},
                    _turn("Bob", "D1:6", "", blip_caption="a photo of a cat"),
                ],
                "session_2": {"not": "a list"},
                "session_3": [],
            }
        },
        {"conversation": {"speaker_a": "Ann", "session_1": []}},
        {"something": "else"},
    ]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    parsed = parse_locomo(path, path.read_bytes())
    (t,) = parsed.transcripts
    assert t.session_id == "bad-0-session_1"
    assert t.title == "Ann & Bob — sometime in spring" and t.started_at is None
    assert [(m.role, m.meta["dia_id"], m.text) for m in t.messages] == [
        ("user", "D1:1", "hi"),
        ("user", "D1:4", "intruder"),
        ("assistant", None, "no id"),
        ("assistant", "D1:6", "[image: a photo of a cat]"),
    ]
    assert [i.reason for i in parsed.issues] == [
        "[0].conversation.session_1_date_time: unrecognised date 'sometime in spring'",
        "[0].conversation.session_1[1]: turn is not an object",
        "[0].conversation.session_1[2]: 'text' is missing or not a string",
        "[0].conversation.session_1[3]: speaker 'Eve' is neither speaker_a nor speaker_b;"
        " kept as user",
        "[0].conversation.session_1[4]: 'dia_id' is missing; turn kept without it",
        "[0].conversation.session_2: not a list of turns",
        "[0].conversation.session_3: no usable turns",
        "[1].conversation.speaker_a/speaker_b: missing, not text or the same",
        "[2]: not a LoCoMo conversation (no speaker_a and session_N lists)",
    ]


def test_invalid_json_utf8_and_empty(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"speaker_a": "Ann",\n "speaker_b": }')
    (issue,) = parse_locomo(path, path.read_bytes()).issues
    assert issue.line == 2 and issue.reason.startswith("not valid JSON (Expecting value")

    doc = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": [_turn("Ann", "D1:1", "Zoë")]}
    path.write_bytes(json.dumps(doc, ensure_ascii=False).encode().replace("ë".encode(), b"\xeb"))
    parsed = parse_file(path, "locomo")
    assert parsed.transcripts[0].messages[0].text == "Zo\ufffd"
    assert parsed.transcripts[0].session_id == "x-session_1"
    assert "invalid UTF-8" in parsed.issues[0].reason

    assert [i.reason for i in parse_locomo(path, b"").issues] == ["file is empty"]
    assert [i.reason for i in parse_locomo(path, b"[]").issues] == [
        "the list holds no conversations"
    ]


@needs_dev
def test_importing_the_dev_folder_twice_changes_no_count(db: Database, tmp_path: Path) -> None:
    first = import_paths(db, [LOCOMO_DEV])
    # Walking the folder also picks up README.md, which is reported, not imported.
    assert first.files == 3
    assert [(Path(i.path).name, i.reason[:20]) for i in first.issues] == [
        ("README.md", "no turn marker found")
    ]
    with db.read() as conn:
        before = collect_stats(conn)
        ids = [r[0] for r in conn.execute("SELECT session_id FROM sessions ORDER BY 1").fetchall()]
        started = conn.execute(
            "SELECT started_at FROM sessions WHERE session_id = 'conv-26-session_1'"
        ).fetchone()[0]
    second = import_paths(db, [LOCOMO_DEV])
    with db.read() as conn:
        after = collect_stats(conn)
    assert first.sessions_new == 38 and first.messages == 419 + 369
    assert (second.sessions_new, second.sessions_unchanged) == (0, 38)
    assert before == after
    assert (after["sessions"], after["messages"], after["events"]) == (38, 788, 38)
    assert "conv-30-session_19" in ids
    assert started.isoformat() == "2023-05-08T13:56:00"
