"""BlockerResolver: turns "blocked by …" texts into references to entities.

Rules, per text, in order:

1. **Strong ids** — URLs, GitHub ``owner/repo#12`` and Jira ``ABC-123`` keys
   (`artifact_keys_in`) → artifact entities (``art:…`` keys), get-or-create. A text with
   several ids yields several refs.
2. **Explicit task id** (``tsk_`` + 12 hex digits) → that task when it exists; an unknown
   id is reported (``unknown_task_id``) and the text falls through to a condition.
3. **Task title** — only a *strict* `TaskMatcher` match (never the blocked task itself)
   becomes a task ref.
4. Otherwise a **condition** (``cond:{project}:{text}``), get-or-create, storing the
   matcher's suggestions as ``candidates``. No stub task is ever created.

Condition text is cleaned first: a leading "blocked by / waiting on / waiting for /
depends on / until …" phrase is dropped, and for the key also a leading article, so
"waiting on the design review" and "blocked by design review" are one condition.
Texts that normalize to nothing ("", "???") are reported as ``unrecognised_blocker``.

The resolver only *plans*: it returns refs plus the declaration events
(``artifact_declared`` / ``condition_declared``) the caller appends for the refs it uses.
Declarations carry dedupe keys ``{type}:{entity_id}``, so get-or-create is idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from axiom.store.event_types import ARTIFACT_DECLARED, CONDITION_DECLARED
from axiom.store.events import NewEvent
from axiom.tasks.canonical import (
    artifact_key_for,
    artifact_keys_in,
    condition_key,
    entity_id_for,
    normalize_text,
    placeholder_condition_key,
    task_lookup_keys,
)
from axiom.tasks.matcher import TaskMatcher, candidates_json
from axiom.tasks.state import BlockerRef

__all__ = [
    "BlockerProblem",
    "BlockerResolver",
    "ResolvedBlockers",
    "blocker_match_text",
    "clean_condition_text",
    "condition_key_for_text",
]

_LEAD = re.compile(
    r"^\s*(?:(?:is|are|was|were|being|currently|still|now)\s+)*"
    r"(?:blocked\s+(?:by|on)|waiting\s+(?:on|for)|waits?\s+(?:on|for)|depends?\s+on|"
    r"dependent\s+on|pending|until|needs?|requires?|on\s+hold\s+(?:for|until))\s*:?\s+",
    re.IGNORECASE,
)
_ARTICLE = re.compile(r"^\s*(?:the|a|an)\s+", re.IGNORECASE)
_TASK_ID = re.compile(r"(?<![A-Za-z0-9_])(tsk_[0-9a-f]{12})(?![A-Za-z0-9_])")
_URL = re.compile(r"https?://\S+", re.IGNORECASE)
_TRAIL = ".,;:!?)]}'\""


def clean_condition_text(text: str) -> str:
    """The display text of a condition: the blocker text without a leading connective."""
    cleaned = _LEAD.sub("", text.strip(), count=1).strip().rstrip(".,;:!?").strip()
    return cleaned or text.strip()


def condition_key_for_text(project: str | None, text: str) -> str:
    """``cond:{project}:{…}`` of a blocker text (connective and leading article dropped).

    Raises ValueError when nothing keyable is left.
    """
    return condition_key(project, _strip_article(clean_condition_text(text)))


def _strip_article(text: str) -> str:
    stripped = _ARTICLE.sub("", text, count=1)
    return stripped if normalize_text(stripped) else text


def blocker_match_text(raw: Any) -> str | None:
    """The text `BlockerResolver.resolve` asks the matcher about for one blocker text, or
    None when it never asks (not a string, blank, holding a strong id — URL, GitHub issue,
    Jira key — or nothing left after the leading connective)."""
    text = raw.strip() if isinstance(raw, str) else ""
    if not text or artifact_keys_in(text):
        return None
    return _match_title(clean_condition_text(text))


def _match_title(cleaned: str) -> str | None:
    """The matcher's text for a blocker text already through `clean_condition_text` (no
    leading article), or None when nothing is left. Also what its condition is keyed by."""
    return _strip_article(cleaned) if normalize_text(cleaned) else None


@dataclass(frozen=True)
class BlockerProblem:
    text: str
    reason: str  # unrecognised_blocker | unknown_task_id | self_reference


@dataclass
class ResolvedBlockers:
    refs: list[BlockerRef] = field(default_factory=list)
    declarations: dict[str, NewEvent] = field(default_factory=dict)  # entity_id -> event
    problems: list[BlockerProblem] = field(default_factory=list)

    def add(self, ref: BlockerRef, declaration: NewEvent | None = None) -> None:
        if all(r.entity_id != ref.entity_id for r in self.refs):
            self.refs.append(ref)
        if declaration is not None:
            self.declarations.setdefault(ref.entity_id, declaration)


def _artifact_ref(key: str, text: str) -> tuple[str, str]:
    """(artifact kind, display ref) for an artifact key found in `text`."""
    kind, _, rest = key[len("art:") :].partition(":")
    if kind == "jira":
        return kind, rest
    if kind == "gh_issue":
        repo, _, num = rest.rpartition(":")
        return kind, f"{repo}#{num}"
    for m in _URL.finditer(text):
        url = m.group(0).rstrip(_TRAIL)
        if artifact_key_for(url) == key:
            return kind, url
    return kind, text.strip()


def _artifact(
    key: str, text: str, where: dict[str, Any], session_id: str | None
) -> tuple[BlockerRef, NewEvent]:
    """The artifact a blocker text names (a ticket key, an issue, a URL) and its declaration."""
    aid = entity_id_for(key)
    kind, ref = _artifact_ref(key, text)
    decl = NewEvent(
        ARTIFACT_DECLARED,
        {
            "artifact_id": aid,
            "canonical_key": key,
            "artifact_kind": kind,
            "ref": ref,
            "raw_text": text,
            **where,
        },
        dedupe_key=f"{ARTIFACT_DECLARED}:{aid}",
        session_id=session_id,
    )
    return BlockerRef(aid, "artifact", raw_text=text), decl


class BlockerResolver:
    """Plans blocker refs for one project (see the module docstring)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, project: str, matcher: TaskMatcher) -> None:
        self.conn = conn
        self.project = project
        self.matcher = matcher

    def _task_exists(self, task_id: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM entities WHERE entity_id = ? AND entity_type = 'task'", [task_id]
        ).fetchone()
        return row is not None

    def _names_task(self, title: str, task_id: str) -> bool:
        """Whether `title` is, by canonical key, the task `task_id` itself."""
        for key in task_lookup_keys(self.project, title):
            if entity_id_for(key) == task_id:
                return True
            row = self.conn.execute(
                "SELECT entity_id FROM entity_aliases"
                " WHERE entity_type = 'task' AND canonical_key = ?",
                [key],
            ).fetchone()
            if row is not None and row[0] == task_id:
                return True
        return False

    def resolve(
        self,
        texts: Iterable[Any],
        *,
        task_id: str | None,
        entry_id: str | None,
        session_id: str | None,
        now: datetime | None = None,
    ) -> ResolvedBlockers:
        out = ResolvedBlockers()
        where = {"entry_id": entry_id, "session_id": session_id}
        for raw in texts:
            text = raw.strip() if isinstance(raw, str) else ""
            if not text:
                out.problems.append(BlockerProblem(str(raw), "unrecognised_blocker"))
            elif keys := artifact_keys_in(text):
                for key in keys:
                    out.add(*_artifact(key, text, where, session_id))
            else:
                self._resolve_text(text, out, task_id, where, session_id, now)
        return out

    def _resolve_text(
        self,
        text: str,
        out: ResolvedBlockers,
        task_id: str | None,
        where: dict[str, Any],
        session_id: str | None,
        now: datetime | None,
    ) -> None:
        """A blocker text naming no artifact: a task by id or title, else a condition."""
        explicit = _TASK_ID.search(text)
        if explicit:
            tid = explicit.group(1)
            if tid == task_id:
                out.problems.append(BlockerProblem(text, "self_reference"))
                return
            if self._task_exists(tid):
                out.add(BlockerRef(tid, "task", raw_text=text))
                return
            out.problems.append(BlockerProblem(text, "unknown_task_id"))
        # `text` is stripped and holds no strong id: what blocker_match_text(text) gives
        cleaned = clean_condition_text(text)
        title = _match_title(cleaned)
        if title is None:  # nothing left after the connective
            out.problems.append(BlockerProblem(text, "unrecognised_blocker"))
            return
        if task_id and self._names_task(title, task_id):
            out.problems.append(BlockerProblem(text, "self_reference"))
            return
        exclude = (task_id,) if task_id else ()
        match = self.matcher.match(title, exclude=exclude, now=now)
        if match.strict is not None and not explicit:
            out.add(BlockerRef(match.strict.task_id, "task", raw_text=text))
            return
        key = condition_key(self.project, title)  # = condition_key_for_text(.., text)
        cid = entity_id_for(key)
        decl = NewEvent(
            CONDITION_DECLARED,
            {
                "condition_id": cid,
                "canonical_key": key,
                "text": cleaned,
                "raw_text": text,
                "project": self.project,
                "auto_placeholder": False,
                "for_task": None,
                "candidates": candidates_json(match.candidates[:3]),
                **where,
            },
            dedupe_key=f"{CONDITION_DECLARED}:{cid}",
            session_id=session_id,
        )
        out.add(BlockerRef(cid, "condition", raw_text=text), decl)

    def placeholder_declaration(
        self, ref: BlockerRef, task_id: str, *, entry_id: str | None, session_id: str | None
    ) -> NewEvent:
        """``condition_declared`` for the auto placeholder `ref` of `task_id`."""
        key = placeholder_condition_key(self.project, task_id)
        return NewEvent(
            CONDITION_DECLARED,
            {
                "condition_id": ref.entity_id,
                "canonical_key": key,
                "text": "unknown blocker",
                "raw_text": "",
                "project": self.project,
                "auto_placeholder": True,
                "for_task": task_id,
                "candidates": [],
                "entry_id": entry_id,
                "session_id": session_id,
            },
            dedupe_key=f"{CONDITION_DECLARED}:{ref.entity_id}",
            session_id=session_id,
        )
