"""Builds the configured pipeline from the environment.

`AXIOM_LLM_URL` (+ `AXIOM_LLM_MODEL`, `AXIOM_LLM_API_KEY`) switches extraction to an
OpenAI-compatible endpoint; without it the offline rule extractor runs.
`AXIOM_FUZZY_THRESHOLD` (default 0.85) is the similarity a fuzzy quote match needs.
`AXIOM_TASK_VECTORS` (default on; `0`/`off` turns it off) lets task matching add
suggestions from the task rows of the configured embedder's LanceDB table
(`axiom.pipeline.task_vectors`); it does nothing while vectors are off (`AXIOM_EMBEDDER`
`none`) and costs nothing until that table holds a task.
"""

from __future__ import annotations

import functools
import os

from axiom.config import AxiomConfig
from axiom.evidence.aligner import DEFAULT_FUZZY_THRESHOLD, EvidenceAligner
from axiom.extract.llm import LLMExtractor
from axiom.extract.rules import RuleExtractor
from axiom.pipeline.process import Extractor, Pipeline
from axiom.pipeline.task_vectors import TaskVectors
from axiom.vectors.config import (
    configured_dim,
    configured_embedder_name,
    configured_embedding_version,
    shared_embedder,
    vectors_enabled,
)
from axiom.vectors.lance_store import LanceStore


def configured_extractor() -> Extractor:
    url = os.environ.get("AXIOM_LLM_URL")
    if not url:
        return RuleExtractor()
    return LLMExtractor(
        base_url=url,
        model=os.environ.get("AXIOM_LLM_MODEL", "gpt-4o-mini"),
        api_key=os.environ.get("AXIOM_LLM_API_KEY") or None,
        timeout=float(os.environ.get("AXIOM_LLM_TIMEOUT", "60")),
    )


class ConfigurationError(ValueError):
    """An environment variable holds a value the pipeline cannot use."""


def configured_fuzzy_threshold() -> float:
    """`AXIOM_FUZZY_THRESHOLD`: a number in (0, 1]; unset or empty means 0.85."""
    raw = os.environ.get("AXIOM_FUZZY_THRESHOLD", "").strip()
    if not raw:
        return DEFAULT_FUZZY_THRESHOLD
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0.0 < value <= 1.0:  # NaN fails too
        raise ConfigurationError(
            f"AXIOM_FUZZY_THRESHOLD must be a number greater than 0 and at most 1"
            f" (the default is {DEFAULT_FUZZY_THRESHOLD}), got {raw!r}"
        )
    return value


def task_vectors_enabled() -> bool:
    """`AXIOM_TASK_VECTORS`: on unless `0`, `off`, `false` or `no`."""
    return os.environ.get("AXIOM_TASK_VECTORS", "1").strip().lower() not in (
        "0",
        "off",
        "false",
        "no",
    )


def configured_task_vectors(config: AxiomConfig) -> TaskVectors | None:
    """Task-vector lookups in the configured embedder's table (None when vectors or task
    vectors are off). Opens nothing and loads no model: that happens on first use, and
    the model only once a task row exists (`shared_embedder`: once per process)."""
    if not (vectors_enabled() and task_vectors_enabled()):
        return None
    store = LanceStore(config.lancedb_dir, configured_embedding_version(), configured_dim())
    return TaskVectors(store, functools.partial(shared_embedder, configured_embedder_name()))


def configured_pipeline(config: AxiomConfig | None = None) -> Pipeline:
    """The build run records the embedder the outbox writer will use (`AXIOM_EMBEDDER`,
    default e5), named and versioned as the writer names its LanceDB table."""
    config = config or AxiomConfig.from_env()
    name = configured_embedder_name()
    return Pipeline(
        extractor=configured_extractor(),
        workdir=config.data_dir / "idris",
        aligner=EvidenceAligner(fuzzy_threshold=configured_fuzzy_threshold()),
        embedding_version=configured_embedding_version() if vectors_enabled() else "none",
        embedder_model=name if vectors_enabled() else "none",
        task_vectors=configured_task_vectors(config),
    )
