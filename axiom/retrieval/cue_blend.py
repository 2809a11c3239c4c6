"""The hybrid ranking's last step: one linear score over the views and the question's cues.

The rerank (step 3) and the cues (`axiom.retrieval.subjects`, `axiom.retrieval.lists`)
each bring a number; multiplied and added one after another their strengths were set one
at a time. Here they are weighed together, as a linear score over what the search has
computed already (no read, no model):

    linear = sum(VIEW_WEIGHTS[v] x z_v)            the z-score of each view (step 2)
           + SUBJECT_WEIGHT x [about a named person]
           + TIME_WEIGHT    x [a *when* question, and it says when]
           + CITED_WEIGHT   x (score of the best list-question entry citing it)
           - QUESTION_WEIGHT x [a turn that asks a question itself]

and `final = minmax(linear over the pool) x stage weight x status penalty x recency`, so
entries and messages keep their stage and status order. In z units: a view's z-score
spreads its candidates over about -1..4, so a named person's candidates (x10) rank above
all others about whom the question does not ask — a soft filter, which the 95 % of gold
turns said by the person named (README) supports; the context views (a turn with the
turn it answers) weigh three times the own-text views. A turn that asks something ("What
books have you read, Melanie?") shares the question's words but is rarely what answers
it: -1, known where the cues read the candidates' texts anyway (a question that names
someone or asks when; README, session 16).

The weights were fitted on the two LoCoMo dev files as a grid over the top 100 candidates
of each question, and kept because the best weights of either file won on the other one
(leave one file out; README, "Measured: retrieval quality", session 14). Only the hybrid
z-score ranking uses it: the weights were measured there; `fts`, `vector` and RRF rank as
before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from axiom.retrieval.lists import CITED_BOOST
from axiom.retrieval.query import MODE_VIEWS
from axiom.retrieval.scoring import Scored

VIEW_WEIGHTS = {"lexical_own": 0.5, "lexical_ctx": 1.5, "dense_own": 0.5, "dense_ctx": 1.5}
SUBJECT_WEIGHT = 10.0
TIME_WEIGHT = 2.0
CITED_WEIGHT = 16.0
QUESTION_WEIGHT = 1.0


def blends(view_names: Sequence[str], fusion: str) -> bool:
    """Whether a search ranks by the cue blend: the hybrid views fused by z-score."""
    return fusion == "zscore" and tuple(view_names) == MODE_VIEWS["hybrid"]


def linear_score(item: Scored, view_names: Sequence[str]) -> float:
    """The candidate's linear score (see the module docstring)."""
    n = item.numbers
    views = sum(VIEW_WEIGHTS[name] * z for name, z in zip(view_names, n.fused.parts, strict=True))
    cues = (
        SUBJECT_WEIGHT * (n.subject > 1.0) + TIME_WEIGHT * (n.time > 1.0) - QUESTION_WEIGHT * n.asks
    )
    return views + cues + CITED_WEIGHT * n.cited / CITED_BOOST


def blend_cues(
    scored: list[Scored], view_names: Sequence[str], extra: Mapping[str, float] | None = None
) -> None:
    """Score every candidate by its linear score (plus `extra` by document id: the
    feedback query's, `axiom.retrieval.feedback`) scaled over the pool x stage x status x
    recency, and re-sort `scored` (in place)."""
    if not scored:
        return
    more = extra or {}
    for item in scored:
        item.numbers.feedback = more.get(item.doc.id, 0.0)
    values = [linear_score(item, view_names) + item.numbers.feedback for item in scored]
    lo, hi = min(values), max(values)
    for item, value in zip(scored, values, strict=True):
        n = item.numbers
        n.blended = value
        scaled = 1.0 if hi - lo <= 1e-12 else (value - lo) / (hi - lo)
        n.final = scaled * n.stage_weight * n.status_penalty * n.recency
        item.hit.score = n.final
    scored.sort(key=lambda i: -i.hit.score)
