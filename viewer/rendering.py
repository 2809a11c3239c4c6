"""The whole page, or only one `{% partialdef %}` fragment of it when htmx asks: every
view that htmx updates in place answers through `render_page`."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def fragment_wanted(request: HttpRequest) -> bool:
    """htmx swaps a fragment in; a history restore needs the whole page again."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def render_page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    fragment: str,
    status: int = 200,
) -> HttpResponse:
    """`template`, or `template#fragment` for htmx; varies on HX-Request so a cache never
    serves the fragment as the page."""
    name = f"{template}#{fragment}" if fragment_wanted(request) else template
    response = render(request, name, context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response
