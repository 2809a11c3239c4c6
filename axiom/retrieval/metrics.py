"""Ranking metrics for a gold set: hit@k, recall@k, reciprocal rank, and their means.

A ranking is the list of document ids in the order a retriever returned them; gold is the
set of ids that answer the question. All functions take one question at a time; `evaluate`
averages over questions (each question weighs the same).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def first_gold_rank(ranking: Sequence[str], gold: Collection[str]) -> int | None:
    """1-based rank of the first gold id in `ranking`, or None if no gold id is ranked."""
    for rank, doc_id in enumerate(ranking, start=1):
        if doc_id in gold:
            return rank
    return None


def hit_at_k(ranking: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 if any gold id is among the first k, else 0.0."""
    _check_k(k)
    return 1.0 if any(doc_id in gold for doc_id in ranking[:k]) else 0.0


def recall_at_k(ranking: Sequence[str], gold: Collection[str], k: int) -> float:
    """Fraction of the gold ids found among the first k (0.0 when gold is empty)."""
    _check_k(k)
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len(gold_set.intersection(ranking[:k])) / len(gold_set)


def reciprocal_rank(ranking: Sequence[str], gold: Collection[str]) -> float:
    """1 / rank of the first gold id; 0.0 when none is ranked."""
    rank = first_gold_rank(ranking, gold)
    return 0.0 if rank is None else 1.0 / rank


@dataclass
class Report:
    """Means over questions. `recall[k]`, `hit[k]` keyed by k."""

    n: int
    recall: dict[int, float] = field(default_factory=dict)
    hit: dict[int, float] = field(default_factory=dict)
    mrr: float = 0.0


def evaluate(
    runs: Iterable[tuple[Sequence[str], Collection[str]]],
    ks: Sequence[int] = (1, 5, 10),
) -> Report:
    """Average hit@k, recall@k and MRR over `(ranking, gold)` pairs."""
    for k in ks:
        _check_k(k)
    n = 0
    recall = dict.fromkeys(ks, 0.0)
    hit = dict.fromkeys(ks, 0.0)
    rr = 0.0
    for ranking, gold in runs:
        n += 1
        for k in ks:
            recall[k] += recall_at_k(ranking, gold, k)
            hit[k] += hit_at_k(ranking, gold, k)
        rr += reciprocal_rank(ranking, gold)
    if n == 0:
        return Report(n=0, recall=recall, hit=hit, mrr=0.0)
    return Report(
        n=n,
        recall={k: v / n for k, v in recall.items()},
        hit={k: v / n for k, v in hit.items()},
        mrr=rr / n,
    )
