"""Fault fixtures: the queue's real broker and Celery worker processes (borrowed from
tests/queue/conftest.py, as tests/outbox does) plus the checks every fault test ends with."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest


def _load_queue_fixtures() -> Any:
    path = Path(__file__).resolve().parents[1] / "queue" / "conftest.py"
    spec = importlib.util.spec_from_file_location("axiom_tests_queue_fixtures_faults", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_queue = _load_queue_fixtures()
broker = _queue.broker
celery_app = _queue.celery_app
celery_process = _queue.celery_process
wait_for = _queue.wait_for


@pytest.fixture(autouse=True)
def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The processes under test run with AXIOM_EMBEDDER=none (full text, no model); so does
    this one, whose rebuilds queue outbox jobs for the configured embedder too."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
