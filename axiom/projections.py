"""The projectors Axiom runs, in order, and the two ways to run them.

Adding a derived table means adding its projector here; `project_all` (the writer's
scheduled job) and `rebuild_all` (replay) then both pick it up.
"""

from __future__ import annotations

from collections.abc import Callable

from axiom.builds.projector import BuildProjector
from axiom.conflicts.projector import ConflictProjector
from axiom.decisions.ledger import DecisionProjector
from axiom.entries.projector import EntryProjector
from axiom.evidence.citations import CitationProjector
from axiom.ingest.session_projector import SessionProjector
from axiom.outbox.projector import OutboxProjector
from axiom.store.db import Database
from axiom.store.projection import Projector, rebuild, run_projectors, write_projecting
from axiom.tasks.projector import TaskProjector
from axiom.vectors.config import configured_embedding_version


def all_projectors() -> list[Projector]:
    projectors: list[Projector] = [
        SessionProjector(),
        BuildProjector(),
        EntryProjector(),
        CitationProjector(),
        TaskProjector(),
        ConflictProjector(),
        DecisionProjector(),
        # Last: jobs for the configured LanceDB table (AXIOM_EMBEDDER; `none` still indexes
        # text), queued once every table they read from is up to date.
        OutboxProjector(configured_embedding_version()),
    ]
    return projectors


def read_by_builds() -> list[Projector]:
    """The projectors whose tables a pipeline build reads while it writes (`entries`:
    corroboration; `conflicts`, `conflict_facts`: contradictions), in `all_projectors`
    order. A build run after another in the same write transaction reads them through
    views over the earlier one's events (`axiom.pipeline.build_view`), and advances them
    only before reading the tables themselves. The task tables are kept up to date by the
    task resolver itself (`axiom.tasks.resolver`)."""
    return [EntryProjector(), ConflictProjector()]


def kept_by_builds() -> tuple[str, ...]:
    """The projectors a pipeline build advances itself as it appends (`TaskProjector`, run
    by `axiom.tasks.resolver` after each mention): a transaction's
    `axiom.store.projection.Follower` reads their pending events from their offsets."""
    return (TaskProjector.name,)


def project_all(db: Database) -> dict[str, int]:
    """Advance every projector to the newest event; one short write transaction (run
    again, with the event recorded as failed, if a poison event aborts it)."""
    return write_projecting(db, lambda conn: run_projectors(conn, all_projectors()))


def rebuild_all(db: Database, on_projector: Callable[[str], None] | None = None) -> dict[str, int]:
    """Replay every event into freshly emptied derived tables (`axiom rebuild`)."""
    return write_projecting(db, lambda conn: rebuild(conn, all_projectors(), on_projector))
