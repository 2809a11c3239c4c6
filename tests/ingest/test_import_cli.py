"""Awkward files through the CLI's import (`axiom.cli.main`, what `python -m axiom import`
runs: parse, store, project, memory pipeline) into a real DuckDB file: what is stored, what
is reported, the exit code, and that importing again changes no count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from axiom.cli import pipeline as cli_pipeline
from axiom.cli.main import main
from axiom.ingest import importer
from axiom.observability.stats import collect_stats
from axiom.store.db import Database


def _line(uuid: str, content: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "sessionId": "s",
            "uuid": uuid,
            "timestamp": "2025-10-01T10:00:00Z",
            "message": {"role": "user", "content": content},
        },
        ensure_ascii=False,
    )


def _stats(db: Database) -> dict[str, Any]:
    with db.read() as conn:
        return collect_stats(conn)


def _texts(db: Database) -> list[str]:
    with db.read() as conn:
        rows = conn.execute("SELECT text FROM messages ORDER BY message_index").fetchall()
    return [r[0] for r in rows]


def _import_twice(db: Database, path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Import `path` twice; the second run must change no count. The first run's stderr."""
    assert main(["import", "--quiet", str(path)]) == 0
    first = capsys.readouterr()
    before = _stats(db)
    assert main(["import", "--quiet", str(path)]) == 0
    assert "0 new session(s), 1 unchanged" in capsys.readouterr().out
    assert _stats(db) == before
    return first.err


def test_a_ten_megabyte_message_is_stored_whole(
    db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unit = "line of text, 한국어, emoji 😀\n"
    big = (unit * (10 * 1024 * 1024 // len(unit) + 1))[: 10 * 1024 * 1024]
    path = tmp_path / "big.jsonl"
    path.write_text(_line("b0", "before") + "\n" + _line("b1", big) + "\n", encoding="utf-8")
    assert _import_twice(db, path, capsys) == ""
    texts = _texts(db)
    assert len(texts[1]) == len(big) == 10 * 1024 * 1024
    assert texts == ["before", big]
    with db.read() as conn:
        span = conn.execute(
            "SELECT span_end FROM message_citations WHERE message_index = 1"
        ).fetchone()
    assert span == (len(big),)  # the whole-message citation spans every character


def test_invalid_utf8_is_replaced_and_reported_with_line_numbers(
    db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [
        _line("u0", "clean").encode(),
        _line("u1", "café XX here").encode().replace(b"XX", b"\xff\xfe"),
        _line("u2", "ok").encode(),
        _line("u3", "cut 한").encode().replace("한".encode(), "한".encode()[:2]),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    err = _import_twice(db, path, capsys)
    offset = lines[1].index(b"\xff")
    assert f"{path}:2: invalid UTF-8 at byte {offset}; kept with U+FFFD" in err
    assert f"{path}:4: invalid UTF-8 at byte " in err
    assert f"{path}:1:" not in err and f"{path}:3:" not in err
    assert _texts(db) == ["clean", "café \ufffd\ufffd here", "ok", "cut \ufffd"]


def test_an_empty_file_is_a_clear_message_and_a_failed_import(
    db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n  \r\n")
    for path in (empty, blank):
        assert main(["import", "--quiet", str(path)]) == 1
        captured = capsys.readouterr()
        assert f"{path}: file is empty" in captured.err
        assert "Traceback" not in captured.err
    assert _stats(db)["events"] == 0

    # Next to a good file the empty one is still reported, and the import succeeds.
    good = tmp_path / "good.jsonl"
    good.write_text(_line("g0", "hello") + "\n")
    assert main(["import", "--quiet", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert f"{empty}: file is empty" in captured.err and f"{blank}: file is empty" in captured.err
    assert "1 new session(s)" in captured.out
    assert _texts(db) == ["hello"]


def test_a_folder_without_transcripts_says_so(
    db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    assert main(["import", "--quiet", str(empty)]) == 1
    err = capsys.readouterr().err
    assert f"no transcript files found in {empty}" in err
    missing = tmp_path / "not-there"
    assert main(["import", "--quiet", str(missing)]) == 1
    err = capsys.readouterr().err
    assert "no such file or directory" in err and "no transcript files found" not in err


def test_ctrl_c_is_one_line_and_exit_130_and_a_rerun_goes_on(
    db: Database,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(_line("g0", "we decided to use DuckDB for the event store") + "\n")

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    process = cli_pipeline.process_sessions
    monkeypatch.setattr(cli_pipeline, "process_sessions", interrupted)
    assert main(["import", "--quiet", str(good)]) == 130  # the session is stored, not processed
    err = capsys.readouterr().err
    assert err.strip() == "interrupted"
    monkeypatch.setattr(cli_pipeline, "process_sessions", process)  # (not undo: the data dir)
    assert main(["import", "--quiet", str(good)]) == 0
    assert "processed 1 session(s)" in capsys.readouterr().out


def test_ctrl_c_inside_a_duckdb_query_is_the_same_one_line_and_exit_130(
    db: Database,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DuckDB turns SIGINT during a query into a RuntimeError caused by the KeyboardInterrupt:
    the CLI reports it as Ctrl-C, and an import group is not retried file by file for it."""
    folder = tmp_path / "two"
    folder.mkdir()
    for n in range(2):
        (folder / f"g{n}.jsonl").write_text(_line(f"g{n}", "we decided to use DuckDB") + "\n")
    calls: list[int] = []

    def stopped(conn: object, prepared: list[object], actor: str = "import") -> None:
        calls.append(len(prepared))
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as cause:
            raise RuntimeError("Query interrupted") from cause

    monkeypatch.setattr(importer, "append_sessions", stopped)
    assert main(["import", "--quiet", str(folder)]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
    assert calls == [2]  # the group of both files, not each again on its own
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0
