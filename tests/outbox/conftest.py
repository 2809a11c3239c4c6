"""Outbox fixtures: a real DuckDB file, a real LanceDB directory under tmp_path and the real
MiniLM embedder (loaded once per test session). The queue fixtures (real redis-compatible
broker and Celery worker) are borrowed from tests/queue/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.outbox.writer import OutboxWriter
from axiom.store.db import Database
from axiom.vectors.config import configured_embedding_version, embedding_version_of, shared_embedder
from axiom.vectors.embedder import Embedder
from axiom.vectors.lance_store import LanceStore
from tests.queue_fixtures import load_queue_fixtures

_queue = load_queue_fixtures("axiom_tests_queue_fixtures")
broker = _queue.broker
celery_app = _queue.celery_app
worker = _queue.worker
wait_for = _queue.wait_for


@pytest.fixture(autouse=True)
def _minilm_without_context_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count one row per item, written with MiniLM; the product defaults are e5
    and context rows (config.py; context rows are tested in tests/retrieval)."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "minilm")
    monkeypatch.setenv("AXIOM_CONTEXT_ROWS", "0")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return shared_embedder("minilm")


@pytest.fixture(autouse=True)
def _torch_threads() -> Iterator[None]:
    """Building the configured writer sets torch's process-wide thread count; undo it so
    the rest of the test session runs as it would have."""
    import torch

    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def store(data_dir: Path, embedder: Embedder) -> LanceStore:
    assert embedding_version_of(embedder) == configured_embedding_version()
    return LanceStore(data_dir / "lancedb", embedding_version_of(embedder), embedder.dim)


@pytest.fixture
def writer(db: Database, store: LanceStore, embedder: Embedder) -> OutboxWriter:
    return OutboxWriter(db, store, embedder, batch_size=16)
