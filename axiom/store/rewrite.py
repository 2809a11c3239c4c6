"""Rewrite the DuckDB file so blocks freed by deletes (which may still hold forgotten
text) are not left on disk: copy every table, index and sequence into a fresh file with
`COPY FROM DATABASE`, then swap it in, all under the exclusive lock (`Database.exclusive`).
Every read snapshot (copies of the old file, `axiom.store.snapshots`) is deleted with it.
CHECKPOINT alone may keep freed blocks in the file; a copy has only live data.

The copy is written through the writers' options, in their 2,048-row groups: DuckDB 1.4.5
fails an append through such an attach to a keyed table whose last group is longer.
`mend_row_groups` (run by `migrate` before it applies migrations to a store that existed:
the first command of a new version that brings one) rewrites a file written otherwise."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import duckdb

from axiom.store import snapshots
from axiom.store.db import (
    NO_SPACE,
    ROW_GROUP_ROWS,
    Database,
    out_of_space,
    write_instance,
)

log = logging.getLogger(__name__)


def rewrite_database(db: Database) -> int:
    """Replace `db`'s file with a compact copy of its live data; returns the new size."""
    with db.exclusive():
        return _rewrite(db)


def _rewrite(db: Database) -> int:
    """The rewrite, the exclusive lock held. A WAL left behind is read into the copy (the
    source is attached read-only), then deleted with the old file."""
    fresh = db.path.with_name(db.path.name + ".rewrite")
    wal = db.path.with_name(db.path.name + ".wal")
    for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):
        leftover.unlink(missing_ok=True)
    try:
        _copy(db.path, fresh)
    except (duckdb.Error, OSError) as exc:  # the old file stands; drop the half copy
        for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):
            leftover.unlink(missing_ok=True)
        if NO_SPACE in str(exc):
            raise out_of_space(db.path, exc) from exc
        raise
    os.replace(fresh, db.path)
    wal.unlink(missing_ok=True)
    snapshots.delete_all(db.path)
    return db.path.stat().st_size


def _copy(source: os.PathLike[str], target: os.PathLike[str]) -> None:
    conn = write_instance(Path(target))  # the writers' options, spilling beside the copy
    try:
        conn.execute(f"ATTACH '{_sql_path(source)}' AS src (READ_ONLY)")
        # the row groups every writer appends in: a copy in DuckDB's default ones fails
        # the first append after it ("Could not find node in column segment tree")
        conn.execute(f"ATTACH '{_sql_path(target)}' AS dst (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
        # one transaction: the writers checkpoint at every commit, and a checkpoint per
        # table copied would leave the blocks of the ones before it free in the copy
        conn.execute("BEGIN TRANSACTION")
        conn.execute("COPY FROM DATABASE src TO dst")
        conn.execute("COMMIT")
        conn.execute("DETACH dst")
        conn.execute("DETACH src")
    finally:
        conn.close()


def _sql_path(path: os.PathLike[str]) -> str:
    return os.fspath(path).replace("'", "''")


def long_row_groups(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables with a key or an index whose last row group is longer than the writers'
    (`ROW_GROUP_ROWS`): DuckDB 1.4.5 fails the next append to one through the writers'
    attach ("Could not find node in column segment tree"). A file written before Axiom
    attached it with that size, or rewritten before the rewrite did, has them."""
    tables = conn.execute(
        "SELECT schema_name, table_name FROM duckdb_tables()"
        " WHERE database_name = current_database() AND (has_primary_key OR index_count > 0)"
    ).fetchall()
    long = []
    for schema, table in tables:
        name = ".".join('"' + part.replace('"', '""') + '"' for part in (schema, table))
        row = conn.execute(  # the rows of the last group: its first column's validity
            "SELECT sum(count) FROM pragma_storage_info(?) WHERE column_path = '[0, 0]'"
            " AND segment_type = 'VALIDITY' GROUP BY row_group_id"
            " ORDER BY row_group_id DESC LIMIT 1",
            [name],
        ).fetchone()
        if row is not None and row[0] > ROW_GROUP_ROWS:
            long.append(table)
    return long


def mend_row_groups(db: Database) -> list[str]:
    """Rewrite `db` (`rewrite_database`) when a table of it has a last row group too long
    for the writers (`long_row_groups`; asked again under the exclusive lock, so processes
    starting together rewrite it once); returns those tables."""
    with db.read(fresh=True) as conn:
        long = long_row_groups(conn)
    if not long:
        return long
    with db.exclusive():
        # read directly: `db.read` would wait for the lock held here
        conn = duckdb.connect(str(db.path), read_only=True)
        try:
            still = long_row_groups(conn)
        finally:
            conn.close()
        if still:  # not rewritten by another process starting at the same time
            log.warning(
                "%s: %s end in row groups longer than %d rows, which DuckDB cannot append"
                " to; rewriting the file once",
                db.path,
                ", ".join(still),
                ROW_GROUP_ROWS,
            )
            _rewrite(db)
    return long
