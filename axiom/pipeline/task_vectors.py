"""Task vectors: the nearest LanceDB task rows of the texts a session's task resolver will
look up, computed before the pipeline's write transaction opens.

`TaskResolver` (and its `TaskMatcher`) run inside the DuckDB write transaction, where no
model may be called. So `axiom.pipeline.process` collects the texts the resolver will
ask about (`axiom.tasks.resolver.matcher_texts`: titles and blocker texts), and
`TaskVectors.neighbours` embeds them (``kind="query"``) and queries the LanceDB table of
the configured embedding version for the nearest rows of kind ``task`` (row id
``task:<task_id>``, cosine distance, prefiltered to the project's tasks). The result,
``text -> [(task_id, cosine)]``, is handed to the resolver as a hook that only looks it up
(`axiom.tasks.matcher.precomputed_search`). Vector candidates are suggestions only (see
`axiom.tasks.matcher`).

Nothing here may fail a build. No LanceDB directory or table, a table without task rows
or a project without tasks: no vector step (one INFO line per reason and process), and
the model is not loaded, so runs that never embedded a task (tests, `eval locomo`, a fresh
install) pay nothing. An unreadable table, a model that cannot be loaded or one whose
``name@version`` is not the table's: one WARNING line, no vector step (a model that
failed is not retried in this process; a table is re-opened next time). The model is
loaded on first use and kept for the process (`axiom.vectors.config.shared_embedder`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from axiom.store.db import Database, is_interrupt
from axiom.tasks.matcher import VECTOR_K, Neighbours, project_task_ids

if TYPE_CHECKING:
    from axiom.vectors.embedder import Embedder
    from axiom.vectors.lance_store import LanceStore

log = logging.getLogger(__name__)

__all__ = ["NeighbourLookup", "TaskVectors"]

TASK_ROW_PREFIX = "task:"


@dataclass(frozen=True)
class NeighbourLookup:
    """What one lookup gave: `neighbours` (None when there was no vector step) and
    `error` when something is broken (an expected absence is only logged, at INFO)."""

    neighbours: Neighbours | None
    error: str | None = None


class TaskVectors:
    """Nearest task rows of one LanceDB table (one embedding version), for one process.

    `embedder` is a loaded model or a zero-argument callable that loads one; it is called
    at most once, and only when there is a task row to compare with.
    """

    def __init__(
        self,
        store: LanceStore,
        embedder: Embedder | Callable[[], Embedder],
        *,
        k: int = VECTOR_K,
    ) -> None:
        self.store = store
        self.k = k
        self._loader: Callable[[], Embedder] | None = None
        self._embedder: Embedder | None = None
        if hasattr(embedder, "embed") and not isinstance(embedder, type):
            self._embedder = embedder  # type: ignore[assignment]
        else:
            self._loader = embedder  # type: ignore[assignment]
        self._embedder_error: str | None = None
        self._table: Any = None
        self._has_task_rows = False
        self._logged: set[str] = set()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ public

    def neighbours(
        self, db: Database, project: str | None, texts: Sequence[str]
    ) -> NeighbourLookup:
        """``text -> [(task_id, cosine)]`` (best first, at most `k`) for every text. Never
        raises: a problem comes back as `error`; each is logged once."""
        texts = list(dict.fromkeys(t for t in texts if isinstance(t, str) and t))
        if not texts:
            return NeighbourLookup({})
        with self._lock:
            try:
                return self._neighbours(db, project, texts)
            except Exception as exc:  # noqa: BLE001 - LanceDB raises many kinds on bad files
                if is_interrupt(exc):  # Ctrl-C during the read of task ids: not a bad file
                    raise
                self._table = None  # re-open next time (the writer may have rebuilt it)
                return self._error(
                    f"task vectors: {self.store.table_path} could not be searched"
                    f" ({exc.__class__.__name__}: {exc}); task matching uses exact and"
                    " full-text only"
                )

    # ------------------------------------------------------------------ internals

    def _neighbours(self, db: Database, project: str | None, texts: list[str]) -> NeighbourLookup:
        if self._embedder_error is not None:
            return NeighbourLookup(None, error=self._embedder_error)
        if not self.store.exists():
            return self._skip(
                f"task vectors: no LanceDB table {self.store.table_name} in"
                f" {self.store.lancedb_dir} yet; task matching uses exact and full-text only"
            )
        table = self._open()
        if not self._has_task_rows:
            self._has_task_rows = int(table.count_rows("kind = 'task'")) > 0
            if not self._has_task_rows:
                return self._skip(
                    f"task vectors: {self.store.table_name} holds no task rows yet;"
                    " task matching uses exact and full-text only"
                )
        with db.read() as conn:  # a short read, never the write lock
            ids = project_task_ids(conn, project)
        if not ids:
            return NeighbourLookup({})  # the project has no tasks: nothing to compare with
        embedder = self._model()
        if embedder is None:
            return NeighbourLookup(None, error=self._embedder_error)
        vectors = np.asarray(embedder.embed(texts, kind="query"), dtype=np.float32)
        where = "kind = 'task' AND id IN ({})".format(
            ", ".join("'" + (TASK_ROW_PREFIX + i).replace("'", "''") + "'" for i in ids)
        )
        out: Neighbours = {}
        for text, vector in zip(texts, vectors, strict=True):
            rows = (
                table.search(vector, vector_column_name="vector")
                .distance_type("cosine")
                .where(where, prefilter=True)
                .limit(self.k)
                .select(["id", "_distance"])
                .to_list()
            )
            found = [
                (str(r["id"])[len(TASK_ROW_PREFIX) :], 1.0 - float(r["_distance"]))
                for r in rows
                if str(r["id"]).startswith(TASK_ROW_PREFIX)
            ]
            out[text] = sorted(found, key=lambda n: (-n[1], n[0]))
        return NeighbourLookup(out)

    def _open(self) -> Any:
        if self._table is None:
            self._table = self.store.open_table_for_read()
        return self._table

    def _model(self) -> Embedder | None:
        if self._embedder is None:
            assert self._loader is not None
            try:
                self._embedder = self._loader()
            except Exception as exc:  # noqa: BLE001 - EmbedderLoadError and friends
                self._embedder_error = (
                    f"task vectors: the embedding model could not be loaded"
                    f" ({exc.__class__.__name__}: {exc}); task matching uses exact and"
                    " full-text only for the rest of this process"
                )
                self._warn(self._embedder_error)
                return None
        own = f"{self._embedder.name}@{self._embedder.version}"
        if own != self.store.embedding_version:
            self._embedder_error = (
                f"task vectors: the model is {own} but the table holds"
                f" {self.store.embedding_version} vectors; task matching uses exact and"
                " full-text only"
            )
            self._warn(self._embedder_error)
            return None
        return self._embedder

    def _skip(self, message: str) -> NeighbourLookup:
        if message not in self._logged:
            self._logged.add(message)
            log.info("%s", message)
        return NeighbourLookup(None)

    def _error(self, message: str) -> NeighbourLookup:
        self._warn(message)
        return NeighbourLookup(None, error=message)

    def _warn(self, message: str) -> None:
        if message not in self._logged:
            self._logged.add(message)
            log.warning("%s", message)
