"""Upper bounds of every page and offset number a listing accepts, shared by the API (a
number above is 422) and the viewer (a number above is clamped): far beyond any store, far
below DuckDB's INT64 for LIMIT/OFFSET, so a huge number in a URL never overflows DuckDB."""

from __future__ import annotations

MAX_PAGE = 1_000_000_000
MAX_OFFSET = 1_000_000_000
