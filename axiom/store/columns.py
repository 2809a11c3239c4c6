"""Multi-row inserts that bind one list per column instead of one parameter per value.

`INSERT … VALUES (?, …), (?, …)` with tens of rows binds hundreds of parameters, and
DuckDB 1.4 plans each as its own constant, several times slower than the same rows as
`SELECT unnest(?), unnest(?), …` over one list per column (README, "The memory pipeline",
session 15, has the figures). A list parameter is still converted value by value, so a
batch of `ARROW_ROWS` rows or more goes in as an Arrow table instead, converted in C (a
transaction's events: README, session 22); below that, registering the table costs more
than it saves.
Each column takes the common type of its values and the insert casts it to the column's
type, as a single value would be. The caller owns the table (its SQL stays there): this
only builds the statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:  # only in annotations: hooks read the store and must not load pyarrow
    import pyarrow as pa

ARROW_ROWS = 64


def insert_columns(
    conn: duckdb.DuckDBPyConnection, table: str, columns: str, rows: Sequence[Sequence[object]]
) -> None:
    """Insert `rows` (values in the order of `columns`, comma-separated) in one statement."""
    if not rows:
        return
    lists = [list(values) for values in zip(*rows, strict=True)]
    incoming = _arrow(lists) if len(rows) >= ARROW_ROWS else None
    if incoming is None:
        picks = ", ".join("unnest(?)" for _ in lists)
        conn.execute(f"INSERT INTO {table} ({columns}) SELECT {picks}", lists)
        return
    name = f"incoming_{table}"
    conn.register(name, incoming)
    try:
        conn.execute(f"INSERT INTO {table} ({columns}) SELECT * FROM {name}")
    finally:
        conn.unregister(name)


def _arrow(lists: list[list[object]]) -> pa.Table | None:
    """The columns as an Arrow table, or None when a column has no flat Arrow type (mixed
    values, a nested object, an integer too large): the list parameters cast those as
    DuckDB does."""
    import pyarrow as pa  # here, not at the top: hooks import the event store (see above)

    try:
        arrays = [pa.array(values) for values in lists]
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None
    if any(pa.types.is_nested(a.type) and not pa.types.is_list(a.type) for a in arrays):
        return None
    return pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))])
