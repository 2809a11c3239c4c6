"""Errors raised by the API's own routers (axiom's errors are mapped in `api.api`)."""

from __future__ import annotations


class NotFound(LookupError):
    """The requested object does not exist."""
