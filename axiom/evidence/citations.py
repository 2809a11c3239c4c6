"""Citations: a short, stable id for every aligned evidence span (`mem:7Fq2xA`).

The id is the first 6 url-safe base64 characters of a hash of the span's identity (entry,
session, message, offsets, quote hash), lengthened to 7 or 8 characters only if a shorter
id is already taken by another span. Because events replay in a fixed order, a rebuild
assigns exactly the same ids, and re-importing the same session adds no new span, so an
existing id never changes.

Every ingested message also gets a *message citation* (table `message_citations`, migration
0006): its span is the whole message, so a search hit on a raw message opens like any
citation (`python -m axiom cite`, `/c/<id>/`, `GET /api/v1/citations/{id}`). Its identity
is (session, message index, hash of the message text); its id is 8-10 characters long, so
it can never take an id an entry span had (6-8) when a rebuild replays both kinds
interleaved. Both kinds share one id namespace: a new id is checked against both tables.

A citation keeps opening the text it quoted after its session is re-imported with changed
text: `get_citation` then reads the message from the ingest event the span was computed on
and says so (`outdated`, "the message has changed since").
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:  # only in annotations: hooks import this module and must not load pyarrow
    import pyarrow as pa

from axiom.entries.queries import entry_title_and_build
from axiom.ingest.session_queries import (
    get_message_text_and_role,
    message_text_hashes,
    session_ingest_event_id,
)
from axiom.store.event_types import BUILD_STARTED, ENTRY_CREATED, SESSION_INGESTED
from axiom.store.events import EventStore, StoredEvent
from axiom.store.projection import Reject, fold_each, insert_new, raise_error

PREFIX = "mem:"
MIN_LEN, MAX_LEN = 6, 8
MESSAGE_MIN_LEN, MESSAGE_MAX_LEN = 8, 10
CONTEXT_CHARS = 160
MESSAGE_METHOD = "message"  # the `method` a message citation reports: the span is the message


class CitationIdExhausted(RuntimeError):
    """Every id length up to MAX_LEN collided: practically impossible, but never silent."""


def span_key(entry_id: str, evidence: dict[str, Any]) -> str:
    return (
        "|".join(
            str(evidence.get(k))
            for k in ("session_id", "message_index", "span_start", "span_end", "quote_hash")
        )
        + f"|{entry_id}"
    )


def _digest(key: str) -> str:
    raw = hashlib.sha256(key.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def message_span_key(session_id: str, message_index: int, text_hash: str) -> str:
    return f"message|{session_id}|{message_index}|{text_hash}"


def _text_hash(text: str) -> str:
    """sha256 hex of the UTF-8 text (the aligner's quote_hash; lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _taken(conn: duckdb.DuckDBPyConnection, candidates: list[str]) -> set[str]:
    if not candidates:
        return set()
    # One list parameter each: a placeholder per candidate made DuckDB plan each as a
    # constant, several times slower with hundreds of them.
    rows = conn.execute(
        "SELECT citation_id FROM citations WHERE citation_id IN (SELECT unnest(?))"
        " UNION ALL SELECT citation_id FROM message_citations"
        " WHERE citation_id IN (SELECT unnest(?))",
        [candidates, candidates],
    ).fetchall()
    return {r[0] for r in rows}


def _assign_ids(
    conn: duckdb.DuckDBPyConnection, table: str, keys: list[str], lengths: range
) -> dict[str, str]:
    """span_key -> id for a run of spans stored in `table` (`citations` or
    `message_citations`), in order, as one by one gives: the stored id, else the shortest
    free id of `lengths` characters, a key earlier in the run taking its id first (ids of
    different lengths never meet, so one round per length is enough)."""
    if not keys:
        return {}
    assigned = dict(
        conn.execute(
            f"SELECT span_key, citation_id FROM {table} WHERE span_key IN (SELECT unnest(?))",
            [list(dict.fromkeys(keys))],
        ).fetchall()
    )
    pending = [k for k in dict.fromkeys(keys) if k not in assigned]
    digests = {k: _digest(k) for k in pending}
    used: set[str] = set(assigned.values())
    for length in lengths:
        if not pending:
            break
        wanted = {k: PREFIX + digests[k][:length] for k in pending}
        taken = _taken(conn, sorted(set(wanted.values())))
        still: list[str] = []
        for key in pending:
            candidate = wanted[key]
            if candidate in taken or candidate in used:
                still.append(key)
                continue
            assigned[key] = candidate
            used.add(candidate)
        pending = still
    if pending:
        raise CitationIdExhausted(f"no free citation id for span {pending[0]!r}")
    return assigned


_SPAN_COLUMNS = (
    "citation_id, span_key, entry_id, session_id, message_index, span_start, span_end,"
    " quote_hash, method, confidence, created_at"
)


def _span_rows(event: StoredEvent) -> list[list[Any]]:
    """The citation rows of an `entry_created` event's aligned spans, id still None."""
    entry_id = event.payload["entry_id"]
    rows = []
    for ev in event.payload.get("evidence", []):
        if not ev.get("aligned") or ev.get("span_start") is None:
            continue
        rows.append(
            [
                None,
                span_key(entry_id, ev),
                entry_id,
                ev["session_id"],
                ev["message_index"],
                ev["span_start"],
                ev["span_end"],
                ev.get("quote_hash", ""),
                ev.get("method"),
                ev.get("confidence"),
                event.ts,
            ]
        )
    return rows


def _insert_spans(conn: duckdb.DuckDBPyConnection, rows: list[list[Any]]) -> None:
    """Insert a run of entry span rows (`_span_rows`) under their ids; a span stored
    already, or repeated in the run, is inserted once."""
    if not rows:
        return
    ids = _assign_ids(conn, "citations", [r[1] for r in rows], range(MIN_LEN, MAX_LEN + 1))
    fresh: dict[str, list[Any]] = {}
    for row in rows:
        fresh.setdefault(ids[row[1]], [ids[row[1]], *row[1:]])
    insert_new(conn, "citations", _SPAN_COLUMNS, list(fresh.values()))


class CitationProjector:
    name = "citations"
    event_types = (ENTRY_CREATED, SESSION_INGESTED)
    tables = ("citations", "message_citations")

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        self.apply_many(conn, [event], raise_error)

    def apply_many(
        self, conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent], reject: Reject
    ) -> None:
        """Each run of `entry_created` events in one id assignment and one insert, and each
        run of ingests likewise. Runs keep the order, so an id is assigned against every
        span before it, as one by one."""
        spans: list[list[Any]] = []  # the run of entry spans so far: citation rows, id None
        messages: list[_MessageRow] = []  # the run of ingested messages so far
        for event in events:
            if event.event_type == SESSION_INGESTED:
                _insert_spans(conn, spans)
                spans.clear()
                fold_each([event], lambda e: messages.extend(_message_rows(e)), reject)
            else:
                _insert_messages(conn, messages)
                messages.clear()
                fold_each([event], lambda e: spans.extend(_span_rows(e)), reject)
        _insert_spans(conn, spans)
        _insert_messages(conn, messages)


# span key, session id, message index, text length, text hash, event time
_MessageRow = tuple[str, str, int, int, str, datetime]


def _message_rows(event: StoredEvent) -> list[_MessageRow]:
    """One citation per message of the ingested transcript, spanning the whole text."""
    transcript = event.payload.get("transcript") or {}
    session_id = transcript.get("session_id") or event.session_id
    rows = []
    for message in transcript.get("messages") or []:
        text = str(message.get("text") or "")
        index = int(message["index"])
        digest = _text_hash(text)
        key = message_span_key(session_id, index, digest)
        rows.append((key, session_id, index, len(text), digest, event.ts))
    return rows


def _insert_messages(conn: duckdb.DuckDBPyConnection, rows: list[_MessageRow]) -> None:
    """Insert a run of message citation rows (`_message_rows`) under their ids; a span
    stored already, or repeated in the run, keeps its first row."""
    ids = _assign_ids(
        conn, "message_citations", [r[0] for r in rows], range(MESSAGE_MIN_LEN, MESSAGE_MAX_LEN + 1)
    )
    first: dict[str, _MessageRow] = {}
    for row in rows:
        first.setdefault(row[0], row)
    fresh = list(first.values())
    if not fresh:
        return
    import pyarrow as pa  # here, not at the top: hooks import this module (see above)

    batch = pa.table(
        {
            "citation_id": [ids[r[0]] for r in fresh],
            "span_key": [r[0] for r in fresh],
            "session_id": [r[1] for r in fresh],
            "message_index": pa.array([r[2] for r in fresh], pa.int32()),
            "span_end": pa.array([r[3] for r in fresh], pa.int32()),
            "quote_hash": [r[4] for r in fresh],
            "created_at": pa.array([r[5] for r in fresh], pa.timestamp("us")),
        }
    )
    conn.register("incoming_message_citations", batch)
    try:
        conn.execute(
            "INSERT INTO message_citations (citation_id, span_key, session_id, message_index,"
            " span_end, quote_hash, created_at)"
            " SELECT citation_id, span_key, session_id, message_index, span_end, quote_hash,"
            " created_at FROM incoming_message_citations ON CONFLICT (span_key) DO NOTHING"
        )
    finally:
        conn.unregister("incoming_message_citations")


@dataclass(frozen=True)
class Citation:
    citation_id: str
    entry_id: str | None  # None for a message citation (the span is the whole message)
    entry_title: str | None
    session_id: str
    message_index: int
    span_start: int
    span_end: int
    method: str | None
    confidence: float | None
    quote: str
    before: str
    after: str
    role: str | None
    created_at: datetime
    outdated: bool = False  # the message changed since: quote and context are the old text

    @property
    def kind(self) -> str:
        return "entry" if self.entry_id is not None else "message"

    def to_json(self) -> dict[str, Any]:
        return {
            "citation_id": self.citation_id,
            "kind": self.kind,
            "entry_id": self.entry_id,
            "entry_title": self.entry_title,
            "session_id": self.session_id,
            "message_index": self.message_index,
            "span_start": self.span_start,
            "span_end": self.span_end,
            "method": self.method,
            "confidence": self.confidence,
            "quote": self.quote,
            "context_before": self.before,
            "context_after": self.after,
            "role": self.role,
            "outdated": self.outdated,
        }


def normalize_citation_id(raw: str) -> str:
    """Accepts `mem:abc123`, `abc123` or `[mem:abc123]`."""
    text = raw.strip().strip("[]")
    return text if text.startswith(PREFIX) else PREFIX + text


def get_citation(
    conn: duckdb.DuckDBPyConnection, citation_id: str, context: int = CONTEXT_CHARS
) -> Citation | None:
    """An entry's evidence span or a message citation (whole message), with its text.

    The row also says whether the text is still the one cited (columns 12-14, read by
    `_quoted_text`): for an entry span, the session's current ingest and the ingest its
    build processed; for a message citation, its quote hash when the message text no
    longer has it. A current citation needs no other read.
    """
    row = _citation_row(conn, normalize_citation_id(citation_id))
    if row is None:
        return None
    text = row[9] or ""
    start, end = row[5], row[6]
    quoted = _quoted_text(conn, row)
    outdated = quoted is not None and quoted != text
    if outdated:
        text = quoted or ""
    return Citation(
        citation_id=row[0],
        entry_id=row[1],
        entry_title=row[2],
        session_id=row[3],
        message_index=row[4],
        span_start=start,
        span_end=end,
        method=row[7],
        confidence=row[8],
        quote=text[start:end],
        before=text[max(0, start - context) : start],
        after=text[end : end + context],
        role=row[10],
        created_at=row[11],
        outdated=outdated,
    )


def _message_of(
    conn: duckdb.DuckDBPyConnection, session_id: str, message_index: int
) -> tuple[str | None, str | None]:
    found = get_message_text_and_role(conn, session_id, message_index)
    return (found[0], found[1]) if found else (None, None)


def _citation_row(conn: duckdb.DuckDBPyConnection, citation_id: str) -> tuple[Any, ...] | None:
    """`get_citation`'s row: the citation, its entry's title, the cited message's text and
    role, and what `_quoted_text` needs; an entry span first, else a message citation."""
    span = conn.execute(
        "SELECT citation_id, entry_id, session_id, message_index, span_start, span_end, method,"
        " confidence, created_at FROM citations WHERE citation_id = ?",
        [citation_id],
    ).fetchone()
    if span is not None:
        cid, entry_id, session_id, index, start, end, method, confidence, created = span
        title, build_id = entry_title_and_build(conn, entry_id) or (None, None)
        text, role = _message_of(conn, session_id, index)
        built_on = None
        if build_id is not None:
            started = EventStore(conn).get_by_dedupe_key(f"{BUILD_STARTED}:{build_id}")
            built_on = started.payload.get("ingest_event_id") if started else None
        current_ingest = session_ingest_event_id(conn, session_id)
        return (
            cid, entry_id, title, session_id, index, start, end, method, confidence,
            text, role, created, current_ingest, built_on, None,
        )  # fmt: skip
    whole = conn.execute(
        "SELECT citation_id, session_id, message_index, span_end, quote_hash, created_at"
        " FROM message_citations WHERE citation_id = ?",
        [citation_id],
    ).fetchone()
    if whole is None:
        return None
    cid, session_id, index, end, quote_hash, created = whole
    text, role = _message_of(conn, session_id, index)
    now = message_text_hashes(conn, [(session_id, index)]).get((session_id, index))
    changed = quote_hash if quote_hash != now else None
    return (
        cid, None, None, session_id, index, 0, end, MESSAGE_METHOD, 1.0,
        text, role, created, None, None, changed,
    )  # fmt: skip


def _quoted_text(conn: duckdb.DuckDBPyConnection, row: Sequence[Any]) -> str | None:
    """The message text as it read when the citation was made, if that is not the stored
    one (the session was re-imported with changed text since); None when it is current.

    `row` is `get_citation`'s. An entry span was computed on the ingest its build
    processed (row[13]; row[12] the session's current ingest); a message citation is pinned
    by the hash of the text it covers (row[14], only when the message no longer has it).
    """
    entry_id, session_id, message_index = row[1], row[3], row[4]
    store = EventStore(conn)
    if entry_id is not None:
        current_ingest, ingest_id = row[12], row[13]
        if ingest_id is None or ingest_id == current_ingest:
            return None
        ingest = store.get(ingest_id)
        return _message_text(ingest, message_index) if ingest else None
    wanted = row[14]
    if wanted is None:
        return None
    for event_id in store.ids_of_session(SESSION_INGESTED, session_id):
        ingest = store.get(event_id)
        text = _message_text(ingest, message_index) if ingest else None
        if text is not None and _text_hash(text) == wanted:
            return text
    return None


def _message_text(ingest: StoredEvent, message_index: int) -> str | None:
    for message in (ingest.payload.get("transcript") or {}).get("messages") or []:
        if int(message.get("index", -1)) == message_index:
            return str(message.get("text") or "")
    return None


def citations_for_entry(conn: duckdb.DuckDBPyConnection, entry_id: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT citation_id FROM citations WHERE entry_id = ? ORDER BY message_index, span_start",
            [entry_id],
        ).fetchall()
    ]


def message_citations(
    conn: duckdb.DuckDBPyConnection, messages: list[tuple[str, int]]
) -> dict[tuple[str, int], str]:
    """(session_id, message_index) -> the citation of the message as it reads now.

    The citation whose text hash matches the current message text; when the message
    changed since (a re-ingest), the newest citation of that position.
    """
    if not messages:
        return {}
    pairs = list(dict.fromkeys(messages))
    found = conn.execute(
        "SELECT c.session_id, c.message_index, c.citation_id, c.quote_hash, c.created_at"
        " FROM (SELECT unnest(?) AS sid, unnest(?) AS idx) w"
        " JOIN message_citations c ON c.session_id = w.sid AND c.message_index = w.idx",
        [[p[0] for p in pairs], [p[1] for p in pairs]],
    ).fetchall()
    now = message_text_hashes(conn, pairs)

    def order(row: tuple[Any, ...]) -> tuple[int, Any, str]:
        """Unknown first, then citations of an older text, then the current one."""
        sid, idx, cid, quote_hash, created = row
        text_hash = now.get((sid, idx))
        current = 0 if quote_hash is None or text_hash is None else 1 + (quote_hash == text_hash)
        return (current, created, cid)

    rows = sorted(found, key=order)
    return {(sid, idx): cid for sid, idx, cid, *_ in rows}  # the last row wins


def first_citations(conn: duckdb.DuckDBPyConnection, entry_ids: list[str]) -> dict[str, str]:
    """entry_id -> its first citation (message order, then span start), for entries with one."""
    if not entry_ids:
        return {}
    rows = conn.execute(
        "SELECT entry_id, arg_min(citation_id, (message_index, span_start, citation_id))"
        " FROM citations WHERE entry_id IN (SELECT unnest(?)) GROUP BY entry_id",
        [list(dict.fromkeys(entry_ids))],
    ).fetchall()
    return dict(rows)


def first_citation_table(conn: duckdb.DuckDBPyConnection) -> pa.Table:
    """`first_citations` for every entry with one: columns entry_id, citation_id."""
    return conn.execute(
        "SELECT entry_id, arg_min(citation_id, (message_index, span_start, citation_id))"
        " AS citation_id FROM citations GROUP BY entry_id"
    ).fetch_arrow_table()


def citations_for_entries(
    conn: duckdb.DuckDBPyConnection, entry_ids: list[str]
) -> dict[str, list[str]]:
    """entry_id -> its citation ids (message order, then span start); one read."""
    if not entry_ids:
        return {}
    rows = conn.execute(
        "SELECT entry_id, citation_id FROM citations WHERE entry_id IN (SELECT unnest(?))"
        " ORDER BY message_index, span_start",
        [list(dict.fromkeys(entry_ids))],
    ).fetchall()
    out: dict[str, list[str]] = {}
    for eid, cid in rows:
        out.setdefault(eid, []).append(cid)
    return out


def span_citations(
    conn: duckdb.DuckDBPyConnection, entry_ids: list[str]
) -> dict[str, dict[str, str]]:
    """entry_id -> {span_key: citation_id} of its aligned evidence; one read."""
    if not entry_ids:
        return {}
    rows = conn.execute(
        "SELECT entry_id, span_key, citation_id FROM citations"
        " WHERE entry_id IN (SELECT unnest(?))",
        [list(dict.fromkeys(entry_ids))],
    ).fetchall()
    out: dict[str, dict[str, str]] = {}
    for eid, key, cid in rows:
        out.setdefault(eid, {})[key] = cid
    return out
