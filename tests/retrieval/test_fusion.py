"""RRF and normalized blends, with the hybrid-blend pitfalls pinned down."""

from __future__ import annotations

import pytest

from axiom.retrieval.fusion import blend, normalize, rrf

BM25 = [("a", 12.0), ("b", 6.0), ("c", 3.0)]
DENSE = [("c", 0.71), ("d", 0.69), ("a", 0.62)]


def ids(hits) -> list:  # type: ignore[no-untyped-def]
    return [h.id for h in hits]


def test_rrf_sums_reciprocal_ranks() -> None:
    hits = {h.id: h for h in rrf([BM25, DENSE], k=60)}
    assert hits["a"].score == pytest.approx(1 / 61 + 1 / 63)
    assert hits["c"].score == pytest.approx(1 / 63 + 1 / 61)
    assert hits["d"].score == pytest.approx(1 / 62)
    assert hits["a"].ranks == (1, 3)
    assert hits["d"].ranks == (None, 2)


def test_rrf_weights_scale_each_source() -> None:
    hits = {h.id: h for h in rrf([BM25, DENSE], k=0, weights=[2.0, 0.0])}
    assert hits["b"].score == pytest.approx(2 / 2)
    assert hits["d"].score == 0.0


def test_ties_break_by_best_source_rank_then_first_appearance() -> None:
    # a and c have equal RRF scores; both are rank 1 somewhere; a was seen first.
    assert ids(rrf([BM25, DENSE]))[:2] == ["a", "c"]
    assert ids(rrf([[("x", 1.0)], [("y", 1.0)]])) == ["x", "y"]


def test_score_breakdown_adds_up() -> None:
    for hit in blend([BM25, DENSE], weights=[0.5, 0.5], norm="minmax"):
        assert hit.score == pytest.approx(sum(hit.parts))
        assert len(hit.parts) == len(hit.ranks) == 2


def test_minmax_blend_never_mixes_raw_and_normalized_scores() -> None:
    # Pitfall 1: "b" is only in BM25 with a raw score of 6.0 and "d" only in dense; both
    # must sit on the [0, 1] scale, so nothing scores above the sum of the weights.
    hits = {h.id: h for h in blend([BM25, DENSE], weights=[0.5, 0.5], norm="minmax")}
    assert all(0.0 <= h.score <= 1.0 for h in hits.values())
    assert hits["b"].parts == (pytest.approx(0.5 * (6 - 3) / (12 - 3)), 0.0)
    assert hits["d"].parts == (0.0, pytest.approx(0.5 * (0.69 - 0.62) / (0.71 - 0.62)))


def test_cosines_are_spread_within_the_candidates_not_added_raw() -> None:
    # Pitfall 2: cosines 0.62..0.71 of unrelated-looking texts must not add a flat ~0.65
    # to everything: the lowest candidate cosine contributes nothing.
    hits = {h.id: h for h in blend([BM25, DENSE], weights=[0.5, 0.5], norm="minmax")}
    assert hits["a"].parts[1] == 0.0
    assert hits["c"].parts[1] == pytest.approx(0.5)


def test_a_constant_or_single_candidate_list_normalizes_to_one() -> None:
    # Pitfall 3: no division by zero when max == min.
    assert normalize([3.0], "minmax") == [1.0]
    assert normalize([2.0, 2.0], "zscore") == [1.0, 1.0]
    hits = blend([[("only", 7.5)], DENSE], norm="minmax")
    assert {h.id: h for h in hits}["only"].parts[0] == 1.0


def test_zscore_blend_puts_missing_documents_at_the_source_floor() -> None:
    hits = {h.id: h for h in blend([BM25, DENSE])}  # z-score is the default
    z_bm25 = normalize([12.0, 6.0, 3.0], "zscore")
    z_dense = normalize([0.71, 0.69, 0.62], "zscore")
    assert hits["d"].parts[0] == pytest.approx(min(z_bm25))
    assert hits["b"].parts[1] == pytest.approx(min(z_dense))
    assert hits["a"].score == pytest.approx(z_bm25[0] + z_dense[2])


def test_duplicate_ids_in_one_source_keep_their_best_entry() -> None:
    hits = {h.id: h for h in rrf([[("a", 2.0), ("a", 1.0), ("b", 0.5)]], k=0)}
    assert hits["a"].ranks == (1,)
    assert hits["a"].score == pytest.approx(1.0)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        rrf([BM25, DENSE], weights=[1.0])
    with pytest.raises(ValueError):
        blend([BM25], weights=[-1.0])
    with pytest.raises(ValueError):
        rrf([BM25], k=-1)
    with pytest.raises(ValueError):
        normalize([1.0, 2.0], "softmax")  # type: ignore[arg-type]


def test_empty_sources_fuse_to_nothing() -> None:
    assert rrf([[], []]) == []
    assert blend([[], DENSE])[0].id == "c"
