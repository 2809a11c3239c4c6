"""Token authentication for a site reachable beyond localhost.

When `settings.AXIOM_AUTH_TOKEN` is set, every request except the login page and static
files must carry the token, either as `Authorization: Bearer <token>` (scripts, the API)
or as the `axiom_token` cookie that the login page sets (browsers). The cookie holds an
HMAC of the token, never the token itself.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.crypto import constant_time_compare, salted_hmac

COOKIE_NAME = "axiom_token"
_COOKIE_SALT = "axiom.viewer.login"


def cookie_value(token: str) -> str:
    return salted_hmac(_COOKIE_SALT, token).hexdigest()


def token_matches(candidate: str, token: str) -> bool:
    return bool(token) and constant_time_compare(candidate, token)


def is_authenticated(request: HttpRequest, token: str) -> bool:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token_matches(value.strip(), token):
        return True
    cookie = request.COOKIES.get(COOKIE_NAME, "")
    return bool(cookie) and constant_time_compare(cookie, cookie_value(token))


class TokenAuthMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = settings.AXIOM_AUTH_TOKEN
        if not token or self._exempt(request) or is_authenticated(request, token):
            return self.get_response(request)
        return self._deny(request)

    def _exempt(self, request: HttpRequest) -> bool:
        return request.path == reverse("viewer-login") or request.path.startswith(
            settings.STATIC_URL
        )

    def _deny(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse(
                {"detail": "authentication required: send Authorization: Bearer <token>"},
                status=401,
            )
        else:
            response = render(
                request,
                "viewer/login.html",
                {"next": request.get_full_path(), "error": None},
                status=401,
            )
        response["WWW-Authenticate"] = 'Bearer realm="axiom"'
        return response
