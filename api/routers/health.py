from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest
from ninja import Router

from api.schemas import HealthOut, responses
from axiom.observability.stats import collect_stats
from config.stores import get_database, is_warm

router = Router(tags=["health"])


@router.get("/health", response=responses(HealthOut))
def health(request: HttpRequest) -> dict[str, object]:
    """Counts from the store; `lock_wait_ms` is the time this request waited for the lock.
    `data_dir_ok` says whether the data dir is writable; its path is not shown. `warm` says
    whether the start-up warm-up (first page read, query model, index) has finished: until
    then the first search may take seconds."""
    database = get_database()
    waited_before = database.lock_wait_ms
    with database.read() as conn:
        stats = collect_stats(conn)
    data_dir = Path(settings.AXIOM_DATA_DIR)
    return {
        "status": "ok",
        "events": stats["events"],
        "sessions": stats["sessions"],
        "messages": stats["messages"],
        "data_dir_ok": data_dir.is_dir() and os.access(data_dir, os.W_OK),
        "lock_wait_ms": round(database.lock_wait_ms - waited_before, 3),
        "warm": is_warm(),
    }
