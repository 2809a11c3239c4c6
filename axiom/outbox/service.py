"""The configured outbox: one call each for the CLI and the Celery tasks."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from axiom.config import AxiomConfig
from axiom.outbox.config import (
    configured_dim,
    configured_embedder,
    configured_embedding_version,
)
from axiom.outbox.lance_store import LanceStore
from axiom.outbox.writer import DrainReport, OutboxWriter, ReconcileReport
from axiom.retrieval.embedder import Embedder, Kind
from axiom.store.db import Database

DEFAULT_BATCH_SIZE = 64


def configured_batch_size() -> int:
    return int(os.environ.get("AXIOM_OUTBOX_BATCH_SIZE") or DEFAULT_BATCH_SIZE)


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
) -> OutboxWriter:
    """The writer over the configured store; loads the embedder once per process
    (`load_model=False` for reconcile, which embeds nothing)."""
    embedder: Embedder = (
        configured_embedder()
        if load_model
        else _NotLoaded(configured_embedding_version(), configured_dim())
    )
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
