"""Citation precision: how much of what a search cites lies inside the gold evidence.

Recall and MRR say whether a gold turn was *found*; they do not say whether the answer's
citations point at it. Every hit cites spans, each a message `(session_id,
message_index)`: an entry hit cites its evidence spans (the messages its quotes come
from), a message hit cites its own message. For one question,

    precision@k = (cited spans inside gold, over the top k hits)
                  / (all cited spans of the top k hits)

counting each hit's distinct spans (two hits citing the same message count it twice: both
were shown). A question with no hits, or whose top k hits cite nothing, counts 0. The
report is the mean over questions, each weighing the same, like recall.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import duckdb

from axiom.entries.queries import entry_headlines
from axiom.retrieval.results import SearchHit

Span = tuple[str, int]  # (session_id, message_index)
PRECISION_KS = (1, 5)


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def precision_at_k(cited: Sequence[Sequence[Span]], gold: Collection[Span], k: int) -> float:
    """Share of the spans cited by the first k hits (`cited[i]` = hit i's spans) that are
    gold; 0.0 when they cite nothing."""
    _check_k(k)
    spans = [span for hit in cited[:k] for span in dict.fromkeys(hit)]
    if not spans:
        return 0.0
    gold_set = set(gold)
    return sum(span in gold_set for span in spans) / len(spans)


def mean_precision(
    runs: Iterable[tuple[Sequence[Sequence[Span]], Collection[Span]]],
    ks: Sequence[int] = PRECISION_KS,
) -> dict[int, float]:
    """precision@k averaged over `(cited, gold)` pairs, one per question (0.0 with none)."""
    for k in ks:
        _check_k(k)
    totals = dict.fromkeys(ks, 0.0)
    n = 0
    for cited, gold in runs:
        n += 1
        for k in ks:
            totals[k] += precision_at_k(cited, gold, k)
    return {k: (v / n if n else 0.0) for k, v in totals.items()}


def hit_spans(hit: SearchHit, evidence: Mapping[str, Sequence[Span]]) -> tuple[Span, ...]:
    """The spans `hit` cites: a message its own, an entry its evidence (from `evidence`,
    entry_id -> spans; an entry missing there cites nothing)."""
    if hit.kind == "message" and hit.session_id is not None and hit.message_index is not None:
        return ((hit.session_id, int(hit.message_index)),)
    if hit.kind == "entry" and hit.entry_id:
        return tuple(evidence.get(hit.entry_id, ()))
    return ()


def entry_evidence(
    conn: duckdb.DuckDBPyConnection, hits: Sequence[SearchHit]
) -> dict[str, tuple[Span, ...]]:
    """entry_id -> its evidence spans, in evidence order, for the entry hits of `hits`
    (an evidence item without a session names the entry's own session)."""
    session_of = {h.entry_id: h.session_id for h in hits if h.kind == "entry" and h.entry_id}
    out: dict[str, tuple[Span, ...]] = {}
    for head in entry_headlines(conn, list(session_of)):
        out[head.entry_id] = _evidence_spans(head.evidence, session_of.get(head.entry_id))
    return out


def _evidence_spans(
    evidence: list[dict[str, Any]] | None, session_id: str | None
) -> tuple[Span, ...]:
    spans: list[Span] = []
    for item in evidence or ():
        if not isinstance(item, dict) or not isinstance(item.get("message_index"), int):
            continue
        sid = item.get("session_id") or session_id
        if sid:
            spans.append((str(sid), item["message_index"]))
    return tuple(dict.fromkeys(spans))
