"""Shared fixtures: real DuckDB files under tmp_path, never mocks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from axiom.store.db import Database
from axiom.store.migrate import migrate
from config import stores

SAMPLES = Path(__file__).resolve().parents[1] / "axiom" / "samples"
SAMPLE_SESSION = next((SAMPLES / "claude_code").rglob("*.jsonl"))


@pytest.fixture(scope="session", autouse=True)
def _no_data_dir_in_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Code that reads its data directory from the environment or Django's settings
    without a test's `data_dir` or `site` (a module fixture, a server a test starts)
    writes under a temporary folder, never in the checkout's `data/` (the settings'
    default, read before any fixture runs), which may be a real store."""
    default = tmp_path_factory.mktemp("default-data")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("AXIOM_DATA_DIR", str(default))
    monkeypatch.setattr(django_settings, "AXIOM_DATA_DIR", default)
    yield
    monkeypatch.undo()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh AXIOM_DATA_DIR for code that reads its configuration from the environment."""
    directory = tmp_path / "data"
    directory.mkdir()
    monkeypatch.setenv("AXIOM_DATA_DIR", str(directory))
    return directory


@pytest.fixture
def db(data_dir: Path) -> Database:
    """A migrated DuckDB file in the test's data dir."""
    database = Database(data_dir / "axiom.duckdb")
    migrate(database)
    return database


@pytest.fixture
def sample_session() -> Path:
    return SAMPLE_SESSION


@pytest.fixture
def site(settings, data_dir: Path, db: Database) -> Iterator[Database]:  # type: ignore[no-untyped-def]
    """Point the web layer (viewer and API) at this test's migrated database."""
    settings.AXIOM_DATA_DIR = data_dir
    settings.AXIOM_AUTH_TOKEN = ""
    stores.reset()
    yield db
    stores.reset()


@pytest.fixture
def api_auth(site: Database) -> dict[str, str]:
    """Test-client keyword arguments carrying the site's API token (API writes need it)."""
    return {"HTTP_AUTHORIZATION": f"Bearer {stores.get_api_token()}"}


# Columns holding when a row was written rather than what it says.
_WRITTEN_AT = {
    "sessions": "ingested_at",
    "message_citations": "created_at",
    "entries": "created_at",
}


@pytest.fixture
def table_rows() -> Callable[..., dict[str, list[tuple]]]:
    """`table_rows(db, *tables)`: each table's rows, sorted, without write-time columns, to
    compare a rebuild with the incremental result."""

    def read(db: Database, *tables: str) -> dict[str, list[tuple]]:
        with db.read() as conn:
            return {
                t: conn.execute(
                    f"SELECT * {f'EXCLUDE ({_WRITTEN_AT[t]})' if t in _WRITTEN_AT else ''}"
                    f" FROM {t} ORDER BY ALL"
                ).fetchall()
                for t in tables
            }

    return read
