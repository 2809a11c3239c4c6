"""Input that used to abort a whole import: each is now a `file:line: reason` (or a reported
normalization), and the rest of the file and the other files land in a real DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from axiom.cli.main import main
from axiom.ingest import formats
from axiom.ingest.importer import import_paths
from axiom.observability.stats import collect_stats
from axiom.store.db import Database


def _line(sid: str, uuid: object, text: str, **extra: object) -> str:
    obj: dict[str, object] = {
        "type": "user",
        "sessionId": sid,
        "uuid": uuid,
        "parentUuid": None,
        "timestamp": "2025-10-01T10:00:00Z",
        "message": {"role": "user", "content": text},
    }
    obj.update(extra)
    return json.dumps(obj)


def _good(folder: Path) -> Path:
    path = folder / "good.jsonl"
    path.write_text(_line("s-good", "g1", "hello") + "\n")
    return path


def _messages(db: Database) -> list[tuple]:
    with db.read() as conn:
        return conn.execute(
            "SELECT session_id, message_index, text, uuid, ts FROM messages ORDER BY ALL"
        ).fetchall()


def _import(db: Database, folder: Path) -> list[str]:
    report = import_paths(db, [folder])
    assert "s-good" in report.session_ids
    return [str(i) for i in report.issues]


@pytest.mark.parametrize(
    "stamp", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-05:00"], ids=["min", "max"]
)
def test_a_timestamp_out_of_range_is_dropped_and_reported(
    db: Database, tmp_path: Path, stamp: str
) -> None:
    _good(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_line("s-ts", "w1", "a", timestamp=stamp) + "\n")
    issues = _import(db, tmp_path)
    assert issues == [f"{bad}:1: timestamp {stamp!r} is out of range in UTC; dropped"]
    assert ("s-ts", 0, "a", "w1", None) in _messages(db)


def test_a_lone_surrogate_becomes_a_replacement_character(db: Database, tmp_path: Path) -> None:
    _good(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"type":"user","sessionId":"s-sur","uuid":"x1","message":'
        '{"role":"user","content":"bad \\ud800 surrogate"}}\n' + _line("s-sur", "x2", "fine")
    )
    issues = _import(db, tmp_path)
    assert issues == [f"{bad}:1: lone surrogate U+D800 replaced with U+FFFD"]
    texts = [m[2] for m in _messages(db) if m[0] == "s-sur"]
    assert texts == ["bad \ufffd surrogate", "fine"]


def test_json_nested_too_deeply_is_a_skipped_line(db: Database, tmp_path: Path) -> None:
    _good(tmp_path)
    bad = tmp_path / "bad.jsonl"
    deep = '{"type":"user","sessionId":"s-deep","x":' + "[" * 300 + "]" * 300 + "}"
    bad.write_text("[" * 100_000 + "\n" + deep + "\n" + _line("s-deep", "d1", "kept") + "\n")
    issues = _import(db, tmp_path)
    assert issues == [
        f"{bad}:1: not usable JSON (nested too deeply to parse)",
        f"{bad}:2: nested deeper than 200 levels",
    ]
    assert [m[2] for m in _messages(db) if m[0] == "s-deep"] == ["kept"]


def test_an_integer_of_5000_digits_is_kept_as_text(db: Database, tmp_path: Path) -> None:
    _good(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_line("s-int", "n1", "big", n=0).replace('"n": 0', '"n": ' + "1" * 5000))
    issues = _import(db, tmp_path)
    assert issues == [f"{bad}:1: integer of 5000 digits kept as text"]
    assert [m[2] for m in _messages(db) if m[0] == "s-int"] == ["big"]


def test_a_number_uuid_next_to_string_uuids_is_kept_as_text(db: Database, tmp_path: Path) -> None:
    _good(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            [
                _line("s-uuid", "ok", "a"),
                _line("s-uuid", 123, "b"),
                _line("s-uuid", {"x": 1}, "c", parentUuid=["p"]),
            ]
        )
    )
    issues = _import(db, tmp_path)
    assert issues == [
        f"{bad}:2: 'uuid' 123 is not a string; kept as '123'",
        f"{bad}:3: 'uuid' is a dict, not a string; dropped",
        f"{bad}:3: 'parentUuid' is a list, not a string; dropped",
    ]
    assert [(m[2], m[3]) for m in _messages(db) if m[0] == "s-uuid"] == [
        ("a", "ok"),
        ("b", "123"),
        ("c", None),
    ]


def test_a_session_id_or_role_of_the_wrong_type_falls_back(db: Database, tmp_path: Path) -> None:
    _good(tmp_path)
    bad = tmp_path / "weird.jsonl"
    obj = json.loads(_line("x", "o1", "a"))
    obj["sessionId"] = {"x": 1}
    obj["message"]["role"] = {"a": 1}
    bad.write_text(json.dumps(obj) + "\n")
    issues = _import(db, tmp_path)
    assert issues == [
        f"{bad}:1: 'sessionId' is a dict, not a string; used the file name",
        f"{bad}:1: 'message.role' is a dict; used the line type",
    ]
    with db.read() as conn:
        assert conn.execute("SELECT role FROM messages WHERE session_id = 'weird'").fetchall() == [
            ("user",)
        ]


def test_an_unexpected_failure_in_one_file_is_reported_and_the_others_import(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(path: Path, data: bytes) -> None:
        raise RuntimeError("parser bug")

    monkeypatch.setitem(formats.PARSERS, "markdown", explode)
    good = _good(tmp_path)
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n")
    report = import_paths(db, [tmp_path])
    assert [str(i) for i in report.issues] == [f"{notes}: not imported: RuntimeError: parser bug"]
    assert report.files == 2 and report.session_ids == ["s-good"]
    with db.read() as conn:
        assert collect_stats(conn)["messages"] == 1
    assert good.exists()


def test_cli_exit_code_follows_what_imported(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _good(folder)
    deep = folder / "deep.jsonl"
    deep.write_text("[" * 100_000 + "\n")
    assert main(["import", "--no-process", "--quiet", str(folder)]) == 0
    assert f"{deep}:1: not usable JSON" in capsys.readouterr().err
    assert main(["import", "--no-process", "--quiet", str(deep)]) == 1
    assert f"{deep}:1: not usable JSON" in capsys.readouterr().err


def test_a_json_file_nested_too_deeply_or_with_huge_integers(db: Database, tmp_path: Path) -> None:
    _good(tmp_path)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    big = tmp_path / "big.json"
    big.write_text(
        json.dumps(
            {"session_id": "s-big", "n": 0, "messages": [{"role": "user", "content": "x"}]}
        ).replace('"n": 0', '"n": ' + "9" * 5000)
    )
    issues = _import(db, tmp_path)
    assert issues == [
        f"{big}: integer of 5000 digits kept as text",
        f"{deep}: not usable JSON (nested too deeply to parse)",
    ]
    assert [m[2] for m in _messages(db) if m[0] == "s-big"] == ["x"]
