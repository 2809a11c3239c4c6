"""`?as_of=T` on list and detail pages: T an ISO 8601 date (end of that day, UTC) or
datetime. A value that does not parse is reported on the page and ignored."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.http import HttpRequest

from axiom.store.timepoints import TimepointError, parse_timepoint


@dataclass(frozen=True)
class AsOf:
    when: datetime | None
    text: str = ""
    error: str = ""


def as_of(request: HttpRequest) -> AsOf:
    text = request.GET.get("as_of", "").strip()
    if not text:
        return AsOf(None)
    try:
        return AsOf(parse_timepoint(text, end_of_day=True), text)
    except TimepointError as exc:
        return AsOf(None, text, str(exc))
