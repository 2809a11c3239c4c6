"""The REST API: one NinjaAPI, one router per area under `/api/v1/`.

Errors are mapped to HTTP statuses here and only here; every error body is
`{"detail": "…"}`, like ninja's own 4xx responses. An unexpected exception is logged with
its traceback and answered as a JSON 500 (errors outside ninja — an unknown `/api/` path,
a 405 — are made JSON by `config.security.ApiJsonErrorsMiddleware`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI

from api.docs import OfflineSwagger
from api.errors import NotFound
from api.routers import (
    conflicts,
    decisions,
    entries,
    forgetting,
    health,
    hooks,
    search,
    sessions,
    tasks,
)
from axiom.agent.intake import HookRejected
from axiom.conflicts.commands import ConflictCommandError, ConflictNotFound
from axiom.forgetting.forget import ForgetError, ForgetTargetNotFound
from axiom.pipeline.approval import ApprovalRejected, EntryNotFound
from axiom.retrieval.query import QueryError, SearchUnavailable
from axiom.store.db import DatabaseMissing
from axiom.store.timepoints import TimepointError
from axiom.tasks.commands import ResolutionConflict, TaskCommandError, UnknownEntity

log = logging.getLogger("axiom.api")

api = NinjaAPI(title="Axiom", version="1", docs_url="/docs", docs=OfflineSwagger())

api.add_router("/v1/", health.router)
api.add_router("/v1/sessions", sessions.router)
api.add_router("/v1/", tasks.router)
api.add_router("/v1/", entries.router)
api.add_router("/v1/", search.router)
api.add_router("/v1/", hooks.router)
api.add_router("/v1/", conflicts.router)
api.add_router("/v1/", forgetting.router)
api.add_router("/v1/", decisions.router)

ERROR_STATUS: dict[type[Exception], int] = {
    NotFound: 404,
    EntryNotFound: 404,
    ApprovalRejected: 422,
    QueryError: 422,
    UnknownEntity: 404,  # before TaskCommandError: handlers are looked up along the MRO
    ResolutionConflict: 409,  # schema-valid, but the graph forbids it (itself, a cycle)
    TaskCommandError: 422,
    HookRejected: 422,
    ConflictNotFound: 404,  # before ConflictCommandError, as above
    ConflictCommandError: 422,
    ForgetTargetNotFound: 404,  # before ForgetError, as above
    ForgetError: 422,
    TimepointError: 422,
}


def _register(error: type[Exception], status: int) -> None:
    def handler(request: HttpRequest, exc: Exception) -> HttpResponse:
        return api.create_response(request, {"detail": str(exc)}, status=status)

    api.add_exception_handler(error, handler)


for _error, _status in ERROR_STATUS.items():
    _register(_error, _status)


def _unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    log.error("%s %s failed", request.method, request.path, exc_info=exc)
    return api.create_response(
        request, {"detail": "internal error (logged on the server)"}, status=500
    )


api.add_exception_handler(Exception, _unexpected)


def _database_missing(request: HttpRequest, exc: Exception) -> HttpResponse:
    # The message names the file; a client learns no server paths.
    detail = "the database does not exist yet: run `python -m axiom migrate`"
    return api.create_response(request, {"detail": detail}, status=503)


api.add_exception_handler(DatabaseMissing, _database_missing)


def _search_unavailable(request: HttpRequest, exc: Exception) -> HttpResponse:
    # The core's message may name the LanceDB directory: the client sees the data dir as
    # $AXIOM_DATA_DIR, the log keeps the whole message.
    log.warning("%s %s: %s", request.method, request.path, exc)
    detail = str(exc).replace(str(Path(settings.AXIOM_DATA_DIR).resolve()), "$AXIOM_DATA_DIR")
    return api.create_response(request, {"detail": detail}, status=503)


api.add_exception_handler(SearchUnavailable, _search_unavailable)
