"""Merge, never replace: one session's lines in several files, imported in any order."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from axiom.entries.queries import list_entries
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.session_queries import list_messages
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import rebuild_all
from axiom.store.db import Database
from axiom.store.migrate import migrate
from tests.cli_support import run_cli

SID = "todowrite_session"


def _line(sid: str, n: int, parent: str | None, text: str, role: str = "user") -> dict:
    return {
        "type": role,
        "sessionId": sid,
        "uuid": f"m{n:03d}",
        "parentUuid": parent,
        "timestamp": f"2025-03-01T09:{n // 60:02d}:{n % 60:02d}.000Z",
        "isSidechain": False,
        "message": {"role": role, "content": text},
    }


def _chain(sid: str, count: int, start: int = 0) -> list[dict]:
    lines = []
    for n in range(start, start + count):
        parent = f"m{n - 1:03d}" if n > 0 else None
        role = "user" if n % 2 == 0 else "assistant"
        lines.append(_line(sid, n, parent, f"message {n} of {sid}", role))
    return lines


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _uuids(db: Database, sid: str) -> list[str]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT uuid FROM messages WHERE session_id = ? ORDER BY message_index", [sid]
        ).fetchall()
    return [r[0] for r in rows]


def _events(db: Database) -> int:
    with db.read() as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]


def _tables(db: Database) -> dict[str, list[tuple]]:
    with db.read() as conn:
        return {
            "sessions": conn.execute(
                "SELECT * EXCLUDE (ingested_at, ingest_event_id) FROM sessions ORDER BY ALL"
            ).fetchall(),
            "messages": conn.execute("SELECT * FROM messages ORDER BY ALL").fetchall(),
        }


def _issue_files(tmp_path: Path) -> tuple[Path, Path]:
    """The case of issue 10: a file with one line of the session (among lines of another
    session), and a file with the session's eleven messages, one of them that same line."""
    full = _chain(SID, 11)
    edge = [*_chain("other_session", 3), full[4]]
    return _write(tmp_path / "edge_cases.jsonl", edge), _write(
        tmp_path / "todowrite_examples.jsonl", full
    )


def test_both_import_orders_keep_every_message_of_a_session_split_over_files(
    tmp_path: Path,
) -> None:
    edge, full = _issue_files(tmp_path)
    results = []
    for order in ((edge, full), (full, edge)):
        db = Database(tmp_path / f"{order[0].stem}.duckdb")
        migrate(db)
        for path in order:
            import_paths(db, [path])
        results.append((_uuids(db, SID), _tables(db)))
    expected = [f"m{n:03d}" for n in range(11)]
    assert results[0][0] == results[1][0] == expected
    assert results[0][1] == results[1][1]


def test_a_part_imported_after_the_whole_session_appends_nothing(
    db: Database, tmp_path: Path
) -> None:
    edge, full = _issue_files(tmp_path)
    import_paths(db, [full])
    before = _events(db)
    report = import_paths(db, [edge])
    assert _events(db) == before + 1  # other_session only
    assert (report.sessions_new, report.sessions_unchanged, report.messages_added) == (1, 1, 3)
    assert len(_uuids(db, SID)) == 11


def test_a_resumed_session_in_a_second_file_is_merged_in_chain_order(
    db: Database, tmp_path: Path
) -> None:
    """Claude Code continues a session in a second file: the parent chain goes on, and a
    compaction summary (its parent, the compact boundary, is a system line) starts it."""
    first = _chain(SID, 5)
    summary = _line(SID, 5, "boundary-not-a-message", "This session is being continued...")
    summary["isCompactSummary"] = True
    rest = _chain(SID, 4, start=6)
    resumed = _write(tmp_path / "resumed-file.jsonl", [summary, *rest])
    original = _write(tmp_path / f"{SID}.jsonl", first)
    expected = [f"m{n:03d}" for n in range(10)]
    for order in ((original, resumed), (resumed, original)):
        sid = f"{SID}-{order[0].stem}"
        paths = []
        for path in order:
            text = path.read_text().replace(SID, sid)
            paths.append(
                _write(tmp_path / f"{sid}-{path.name}", [json.loads(x) for x in text.splitlines()])
            )
        reports = [import_paths(db, [p]) for p in paths]
        assert _uuids(db, sid) == expected
        assert reports[1].sessions_merged == 1 and reports[1].messages_added == len(
            json.loads("[" + ",".join(paths[1].read_text().splitlines()) + "]")
        )
    incremental = _tables(db)
    rebuild_all(db)
    assert _tables(db) == incremental


def test_a_message_seen_again_with_other_text_is_a_new_version(
    db: Database, tmp_path: Path
) -> None:
    lines = _chain(SID, 4)
    import_paths(db, [_write(tmp_path / "a.jsonl", lines)])
    changed = json.loads(json.dumps(lines[2]))
    changed["message"]["content"] = "message 2, edited"
    report = import_paths(db, [_write(tmp_path / "b.jsonl", [changed])])
    assert (report.messages_changed, report.sessions_merged) == (1, 1)
    with db.read() as conn:
        texts = [m.text for m in list_messages(conn, SID)]
    assert texts == [
        f"message 0 of {SID}",
        f"message 1 of {SID}",
        "message 2, edited",
        f"message 3 of {SID}",
    ]
    before = _events(db)
    import_paths(db, [tmp_path / "b.jsonl"])
    assert _events(db) == before


def test_transcripts_without_uuids_merge_by_position(db: Database) -> None:
    def transcript(texts: list[str]) -> Transcript:
        return Transcript(
            "plain",
            "p",
            "json",
            tuple(Message(i, "user", t) for i, t in enumerate(texts)),
        )

    ingest_transcripts(db, [transcript(["a", "b", "c"])])
    (result,) = ingest_transcripts(db, [transcript(["a", "B"])])
    assert result.created and (result.counts.changed, result.counts.kept) == (1, 1)
    with db.read() as conn:
        assert [m.text for m in list_messages(conn, "plain")] == ["a", "B", "c"]


def test_the_cli_summary_counts_what_was_merged(data_dir: Path, tmp_path: Path) -> None:
    lines = _chain(SID, 11)
    first = _write(tmp_path / "first.jsonl", lines[:6])
    second = _write(tmp_path / "second.jsonl", lines[4:])
    assert run_cli(data_dir, "import", "--no-process", str(first)).returncode == 0
    out = run_cli(data_dir, "import", "--no-process", str(second)).stdout
    assert "0 new session(s), 0 unchanged, 1 merged" in out
    assert "7 message(s) (5 added, 0 changed)" in out


def test_the_cli_summary_says_a_grown_session_was_extended(data_dir: Path, tmp_path: Path) -> None:
    """A truncated copy of a session, then the whole file: the session is not new again."""
    lines = _chain(SID, 11)
    part = _write(tmp_path / "part.jsonl", lines[:3])
    whole = _write(tmp_path / "whole.jsonl", lines)
    assert run_cli(data_dir, "import", "--no-process", str(part)).returncode == 0
    grown = run_cli(data_dir, "import", "--no-process", str(whole))
    assert grown.returncode == 0, grown.stderr
    assert "0 new session(s), 0 unchanged, 0 merged, 1 extended" in grown.stdout
    assert "11 message(s) (8 added, 0 changed)" in grown.stdout


def test_a_session_that_grew_counts_as_extended_not_new(db: Database, tmp_path: Path) -> None:
    lines = _chain(SID, 6)
    first = import_paths(db, [_write(tmp_path / "a.jsonl", lines[:2])])
    grown = import_paths(db, [_write(tmp_path / "b.jsonl", lines)])
    assert (first.sessions_new, first.sessions_extended) == (1, 0)
    assert (grown.sessions_new, grown.sessions_extended, grown.messages_added) == (0, 1, 4)
    assert _uuids(db, SID) == [f"m{n:03d}" for n in range(6)]


def test_a_part_never_supersedes_the_entries_of_the_messages_it_lacks(
    db: Database, tmp_path: Path
) -> None:
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris")
    day = Path(__file__).parents[1] / "pipeline" / "data" / "todo_sessions" / "day1.jsonl"
    lines = [json.loads(x) for x in day.read_text().splitlines()]
    sid = lines[0]["sessionId"]
    import_paths(db, [_write(tmp_path / "whole.jsonl", lines)])
    process_session(db, sid, pipeline)
    with db.read() as conn:
        before = {e.entry_id: e.status for e in list_entries(conn)}
    assert before and set(before.values()) == {"active"}
    events = _events(db)
    import_paths(db, [_write(tmp_path / "part.jsonl", lines[:1])])
    process_session(db, sid, pipeline)
    with db.read() as conn:
        after = {e.entry_id: e.status for e in list_entries(conn)}
    assert after == before and _events(db) == events


# --- the property: any split, any order ------------------------------------------------


@st.composite
def _splits(draw: st.DrawFn) -> tuple[int, list[list[int]]]:
    """A session of n messages and files holding overlapping parts of it, in import order."""
    n = draw(st.integers(1, 10))
    files = draw(st.integers(1, 4))
    owners = [draw(st.sets(st.integers(0, files - 1), min_size=1)) for _ in range(n)]
    parts = [[i for i in range(n) if f in owners[i]] for f in range(files)]
    parts = [p for p in parts if p]
    order = draw(st.permutations(range(len(parts))))
    return n, [parts[i] for i in order]


_counter = itertools.count()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(split=_splits())
def test_any_split_imported_in_any_order_stores_the_union_in_chain_order(
    db: Database, tmp_path: Path, split: tuple[int, list[list[int]]]
) -> None:
    n, parts = split
    sid = f"prop-{next(_counter)}"
    lines = _chain(sid, n)
    paths = [
        _write(tmp_path / f"{sid}-part{k}.jsonl", [lines[i] for i in part])
        for k, part in enumerate(parts)
    ]
    for path in paths:
        import_paths(db, [path])
    assert _uuids(db, sid) == [f"m{i:03d}" for i in range(n)]
    events = _events(db)
    for path in itertools.chain(paths, reversed(paths)):
        import_paths(db, [path])
    assert _events(db) == events


def test_a_session_split_over_files_of_one_write_group_is_stored_as_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both files in one folder land in one write transaction (`import_paths` groups
    files): the stored session and messages are what importing them one by one stores."""
    (tmp_path / "src").mkdir()
    edge, full = _issue_files(tmp_path / "src")
    results = []
    for group in ("32", "1"):
        monkeypatch.setenv("AXIOM_IMPORT_GROUP_FILES", group)
        db = Database(tmp_path / f"group{group}.duckdb")
        migrate(db)
        report = import_paths(db, [tmp_path / "src"])
        results.append((report.sessions_new, report.messages_added, _uuids(db, SID), _tables(db)))
    assert results[0] == results[1]
    assert results[0][2] == [f"m{n:03d}" for n in range(11)]
