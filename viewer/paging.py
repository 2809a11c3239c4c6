"""One pager for every listing: the page number from the query string, the rows of one
page (read one more to know whether a next page exists), and the links around it,
rendered by `templates/viewer/_pager.html`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from axiom.store.bounds import MAX_PAGE

T = TypeVar("T")


def page_number(raw: str | None) -> int:
    """`?page=` as a number from 1 to `MAX_PAGE` (a bigger one is clamped, so its offset fits
    DuckDB's INT64); anything else is page 1, so a stale link still works."""
    try:
        return min(MAX_PAGE, max(1, int(raw or 1)))
    except ValueError:
        return 1


@dataclass(frozen=True)
class Pager:
    number: int
    per_page: int
    count: int  # rows on this page
    has_next: bool
    url: Callable[[int], str]  # page number -> this listing's URL for it

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def previous_url(self) -> str:
        return self.url(self.number - 1)

    @property
    def next_url(self) -> str:
        return self.url(self.number + 1)

    @property
    def first(self) -> int:
        """1-based position of the page's first row in the whole listing."""
        return (self.number - 1) * self.per_page + 1

    @property
    def last(self) -> int:
        return self.first + self.count - 1


def offset_of(number: int, per_page: int) -> int:
    return (number - 1) * per_page


def paged(
    rows: Sequence[T], number: int, per_page: int, url: Callable[[int], str]
) -> tuple[list[T], Pager]:
    """The page's rows and its pager, from `per_page + 1` rows read at `offset_of`."""
    shown = list(rows[:per_page])
    return shown, Pager(number, per_page, len(shown), len(rows) > per_page, url)
