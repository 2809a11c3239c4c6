"""The memory pipeline over many sessions at once, oldest first: what `axiom import` and
`axiom process` run in the foreground."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from axiom.ingest.session_queries import list_session_ids
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.order import chronological
from axiom.pipeline.process import ProcessReport, process_session
from axiom.store.db import Database


def stored_session_ids(db: Database) -> list[str]:
    """Every stored session, in id order (`process_sessions` orders them by time)."""
    with db.read() as conn:
        return list_session_ids(conn)


def ordered_sessions(db: Database, session_ids: Iterable[str]) -> list[str]:
    """`session_ids` oldest first (`axiom.pipeline.order.chronological`)."""
    with db.read() as conn:
        return chronological(conn, session_ids)


def process_sessions(
    db: Database,
    session_ids: Iterable[str],
    on_start: Callable[[int], None] | None = None,
    on_session: Callable[[str], None] | None = None,
) -> list[ProcessReport]:
    """Run the pipeline over each session, oldest first (`axiom.pipeline.order`); a failing
    session is reported, the rest go on. `on_start(count)` then `on_session(id)` after each
    one let a caller show progress (`axiom.observability.progress`)."""
    pipeline = configured_pipeline()
    ids = ordered_sessions(db, session_ids)
    if on_start:
        on_start(len(ids))
    reports = []
    for sid in ids:
        reports.append(process_session(db, sid, pipeline))
        if on_session:
            on_session(sid)
    return reports


def summarize(reports: list[ProcessReport]) -> str:
    """One line for the sessions processed, then one per failed session."""
    failed = [r for r in reports if r.status != "success"]
    done = [r for r in reports if not r.skipped and r.status == "success"]
    entries = sum(r.entries for r in done)
    text = f"processed {len(done)} session(s) ({entries} entries), {len(reports) - len(done) - len(failed)} already up to date"
    for r in failed:
        text += f"\nsession {r.session_id}: pipeline failed: {r.error}"
    return text
