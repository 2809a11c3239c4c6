"""One build's facts weighed against each other and against what is believed.

The build's facts are first read in the order they were said, and those the session itself
took back (a later statement that contradicts one and says it changed) are superseded, so
they never open a conflict (`BuildConflicts.said_changes`). Then each fact, as the build
records its entry, is compared with the believed facts of other sessions and with the
build's facts compared so far (`BuildConflicts.weigh`): a contradiction opens a conflict and
makes both entries `contested`, which holds back their graduation until a person resolves
it. A conflict an earlier build opened on a statement the session now takes back is
settled by the session (`_settle_taken_back`). Events go out through the build's `append`,
with keys derived from the entries so a rerun dedupes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from axiom.conflicts.detector import (
    COMPARED_TYPES,
    BelievedFacts,
    Contradiction,
    Fact,
    SessionFacts,
    contradictions,
    states_change,
    within_session,
)
from axiom.conflicts.projector import subject_fields
from axiom.extract.types import ExtractedEntry, normalize_title
from axiom.pipeline.fact_view import FactView
from axiom.store.event_types import CONFLICT_DETECTED, CONFLICT_RESOLVED, ENTRY_STATUS_CHANGED

Append = Callable[[str, dict[str, Any], str], None]  # event type, payload, dedupe key part


def conflict_id_of(older_id: str, newer_id: str) -> str:
    """`cf_` + 16 hex of sha256 over the two entry ids: one conflict per pair."""
    return "cf_" + hashlib.sha256(f"{older_id}|{newer_id}".encode()).hexdigest()[:16]


def fact_of(entry: ExtractedEntry, session_id: str | None) -> Fact:
    """What conflict detection compares of an extracted entry."""
    subject, value, previous_value = subject_fields(entry)
    return Fact(
        entry.entry_id,
        session_id,
        entry.type,
        entry.title,
        entry.content,
        f"{entry.type}:{normalize_title(entry.title)}",
        subject,
        value,
        previous_value,
    )


class BuildConflicts:
    """The conflict state of one build: its facts, what it superseded, what is open."""

    def __init__(self, view: FactView, session_id: str, append: Append) -> None:
        self.view = view  # the conflict tables as this build reads them
        self.session_id = session_id
        self.append = append
        self.facts: dict[str, Fact] = {}  # this build's facts by entry id (`said_changes`)
        self._position: dict[str, int] = {}  # this build's entries: last quoted message
        self._compared = SessionFacts()  # this build's facts compared so far (`_within_session`)
        # superseded within the session by this build: entry id -> (by entry id, reason)
        self._superseded: dict[str, tuple[str, str]] = {}
        self._believed: dict[str, BelievedFacts] = {}  # believed facts by entry type
        self._added: dict[str, list[Fact]] = {}  # this build's facts compared, by type
        # entry id -> id it is in open conflict with -> (older id, newer id) of that
        # conflict: every open conflict, read once (`open_by_entry`), plus those this build
        # detects, less those it settles (`_settle_taken_back`).
        self._contested: dict[str, dict[str, tuple[str, str]]] | None = None
        self._status: dict[str, str] = {}  # statuses read, or set by this build (not projected)
        self.reactivated: list[str] = []  # settled here and `active` again: to graduate

    def believed(self, entry_type: str) -> list[Fact]:
        """The believed facts of a type this build compared with (none before it has)."""
        pool = self._believed.get(entry_type)
        return pool.facts if pool is not None else []

    def open_conflicts(self, entry_id: str) -> dict[str, tuple[str, str]]:
        """The entries `entry_id` is in open conflict with (this build and before), each
        with its conflict's (older id, newer id)."""
        return self.open_by_entry().get(entry_id, {})

    def said_changes(self, entries: tuple[ExtractedEntry, ...]) -> None:
        """The build's facts, and which of them the session itself took back, decided
        before any is compared with other sessions (a statement superseded later in its
        session must not open a conflict the person would have to settle). In the order
        they were said (last quoted message, then extraction order), a statement that
        contradicts an earlier one and says it changed ("now", "switched") supersedes it;
        it is kept as history (`_superseded_by`)."""
        for entry in entries:
            self.facts[entry.entry_id] = fact_of(entry, self.session_id)
            self._position[entry.entry_id] = max(
                (q.message_index for q in entry.evidence), default=-1
            )
        said = sorted(self.facts.values(), key=lambda f: self._position[f.entry_id])
        for i, later in enumerate(said):
            if not states_change(later):
                continue
            for earlier in said[:i]:
                if earlier.entry_id in self._superseded:
                    continue  # already taken back by a statement said before this one
                if (c := within_session(later, earlier)) is not None:
                    self._superseded[earlier.entry_id] = (later.entry_id, c.reason)
        for earlier, (later, _reason) in self._superseded.items():
            self._settle_taken_back(earlier, later)

    def weigh(self, entry_id: str) -> bool:
        """Record what the build's entry (created just before) means for conflicts, and
        whether it may graduate: not when its session took it back, nor while contested."""
        if entry_id in self._superseded:
            self._superseded_by(entry_id, *self._superseded[entry_id])
            return False  # never compared with other sessions: taken back
        self._detect(self.facts[entry_id])
        return not self.open_conflicts(entry_id)

    def open_by_entry(self) -> dict[str, dict[str, tuple[str, str]]]:
        """Every open conflict by entry, read on first use (the build calls it before it
        appends anything), kept up to date by the build since."""
        if self._contested is None:
            self._contested = {}
            for older, newer in self.view.open_pairs():
                self._opened(older, newer)
        return self._contested

    def _opened(self, older: str, newer: str) -> None:
        for eid, other in ((older, newer), (newer, older)):
            self.open_by_entry().setdefault(eid, {})[other] = (older, newer)

    def _detect(self, fact: Fact) -> None:
        """`conflict_detected` for every believed fact from another session the new one
        contradicts, and both entries `contested` (`axiom.conflicts.detector`); then the
        same within the session (`_within_session`). Facts the session took back
        (`said_changes`) never come here."""
        if fact.entry_type not in COMPARED_TYPES:
            return
        pool = self._believed.get(fact.entry_type)
        if pool is None:
            pool = self._believed[fact.entry_type] = self.view.believed(fact.entry_type)
        # As if the build's facts compared so far followed the believed ones (`pool` is the
        # transaction's, so they are kept apart): a fact contradicts none of its own
        # session there, but a session without an id has none to share.
        added = self._added.setdefault(fact.entry_type, [])
        found = pool.contradictions(fact) + contradictions(fact, added)
        self._read_statuses([c.older_id for c in found])  # one query for them all
        for c in found:
            self._conflict(c)
        added.append(fact)
        self._within_session(fact)

    def _within_session(self, fact: Fact) -> None:
        """This build's facts compared so far against the new one, the later said as the
        newer side: a contradiction is a conflict. One whose later statement says it changed
        never comes here: `said_changes` superseded the earlier statement beforehand."""
        for other in self._compared.pairs(fact):  # those it could contradict, or be by
            ahead = self._position[fact.entry_id] >= self._position[other.entry_id]
            later, earlier = (fact, other) if ahead else (other, fact)
            if (c := within_session(later, earlier)) is not None:
                self._conflict(c)
        self._compared.add(fact)

    def _superseded_by(self, earlier: str, later: str, reason: str) -> None:
        """`entry_status_changed` to `superseded`, appended after the earlier entry's
        `entry_created` (the later one may come after it in the extraction)."""
        self._set_status(
            earlier,
            "superseded",
            f"said to have changed later in session {self.session_id}: {reason}",
            f"{earlier}:superseded:{later}",
            superseded_by=later,
        )

    def _settle_taken_back(self, earlier: str, later: str) -> None:
        """Conflicts an earlier build opened on a statement its session now takes back (the
        session grew and was imported again) are settled by the session, before any entry
        of the build is weighed: its own later word ended them, so no person is asked.
        `conflict_resolved` (`taken_back_*`, by the session); the taken-back side becomes
        `superseded` when weighed (`_superseded_by`); the other side `active` again (and
        graduated by the build: `reactivated`) unless it is not contested any more (a
        re-import superseded it), another conflict holds it, or its session took it back
        too."""
        open_ = self.open_by_entry()
        for other, (older, newer) in sorted(open_.pop(earlier, {}).items()):
            conflict_id = conflict_id_of(older, newer)
            open_.get(other, {}).pop(earlier, None)
            both = other in self._superseded
            side = "both" if both else ("newer" if earlier == newer else "older")
            self.append(
                CONFLICT_RESOLVED,
                {
                    "conflict_id": conflict_id,
                    "choice": f"taken_back_{side}",
                    "who": f"session {self.session_id}",
                    "note": f"{earlier} was taken back later in its session by {later}",
                    "older_id": older,
                    "newer_id": newer,
                },
                conflict_id,
            )
            if both or self.open_conflicts(other) or self.status_of(other) != "contested":
                continue
            self._set_status(
                other,
                "active",
                f"conflict {conflict_id} settled: the other side was taken back",
                f"{other}:active:{conflict_id}",
                conflict_id=conflict_id,
            )
            self.reactivated.append(other)

    def never_stored(self, entry_ids: set[str]) -> None:
        """Entries no event of which is stored (a first build's own: `_BuildWriter.fresh`):
        active until this build changes them, read from nowhere."""
        for entry_id in entry_ids:
            self._status.setdefault(entry_id, "active")

    def status_of(self, entry_id: str) -> str:
        """The entry's status as of the events this build appended (stored, else active)."""
        self._read_statuses([entry_id])
        return self._status[entry_id]

    def _read_statuses(self, entry_ids: list[str]) -> None:
        """The stored statuses of those entries this build has neither read nor set."""
        unknown = [eid for eid in entry_ids if eid not in self._status]
        if unknown:
            stored = self.view.statuses(unknown)
            self._status.update({eid: stored.get(eid, "active") for eid in unknown})

    def _set_status(
        self, entry_id: str, to: str, reason: str, key: str, **fields: str | None
    ) -> None:
        """`entry_status_changed` from the entry's status as this build knows it."""
        payload = {"entry_id": entry_id, "from": self.status_of(entry_id), "to": to}
        self.append(
            ENTRY_STATUS_CHANGED,
            {**payload, "superseded_by": None, **fields, "reason": reason},
            key,
        )
        self._status[entry_id] = to

    def _conflict(self, c: Contradiction) -> None:
        conflict_id = conflict_id_of(c.older_id, c.newer_id)
        self.append(CONFLICT_DETECTED, {"conflict_id": conflict_id, **c.__dict__}, conflict_id)
        for eid in (c.older_id, c.newer_id):
            if self.open_conflicts(eid) or self.status_of(eid) == "contested":
                continue  # already contested
            self._set_status(
                eid,
                "contested",
                f"conflict {conflict_id}: {c.reason}",
                f"{eid}:contested:{conflict_id}",
                conflict_id=conflict_id,
            )
        self._opened(c.older_id, c.newer_id)
