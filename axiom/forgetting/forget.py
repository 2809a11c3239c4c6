"""`forget`: remove a session, an entry or every session before a date from disk.

In order, each step needed for the forgotten text to leave every file:

1. under the write lock, the events about the target are rewritten to their redacted form
   (`EventStore.redact`, the one exception to append-only: ids kept, text gone) and a
   `redacted` event records what, when and who (never the content). It is a tombstone: a
   later import of the same session is refused (`axiom.ingest.importer`), and an entry's
   dedupe keys stay taken, so processing the session again does not bring it back;
2. every derived table is rebuilt by replay (projectors skip redacted events), which
   removes the derived rows;
3. the LanceDB rows are deleted and every table compacted with no grace period, so no
   old version holding them is left (`purge_rows`);
4. the DuckDB file is rewritten into a fresh file under the exclusive lock
   (`rewrite_database`): freed blocks that still held the text are not carried over;
5. log files under `<data dir>/logs/` lose every line naming the target or quoting it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from axiom.config import AxiomConfig
from axiom.entries.queries import get_entry, list_entries
from axiom.ingest.session_queries import get_session, list_messages, session_ids_started_before
from axiom.projections import rebuild_all
from axiom.store.db import Database
from axiom.store.event_types import REDACTED
from axiom.store.events import EventStore, NewEvent
from axiom.store.rewrite import rewrite_database
from axiom.vectors.lance_store import entry_row_id, purge_rows

MIN_SCRUB_CHARS = 12  # shorter texts are too common to scrub log lines by


class ForgetError(ValueError):
    """A forget request that names nothing, or more than one target."""


class ForgetTargetNotFound(ForgetError):
    """The session or entry to forget does not exist."""


@dataclass(frozen=True)
class ForgetTarget:
    """Exactly one of: a session, an entry, every session started before a time."""

    session_id: str | None = None
    entry_id: str | None = None
    before: datetime | None = None

    def __post_init__(self) -> None:
        given = [x for x in (self.session_id, self.entry_id, self.before) if x is not None]
        if len(given) != 1:
            raise ForgetError("name exactly one of: a session, an entry, a date")

    @property
    def scope(self) -> str:
        return "session" if self.session_id else "entry" if self.entry_id else "before"


@dataclass
class ForgetPlan:
    """What a target covers: sessions and entries, and the texts to scrub from logs."""

    session_ids: list[str] = field(default_factory=list)
    entry_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.session_ids and not self.entry_ids


@dataclass
class ForgetReport:
    redaction_id: str
    scope: str
    session_ids: list[str]
    entry_ids: list[str]
    events_redacted: int = 0
    vector_rows_deleted: int = 0
    log_lines_removed: int = 0
    database_bytes: int = 0

    def to_json(self) -> dict:
        return asdict(self)


def plan(conn: duckdb.DuckDBPyConnection, target: ForgetTarget) -> ForgetPlan:
    """The sessions and entries `target` covers (nothing is changed)."""
    out = ForgetPlan()
    if target.entry_id is not None:
        entry = get_entry(conn, target.entry_id)
        if entry is None:
            raise ForgetTargetNotFound(f"unknown entry {target.entry_id!r}")
        out.entry_ids = [entry.entry_id]
        out.texts = [entry.title, entry.content, *(str(e.get("quote", "")) for e in entry.evidence)]
        return out
    if target.session_id is not None:
        if get_session(conn, target.session_id) is None:
            raise ForgetTargetNotFound(f"unknown session {target.session_id!r}")
        out.session_ids = [target.session_id]
    else:
        out.session_ids = session_ids_started_before(conn, target.before)  # type: ignore[arg-type]
    for sid in out.session_ids:
        out.texts += [m.text for m in list_messages(conn, sid)]
        for entry in list_entries(conn, session_id=sid):
            out.entry_ids.append(entry.entry_id)
            out.texts += [entry.title, entry.content]
    return out


def _redaction_id(target: ForgetTarget, who: str, at: str) -> str:
    key = json.dumps(
        [target.scope, target.session_id, target.entry_id, str(target.before), who, at]
    )
    return "red_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def forget(
    db: Database, target: ForgetTarget, who: str, config: AxiomConfig | None = None
) -> ForgetReport:
    """Forget `target` everywhere on disk (see the module docstring); idempotent."""
    config = config or AxiomConfig(data_dir=db.path.parent)
    at = datetime.now(UTC).isoformat()
    redaction_id = _redaction_id(target, who, at)
    with db.write() as conn:
        covered = plan(conn, target)
        report = ForgetReport(redaction_id, target.scope, covered.session_ids, covered.entry_ids)
        store = EventStore(conn)
        doomed = store.ids_about(covered.session_ids, covered.session_ids + covered.entry_ids)
        report.events_redacted = store.redact(doomed, redaction_id)
        store.append(
            NewEvent(
                REDACTED,
                {
                    "redaction_id": redaction_id,
                    "scope": target.scope,
                    "session_ids": covered.session_ids,
                    "entry_ids": covered.entry_ids,
                    "before": target.before.isoformat() if target.before else None,
                    "who": who,
                    "at": at,
                    "events_redacted": report.events_redacted,
                },
                dedupe_key=f"{REDACTED}:{redaction_id}",
                actor=f"person:{who}",
            )
        )
    rebuild_all(db)
    report.vector_rows_deleted = purge_rows(
        config.lancedb_dir, [entry_row_id(e) for e in covered.entry_ids], covered.session_ids
    )
    report.database_bytes = rewrite_database(db)
    report.log_lines_removed = scrub_logs(
        config.data_dir / "logs",
        covered.session_ids + covered.entry_ids,
        [t for t in covered.texts if len(t) >= MIN_SCRUB_CHARS],
    )
    return report


def scrub_logs(logs_dir: Path, ids: list[str], texts: list[str] | None = None) -> int:
    """Drop every line of every file under `logs_dir` that names one of `ids` as a whole
    token (so `s1` does not take `s10`'s lines) or contains one of `texts` (or a line of a
    multi-line text); returns how many lines went."""
    texts = texts or []
    if not logs_dir.is_dir() or not (ids or texts):
        return 0
    parts = {line.strip() for n in texts for line in n.splitlines() if len(line.strip()) >= 8}
    parts.update(n for n in texts if "\n" not in n)
    token = re.compile("|".join(rf"(?<![\w-]){re.escape(i)}(?![\w-])" for i in ids) or r"(?!x)x")
    removed = 0
    for path in sorted(p for p in logs_dir.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        kept = [
            line
            for line in text.splitlines(keepends=True)
            if not token.search(line) and not any(p in line for p in parts)
        ]
        if len(kept) != len(text.splitlines(keepends=True)):
            removed += len(text.splitlines(keepends=True)) - len(kept)
            path.write_text("".join(kept), encoding="utf-8")
    return removed
