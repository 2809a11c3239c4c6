"""Search fixtures: real DuckDB and LanceDB files under tmp_path, filled by the real
pipeline (import → process_session → outbox projector → outbox writer). The model is a
fake: a hashed bag of analyzer terms (deterministic, instant, shares words like a real
embedder shares meaning). Tests that need a real model load e5 themselves."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.outbox.projector import OutboxProjector
from axiom.outbox.writer import OutboxWriter
from axiom.pipeline.process import Pipeline, process_session
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.store.projection import run_projector
from axiom.vectors.config import embedding_version_of
from axiom.vectors.lance_store import LanceStore
from axiom.vectors.lexical import DEFAULT_ANALYZER


class HashEmbedder:
    """Bag of analyzer terms hashed into 384 dimensions, L2-normalized."""

    name = "hash-bow"
    version = "test/1"
    dim = 384

    def embed(self, texts: Sequence[str], kind: str = "document") -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in DEFAULT_ANALYZER(text):
                out[row, zlib.crc32(term.encode()) % self.dim] += 1.0
            out[row, 0] += 0.05  # never a zero vector
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def transcript(session_id: str, texts: Sequence[str], started_at: str | None = None) -> Transcript:
    """A two-person chat: even messages by the user, odd ones by the assistant."""
    return Transcript(
        session_id=session_id,
        project="demo",
        source="markdown",
        messages=tuple(
            Message(index=i, role="user" if i % 2 == 0 else "assistant", text=t)
            for i, t in enumerate(texts)
        ),
        started_at=started_at,
        title=f"session {session_id}",
    )


CACHE_SESSION = [
    "Our API responses are slow, p95 is 900 ms on the listing page.",
    "We decided to use Redis as the cache for the listing queries because Memcached has no persistence.",
    "How long should entries live in the cache?",
    "Cache entries expire after ten minutes; invalidate them when a listing changes.",
    "Agreed. I will write the invalidation hook tomorrow.",
]
DEPLOY_SESSION = [
    "The deploy to production failed last night.",
    "Error: migration 0042 timed out while adding the index on orders.",
    "Fixed it by creating the index concurrently before the migration.",
    "The weather in Lisbon was lovely this weekend, we walked along the river.",
]
KOREAN_SESSION = [
    "배포 일정은 언제로 할까요?",
    "다음 주 화요일에 배포하기로 결정했습니다. 데이터베이스 백업을 먼저 확인해야 합니다.",
    "좋아요, 백업은 제가 월요일에 점검하겠습니다.",
]


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def store(data_dir: Path, embedder: HashEmbedder) -> LanceStore:
    return LanceStore(data_dir / "lancedb", embedding_version_of(embedder), embedder.dim)


def index_all(db: Database, store: LanceStore, embedder: HashEmbedder) -> None:
    """Queue jobs for the fake model's vector space and drain them, like the writer does."""
    with db.write() as conn:
        run_projector(conn, OutboxProjector(store.embedding_version))
    report = OutboxWriter(db, store, embedder, batch_size=32).drain()
    assert report.error is None and report.remaining == 0, report


@pytest.fixture
def indexed(
    tmp_path: Path, db: Database, store: LanceStore, embedder: HashEmbedder
) -> Iterator[SearchService]:
    """Three processed sessions (English cache, English deploy, Korean), all embedded."""
    sessions = [
        transcript("cache", CACHE_SESSION, "2026-03-01T10:00:00"),
        transcript("deploy", DEPLOY_SESSION, "2026-03-05T09:00:00"),
        transcript("ko", KOREAN_SESSION, "2026-03-07T09:00:00"),
    ]
    yield from serve(tmp_path, db, store, embedder, sessions)


def serve(
    tmp_path: Path,
    db: Database,
    store: LanceStore,
    embedder: HashEmbedder,
    sessions: Sequence[Transcript],
) -> Iterator[SearchService]:
    """Import, process and embed `sessions`; yield a service over them, closed after."""
    ingest_transcripts(db, sessions)
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris")
    for t in sessions:
        process_session(db, t.session_id, pipeline)
    index_all(db, store, embedder)
    service = SearchService(db, store, embedder)
    yield service
    service.close()


def chat(session_id: str, started: str, turns: list[tuple[str, str]]) -> Transcript:
    """A LoCoMo-like conversation: each turn (speaker, text) a user message with its speaker."""
    return Transcript(
        session_id=session_id,
        project="friends",
        source="locomo",
        messages=tuple(
            Message(index=i, role="user", text=text, meta={"speaker": speaker})
            for i, (speaker, text) in enumerate(turns)
        ),
        started_at=started,
        title=session_id,
    )
