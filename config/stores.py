"""The web process's handles on the stores, shared by the viewer and the API.

A `Database` holds no connection: it only knows the file and its lock, and every read is
one short `with db.read() as conn:` unit, so one instance per data dir serves all
threads. The search service keeps the LanceDB handle and the loaded model, so it too is
made once per data dir. Both come from the core (`open_database`,
`SearchService.from_config`); this module only caches them for the Django process.

The web process answers people, so a read that would wait for a writer is served from the
newest read snapshot instead (`axiom.store.snapshots`; AXIOM_READ_SNAPSHOTS turns it off).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from axiom.config import AxiomConfig
from axiom.observability.dashboard import collect_dashboard
from axiom.retrieval.query import QueryError, SearchUnavailable
from axiom.retrieval.search import SearchService
from axiom.retrieval.snippets import forget_words
from axiom.store.api_token import ensure_api_token
from axiom.store.db import Database
from axiom.store.migrate import open_database

log = logging.getLogger(__name__)
_lock = threading.Lock()
_databases: dict[Path, Database] = {}
_services: dict[Path, SearchService] = {}
_leases: dict[SearchService, int] = {}  # requests using each service now
_retired: set[SearchService] = set()  # swapped out by `reset` while leased: close on return


def _config() -> AxiomConfig:
    return AxiomConfig(data_dir=Path(settings.AXIOM_DATA_DIR))


def get_database() -> Database:
    """The migrated database under `settings.AXIOM_DATA_DIR`, created on first use."""
    config = _config()
    with _lock:
        database = _databases.get(config.duckdb_path)
        if database is None:
            database = open_database(config)
            _databases[config.duckdb_path] = database
    return database


@contextmanager
def search_service() -> Iterator[SearchService]:
    """The data dir's search service (one per data dir, the database migrated before its
    first read), leased for one request: `reset` closes it only once no request holds it."""
    config = _config()
    get_database()
    with _lock:
        service = _services.get(config.data_dir)
        if service is None:
            service = SearchService.from_config(config)
            _services[config.data_dir] = service
        _leases[service] = _leases.get(service, 0) + 1
    try:
        yield service
    finally:
        with _lock:
            _leases[service] -= 1
            idle = _leases[service] == 0
            if idle:
                del _leases[service]
            retired = idle and service in _retired
            if idle:
                _retired.discard(service)
        if retired:
            service.close()


_warmed = threading.Event()


def is_warm() -> bool:
    """Whether the start-up warm-up has finished (health reports it, so a benchmark or a
    load balancer can wait for it)."""
    return _warmed.is_set()


def warm_pages() -> None:
    """Read the dashboard once: the first parameterized DuckDB query of a process imports
    pandas (a third of a second), and the store's pages enter the OS cache."""
    try:
        with get_database().read() as conn:
            collect_dashboard(conn)
    except Exception:  # noqa: BLE001 - a warm-up must never take the web down
        log.exception("page warm-up failed")


def warm_search() -> None:
    """Load the query model and open the index now, so the first search a person makes
    is as fast as the rest (loading e5 takes seconds). Failures are only logged: the
    search page reports them itself."""
    started = time.perf_counter()
    try:
        with search_service() as service:
            service.embed_query("warm up")
            service.search("warm up", k=1)
    except (QueryError, SearchUnavailable) as exc:
        log.info("search not warmed: %s", exc)
        return
    except Exception:  # noqa: BLE001 - a warm-up must never take the web down
        log.exception("search warm-up failed")
        return
    log.info("search warmed in %.1f s", time.perf_counter() - started)


def warm() -> None:
    """Pages first (fast), then search; `is_warm` turns true when both are done, failed
    or not."""
    try:
        warm_pages()
        warm_search()
    finally:
        _warmed.set()


def warm_in_background() -> threading.Thread:
    """`warm` in a daemon thread: the web answers while the model loads."""
    thread = threading.Thread(target=warm, name="axiom-warm-up", daemon=True)
    thread.start()
    return thread


def reset() -> None:
    """Forget every cached handle (tests point the settings at a fresh data dir; `forget`
    drops LanceDB versions the services hold). A service a request still uses is swapped
    out now and closed when that request returns it, never under it."""
    with _lock:
        idle = [s for s in _services.values() if s not in _leases]
        _retired.update(s for s in _services.values() if s in _leases)
        _services.clear()
        _databases.clear()
    for service in idle:
        service.close()
    forget_words()


def get_api_token() -> str:
    """The token API writes must carry: `AXIOM_AUTH_TOKEN` if set, else the data dir's
    token file (made on first use, mode 0600; `python -m axiom token` prints it)."""
    return settings.AXIOM_AUTH_TOKEN or ensure_api_token(Path(settings.AXIOM_DATA_DIR))
