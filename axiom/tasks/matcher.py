"""TaskMatcher: which existing task (if any) a piece of text names.

Three methods, tried together and merged per task (best score wins):

1. **exact** — the text's canonical key (`task_key`) is a key in ``entity_aliases``
   (the task's own key or an alias). Similarity 1.0. The key under the rule from before
   articles were dropped (`task_lookup_keys`) is tried too, so tasks keyed then are still
   found; a hit by the current key wins over one by the older key.
2. **fulltext** — rapidfuzz over the normalized alias texts of every task of the same
   project (the part of each alias key after ``task:{project}:``), both sides first put
   in `comparison_form` (articles dropped, light English suffix stripping)::

       similarity = max(ratio, token_sort_ratio, 0.90 × token_set_ratio) / 100

   ``ratio`` catches small edits ("event" / "events"), ``token_sort_ratio`` reordered
   words. ``token_set_ratio`` is 100 whenever one title's words are a subset of the
   other's ("fix bug" ⊂ "fix bug in login"), so it is capped at 0.90: on its own it can
   make a suggestion, never a strict match. `comparison_form` makes inflections of one
   word equal ("upgrading" / "upgrade" / "upgraded", "bugs" / "bug", "retries" / "retry")
   but leaves different words different ("login" / "logout"), so "Upgrading the payment
   SDK" is a strict match for "Upgrade the payment SDK" while "Fix logout redirect bug"
   is only a suggestion for "Fix login redirect bug" (0.89). Only ASCII words are
   stripped; Korean and other scripts are compared as normalized.
3. **vector** — an optional hook ``(project, text, k) -> [(task_id, cosine)]``, base
   weight 0.90 × cosine: **suggestion only**. A vector candidate scores at most 0.90, below
   the strict threshold (0.92), and the strict decision (`match`: the identity, the top,
   the gap to the second, the reason) is taken over the exact and full-text candidates
   alone, so vectors never merge two tasks, never pick a blocker and never veto a
   full-text match by narrowing its gap. They only add candidates (a suggestion needs
   score ≥ 0.75, i.e. cosine ≥ ~0.83), which the resolver stores on the receipt
   (``task_mentioned.candidates``) and a condition stores on its declaration. A task
   found by exact/full-text and by vector keeps its best score (merged per task).

   Why only suggest: measured with the default embedder (multilingual-e5-small), cosines
   between *different* tasks are as high as between rewordings of one: "Fix login
   redirect bug" / "Fix logout redirect bug" 0.983 as passages (0.935 query→passage),
   "Enable cache" / "Disable cache" 0.948, "로그인 버그 수정" / "로그아웃 버그 수정" 0.977,
   against 0.980 for "Fix (the) login redirect bug". Any weight that let a cosine decide
   would merge the first pair. What vectors add is reach beyond the words: "Speed up the
   CI pipeline" / "Make continuous integration faster" is 0.31 in full text, 0.874 cosine
   (query→passage), so a 0.79 suggestion. A noisy one: the unrelated "Upgrade the payment
   SDK" is 0.849 (0.76) from the same query, also a suggestion; "Write the release notes"
   0.783 (0.70) is not.

   Wiring (`axiom.pipeline.process`): the hook runs while the resolver holds the DuckDB
   write transaction, where no model may be called, so the pipeline embeds the texts the
   resolver will look up (`axiom.tasks.resolver.matcher_texts`) and queries LanceDB
   (`axiom.pipeline.task_vectors`) *before* the transaction opens, and passes
   `precomputed_search`, which only looks those neighbours up. LanceDB holds a task only
   once the outbox writer has embedded it, so tasks of the same import run (and of a
   session processed before the outbox drained) are matched by exact + full-text only.

Score of a candidate::

    score = similarity × base(method) × stage × entity_status × task_status × recency

    base:          exact 1.0 · fulltext 1.0 · vector 0.90 (at most 0.90: never strict)
    stage:         certified/verified/candidate 1.0 · working 0.98 · raw 0.96
    entity status: active 1.0 · contested 0.9 · deprecated 0.6 · superseded 0.4
    task status:   pending/in_progress/blocked 1.0 · done 0.95 · cancelled 0.5
    recency:       0.9 + 0.1 × 0.5 ** (days since the task last changed / 90)

**Strict** match (`MatchResult.strict`), decided over the exact and full-text candidates
only: the top one is an active, not cancelled task and either (a) it was hit by its exact
canonical key — the key *is* the identity, so a near-duplicate title cannot veto it — or
(b) ``top1 ≥ 0.92`` and ``top1 − top2 ≥ 0.03``.
Everything else is a suggestion (`suggest_candidates`, score ≥ 0.75). The reason is
decided the same way (``no_candidates`` when neither method found anything, even if
vectors did), so with and without vectors a mention gets the same task and the same
``match`` record; only the candidates differ.

**Partial titles in prose** (`match(..., partial=True)`, what the resolver asks for a
mention from prose, not from a TodoWrite list): prose names a task by part of its title
("Deploying to staging is blocked by OPS-311" for the todo "Deploy ledgerly to the staging
cluster": full text 0.90, the word-subset cap). Such a top candidate is a match too
(reason ``partial_title``) when it is eligible, the text's words are a part of its
title's (not the other way: "Fix the login bug on mobile" is more than "Fix the login
bug"), at least two of them of three or more letters, and no other task scores even a
suggestion (second < 0.75): two tasks the words could belong to ("fix bug" for "fix bug in
login" and "fix bug in logout") stay apart, and a TodoWrite title, which is a task's
whole name, never joins by part of it.

`MatchResult.identity` is the exact-key hit whatever its status: a task resolver must
treat it as the same task (an id derived from the same key cannot be created twice), while
a blocker resolver only accepts `strict`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
from rapidfuzz import fuzz

from axiom.tasks.canonical import drop_articles, normalize_project, normalize_text, task_lookup_keys

__all__ = [
    "STRICT_GAP",
    "STRICT_SCORE",
    "SUGGEST_MIN",
    "MatchResult",
    "TaskCandidate",
    "TaskMatcher",
    "VectorSearch",
    "comparison_form",
    "precomputed_search",
    "project_task_ids",
    "similarity",
]

STRICT_SCORE = 0.92
STRICT_GAP = 0.03
SUGGEST_MIN = 0.75
TOKEN_SET_CAP = 0.90
PARTIAL_MIN_WORDS = 2  # words of 3+ letters a partial title in prose must have
RECENCY_HALF_LIFE_DAYS = 90.0

VECTOR_K = 10  # neighbours asked of the vector hook per text
# vector < STRICT_SCORE: a vector candidate can suggest, never be a strict match.
BASE_WEIGHT = {"exact": 1.0, "fulltext": 1.0, "vector": 0.90}
STAGE_WEIGHT = {
    "certified": 1.0,
    "verified": 1.0,
    "candidate": 1.0,
    "working": 0.98,
    "raw": 0.96,
}
ENTITY_STATUS_WEIGHT = {"active": 1.0, "contested": 0.9, "deprecated": 0.6, "superseded": 0.4}
TASK_STATUS_WEIGHT = {
    "pending": 1.0,
    "in_progress": 1.0,
    "blocked": 1.0,
    "done": 0.95,
    "cancelled": 0.5,
}

VectorSearch = Callable[[str, str, int], Sequence[tuple[str, float]]]
"""``(project, text, k) -> [(task_id, cosine similarity)]``, best first."""

Neighbours = dict[str, list[tuple[str, float]]]
"""text -> its nearest tasks ``[(task_id, cosine)]``, best first (computed in advance)."""


def precomputed_search(project: str | None, neighbours: Neighbours) -> VectorSearch:
    """A `VectorSearch` that only looks `text` up in `neighbours` (no model, no I/O): safe
    to call inside a write transaction. A text or project it was not computed for has no
    neighbours."""
    own = normalize_project(project)

    def search(proj: str, text: str, k: int) -> Sequence[tuple[str, float]]:
        if normalize_project(proj) != own:
            return ()
        return neighbours.get(text, [])[: max(0, k)]

    return search


def project_task_ids(conn: duckdb.DuckDBPyConnection, project: str | None) -> list[str]:
    """The ids of every task of `project` (what `TaskMatcher` can match), sorted."""
    prefix = f"task:{normalize_project(project)}:"
    rows = conn.execute(
        "SELECT DISTINCT entity_id FROM entity_aliases WHERE entity_type = 'task'"
        " AND starts_with(canonical_key, ?) ORDER BY entity_id",
        [prefix],
    ).fetchall()
    return [r[0] for r in rows]


_ASCII_WORD = re.compile(r"[a-z]+")
_KEEP_DOUBLE = frozenset("lsz")
_VOWEL = re.compile(r"[aeiouy]")


def _verb_base(word: str) -> str:
    """`word` without ``-ing`` / ``-ed`` (3+ letters left, not ``-eed``), else ``""``."""
    if len(word) >= 6 and word.endswith("ing"):
        return word[:-3]
    if len(word) >= 5 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    return ""


def _stem(word: str) -> str:
    """A light, deterministic suffix strip for one lower-case ASCII word.

    One of ``-ies/-ied → -i``, ``-ing``, ``-ed`` (the rest must hold a vowel, so
    "string" stays), ``-es`` (after s, x, z, ch, sh), ``-s``
    (not after s, u, i) when at least 3 letters remain, then a doubled final consonant
    left by ``-ing``/``-ed`` is undoubled (except l, s, z: "stopped" → "stop"), then a
    final ``-e`` (4+ letters: "upgrade" → "upgrad") is dropped and a final ``-y`` becomes
    ``-i`` ("retry" → "retri"). Not a linguistic stemmer: it only has to send the
    inflections of one word to the same string.
    """
    if not _ASCII_WORD.fullmatch(word):
        return word
    w = word
    if len(w) >= 5 and w.endswith(("ies", "ied")):
        w = w[:-3] + "i"
    elif _VOWEL.search(base := _verb_base(w)):
        w = base
        if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in _KEEP_DOUBLE and w[-1] not in "aeiou":
            w = w[:-1]
    elif len(w) >= 5 and w.endswith("es") and w[:-2].endswith(("s", "x", "z", "ch", "sh")):
        w = w[:-2]
    elif len(w) >= 4 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) >= 4 and w.endswith("e"):
        w = w[:-1]
    elif len(w) >= 4 and w.endswith("y"):
        w = w[:-1] + "i"
    return w


def comparison_form(norm: str) -> str:
    """What the full-text step compares: a normalized text without articles
    (`drop_articles`, so aliases keyed before that rule compare equal too) and with each
    ASCII word passed through `_stem`. Used for similarity only, never for keys."""
    return " ".join(_stem(w) for w in drop_articles(norm).split(" "))


def similarity(a_norm: str, b_norm: str) -> float:
    """Full-text similarity of two *normalized* texts in [0, 1] (see the module doc)."""
    if not a_norm or not b_norm:
        return 0.0
    return _form_similarity(comparison_form(a_norm), comparison_form(b_norm))


def _form_similarity(a_form: str, b_form: str) -> float:
    """`similarity` of two texts already in `comparison_form` (of non-empty normalized
    texts): lets the matcher put each text in that form once."""
    return (
        max(
            fuzz.ratio(a_form, b_form),
            fuzz.token_sort_ratio(a_form, b_form),
            TOKEN_SET_CAP * fuzz.token_set_ratio(a_form, b_form),
        )
        / 100.0
    )


def _naive_utc(value: datetime) -> datetime:
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value


def recency_weight(updated_at: datetime | None, now: datetime) -> float:
    if updated_at is None:
        return 1.0
    days = max(0.0, (_naive_utc(now) - _naive_utc(updated_at)).total_seconds() / 86400.0)
    return 0.9 + 0.1 * 0.5 ** (days / RECENCY_HALF_LIFE_DAYS)


@dataclass(frozen=True)
class TaskCandidate:
    """One task a text may name, with the score and what it is made of."""

    task_id: str
    title: str
    method: str  # exact | fulltext | vector
    similarity: float
    score: float
    task_status: str
    entity_status: str
    stage: str
    factors: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def eligible(self) -> bool:
        """Whether this task may be a strict match at all (active and not cancelled)."""
        return self.entity_status == "active" and self.task_status != "cancelled"

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "title": self.title,
            "method": self.method,
            "similarity": round(self.similarity, 4),
            "score": round(self.score, 4),
            "task_status": self.task_status,
        }


@dataclass(frozen=True)
class MatchResult:
    strict: TaskCandidate | None
    identity: TaskCandidate | None
    candidates: tuple[TaskCandidate, ...]  # best first, every method merged
    # exact_key | strict_threshold | partial_title | below_threshold | gap_too_small |
    # ineligible | no_candidates
    reason: str

    @property
    def top(self) -> TaskCandidate | None:
        return self.candidates[0] if self.candidates else None


@dataclass(frozen=True)
class _Row:
    task_id: str
    title: str
    stage: str
    entity_status: str
    task_status: str
    updated_at: datetime | None
    alias_forms: tuple[str, ...]  # `comparison_form` of each non-empty alias text
    keys: frozenset[str]


class TaskMatcher:
    """Matches text against the tasks of one project, reading the task projection."""

    def __init__(
        self,
        conn: duckdb.DuckDBPyConnection,
        project: str | None,
        *,
        vector_search: VectorSearch | None = None,
    ) -> None:
        self.conn = conn
        self.project = normalize_project(project)
        self.vector_search = vector_search
        self._prefix = f"task:{self.project}:"

    def _rows(self) -> dict[str, _Row]:
        rows = self.conn.execute(
            "SELECT e.entity_id, e.title, e.stage, e.status,"
            " json_extract_string(e.current_json, '$.status'), e.updated_at, a.canonical_key"
            " FROM entity_aliases a JOIN entities e ON e.entity_id = a.entity_id"
            " WHERE a.entity_type = 'task' AND e.entity_type = 'task'"
            " AND starts_with(a.canonical_key, ?) ORDER BY e.entity_id, a.canonical_key",
            [self._prefix],
        ).fetchall()
        out: dict[str, _Row] = {}
        for tid, title, stage, estatus, tstatus, updated, key in rows:
            norm = key[len(self._prefix) :]
            forms = (comparison_form(norm),) if norm else ()
            row = out.get(tid)
            if row is None:
                out[tid] = _Row(
                    tid,
                    title,
                    stage,
                    estatus,
                    tstatus or "pending",
                    updated,
                    forms,
                    frozenset({key}),
                )
            else:
                out[tid] = _Row(
                    tid,
                    title,
                    stage,
                    estatus,
                    row.task_status,
                    updated,
                    (*row.alias_forms, *forms),
                    row.keys | {key},
                )
        return out

    def _candidate(self, row: _Row, method: str, sim: float, now: datetime) -> TaskCandidate:
        factors = {
            "similarity": sim,
            "base": BASE_WEIGHT[method],
            "stage": STAGE_WEIGHT.get(row.stage, 0.95),
            "entity_status": ENTITY_STATUS_WEIGHT.get(row.entity_status, 0.5),
            "task_status": TASK_STATUS_WEIGHT.get(row.task_status, 0.5),
            "recency": recency_weight(row.updated_at, now),
        }
        score = 1.0
        for value in factors.values():
            score *= value
        return TaskCandidate(
            task_id=row.task_id,
            title=row.title,
            method=method,
            similarity=sim,
            score=score,
            task_status=row.task_status,
            entity_status=row.entity_status,
            stage=row.stage,
            factors=factors,
        )

    def candidates(
        self,
        text: str,
        *,
        exclude: Collection[str] = (),
        now: datetime | None = None,
    ) -> tuple[list[TaskCandidate], TaskCandidate | None]:
        """Every scored candidate, all methods merged (best first), and the exact-key hit."""
        ranked, _, identity = self._scored(text, exclude, now)
        return ranked, identity

    def _scored(
        self, text: str, exclude: Collection[str], now: datetime | None
    ) -> tuple[list[TaskCandidate], list[TaskCandidate], TaskCandidate | None]:
        """(all candidates merged per task, the exact/full-text ones alone, identity)."""
        now = now or datetime.now(UTC)
        norm = normalize_text(text) if isinstance(text, str) else ""
        if not norm:
            return [], [], None
        form = comparison_form(norm)
        keys = task_lookup_keys(self.project, text)
        rows = {tid: r for tid, r in self._rows().items() if tid not in exclude}
        best: dict[str, TaskCandidate] = {}
        decisive: dict[str, TaskCandidate] = {}  # exact + fulltext: what may decide

        def offer(cand: TaskCandidate) -> None:
            for merged in (best, decisive) if cand.method != "vector" else (best,):
                old = merged.get(cand.task_id)
                if old is None or (cand.score, cand.method == "exact") > (
                    old.score,
                    old.method == "exact",
                ):
                    merged[cand.task_id] = cand

        identity: TaskCandidate | None = None
        identity_rank = len(keys)
        for row in rows.values():
            rank = next((i for i, key in enumerate(keys) if key in row.keys), None)
            if rank is not None:
                exact = self._candidate(row, "exact", 1.0, now)
                offer(exact)
                if rank < identity_rank:  # the current key's hit beats the older key's
                    identity, identity_rank = exact, rank
                continue
            sim = max((_form_similarity(form, alias) for alias in row.alias_forms), default=0.0)
            if sim > 0:
                offer(self._candidate(row, "fulltext", sim, now))
        if self.vector_search is not None:
            for tid, cosine in self.vector_search(self.project, text, VECTOR_K):
                if tid in rows:
                    offer(self._candidate(rows[tid], "vector", max(0.0, min(1.0, cosine)), now))

        def order(c: TaskCandidate) -> tuple[float, str]:
            return (-c.score, c.task_id)

        return sorted(best.values(), key=order), sorted(decisive.values(), key=order), identity

    def match(
        self,
        text: str,
        *,
        exclude: Collection[str] = (),
        now: datetime | None = None,
        partial: bool = False,
    ) -> MatchResult:
        """The strict match for `text` (or None) and the ranked candidates. Strictness and
        the reason are decided over exact + full-text candidates only (module docstring);
        `candidates` holds every method's. `partial`: `text` comes from prose, which may
        name a task by part of its title."""
        ranked, decisive, identity = self._scored(text, exclude, now)
        if not decisive:
            return MatchResult(None, identity, tuple(ranked), "no_candidates")
        top = decisive[0]
        second = decisive[1].score if len(decisive) > 1 else 0.0
        if identity is not None and identity.eligible:
            return MatchResult(identity, identity, tuple(ranked), "exact_key")
        if not top.eligible:
            reason = "ineligible"
        elif top.score < STRICT_SCORE:
            reason = "below_threshold"
        elif top.score - second < STRICT_GAP:
            reason = "gap_too_small"
        else:
            return MatchResult(top, identity, tuple(ranked), "strict_threshold")
        if partial and reason == "below_threshold" and _names_part_of(text, top, second):
            return MatchResult(top, identity, tuple(ranked), "partial_title")
        return MatchResult(None, identity, tuple(ranked), reason)

    def suggest_candidates(
        self,
        text: str,
        k: int = 5,
        *,
        exclude: Collection[str] = (),
        now: datetime | None = None,
        min_score: float = SUGGEST_MIN,
    ) -> list[TaskCandidate]:
        """Up to `k` candidates scoring at least `min_score`, best first."""
        ranked, _ = self.candidates(text, exclude=exclude, now=now)
        return [c for c in ranked if c.score >= min_score][:k]


def _names_part_of(text: str, top: TaskCandidate, second: float) -> bool:
    """Whether prose `text` names `top` by part of its title, with no rival (see the
    module docstring, "Partial titles in prose")."""
    words = set(comparison_form(normalize_text(text)).split(" "))
    title = set(comparison_form(normalize_text(top.title)).split(" "))
    return (
        top.similarity >= TOKEN_SET_CAP
        and second < SUGGEST_MIN
        and words < title
        and sum(len(w) >= 3 for w in words) >= PARTIAL_MIN_WORDS
    )


def candidates_json(candidates: Sequence[TaskCandidate]) -> list[dict[str, Any]]:
    return [c.to_json() for c in candidates]
