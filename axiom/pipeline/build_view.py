"""What the builds of one write transaction read of the derived tables, kept in memory.

A build reads believed facts, fact statuses and open conflicts (`FactView`) and the
corroboration pools (`PoolView`). Each stands for its tables as the transaction found them
plus the events the transaction appended since, so the projectors of those tables run
once, when the transaction ends (`axiom.store.projection.Follower.settle`), instead of
before every build, and the pools are read once per transaction instead of once per build.
`catch_up` folds the events of the builds written so far; a reader of the tables
themselves (`graduate_kept`) first brings them up to the same point (`tables_current`).
The views rely on what the event store's dedupe keys guarantee: one `entry_created` per
entry and one `conflict_detected` per conflict (a second would leave a stored row as it is,
which a view does not check).
"""

from __future__ import annotations

import duckdb

import axiom.projections
from axiom.pipeline.fact_view import FactView
from axiom.pipeline.pool_view import PoolView
from axiom.store.events import StoredEvent
from axiom.store.projection import Follower

# The projectors whose tables the views stand for.
VIEWED = tuple(p.name for p in axiom.projections.read_by_builds())


class BuildView:
    """The views of one write transaction over `log`, the events it appended (`appended`),
    all of them projected but those appended since the view was made."""

    def __init__(
        self,
        conn: duckdb.DuckDBPyConnection,
        log: list[StoredEvent] | None = None,
        follower: Follower | None = None,
    ) -> None:
        self.facts = FactView(conn)
        self.pools = PoolView(conn)
        self._log: list[StoredEvent] = [] if log is None else log
        self._seen = len(self._log)
        self._follower = follower
        # The transaction's follower brought the task projector up to date, and only the
        # builds' task resolvers append task events, each applying its own (`TaskResolver`).
        self.tasks_projected = follower is not None

    def catch_up(self) -> None:
        """Fold the events appended since the last call: before each build but the first."""
        fresh = self._log[self._seen :]
        self._seen += len(fresh)
        self.facts.absorb(fresh)
        self.pools.absorb(fresh)

    def tables_current(self) -> None:
        """Project the viewed tables up to the events folded (not the build's own since):
        the state the views show, for code that reads the tables."""
        if self._follower is not None:
            self._follower.advance(VIEWED, upto=self._seen)
