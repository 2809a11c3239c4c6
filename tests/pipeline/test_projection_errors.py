"""A projector that cannot apply an event the build itself appends: the build still commits,
the event is recorded in `projection_errors` instead of applied. Real DuckDB."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from axiom import projections
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import rebuild_all
from axiom.store.db import Database
from axiom.store.events import StoredEvent
from axiom.store.projection import Projector


class _Aborting:
    """Fails in DuckDB (which aborts the transaction) on every `evidence_aligned` event."""

    name = "aborting_probe"
    event_types = ("evidence_aligned",)
    tables: tuple[str, ...] = ()

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        conn.execute("SELECT CAST(? AS INTEGER)", [event.event_id]).fetchone()


@pytest.fixture
def aborting_projector(monkeypatch: pytest.MonkeyPatch) -> None:
    real = projections.all_projectors

    def with_probe() -> list[Projector]:
        return [*real(), _Aborting()]

    monkeypatch.setattr(projections, "all_projectors", with_probe)


def test_an_event_the_build_appends_and_a_projector_aborts_on_is_recorded(
    db: Database, sample_session: Path, tmp_path: Path, aborting_projector, snapshot, event_count
) -> None:
    (sid,) = import_paths(db, [sample_session]).session_ids
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris")

    report = process_session(db, sid, pipeline)

    assert report.status == "success" and report.entries > 5 and report.events_appended > 0
    stages = [m.stage for m in report.metrics]
    assert len(stages) == len(set(stages))  # the retried attempt did not time stages twice
    with db.read() as conn:
        (aligned,) = conn.execute(
            "SELECT event_id FROM events WHERE event_type = 'evidence_aligned'"
        ).fetchone()
        errors = conn.execute(
            "SELECT projector_name, event_id, error FROM projection_errors"
        ).fetchall()
        builds = conn.execute("SELECT status FROM build_runs").fetchall()
        stored = dict(
            conn.execute("SELECT stage, count(*) FROM pipeline_metrics GROUP BY stage").fetchall()
        )
    assert errors == [("aborting_probe", aligned, errors[0][2])]
    assert errors[0][2].startswith("ConversionException:")
    assert builds == [("success",)]
    assert set(stored.values()) == {1}
    incremental, appended = snapshot(db), event_count(db)
    assert incremental["entries"] and incremental["citations"]

    again = process_session(db, sid, pipeline)
    assert again.skipped and again.events_appended == 0
    assert event_count(db) == appended

    rebuild_all(db)
    assert snapshot(db) == incremental
    with db.read() as conn:
        assert conn.execute(
            "SELECT projector_name, event_id FROM projection_errors"
        ).fetchall() == [("aborting_probe", aligned)]
