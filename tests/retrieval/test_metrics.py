"""hit@k, recall@k, reciprocal rank and their means over questions."""

from __future__ import annotations

import pytest

from axiom.retrieval.metrics import (
    evaluate,
    first_gold_rank,
    hit_at_k,
    recall_at_k,
    reciprocal_rank,
)

RANKING = ["d1", "d2", "d3", "d4", "d5", "d6"]


def test_it_finds_the_rank_of_the_first_gold_document() -> None:
    assert first_gold_rank(RANKING, {"d3", "d5"}) == 3
    assert first_gold_rank(RANKING, {"nope"}) is None


def test_hit_at_k_counts_any_gold_document_within_k() -> None:
    assert hit_at_k(RANKING, {"d3", "d9"}, 3) == 1.0
    assert hit_at_k(RANKING, {"d3", "d9"}, 2) == 0.0


def test_recall_at_k_is_the_fraction_of_gold_found() -> None:
    gold = {"d2", "d5", "d9", "d10"}
    assert recall_at_k(RANKING, gold, 1) == 0.0
    assert recall_at_k(RANKING, gold, 2) == 0.25
    assert recall_at_k(RANKING, gold, 5) == 0.5
    assert recall_at_k(RANKING, gold, 100) == 0.5


def test_reciprocal_rank_is_one_over_the_first_gold_rank() -> None:
    assert reciprocal_rank(RANKING, {"d4", "d2"}) == 0.5
    assert reciprocal_rank(RANKING, {"x"}) == 0.0
    assert reciprocal_rank([], {"x"}) == 0.0


def test_empty_gold_scores_zero_instead_of_dividing_by_zero() -> None:
    assert recall_at_k(RANKING, set(), 5) == 0.0
    assert hit_at_k(RANKING, set(), 5) == 0.0


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError):
        recall_at_k(RANKING, {"d1"}, 0)
    with pytest.raises(ValueError):
        evaluate([], ks=(0,))


def test_evaluate_averages_each_question_equally() -> None:
    report = evaluate(
        [
            (["a", "b", "c"], {"a"}),  # rank 1
            (["a", "b", "c"], {"c", "z"}),  # rank 3, half the gold
            (["a", "b", "c"], {"z"}),  # miss
        ],
        ks=(1, 3),
    )
    assert report.n == 3
    assert report.hit[1] == pytest.approx(1 / 3)
    assert report.hit[3] == pytest.approx(2 / 3)
    assert report.recall[3] == pytest.approx((1 + 0.5 + 0) / 3)
    assert report.mrr == pytest.approx((1 + 1 / 3 + 0) / 3)


def test_evaluate_of_nothing_is_zero() -> None:
    report = evaluate([], ks=(5,))
    assert report.n == 0
    assert report.mrr == 0.0
    assert report.recall == {5: 0.0}
