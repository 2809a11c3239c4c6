from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from axiom.ingest import importer, session_projector
from axiom.ingest.formats import parse_file
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.observability.stats import collect_stats
from axiom.projections import all_projectors, project_all, rebuild_all
from axiom.store.db import Database
from axiom.store.migrate import migrate
from axiom.store.projection import has_backlog
from tests.cli_support import run_cli


def _tables(db: Database) -> dict[str, list[tuple]]:
    with db.read() as conn:
        return {
            t: conn.execute(f"SELECT * EXCLUDE (ingested_at) FROM {t} ORDER BY ALL").fetchall()
            if t == "sessions"
            else conn.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
            for t in ("sessions", "messages")
        }


def test_importing_the_same_file_twice_changes_no_count(db: Database, sample_session: Path) -> None:
    first = import_paths(db, [sample_session])
    with db.read() as conn:
        before = collect_stats(conn)
    second = import_paths(db, [sample_session.parent])
    with db.read() as conn:
        after = collect_stats(conn)
    assert (first.sessions_new, second.sessions_new, second.sessions_unchanged) == (1, 0, 1)
    assert before == after
    assert after["sessions"] == 1 and after["messages"] == 12 and after["events"] == 1


def test_a_grown_transcript_replaces_the_session_rows(
    db: Database, tmp_path: Path, sample_session: Path
) -> None:
    path = tmp_path / "grow.jsonl"
    lines = sample_session.read_text().splitlines()
    path.write_text("\n".join(lines[:5]))
    import_paths(db, [path])
    path.write_text("\n".join(lines))
    import_paths(db, [path])
    with db.read() as conn:
        stats = collect_stats(conn)
    assert (stats["sessions"], stats["messages"], stats["events"]) == (1, 12, 2)


def test_rebuild_equals_the_incremental_result(
    db: Database, sample_session: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(sample_session.read_text().replace("7f3c9a2e", "00000000"))
    import_paths(db, [sample_session])
    import_paths(db, [other])
    incremental = _tables(db)
    rebuild_all(db)
    assert _tables(db) == incremental
    assert len(incremental["sessions"]) == 2


def test_the_write_takes_the_rows_folded_before_the_lock_which_a_rebuild_reproduces(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`prepare_session` folds each session from its payload as stored (keys sorted, as a
    rebuild reads it) and the write takes those rows instead of folding again: the tables
    equal a rebuild's, for meta whose keys were not in order too."""
    meta = {"zeta": 1, "alpha": {"y": 2, "b": 3}}
    transcript = Transcript(
        session_id="unordered",
        project="p",
        source="json",
        messages=(
            Message(0, "user", "hello", "2026-01-02T03:04:05Z", meta=meta),
            Message(1, "assistant", "hi", "2026-01-02T03:04:06Z", meta=dict(meta)),
        ),
        meta={"path": "x.json", "a": None},
    )
    folds: list[str] = []
    original = session_projector.session_rows
    for module in (session_projector, importer):  # the projector's name, the importer's
        monkeypatch.setattr(
            module, "session_rows", lambda t: folds.append(t.session_id) or original(t)
        )
    prepared = importer.prepare_session(transcript)
    assert folds == ["unordered"]
    ingest_transcripts(db, [prepared])
    assert folds == ["unordered"]  # the write folded nothing again
    incremental = _tables(db)
    assert incremental["messages"][0][-1] == '{"alpha": {"b": 3, "y": 2}, "zeta": 1}'
    rebuild_all(db)
    assert folds == ["unordered", "unordered"]
    assert _tables(db) == incremental


def test_cli_reports_bad_lines_and_exits_by_what_imported(
    tmp_path: Path, sample_session: Path
) -> None:
    data = tmp_path / "d"
    mixed = tmp_path / "mixed.jsonl"
    lines = sample_session.read_text().splitlines()
    mixed.write_text("\n".join([*lines[:3], "{oops", *lines[3:]]))
    result = run_cli(data, "import", str(mixed))
    assert result.returncode == 0, result.stderr
    assert f"{mixed}:4: not valid JSON" in result.stderr
    stats = json.loads(run_cli(data, "stats", "--json").stdout)
    assert stats["messages"] == 12

    junk = tmp_path / "junk.jsonl"
    junk.write_text("{oops\n")
    failed = run_cli(data, "import", str(junk))
    assert failed.returncode == 1
    assert f"{junk}:1: not valid JSON" in failed.stderr
    assert json.loads(run_cli(data, "stats", "--json").stdout) == stats

    missing = run_cli(data, "import", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 1 and "no such file or directory" in missing.stderr


def test_the_same_transcript_from_another_path_is_not_a_new_event(
    db: Database, sample_session: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "elsewhere" / sample_session.parent.name / sample_session.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(sample_session.read_bytes())
    import_paths(db, [sample_session])
    assert import_paths(db, [copy]).sessions_unchanged == 1
    with db.read() as conn:
        assert collect_stats(conn)["events"] == 1


def test_an_unknown_format_name_is_a_clean_usage_error(
    tmp_path: Path, sample_session: Path
) -> None:
    result = run_cli(tmp_path / "d", "import", "--format", "yaml", str(sample_session))
    assert result.returncode == 2
    assert "invalid choice: 'yaml'" in result.stderr and "Traceback" not in result.stderr


def _watch_preparation(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """(step, whether the write transaction was open) for each preparation step the
    importer runs, recorded through its module names."""
    calls: list[tuple[str, bool]] = []
    in_write = [False]
    real_write = importer.write_projecting

    def write_projecting(db, work):  # type: ignore[no-untyped-def]
        def watched(conn):  # type: ignore[no-untyped-def]
            in_write[0] = True
            try:
                return work(conn)
            finally:
                in_write[0] = False

        return real_write(db, watched)

    monkeypatch.setattr(importer, "write_projecting", write_projecting)
    for name in ("check_transcript", "filter_transcript", "session_rows"):
        real = getattr(importer, name)

        def step(*args, _name=name, _real=real):  # type: ignore[no-untyped-def]
            calls.append((_name, in_write[0]))
            return _real(*args)

        monkeypatch.setattr(importer, name, step)
    return calls


ONCE_OUTSIDE = [
    ("check_transcript", False),
    ("filter_transcript", False),
    ("session_rows", False),
]


def test_import_prepares_each_transcript_once_before_the_write_transaction(
    db: Database, sample_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _watch_preparation(monkeypatch)
    report = import_paths(db, [sample_session])
    assert report.sessions_new == 1
    assert calls == ONCE_OUTSIDE


def test_ingest_transcripts_prepares_before_the_write_transaction(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _watch_preparation(monkeypatch)
    transcript = Transcript("api1", "p", "api", (Message(0, "user", "hello"),))
    (result,) = ingest_transcripts(db, [transcript], actor="api", project=False)
    assert result.created
    assert calls == ONCE_OUTSIDE


def test_a_transcript_that_would_not_project_is_never_appended(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(transcript: Transcript) -> None:
        raise ValueError("cannot fold")

    monkeypatch.setattr(importer, "session_rows", refuse)
    monkeypatch.setattr(importer, "write_projecting", lambda db, work: pytest.fail("locked"))
    ok = Transcript("fine", "p", "api", (Message(0, "user", "hello"),))
    with pytest.raises(ValueError, match="cannot fold"):
        ingest_transcripts(db, [ok], actor="api", project=False)
    with db.read() as conn:
        assert collect_stats(conn)["events"] == 0


SAMPLE_ID = "7f3c9a2e-5b1d-4c8e-9a6f-2d4e8b1c0a57"  # the session id in `sample_session`


def _copies(sample_session: Path, folder: Path, ids: list[str]) -> list[Path]:
    """The sample transcript once per id, each under its own session id."""
    folder.mkdir(parents=True)
    text = sample_session.read_text(encoding="utf-8")
    assert SAMPLE_ID in text
    paths = [folder / f"{sid}.jsonl" for sid in ids]
    for path, sid in zip(paths, ids, strict=True):
        path.write_text(text.replace(SAMPLE_ID, sid), encoding="utf-8")
    return paths


def _write_units(db: Database) -> int:
    """How many write transactions the store has seen (the generation's sequence)."""
    return int(db.generation().split(".")[0] or 0)


def test_files_are_written_several_per_transaction(
    db: Database, tmp_path: Path, sample_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [f"s{n}" for n in range(5)]
    _copies(sample_session, tmp_path / "five", ids)
    before = _write_units(db)
    report = import_paths(db, [tmp_path / "five"])
    assert (report.files, report.sessions_new, report.messages) == (5, 5, 60)
    assert _write_units(db) - before == 1
    monkeypatch.setenv("AXIOM_IMPORT_GROUP_FILES", "2")
    _copies(sample_session, tmp_path / "more", [f"t{n}" for n in range(5)])
    before = _write_units(db)
    assert import_paths(db, [tmp_path / "more"]).sessions_new == 5
    assert _write_units(db) - before == 3  # 2 + 2 + 1 files
    monkeypatch.setenv("AXIOM_IMPORT_GROUP_FILES", "32")
    monkeypatch.setattr(importer, "IMPORT_GROUP_CHARS", 1)  # each file's text fills a group
    _copies(sample_session, tmp_path / "long", [f"u{n}" for n in range(3)])
    before = _write_units(db)
    assert import_paths(db, [tmp_path / "long"]).sessions_new == 3
    assert _write_units(db) - before == 3
    with db.read() as conn:
        assert collect_stats(conn)["sessions"] == 13


def test_a_group_that_fails_to_write_lands_file_by_file(
    db: Database, tmp_path: Path, sample_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose write fails (injected: its append raises) is reported on its own; the
    other files of its group are still imported, and every file is counted as done."""
    real = importer.append_sessions

    def append_sessions(conn, prepared, actor="import"):  # type: ignore[no-untyped-def]
        if any(p.transcript.session_id == "bad" for p in prepared):
            raise RuntimeError("the store refused it")
        return real(conn, prepared, actor)

    monkeypatch.setattr(importer, "append_sessions", append_sessions)
    _copies(sample_session, tmp_path / "three", ["good1", "bad", "good2"])
    done: list[Path] = []
    report = import_paths(db, [tmp_path / "three"], on_file=done.append)
    assert sorted(report.session_ids) == ["good1", "good2"]
    assert [i.reason for i in report.issues] == ["not imported: RuntimeError: the store refused it"]
    assert report.issues[0].path.endswith("bad.jsonl")
    assert sorted(p.name for p in done) == ["bad.jsonl", "good1.jsonl", "good2.jsonl"]
    with db.read() as conn:
        assert collect_stats(conn)["sessions"] == 2


DERIVED_FROM_INGESTS = ("sessions", "messages", "message_citations")


def _behind(db: Database, events: int = 1) -> set[str]:
    """The projectors with at least `events` stored events still to apply."""
    with db.read() as conn:
        return {p.name for p in all_projectors() if has_backlog(conn, [p], events)}


def _grown(sample_session: Path, session_id: str) -> Transcript:
    """The sample transcript as `session_id`, with one message more (merged when stored)."""
    (transcript,) = parse_file(sample_session).transcripts
    last = transcript.messages[-1]
    extra = replace(last, index=last.index + 1, text="one more line", uuid="grown-1")
    return replace(transcript, session_id=session_id, messages=[*transcript.messages, extra])


def _imported(db: Database, folders: Path, sample_session: Path, **projecting: object) -> None:
    """Two files, a grown version of one of their sessions, then a third file."""
    _copies(sample_session, folders / "two", ["a1", "a2"])
    _copies(sample_session, folders / "more", ["a3"])
    import_paths(db, [folders / "two"], **projecting)  # type: ignore[arg-type]
    ingest_transcripts(db, [_grown(sample_session, "a1")], **projecting)  # type: ignore[arg-type]
    import_paths(db, [folders / "more"], **projecting)  # type: ignore[arg-type]


def _outbox(db: Database) -> list[tuple]:
    """The embedding jobs, without their times (when the event was appended)."""
    with db.read() as conn:
        return conn.execute(
            "SELECT * EXCLUDE (created_at, updated_at, source_event_id) FROM vector_outbox"
            " ORDER BY ALL"
        ).fetchall()


def test_an_import_with_every_projector_derives_what_projecting_later_derives(
    db: Database, tmp_path: Path, sample_session: Path, table_rows
) -> None:
    """Given every projector (as the CLI does), the import's transaction applies its events
    to all of them from memory: the message citations and embedding jobs are there at once,
    no projector has anything left to read back, and the tables are those the projectors
    derive reading the events afterwards (`project_all`), or replaying them all."""
    _imported(db, tmp_path / "now", sample_session, projectors=all_projectors())
    assert _behind(db) == set()
    later = Database(tmp_path / "later.duckdb")
    migrate(later)
    _imported(later, tmp_path / "later", sample_session)
    assert _behind(later) != set()
    project_all(later)
    derived = table_rows(db, *DERIVED_FROM_INGESTS)
    assert len(derived["message_citations"]) == 3 * 12 + 1
    # (the sessions' rows name the paths read, another folder here)
    assert {t: derived[t] for t in ("messages", "message_citations")} == table_rows(
        later, "messages", "message_citations"
    )
    assert _outbox(db) == _outbox(later) and len(_outbox(db)) == 3 * 12 + 1
    rebuild_all(db)
    assert table_rows(db, *DERIVED_FROM_INGESTS) == derived


def test_an_import_leaves_a_long_backlog_to_the_pipeline(
    db: Database, tmp_path: Path, sample_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events no projector has applied yet (ingested by a worker that leaves projection to
    the writer) are not all taken into an import's transaction: past `FOLLOW_BACKLOG`, it
    advances the session tables alone, as without `projectors`."""
    monkeypatch.setattr(importer, "FOLLOW_BACKLOG", 2)
    _copies(sample_session, tmp_path / "queued", ["q1", "q2"])
    import_paths(db, [tmp_path / "queued"], project=False)
    _copies(sample_session, tmp_path / "now", ["n1"])
    import_paths(db, [tmp_path / "now"], projectors=all_projectors())
    assert "sessions" not in _behind(db)
    assert "citations" in _behind(db, 3) - _behind(db, 4)  # both queued ingests and this one
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 36
