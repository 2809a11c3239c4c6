"""A kept entry graduates once its conflict is resolved, as if it had never been contested.

The pipeline holds a contested entry back (`BuildConflicts.weigh`: no graduation while a
conflict is open), and a build runs once per session, so nothing would ever promote it
again. `graduate_kept` runs the same `GraduationPolicy` over the entry as stored — its
aligned evidence, the validator's last `idris_checked` result, the sessions of verified
entries stating the same memory (canonical key, restated title or restated fact) and any
approval — and appends the outcome as `entry_promoted` / `promotion_blocked` events with
the pipeline's dedupe keys, so a rebuild replays the same stages.
"""

from __future__ import annotations

import hashlib
from typing import Any

import duckdb

from axiom.conflicts.detector import restates
from axiom.conflicts.queries import believed_facts, get_fact
from axiom.entries.candidate import stored_candidate
from axiom.entries.queries import EntryRow, corroboration_pool, get_entry
from axiom.extract.types import normalize_title
from axiom.graduation.corroboration import MemoryWords, pool_index
from axiom.graduation.idris import CheckResult
from axiom.graduation.policy import GraduationPolicy
from axiom.store.event_types import (
    ENTRY_APPROVED,
    ENTRY_PROMOTED,
    IDRIS_CHECKED,
    PROMOTION_BLOCKED,
)
from axiom.store.events import EventStore, NewEvent


def _check(payload: dict[str, Any]) -> CheckResult:
    return CheckResult(
        passed=bool(payload["passed"]),
        checker=payload["checker"],
        checker_version=payload["checker_version"],
        errors=tuple(payload.get("errors") or ()),
        module_path=payload.get("module_path"),
        validator_version=payload["validator_version"],
    )


def _corroborating(conn: duckdb.DuckDBPyConnection, entry: EntryRow) -> list[tuple[str, str, str]]:
    """(entry_id, session_id, stage) of the verified entries of other sessions stating the
    same memory, as the pipeline finds them (`_BuildWriter._corroborating`)."""
    rows = corroboration_pool(conn, entry.entry_type, entry.session_id or "")
    index = pool_index(entry.entry_type, rows)
    key = entry.canonical_key or f"{entry.entry_type}:{normalize_title(entry.title)}"
    found = dict.fromkeys(index.matching(key, MemoryWords.of(entry.entry_type, entry.title)))
    fact = get_fact(conn, entry.entry_id)
    if fact is not None:
        by_id = {r[0]: (r[0], r[1], r[2]) for r in rows}
        believed = believed_facts(conn, entry.entry_type)
        found.update(
            dict.fromkeys(
                by_id[f.entry_id] for f in believed if f.entry_id in by_id and restates(fact, f)
            )
        )
    return [row for row in found if row[0] != entry.entry_id]


def graduate_kept(
    conn: duckdb.DuckDBPyConnection,
    entry_ids: list[str],
    reason: str,
    policy: GraduationPolicy | None = None,
    projected: bool = True,
) -> None:
    """Promote each active entry of `entry_ids` as far as the graduation rules allow.
    Call it with the entries projected up to the resolution (their status is read), or
    with `projected` False from a build that appended their change to `active` and has
    not projected it yet (each is then taken as active)."""
    policy = policy or GraduationPolicy()
    store = EventStore(conn)
    for entry_id in entry_ids:
        entry = get_entry(conn, entry_id)
        if entry is None or (projected and entry.status != "active"):
            continue
        events = store.about_any("entry_id", [entry_id], (IDRIS_CHECKED, ENTRY_APPROVED))
        checks = [e.payload for e in events if e.event_type == IDRIS_CHECKED]
        approvals = [e.payload for e in events if e.event_type == ENTRY_APPROVED]
        siblings = _corroborating(conn, entry)
        sessions = {entry.session_id, *(s[1] for s in siblings)}
        decisions = policy.decide(
            stored_candidate(entry),
            entry.stage,
            _check(checks[-1]) if checks else None,
            len(sessions),
            approvals[0].get("approved_by") if approvals else None,
        )
        for d in decisions:
            if d.to_stage is None:
                continue
            payload = d.event_payload(policy.version, f"{d.reason} ({reason})")
            if d.promoted:
                key = f"{ENTRY_PROMOTED}:{entry_id}:{d.to_stage}"
                store.append(NewEvent(ENTRY_PROMOTED, payload, key, entry.session_id, "pipeline"))
            else:
                digest = hashlib.sha256(d.reason.encode("utf-8")).hexdigest()[:12]
                key = f"{PROMOTION_BLOCKED}:{entry_id}:{d.to_stage}:{digest}"
                store.append(
                    NewEvent(PROMOTION_BLOCKED, payload, key, entry.session_id, "pipeline")
                )
        if decisions and decisions[-1].promoted and str(decisions[-1].to_stage) == "certified":
            _certify_siblings(store, entry, siblings, policy)


def _certify_siblings(
    store: EventStore,
    entry: EntryRow,
    siblings: list[tuple[str, str, str]],
    policy: GraduationPolicy,
) -> None:
    """A newly corroborated fact also corroborates the verified entries it agrees with."""
    for sibling_id, sibling_session, stage in siblings:
        if stage == "verified" and sibling_session != entry.session_id:
            payload = {
                "entry_id": sibling_id,
                "from": "verified",
                "to": "certified",
                "reason": f"corroborated by {entry.entry_id} from session {entry.session_id}",
                "policy_version": policy.version,
            }
            key = f"{ENTRY_PROMOTED}:{sibling_id}:certified"
            store.append(NewEvent(ENTRY_PROMOTED, payload, key, sibling_session, "pipeline"))
