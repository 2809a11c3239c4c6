"""Pseudo-relevance feedback: the first hits' distinctive words, asked once more.

A question and the turn that answers it often share few words ("What does Melanie do to
destress?" / "I've been running farther ... for my headspace"), while the turns ranked
first by the cue blend are mostly about the right thing. So, after the blend, the words
the top `FEEDBACK_HITS` candidates hold that the question does not (and that are rare in
the candidate pool: idf over it, words in more than `COMMON_SHARE` of it dropped) become
`FEEDBACK_TERMS` expansion terms; the question's terms plus those go to BM25 once more
(the lexical own and context views, as in step 1), and each candidate of the pool gains
`FEEDBACK_WEIGHT` x the cue blend's lexical view weights x those views' z-scores (a
candidate a view did not return gets that view's lowest z). Then the pool is re-scaled
and re-sorted as by the blend. Only candidates already in the pool move: documents only
the second query finds are not added (measured: they changed nothing on the dev files).

A candidate's words are its own row's analyzed terms (`Doc.own_terms`, from the first
full-text query): no DuckDB read; a candidate found only through its vector or its
context row brings no words. A pool with fewer than `MIN_POOL` candidates that have words
(a small store) asks nothing more. Only the hybrid z-score ranking uses it (the cue blend).

Kept because it won on both LoCoMo dev files, the setting chosen on either file winning on
the other; the MRR gain held across the settings tried, the recall gain less so (README,
"Measured: retrieval quality", session 15, has the figures).
Cost: one more full-text query per hybrid search. It reads only each row's kind, address
(`_rowid`) and score: a row step 1 returned names its document by its address
(`candidates.feedback_views`), so no id column is read twice; a row step 1 did not return
counts only in its view's scale, so a pool candidate whose other row step 1 never saw gets
that view's lowest z (reading ids would give it its score: on dev, MRR 0.6610 -> 0.6608).
The query takes ~0.6x the time of one reading the ids (README, "Measured: speed", session
16). Row addresses hold within one table version: when the writer commits between the two
queries the feedback is left out (`AskAgain` answers None) rather than lifting whichever
documents the addresses name by then.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence

from axiom.retrieval.candidates import View
from axiom.retrieval.fusion import normalize
from axiom.retrieval.scoring import Scored

FEEDBACK_HITS = 5
FEEDBACK_TERMS = 20
FEEDBACK_WEIGHT = 1.0
COMMON_SHARE = 0.2  # a word in more of the pool's candidates says nothing about the hits
MIN_POOL = 20  # fewer candidates with words: their idf says nothing either (a small store)
MIN_TERM_CHARS = 3
LEXICAL_VIEWS = ("lexical_own", "lexical_ctx")

# terms -> the two lexical views; None when the query failed (the first ranking stands)
AskAgain = Callable[[list[str]], Mapping[str, View] | None]


def expansion_terms(scored: Sequence[Scored], query_terms: Collection[str]) -> list[str]:
    """The `FEEDBACK_TERMS` words of the top `FEEDBACK_HITS` candidates (best first)
    weighted by their summed idf over the pool, leaving out the question's own words,
    short ones and common ones; [] when the hits bring no words or fewer than `MIN_POOL`
    candidates have words (in a small store the first hits are the answer, and the
    feedback drifts: a question beside the answer rose above it)."""
    pool = [set(item.doc.own_terms.split()) for item in scored if item.doc.own_terms is not None]
    if len(pool) < MIN_POOL:
        return []
    df: dict[str, int] = {}
    for terms in pool:
        for term in terms:
            df[term] = df.get(term, 0) + 1
    n, asked = len(pool), set(query_terms)
    weight: dict[str, float] = {}
    for item in scored[:FEEDBACK_HITS]:  # in rank and text order: ties go to the best hit
        for term in dict.fromkeys((item.doc.own_terms or "").split()):
            count = df.get(term, 0)
            if term in asked or len(term) < MIN_TERM_CHARS or count > COMMON_SHARE * n:
                continue
            weight[term] = weight.get(term, 0.0) + math.log((n + 1) / (count + 1))
    return sorted(weight, key=lambda t: -weight[t])[:FEEDBACK_TERMS]


def feedback_scores(
    views: Mapping[str, View], view_weights: Mapping[str, float]
) -> tuple[dict[str, float], float]:
    """Per document id its feedback score (over the lexical views, weight x z-score, a
    view that did not return it counting its lowest z, as in `fusion.blend`), and the
    score of a document neither view returned."""
    tables: list[tuple[float, dict[str, float], float]] = []
    for name in LEXICAL_VIEWS:
        view = views.get(name, [])
        z = normalize([score for _id, score in view], "zscore")
        low = min(z) if z and max(z) - min(z) > 1e-12 else 0.0
        table = {str(doc_id): value for (doc_id, _score), value in zip(view, z, strict=True)}
        tables.append((view_weights[name], table, low))
    ids = {doc_id for _w, table, _low in tables for doc_id in table}
    scores = {d: sum(w * table.get(d, low) for w, table, low in tables) for d in ids}
    return scores, sum(w * low for w, _table, low in tables)


def feedback_lift(
    scored: Sequence[Scored],
    query_terms: Collection[str],
    ask_again: AskAgain,
    view_weights: Mapping[str, float],
) -> dict[str, float] | None:
    """Per candidate id what the feedback query adds to its linear score
    (`FEEDBACK_WEIGHT` x its feedback score); None when there is nothing to ask.
    `ask_again` runs the full-text query for the question's terms and the expansion."""
    terms = expansion_terms(scored, query_terms)
    if not terms:
        return None
    views = ask_again(sorted(set(query_terms)) + terms)
    if views is None:  # the second query failed: the first ranking stands
        return None
    scores, floor = feedback_scores(views, view_weights)
    return {item.doc.id: FEEDBACK_WEIGHT * scores.get(item.doc.id, floor) for item in scored}
