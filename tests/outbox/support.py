"""Helpers shared by the outbox tests (fixtures live in conftest.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from axiom.ingest.transcript import Message, Transcript
from axiom.store.db import Database
from axiom.vectors.embedder import Embedder, Kind


class ExplodingEmbedder:
    """Our Embedder protocol, failing like a model that ran out of memory."""

    def __init__(self, like: Embedder, message: str = "model exploded") -> None:
        self.name, self.version, self.dim = like.name, like.version, like.dim
        self.message = message
        self.calls = 0

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        self.calls += 1
        raise RuntimeError(self.message)


def session(sid: str, *texts: str, role: str = "user", **meta: Any) -> Transcript:
    return Transcript(
        sid,
        "outbox-test",
        "json",
        tuple(Message(i, role, t, meta=dict(meta)) for i, t in enumerate(texts)),
    )


def jobs(db: Database, *columns: str) -> list[tuple[Any, ...]]:
    cols = ", ".join(columns or ("item_kind", "item_id", "status"))
    with db.read() as conn:
        return conn.execute(f"SELECT {cols} FROM vector_outbox ORDER BY ALL").fetchall()


def by_status(db: Database) -> dict[str, int]:
    with db.read() as conn:
        return dict(
            conn.execute("SELECT status, count(*) FROM vector_outbox GROUP BY status").fetchall()
        )


def snapshot(db: Database) -> list[tuple[Any, ...]]:
    with db.read() as conn:
        return conn.execute("SELECT * FROM vector_outbox ORDER BY job_id").fetchall()
