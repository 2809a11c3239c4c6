"""The queue's broker and Celery worker fixtures (tests/queue/conftest.py) for other test
folders: pytest only shares a conftest with the folders below it, so the ones that need a
real broker (outbox, faults) load a copy of it under a name of their own."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_queue_fixtures(module_name: str) -> ModuleType:
    path = Path(__file__).resolve().parent / "queue" / "conftest.py"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
