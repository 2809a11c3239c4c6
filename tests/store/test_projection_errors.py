"""A poison event (one a projector cannot apply) is recorded and passed: it jams neither its
projector nor the others, and rebuild gives what incremental projection gave. Real DuckDB."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest

from axiom.cli.main import main
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.observability.stats import collect_stats
from axiom.projections import project_all, rebuild_all
from axiom.store.db import Database, OutOfSpace
from axiom.store.events import EventStore, NewEvent, StoredEvent
from axiom.store.projection import ProjectionAborted, rebuild, run_projector, write_projecting

POISON = {"transcript": {"session_id": "poison", "messages": [{"index": 0, "text": "no role"}]}}


def _append(db: Database, event_type: str, payload: dict[str, Any]) -> StoredEvent:
    with db.write() as conn:  # what the Celery ingest path does: append, project later
        return EventStore(conn).append(NewEvent(event_type, payload)).event


TABLES = ("sessions", "messages", "message_citations", "projection_errors")


def test_a_poison_session_event_is_recorded_and_the_rest_projects(
    db: Database, sample_session: Path, capsys: pytest.CaptureFixture[str], table_rows
) -> None:
    poison = _append(db, "session_ingested", POISON)
    import_paths(db, [sample_session], project=False)
    project_all(db)

    state = table_rows(db, *TABLES)
    assert len(state["sessions"]) == 1 and len(state["messages"]) == 12
    errors = {(r[0], r[1]): r[4] for r in state["projection_errors"]}
    assert errors[("sessions", poison.event_id)] == "KeyError: 'role'"
    with db.read() as conn:
        stats = collect_stats(conn)
        offsets = dict(
            conn.execute("SELECT projector_name, last_event_id FROM projection_offsets").fetchall()
        )
    assert stats["projection_errors"] == len(errors) >= 1
    assert offsets["sessions"] > poison.event_id  # passed, not stuck before it

    assert project_all(db)["sessions"] == 0  # nothing left to retry: it stays passed
    rebuild_all(db)
    assert table_rows(db, *TABLES) == state

    # The CLI on this data dir: import, rebuild and stats all work.
    assert main(["import", "--quiet", str(sample_session)]) == 0
    assert main(["rebuild"]) == 0
    assert main(["stats", "--json"]) == 0
    assert '"projection_errors": ' + str(len(errors)) in capsys.readouterr().out
    assert table_rows(db, *TABLES) == state


def test_the_ingest_path_normalizes_before_it_appends(db: Database) -> None:
    odd = Transcript(
        session_id="odd",
        project="p",
        source="api",
        messages=(
            Message(index=4, role="user", text="a", uuid=123, timestamp={"a": 1}),  # type: ignore[arg-type]
            Message(index=9, role="assistant", text={"x": 1}, meta={"v": float("nan")}),  # type: ignore[arg-type]
        ),
    )
    ingest_transcripts(db, [odd], actor="api", project=False)
    project_all(db)
    with db.read() as conn:
        rows = conn.execute(
            "SELECT message_index, text, uuid, ts, meta_json FROM messages ORDER BY message_index"
        ).fetchall()
        assert conn.execute("SELECT count(*) FROM projection_errors").fetchone()[0] == 0
    assert rows == [(0, "a", "123", None, "{}"), (1, '{"x": 1}', None, None, '{"v": null}')]

    with pytest.raises(ValueError, match="session_id is missing"):
        ingest_transcripts(db, [Transcript("", "p", "api", ())], project=False)
    with db.read() as conn:
        assert collect_stats(conn)["events"] == 1


class _Probe:
    """A projector whose SQL fails (and so aborts the transaction) on a duplicate `n`."""

    name = "probe"
    event_types = ("probe",)
    tables = ("probe",)

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        conn.execute("INSERT INTO probe VALUES (?)", [event.payload["n"]])


def test_an_event_whose_sql_aborts_the_transaction_is_recorded_on_a_second_run(
    db: Database,
) -> None:
    with db.write() as conn:
        conn.execute("CREATE TABLE probe (n INTEGER PRIMARY KEY)")
    events = [_append(db, "probe", {"n": n}) for n in (1, 2, 1, 3)]

    counts = write_projecting(db, lambda conn: run_projector(conn, _Probe()))
    assert counts == 4

    def probe_state() -> tuple[list[tuple], list[tuple]]:
        with db.read() as conn:
            return (
                conn.execute("SELECT n FROM probe ORDER BY n").fetchall(),
                conn.execute(
                    "SELECT projector_name, event_id, event_type FROM projection_errors"
                ).fetchall(),
            )

    incremental = probe_state()
    assert incremental == ([(1,), (2,), (3,)], [("probe", events[2].event_id, "probe")])
    with db.read() as conn:
        (error,) = conn.execute("SELECT error FROM projection_errors").fetchone()
    assert error.startswith("ConstraintException:")

    write_projecting(db, lambda conn: rebuild(conn, [_Probe()]))
    assert probe_state() == incremental

    # Without the retry the caller fails, as any unit of work whose SQL fails does.
    _append(db, "probe", {"n": 2})
    with pytest.raises(Exception, match="projector probe failed"), db.write() as conn:
        run_projector(conn, _Probe())
    assert write_projecting(db, lambda conn: run_projector(conn, _Probe())) == 1
    assert len(probe_state()[1]) == 2


def test_a_unit_that_keeps_aborting_on_new_events_gives_up(db: Database) -> None:
    """Were event ids ever to differ between attempts, the reruns stop instead of looping."""
    attempts: list[int] = []

    def work(conn: duckdb.DuckDBPyConnection) -> None:
        attempts.append(1)
        fake = EventStore(conn).append(NewEvent("probe_event", {"n": len(attempts)})).event
        raise ProjectionAborted("probe", replace(fake, event_id=f"ev_x{len(attempts)}"), "boom")

    with pytest.raises(RuntimeError, match="gave up after 100 events"):
        write_projecting(db, work)
    assert len(attempts) == 101
    with db.read() as conn:  # every attempt was rolled back
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0


class _DiskFullProjector:
    """Fails the way DuckDB does when the disk fills up mid-projection."""

    name, event_types, tables = "disk_full", ("session_ingested",), ()

    def __init__(self) -> None:
        self.full = True

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        if self.full:
            raise duckdb.IOException('Could not write file "x.wal": No space left on device')


def test_a_full_disk_is_not_a_poison_event_the_event_is_applied_once_space_is_back(
    db: Database,
) -> None:
    """Regression (fault test with a tmpfs): a projector's disk-full error was recorded as a
    poison event, so its citations were skipped for good and the tables differed from a
    rebuild. Now the write fails whole with OutOfSpace and nothing is recorded."""
    projector = _DiskFullProjector()
    _append(db, "session_ingested", POISON)

    with pytest.raises(OutOfSpace, match="is full"):
        write_projecting(db, lambda conn: run_projector(conn, projector))
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM projection_errors").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM projection_offsets").fetchone()[0] == 0

    projector.full = False
    assert write_projecting(db, lambda conn: run_projector(conn, projector)) == 1


def _interrupted() -> RuntimeError:
    """What DuckDB raises when SIGINT stops a query: a RuntimeError caused by Ctrl-C."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as cause:
            raise RuntimeError("Query interrupted") from cause
    except RuntimeError as exc:
        return exc


class Interrupted:
    """A projector whose tables are being written when Ctrl-C stops the query; counts the
    events it was given one at a time."""

    name = "interrupted"
    event_types = ("session_ingested",)
    tables: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.one_at_a_time = 0

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        self.one_at_a_time += 1
        raise _interrupted()


class InterruptedInBatches(Interrupted):
    def apply_many(self, conn, events, reject) -> None:  # type: ignore[no-untyped-def]
        raise _interrupted()


@pytest.mark.parametrize("projector", [InterruptedInBatches, Interrupted])
def test_ctrl_c_during_a_projection_stops_the_unit_and_records_nothing(
    db: Database, sample_session: Path, projector: type[Interrupted]
) -> None:
    """A stopped query is not the event's fault: a batch is not run again one event at a
    time, an event is not recorded as poison; the unit of work is rolled back and the
    interrupt reaches the caller."""
    import_paths(db, [sample_session], project=False)
    interrupted = projector()
    with pytest.raises(RuntimeError, match="Query interrupted"):
        write_projecting(db, lambda conn: run_projector(conn, interrupted))
    assert interrupted.one_at_a_time == (0 if projector is InterruptedInBatches else 1)
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM projection_errors").fetchone()[0] == 0
        offsets = "SELECT count(*) FROM projection_offsets WHERE projector_name = 'interrupted'"
        assert conn.execute(offsets).fetchone()[0] == 0
