"""Middleware that keeps other pages out and every API answer JSON.

- `SecurityHeadersMiddleware`: CSP (scripts and styles from this site only, no framing),
  `X-Content-Type-Options`, `X-Frame-Options`, `Referrer-Policy` on every response.
- `CrossOriginWriteGuard`: a write (POST/PUT/PATCH/DELETE) whose `Origin` is another
  origin — another port of 127.0.0.1 included — or whose `Sec-Fetch-Site` is `cross-site`
  or `same-site` is refused with 403 before any view runs. API writes must also be JSON
  (`Content-Type: application/json`, else 415), at most `MAX_API_BODY_BYTES` (else 413)
  and nested at most `MAX_JSON_DEPTH` deep (else 422). Authentication comes before the
  body's content: a write refused for its content type or depth that also lacks the
  token (or our page's CSRF token) is answered 401, as the API itself would.
- `ApiJsonErrorsMiddleware`: under `/api/`, every error is `{"detail": …}` JSON — the
  resolver's 404, a 405, a 500 — and an unhandled exception is logged with its traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse

from api.auth import api_write_auth

log = logging.getLogger("axiom.web")

MAX_API_BODY_BYTES = 1_000_000
MAX_JSON_DEPTH = 32
API_PREFIX = "/api/"
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        # Swagger UI and htmx's indicator styles set inline styles; no inline script runs.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

Middleware = Callable[[HttpRequest], HttpResponseBase]


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def json_error(detail: str, status: int) -> JsonResponse:
    return JsonResponse({"detail": detail}, status=status)


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Middleware) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        for name, value in SECURITY_HEADERS.items():
            response[name] = value
        return response


def _own_origin(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}".lower()


def cross_origin_reason(request: HttpRequest) -> str | None:
    """Why this write comes from another site, or None when it may be our own page."""
    fetch_site = request.headers.get("Sec-Fetch-Site", "").lower()
    if fetch_site in {"cross-site", "same-site"}:
        return f"cross-origin write refused (Sec-Fetch-Site: {fetch_site})"
    origin = request.headers.get("Origin")
    if origin is not None and origin.lower() != _own_origin(request):
        return f"cross-origin write refused (Origin: {origin[:100]})"
    return None


def _depth_exceeds(value: Any, limit: int) -> bool:
    """True when `value` nests lists/objects deeper than `limit` (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def api_body_problem(request: HttpRequest) -> JsonResponse | None:
    """413 / 415 / 422 for an API write whose body is too big, not JSON or nested too deep."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return json_error("Content-Length is not a number", 400)
    if length > MAX_API_BODY_BYTES:
        return json_error(f"request body over {MAX_API_BODY_BYTES} bytes", 413)
    if request.content_type != "application/json":
        return json_error("send the body as JSON with Content-Type: application/json", 415)
    try:
        data = json.loads(request.body) if request.body else None
    except RecursionError:
        return json_error(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", 422)
    except ValueError:
        return None  # malformed JSON: the API answers 400 with its own message
    if _depth_exceeds(data, MAX_JSON_DEPTH):
        return json_error(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", 422)
    return None


class CrossOriginWriteGuard:
    def __init__(self, get_response: Middleware) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method in WRITE_METHODS:
            reason = cross_origin_reason(request)
            if reason is not None:
                log.warning("%s %s: %s", request.method, request.path, reason)
                if _is_api(request):
                    return json_error(reason, 403)
                return HttpResponse(reason, status=403, content_type="text/plain")
            if _is_api(request):
                problem = api_body_problem(request)
                if problem is not None:
                    return _unauthorized_first(request, problem)
            elif _page_body_too_large(request):
                return HttpResponse(
                    f"Refused: the request is larger than {settings.AXIOM_IMPORT_MAX_MB} MB.",
                    status=413,
                    content_type="text/plain",
                )
        return self.get_response(request)


def _unauthorized_first(request: HttpRequest, problem: JsonResponse) -> JsonResponse:
    """401 (ninja's answer) instead of a 415 / 422 about the body when the write carries
    neither the token nor our page's CSRF token: who may write is settled before what was
    sent. 413 stays first, so an oversized body is never read to look for a CSRF field."""
    if problem.status_code in {415, 422} and api_write_auth(request) is None:
        return json_error("Unauthorized", 401)
    return problem


# Multipart framing around an uploaded file, beyond the file itself.
PAGE_FORM_SLACK_BYTES = 1_000_000


def _page_body_too_large(request: HttpRequest) -> bool:
    """A page form's body over the upload limit is refused before anything reads it: the
    CSRF check reads POST, and Django writes an upload to a temporary file as it parses."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False  # Django refuses a malformed length itself
    return length > settings.AXIOM_IMPORT_MAX_MB * 1_000_000 + PAGE_FORM_SLACK_BYTES


class ApiJsonErrorsMiddleware:
    def __init__(self, get_response: Middleware) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if not _is_api(request) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        try:
            phrase = HTTPStatus(response.status_code).phrase
        except ValueError:
            phrase = "error"
        replacement = json_error(phrase, response.status_code)
        for header in ("Allow", "WWW-Authenticate", "Retry-After"):
            if header in response:
                replacement[header] = response[header]
        return replacement

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not _is_api(request):
            return None
        log.error("%s %s failed", request.method, request.path, exc_info=exc)
        return json_error("internal error (logged on the server)", 500)
