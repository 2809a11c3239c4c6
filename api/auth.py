"""Who may write through the API: a caller holding the API token, or the viewer's own page.

Every write operation carries `auth=api_write_auth`. A request passes with
`Authorization: Bearer <token>` (`config.stores.get_api_token`: `AXIOM_AUTH_TOKEN`, else
the data dir's token that `python -m axiom token` prints), or as a same-origin browser
request with Django's CSRF token (`X-CSRFToken`, as the Swagger page sends it). A page on
another origin has neither: it cannot read the token, and a cross-origin request with a
custom header needs a CORS preflight that this site never grants. Origin and
`Sec-Fetch-Site` are checked before this, in `config.security`.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare
from ninja.security import HttpBearer
from ninja.utils import check_csrf

from config.stores import get_api_token


class ApiWriteAuth(HttpBearer):
    openapi_description = (
        "The API token: `python -m axiom token` prints it (or AXIOM_AUTH_TOKEN when set)."
    )

    def __call__(self, request: HttpRequest) -> str | None:
        if request.headers.get("Authorization"):
            return super().__call__(request)
        return "browser" if check_csrf(request) is None else None

    def authenticate(self, request: HttpRequest, token: str) -> str | None:
        expected = get_api_token()
        return "token" if token and constant_time_compare(token, expected) else None


api_write_auth = ApiWriteAuth()
