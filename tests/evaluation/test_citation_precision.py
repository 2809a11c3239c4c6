"""Citation precision: the metric on hand-made hits, and through the real `eval locomo`
harness on a tiny LoCoMo-shaped conversation (full-text only, so it runs in seconds)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from axiom.cli.main import main
from axiom.evaluation.citation_precision import (
    hit_spans,
    mean_precision,
    precision_at_k,
)
from axiom.evaluation.retrieval import run_eval
from axiom.retrieval.results import SearchHit
from axiom.vectors.embedder import NoModel

FTS_ONLY = (("fts", "fts", "zscore"),)


def message(session: str, index: int) -> SearchHit:
    return SearchHit(
        id=f"message:{session}:{index}",
        kind="message",
        score=1.0,
        match=1.0,
        tier="none",
        summary="",
        citation=None,
        session_id=session,
        message_index=index,
    )


def entry(entry_id: str, session: str = "s") -> SearchHit:
    return SearchHit(
        id=f"entry:{entry_id}",
        kind="entry",
        score=1.0,
        match=1.0,
        tier="none",
        summary="",
        citation=None,
        entry_id=entry_id,
        session_id=session,
    )


def test_a_message_hit_cites_itself_and_an_entry_hit_its_evidence() -> None:
    evidence = {"e1": (("s", 2), ("s", 3))}
    assert hit_spans(message("s", 4), evidence) == (("s", 4),)
    assert hit_spans(entry("e1"), evidence) == (("s", 2), ("s", 3))
    assert hit_spans(entry("unknown"), evidence) == ()


def test_precision_counts_every_cited_span_of_the_top_k_hits() -> None:
    evidence = {"e1": (("s", 2), ("s", 3))}
    hits = [entry("e1"), message("s", 2), message("s", 9), message("t", 0)]
    cited = [hit_spans(h, evidence) for h in hits]
    gold = {("s", 2)}
    # top 1: the entry cites two turns, one of them gold.
    assert precision_at_k(cited, gold, 1) == 0.5
    # top 5 (only four hits): spans s2, s3, s2, s9, t0 -> two of five are gold.
    assert precision_at_k(cited, gold, 5) == 2 / 5


def test_a_question_with_no_hits_or_no_cited_spans_counts_zero() -> None:
    assert precision_at_k([], {("s", 1)}, 1) == 0.0
    assert precision_at_k([(), ()], {("s", 1)}, 5) == 0.0
    runs = [([(("s", 1),)], {("s", 1)}), ([], {("s", 1)})]
    assert mean_precision(runs, (1, 5)) == {1: 0.5, 5: 0.5}
    assert mean_precision([], (1, 5)) == {1: 0.0, 5: 0.0}
    with pytest.raises(ValueError, match="k must be"):
        precision_at_k([], set(), 0)


spans = st.tuples(st.sampled_from("abc"), st.integers(0, 5))


@given(
    cited=st.lists(st.lists(spans, max_size=3).map(tuple), max_size=8),
    gold=st.sets(spans, max_size=4),
    k=st.integers(1, 10),
)
def test_precision_is_a_share_and_one_exactly_when_every_cited_span_is_gold(
    cited: list[tuple[tuple[str, int], ...]], gold: set[tuple[str, int]], k: int
) -> None:
    p = precision_at_k(cited, gold, k)
    assert 0.0 <= p <= 1.0
    shown = [s for hit in cited[:k] for s in hit]
    assert (p == 1.0) == (bool(shown) and all(s in gold for s in shown))


def _turn(dia_id: str, speaker: str, text: str) -> dict[str, str]:
    return {"dia_id": dia_id, "speaker": speaker, "text": text}


@pytest.fixture
def tiny_locomo(tmp_path: Path) -> Path:
    """Two sessions; two answerable questions and one whose words no turn contains."""
    data = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            _turn("D1:1", "Caroline", "Hey Melanie! How have you been?"),
            _turn("D1:2", "Melanie", "Great! I started pottery classes at the community studio."),
            _turn("D1:3", "Caroline", "I adopted a beagle named Biscuit last week."),
            _turn("D1:4", "Melanie", "A beagle! Biscuit sounds adorable."),
        ],
        "session_2_date_time": "3:10 pm on 20 May, 2023",
        "session_2": [
            _turn("D2:1", "Melanie", "My sister moved to Lisbon for a new job."),
            _turn("D2:2", "Caroline", "Lisbon is lovely. I am training for a marathon."),
            _turn("D2:3", "Melanie", "Good luck with the marathon training!"),
        ],
        "qa": [
            {"question": "What dog did Caroline adopt?", "evidence": ["D1:3"], "category": 4},
            {"question": "Where did Melanie's sister move?", "evidence": ["D2:1"], "category": 4},
            {"question": "Zygomorphic quasar xylophones?", "evidence": ["D1:1"], "category": 4},
        ],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    return path


def test_the_harness_reports_citation_precision_beside_recall(
    tiny_locomo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    report = run_eval([tiny_locomo], embedder=NoModel(), modes=FTS_ONLY)
    (conv,) = report.conversations
    runs = conv.cited["fts"]
    assert len(runs) == conv.questions == 3
    # Gold turns became the imported messages' spans; the nonsense question found nothing.
    assert all(len(gold) == 1 for _, gold in runs)
    assert runs[2][0] == []
    # The answerable questions' top hits cite their gold turn, through an entry or the
    # message itself; other turns sharing a word ("Caroline", "Lisbon") dilute the top 5.
    for cited, gold in runs[:2]:
        assert cited and set(cited[0]) <= gold
    precision = report.overall_precision()["fts"]
    assert precision[1] == pytest.approx(2 / 3)  # the no-hit question counts 0
    assert 0.0 < precision[5] < precision[1]
    expected5 = sum(precision_at_k(c, g, 5) for c, g in runs) / 3
    assert precision[5] == pytest.approx(expected5)

    data = report.to_json()["overall"]["fts"]
    assert {"n", "hit", "recall", "mrr"} <= set(data)  # the existing keys stay
    assert data["citation_precision"] == {"1": round(precision[1], 4), "5": round(precision[5], 4)}
    text = report.render()
    assert "P@1" in text and "P@5" in text and f"{precision[1]:7.3f}" in text


def test_the_eval_command_without_a_model_measures_fts_with_citation_precision(
    tiny_locomo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    assert main(["eval", "locomo", str(tiny_locomo), "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["embedder"] == "none@full-text-only"
    assert set(data["overall"]) == {"fts"}
    fts = data["overall"]["fts"]
    assert fts["n"] == 3 and set(fts["citation_precision"]) == {"1", "5"}
    assert fts["citation_precision"]["1"] == round(2 / 3, 4)
    assert (
        data["conversations"][0]["modes"]["fts"]["citation_precision"] == fts["citation_precision"]
    )
    assert main(["eval", "locomo", str(tiny_locomo), "--quiet"]) == 0
    assert "P@5" in capsys.readouterr().out
