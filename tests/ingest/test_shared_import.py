"""Files and transcripts prepared with a forked child's help (`fork=True`, what `axiom import`
does by default) import exactly as prepared in one process: the same report, in the same
order, the same rows, and a bad file or transcript is reported or raised as before."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from axiom.forking import Failed, SharedMap
from axiom.ingest import formats, importer
from axiom.ingest.formats import UnknownFormat
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.store.db import Database
from axiom.store.migrate import migrate


def _write_files(folder: Path) -> None:
    """Good files, a file with a skipped line and one whose parser fails."""
    folder.mkdir()
    for n in range(7):
        lines = [
            json.dumps(
                {
                    "type": "user",
                    "sessionId": f"s{n}",
                    "uuid": f"u{n}-{i}",
                    "timestamp": f"2025-10-01T10:0{i}:00Z",
                    "message": {"role": "user", "content": f"we decided to use tool {n}-{i}"},
                }
            )
            for i in range(3)
        ]
        if n == 3:
            lines.insert(1, "{not json")
        (folder / f"f{n}.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "notes.md").write_text("# notes\n")


def _store(path: Path) -> Database:
    db = Database(path)
    migrate(db)
    return db


def _rows(db: Database) -> list[tuple[object, ...]]:
    with db.read() as conn:
        return conn.execute(
            "SELECT session_id, message_index, text FROM messages ORDER BY ALL"
        ).fetchall()


def _explode(path: Path, data: bytes) -> None:
    raise RuntimeError("parser bug")


def test_files_prepared_with_a_child_import_as_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(formats.PARSERS, "markdown", _explode)
    monkeypatch.setenv("AXIOM_IMPORT_GROUP_FILES", "3")  # several batches, each shared
    _write_files(tmp_path / "in")
    reports, rows = [], []
    for fork in (False, True):
        db = _store(tmp_path / f"{fork}.duckdb")
        reports.append(import_paths(db, [tmp_path / "in"], fork=fork))
        rows.append(_rows(db))
    one, shared = reports
    assert [str(i) for i in shared.issues] == [str(i) for i in one.issues]
    assert any("not imported: RuntimeError: parser bug" in str(i) for i in one.issues)
    assert any(":2: " in str(i) for i in one.issues)  # the line that is not JSON
    assert (
        (shared.files, shared.session_ids) == (one.files, one.session_ids) == (8, one.session_ids)
    )
    assert len(one.session_ids) == 7
    assert rows[1] == rows[0] and len(rows[0]) == 21


def test_a_wrong_format_still_stops_a_shared_import_after_writing_what_came_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_files(tmp_path / "in")

    def unknown(path: Path, data: bytes) -> None:
        raise UnknownFormat("not a format")

    monkeypatch.setitem(formats.PARSERS, "markdown", unknown)  # the last file, sorted
    db = _store(tmp_path / "axiom.duckdb")
    with pytest.raises(UnknownFormat):
        import_paths(db, [tmp_path / "in"], fork=True)
    assert len(_rows(db)) == 21  # the seven files before it were written


def test_a_transcript_that_cannot_be_stored_raises_before_anything_is_written(
    tmp_path: Path,
) -> None:
    good = [Transcript(f"s{n}", "p", "json", (Message(0, "user", "hello"),)) for n in range(3)]
    bad = Transcript("", "p", "json", (Message(0, "user", "no session id"),))
    db = _store(tmp_path / "axiom.duckdb")
    with pytest.raises(ValueError, match="session_id"):
        ingest_transcripts(db, [*good, bad, *good], fork=True)
    assert _rows(db) == []
    ingest_transcripts(db, good, fork=True)
    assert len(_rows(db)) == 3


def test_batches_stop_at_the_file_count_or_the_size_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer, "IMPORT_GROUP_CHARS", 100)
    sizes = [10, 10, 90, 10, 200, 10, 10, 10]
    files = []
    for n, size in enumerate(sizes):
        path = tmp_path / f"f{n}"
        path.write_bytes(b"x" * size)
        files.append(path)
    batches = [[f.name for f in b] for b in importer._batches(files, 3)]
    assert batches == [["f0", "f1", "f2"], ["f3", "f4"], ["f5", "f6", "f7"]]


class Unpicklable(Exception):
    """An error `pickle` cannot rebuild (two required arguments, one kept in `args`)."""

    def __init__(self, n: int, why: str) -> None:
        super().__init__(f"{why} {n}")


def test_a_shared_map_returns_what_raised_in_its_place_whoever_ran_it() -> None:
    parent = os.getpid()
    by_child = multiprocessing.get_context("fork").Value("i", 0)

    def halve(n: int) -> int:
        if os.getpid() != parent:
            with by_child.get_lock():
                by_child.value += 1
        else:  # let the child do the first ten, errors included, before taking any
            began = time.monotonic()
            while by_child.value < 10 and time.monotonic() - began < 30:
                time.sleep(0.005)
        if n % 7 == 0:
            raise Unpicklable(n, "cannot travel")
        if n % 5 == 0:
            raise ValueError(f"no {n}")
        if n == 3:
            return lambda: n  # type: ignore[return-value] - a result pickle refuses
        return n // 2

    shared = SharedMap(halve, list(range(1, 40)))
    try:
        results = shared.results()
    finally:
        shared.close()
    assert by_child.value >= 10
    for n, result in zip(range(1, 40), results, strict=True):
        if n % 7 == 0:  # rebuilt here: done again by the parent
            assert isinstance(result, Failed) and isinstance(result.error, Unpicklable)
        elif n % 5 == 0:
            assert isinstance(result, Failed) and str(result.error) == f"no {n}"
        elif n == 3:
            assert callable(result) and result() == 3  # type: ignore[operator]
        else:
            assert result == n // 2


def test_a_file_whose_session_fails_to_prepare_still_reports_its_parse_issues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_files(tmp_path / "in")
    prepare = importer.prepare_session

    def failing(transcript: Transcript) -> importer.PreparedSession:
        if transcript.session_id == "s3":  # the file with a line that is not JSON
            raise RuntimeError("prepare bug")
        return prepare(transcript)

    monkeypatch.setattr(importer, "prepare_session", failing)
    for fork in (False, True):
        db = _store(tmp_path / f"{fork}.duckdb")
        issues = [str(i) for i in import_paths(db, [tmp_path / "in"], fork=fork).issues]
        f3 = str(tmp_path / "in" / "f3.jsonl")
        assert [i for i in issues if i.startswith(f3)] == [
            next(i for i in issues if i.startswith(f"{f3}:2: ")),
            f"{f3}: not imported: RuntimeError: prepare bug",
        ]
