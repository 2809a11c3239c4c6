"""API fixtures: the site reads a fresh DuckDB file in the test's data dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.store.db import Database
from viewer import db as viewer_db


@pytest.fixture
def site(settings, data_dir: Path, db: Database) -> Iterator[Database]:
    settings.AXIOM_DATA_DIR = data_dir
    settings.AXIOM_AUTH_TOKEN = ""
    viewer_db.reset()
    yield db
    viewer_db.reset()
