"""`insert_columns` stores the same rows whether a batch goes in as list parameters (small)
or as an Arrow table (`ARROW_ROWS` and more), and falls back to the lists for values Arrow
has no flat type for."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from axiom.store import columns
from axiom.store.columns import ARROW_ROWS, insert_columns

TABLE = (
    "CREATE TABLE t (id VARCHAR, n INTEGER, big BIGINT, x DOUBLE, flag BOOLEAN, ts TIMESTAMP,"
    " doc JSON, tags VARCHAR[])"
)
COLUMNS = "id, n, big, x, flag, ts, doc, tags"

texts = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
rows = st.lists(
    st.tuples(
        texts,
        st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
        st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
        st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
        st.one_of(st.none(), st.booleans()),
        st.one_of(st.none(), st.datetimes(min_value=datetime(1970, 1, 1))),
        st.one_of(st.none(), texts.map(lambda s: json.dumps({"k": s}))),
        st.one_of(st.none(), st.lists(texts, max_size=3)),
    ),
    min_size=1,
    max_size=3 * ARROW_ROWS,
)


class Registering:
    """A connection that counts the Arrow tables registered on it (the Arrow path)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self.conn, self.registered = conn, 0

    def execute(self, *args: object) -> duckdb.DuckDBPyConnection:
        return self.conn.execute(*args)

    def register(self, name: str, table: object) -> None:
        self.registered += 1
        self.conn.register(name, table)

    def unregister(self, name: str) -> None:
        self.conn.unregister(name)


def _stored(path: Path, batch: list[tuple[object, ...]], arrow: bool) -> list[tuple[object, ...]]:
    conn = duckdb.connect(str(path))
    conn.execute("DROP TABLE IF EXISTS t")
    conn.execute(TABLE)
    saved = columns.ARROW_ROWS
    columns.ARROW_ROWS = 1 if arrow else len(batch) + 1
    spy = Registering(conn)
    try:
        insert_columns(spy, "t", COLUMNS, batch)  # type: ignore[arg-type]
    finally:
        columns.ARROW_ROWS = saved
    # every generated batch has a flat Arrow type: the path asked for is the path taken
    assert spy.registered == (1 if arrow else 0)
    out = conn.execute(f"SELECT {COLUMNS} FROM t ORDER BY rowid").fetchall()
    conn.close()
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=rows)
def test_an_arrow_batch_stores_what_list_parameters_store(tmp_path: Path, batch) -> None:
    assert _stored(tmp_path / "a.duckdb", batch, arrow=True) == _stored(
        tmp_path / "b.duckdb", batch, arrow=False
    )


def test_a_large_batch_goes_in_as_arrow_and_keeps_every_row(tmp_path: Path) -> None:
    conn = duckdb.connect(str(tmp_path / "s.duckdb"))
    conn.execute(TABLE)
    batch = [
        (f"r{i}", i, i, i / 2, i % 2 == 0, datetime(2026, 1, 1), "{}", ["a"]) for i in range(500)
    ]
    insert_columns(conn, "t", COLUMNS, batch)
    assert conn.execute("SELECT count(*), sum(n), min(id), max(big) FROM t").fetchone() == (
        500,
        sum(range(500)),
        "r0",
        499,
    )
    # the view registered for the insert is gone again
    assert (
        conn.execute(
            "SELECT count(*) FROM duckdb_views() WHERE view_name LIKE 'incoming_%'"
        ).fetchone()[0]
        == 0
    )


@pytest.mark.parametrize(
    "odd",
    [
        [{"a": 1}] * ARROW_ROWS,  # a mapping: no flat Arrow type
        ["1", 2] * ARROW_ROWS,  # mixed text and numbers
    ],
)
def test_values_arrow_cannot_type_go_in_as_lists(tmp_path: Path, odd: list[object]) -> None:
    conn = duckdb.connect(str(tmp_path / "s.duckdb"))
    conn.execute("CREATE TABLE u (v VARCHAR)")
    spy = Registering(conn)
    insert_columns(spy, "u", "v", [(v,) for v in odd])  # type: ignore[arg-type]
    assert spy.registered == 0
    expected = [
        (
            str(v)
            if not isinstance(v, dict)
            else conn.execute("SELECT ?::VARCHAR", [v]).fetchone()[0],
        )
        for v in odd
    ]
    assert conn.execute("SELECT v FROM u ORDER BY rowid").fetchall() == expected


def test_a_bad_value_fails_the_insert_whole(tmp_path: Path) -> None:
    conn = duckdb.connect(str(tmp_path / "s.duckdb"))
    conn.execute("CREATE TABLE w (n INTEGER NOT NULL)")
    batch = [(i,) for i in range(ARROW_ROWS)] + [(None,)]
    with pytest.raises(duckdb.ConstraintException):
        insert_columns(conn, "w", "n", batch)
    assert conn.execute("SELECT count(*) FROM w").fetchone()[0] == 0
