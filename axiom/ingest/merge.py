"""Merge, never replace: one session's lines arriving in several files or imports.

Claude Code writes the same session id into more than one file (a resumed or continued
session, a compaction summary), and hooks deliver a session piece by piece. Every
`session_ingested` event holds a whole session, so the importer merges what it receives
with the newest stored version of the session (`merge_transcripts`) and appends the union:

* a message is named by its `uuid`; a message without one by its position (`#<index>`),
  so sources without ids (LoCoMo, Markdown) keep today's "new version" behaviour;
* a message seen again with the same key and text is a no-op (the stored one is kept);
  with different text, the incoming text is a new version of that message;
* messages the incoming transcript lacks are kept: a file holding part of a session never
  drops, nor supersedes the entries of, the messages it does not hold;
* order: when one side holds every message of the union, its order is kept (a file that
  grew, or a part already stored); otherwise the union is ordered by the parent chain
  (a parent before its children) and, among messages whose parents are placed, by
  timestamp (a message without one takes its parent's), then by the order the sides gave.

`merge_transcripts` is pure (no database); `MergeCounts` says what the merge did, for the
import summary.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from axiom.ingest.timestamps import parse_timestamp
from axiom.ingest.transcript import Message, Transcript


@dataclass(frozen=True)
class MergeCounts:
    """What merging an incoming transcript into the stored session did."""

    added: int = 0  # messages new to the session
    changed: int = 0  # messages whose text is a new version
    kept: int = 0  # stored messages the incoming transcript did not hold
    existing: bool = False  # the session was stored before

    @property
    def merged(self) -> bool:
        """Both sides contributed: the stored version had messages the incoming lacked."""
        return self.kept > 0 and (self.added > 0 or self.changed > 0)

    @property
    def extended(self) -> bool:
        """A stored session grew (or had messages edited) and the incoming transcript holds
        all of it: a file imported again after Claude Code appended to it."""
        return self.existing and self.kept == 0 and (self.added > 0 or self.changed > 0)


def message_key(message: Message) -> str:
    """The identity a message is merged by: its uuid, else its position."""
    return message.uuid if message.uuid else f"#{message.index}"


def merge_transcripts(
    stored: Transcript | None, incoming: Transcript
) -> tuple[Transcript, MergeCounts]:
    """The session after `incoming` arrives on top of `stored` (None: nothing stored yet).
    Returns `stored` itself (same object) when the incoming transcript adds nothing."""
    if stored is None:
        return incoming, MergeCounts(added=len(incoming.messages))
    old = {message_key(m): m for m in stored.messages}
    new = {message_key(m): m for m in incoming.messages}
    added = [k for k in new if k not in old]
    changed = [k for k in new if k in old and new[k].text != old[k].text]
    kept = [k for k in old if k not in new]
    counts = MergeCounts(len(added), len(changed), len(kept), existing=True)
    if not added and not changed:
        return stored, counts
    if not kept:  # the incoming transcript holds the whole session: take it as it is
        return incoming, counts
    chosen = {k: (new[k] if k in changed else m) for k, m in old.items()}
    chosen.update({k: new[k] for k in added})
    if not added:  # only new versions of stored messages: the stored order stands
        ordered = [chosen[message_key(m)] for m in stored.messages]
    else:
        ordered = _chain_order(list(chosen.values()))
    messages = tuple(replace(m, index=i) for i, m in enumerate(ordered))
    first = message_key(messages[0]) if messages else None
    leader, other = (incoming, stored) if first in new else (stored, incoming)
    merged = replace(
        incoming,
        messages=messages,
        title=leader.title if leader.title is not None else other.title,
        started_at=_earliest(stored.started_at, incoming.started_at),
        meta=_meta(stored, incoming),
    )
    return merged, counts


def _earliest(a: str | None, b: str | None) -> str | None:
    known = [t for t in (a, b) if parse_timestamp(t) is not None]
    return min(known, key=lambda t: parse_timestamp(t)) if known else (a or b)  # type: ignore[arg-type, return-value]


def _meta(stored: Transcript, incoming: Transcript) -> dict[str, Any]:
    """Incoming metadata over the stored; privacy counts are the larger of the two per kind
    (the same message is filtered the same way whichever file it came from)."""
    meta = {**stored.meta, **incoming.meta}
    a, b = stored.meta.get("privacy"), incoming.meta.get("privacy")
    if isinstance(a, dict) and isinstance(b, dict):
        kinds = sorted(set(a) | set(b))
        meta["privacy"] = {k: max(_int(a.get(k)), _int(b.get(k))) for k in kinds}
    return meta


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _chain_order(messages: list[Message]) -> list[Message]:
    """Parents before children; among the messages ready to place, the earliest first
    (timestamp, or the parent's when a message has none; no time at all sorts last), then
    the order given. Messages whose parent is not in the set start a chain of their own."""
    keys = [message_key(m) for m in messages]
    by_uuid = {m.uuid: k for m, k in zip(messages, keys, strict=True) if m.uuid}
    position = {k: i for i, k in enumerate(keys)}
    message_of = dict(zip(keys, messages, strict=True))
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for m, k in zip(messages, keys, strict=True):
        parent = by_uuid.get(m.parent_uuid) if m.parent_uuid else None
        if parent is None or parent == k:
            roots.append(k)
        else:
            children.setdefault(parent, []).append(k)
    times = _effective_times(messages, keys, by_uuid)

    def priority(k: str) -> tuple[int, datetime, int]:
        t = times.get(k)
        return (0, t, position[k]) if t is not None else (1, datetime.min, position[k])

    heap = [(priority(k), k) for k in roots]
    heapq.heapify(heap)
    placed: list[Message] = []
    seen: set[str] = set()
    while heap:
        _, k = heapq.heappop(heap)
        if k in seen:
            continue
        seen.add(k)
        placed.append(message_of[k])
        for child in children.get(k, ()):
            heapq.heappush(heap, (priority(child), child))
    # A parent cycle (malformed ids) leaves messages no root reaches: keep them, in order.
    placed += [message_of[k] for k in keys if k not in seen]
    return placed


def _effective_times(
    messages: list[Message], keys: list[str], by_uuid: dict[str, str]
) -> dict[str, datetime | None]:
    """Each message's own time, else the nearest ancestor's (cycles end the walk)."""
    own = {k: parse_timestamp(m.timestamp) for m, k in zip(messages, keys, strict=True)}
    parent_of = {
        k: by_uuid.get(m.parent_uuid) if m.parent_uuid else None
        for m, k in zip(messages, keys, strict=True)
    }
    out: dict[str, datetime | None] = {}
    for k in keys:
        walk, seen, t = k, set(), None
        while walk is not None and walk not in seen:
            seen.add(walk)
            t = own.get(walk)
            if t is not None:
                break
            walk = parent_of.get(walk)
        out[k] = t
    return out
