"""The configured outbox: one call each for the CLI and the Celery tasks."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from axiom.config import AxiomConfig
from axiom.outbox.cpu import busy_cores
from axiom.outbox.queries import count_jobs_by_status, top_errors
from axiom.outbox.writer import DrainReport, OutboxWriter, ReconcileReport
from axiom.settings import DEFAULT_OUTBOX_BATCH_SIZE, Settings
from axiom.store.db import Database
from axiom.vectors.config import (
    configured_dim,
    configured_embedder,
    configured_embedding_version,
)
from axiom.vectors.embedder import BatchParallelEmbedder, Embedder, Kind
from axiom.vectors.lance_store import LanceStore, LanceStoreError

# Jobs per claim for the writer the CLI and Celery run (`AXIOM_OUTBOX_BATCH_SIZE`). On
# 2 cores the model is the bottleneck; what a batch adds around it — three short DuckDB
# transactions (lock + connect + commit + close each) and one LanceDB commit — cost
# ~150-200 ms. bench/bench_outbox.py, 3,000 items, MiniLM on 1 thread: batch 64 spent 32 %
# of the drain outside the model (30.8 s), 128 22 % (23.7 s), 256 16 % (22.2 s). 256 also
# makes 4x fewer LanceDB versions/fragments; a batch still takes only ~2 s, well inside the
# Celery drain budget, and a crash redoes at most 256 cheap jobs.
DEFAULT_BATCH_SIZE = DEFAULT_OUTBOX_BATCH_SIZE


def configured_batch_size() -> int:
    return Settings.from_env().outbox_batch_size


def configured_embed_threads(foreground: bool = False) -> int:
    """Intra-op threads for a torch embedder in the writer: `AXIOM_EMBED_THREADS`, else, for
    a `foreground` drain (`axiom outbox drain`: what a user runs on a first import and waits
    for), one per core that other processes leave idle (`idle_cores`), else one core less
    than the machine has (at least 1) for the writer worker under `axiom up`.

    Why: torch's threads wait for each other at every op, so a thread on a core another
    process keeps busy slows all of them. On 2 cores, MiniLM with 2 threads made ~300
    texts/s on an idle machine but ~64/s while another process kept one core busy; with 1
    thread, ~186/s and ~180/s. The worker embeds while an import keeps the other core busy
    and the web needs one, so it keeps a core free; a foreground drain on quiet cores drains
    1.25-1.5x the items/s with one thread per core (README, "Embedding speed against stock
    MiniLM"), and under load 1 thread drained faster than 2.
    """
    threads = Settings.from_env().embed_threads
    if threads is not None:
        return threads
    cores = usable_cores()
    if not foreground:
        return max(1, cores - 1)
    busy = busy_cores()
    if busy is None:  # no /proc/stat: the 1-minute load average, which lags
        try:
            busy = os.getloadavg()[0]
        except (AttributeError, OSError):
            busy = 0.0
    return idle_cores(cores, busy)


def usable_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 2


def idle_cores(cores: int, busy: float) -> int:
    """Cores that other processes leave idle: `cores` less the busy ones (`busy`, in cores,
    rounded: a core more than half busy slows every torch thread), at least 1."""
    return max(1, min(cores, cores - int(busy + 0.5)))


def apply_embed_threads(threads: int, embedder: Embedder | None = None) -> None:
    """Embed on `threads` cores: an embedder that runs batches side by side (torch e5) gets
    `threads` workers and torch one intra-op thread each; any other, `threads` intra-op
    threads for its one batch at a time (no-op without torch).

    Why workers: intra-op threads wait for each other at every op; on 2 cores at load 3-4
    the drain with 2 workers ran 1.18x the items/s of 2 intra-op threads (3 rounds of 4),
    the same work per CPU-second (README, "Session 16 levers"). Under heavy load workers
    lost; `configured_embed_threads` then gives a foreground drain one core anyway."""
    try:
        import torch
    except ImportError:
        return
    intra_op = threads
    if isinstance(embedder, BatchParallelEmbedder):
        embedder.workers = threads
        intra_op = 1
    if torch.get_num_threads() != intra_op:
        torch.set_num_threads(intra_op)


def configured_store(config: AxiomConfig | None = None) -> LanceStore:
    """The LanceDB table of the configured embedder (readers: `open_table_for_read()`)."""
    config = config or AxiomConfig.from_env()
    return LanceStore(config.lancedb_dir, configured_embedding_version(), configured_dim())


class _NotLoaded:
    """Stands in for the configured model where nothing is embedded (reconcile)."""

    def __init__(self, embedding_version: str, dim: int) -> None:
        self.name, _, self.version = embedding_version.partition("@")
        self.dim = dim

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        raise RuntimeError("this writer was built without loading the embedder")


def configured_writer(
    db: Database,
    config: AxiomConfig | None = None,
    batch_size: int | None = None,
    *,
    load_model: bool = True,
    foreground: bool = False,
) -> OutboxWriter:
    """The writer over the configured store; loads the embedder once per process
    (`load_model=False` for reconcile, which embeds nothing) and sets this process's torch
    threads (see `configured_embed_threads`; `foreground` for `axiom outbox drain`): only
    writer processes build a writer."""
    embedder: Embedder
    if load_model:
        embedder = configured_embedder()
        apply_embed_threads(configured_embed_threads(foreground), embedder)
    else:
        embedder = _NotLoaded(configured_embedding_version(), configured_dim())
    return OutboxWriter(
        db,
        configured_store(config),
        embedder,
        batch_size=batch_size or configured_batch_size(),
    )


def drain_outbox(db: Database, max_seconds: float | None = None) -> DrainReport:
    return configured_writer(db).drain(max_seconds=max_seconds)


def reconcile_outbox(db: Database) -> ReconcileReport:
    return configured_writer(db, load_model=False).reconcile()


def outbox_status(db: Database, config: AxiomConfig | None = None) -> dict[str, Any]:
    """Jobs by status and the most frequent errors of the configured embedding version,
    and the rows its LanceDB table holds (or the error opening it)."""
    store = configured_store(config)
    with db.read() as conn:
        by_status = count_jobs_by_status(conn, store.embedding_version)
        errors = top_errors(conn, store.embedding_version)
    try:
        rows: int | str = store.count_rows()
    except LanceStoreError as exc:
        rows = f"error: {exc}"
    return {
        "embedding_version": store.embedding_version,
        "table": store.table_name,
        "jobs": by_status,
        "lancedb_rows": rows,
        "top_errors": [{"error": e, "jobs": n} for e, n in errors],
    }
