"""Multi-row inserts that bind one list per column instead of one parameter per value.

`INSERT … VALUES (?, …), (?, …)` with tens of rows binds hundreds of parameters, and
DuckDB 1.4 plans each as its own constant, several times slower than the same rows as
`SELECT unnest(?), unnest(?), …` over one list per column (README, "The memory pipeline",
session 15, has the figures).
Each list takes the common type of its values and the insert casts it to the column's
type, as a single value would be. The caller owns the table (its SQL stays there): this
only builds the statement.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb


def insert_columns(
    conn: duckdb.DuckDBPyConnection, table: str, columns: str, rows: Sequence[Sequence[object]]
) -> None:
    """Insert `rows` (values in the order of `columns`, comma-separated) in one statement."""
    if not rows:
        return
    lists = [list(values) for values in zip(*rows, strict=True)]
    picks = ", ".join("unnest(?)" for _ in lists)
    conn.execute(f"INSERT INTO {table} ({columns}) SELECT {picks}", lists)
