"""Fault fixtures: the queue's real broker and Celery worker processes (borrowed from
tests/queue/conftest.py, as tests/outbox does) plus the checks every fault test ends with."""

from __future__ import annotations

import pytest

from tests.queue_fixtures import load_queue_fixtures

_queue = load_queue_fixtures("axiom_tests_queue_fixtures_faults")
broker = _queue.broker
celery_app = _queue.celery_app
celery_process = _queue.celery_process
wait_for = _queue.wait_for


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The processes under test run with AXIOM_EMBEDDER=none (full text, no model); so does
    this one, whose rebuilds queue outbox jobs for the configured embedder too."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
