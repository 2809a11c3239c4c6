"""Swagger UI for `/api/docs` that works offline.

django-ninja's `Swagger` serves its bundled Swagger UI only when `ninja` is in
`INSTALLED_APPS` and otherwise points the page at a CDN. This viewer renders our own
template, which loads Swagger UI from `static/vendor/swagger-ui/` (see its README).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from ninja.openapi.docs import DocsBase

if TYPE_CHECKING:
    from ninja import NinjaAPI


class OfflineSwagger(DocsBase):
    template = "api/docs.html"
    default_settings: dict[str, Any] = {
        "layout": "BaseLayout",
        "deepLinking": True,
        # The validator badge would send the schema to validator.swagger.io.
        "validatorUrl": None,
    }

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = {**self.default_settings, **(settings or {})}

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        settings = {**self.settings, "url": self.get_openapi_url(api, kwargs)}
        context = {"api": api, "swagger_settings": settings}  # embedded with json_script
        return render(request, self.template, context)
