"""`config.stores`: `reset` (run by `forget` inside a request) never closes a search service
under a request still using it; the start-up warm-up is reported by health."""

from __future__ import annotations

from axiom.store.db import Database
from config import stores


def _refuses_work(service: object) -> bool:
    try:
        service._pool.submit(int).result()  # type: ignore[attr-defined]
    except RuntimeError:  # "cannot schedule new futures after shutdown"
        return True
    return False


def test_reset_waits_for_the_request_holding_the_service(site: Database) -> None:
    with stores.search_service() as held:
        stores.reset()  # another request forgets something meanwhile
        assert not _refuses_work(held)
        with stores.search_service() as fresh:  # later requests get a new service
            assert fresh is not held
    assert _refuses_work(held)  # closed once returned
    assert not _refuses_work(fresh)  # the current one stays open
    stores.reset()
    assert _refuses_work(fresh)  # idle: closed at once


def test_health_says_warm_once_the_warm_up_has_run(site: Database, client) -> None:  # type: ignore[no-untyped-def]
    assert client.get("/api/v1/health").json()["warm"] is False
    stores.warm_in_background().join(timeout=120)
    assert client.get("/api/v1/health").json()["warm"] is True
    stores.reset()  # a fresh data dir is not warm
    assert client.get("/api/v1/health").json()["warm"] is False
