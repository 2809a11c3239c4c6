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

from axiom.config import AxiomConfig
from axiom.evidence.aligner import EvidenceAligner
from axiom.extract.llm import LLMExtractor
from axiom.extract.rules import RuleExtractor
from axiom.graduation.idris import IdrisChecker
from axiom.pipeline.process import Extractor, Pipeline
from axiom.pipeline.task_vectors import TaskVectors
from axiom.settings import Settings
from axiom.vectors.config import (
    build_embedding_version,
    configured_dim,
    configured_embedder_name,
    configured_embedding_version,
    shared_embedder,
    vectors_enabled,
)
from axiom.vectors.lance_store import LanceStore


def configured_extractor(settings: Settings | None = None) -> Extractor:
    settings = settings or Settings.from_env()
    if not settings.llm_url:
        return RuleExtractor()
    return LLMExtractor(
        base_url=settings.llm_url,
        model=settings.llm_model,
        api_key=settings.llm_api_key or None,
        timeout=settings.llm_timeout,
    )


def configured_fuzzy_threshold() -> float:
    """`AXIOM_FUZZY_THRESHOLD`: a number in (0, 1]; unset or empty means 0.85."""
    return Settings.from_env().fuzzy_threshold


def task_vectors_enabled() -> bool:
    """`AXIOM_TASK_VECTORS`: on unless 0/false/no/off."""
    return Settings.from_env().task_vectors


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
        checker=IdrisChecker(modules=Settings.from_env().idris_modules),
        workdir=config.idris_dir,
        aligner=EvidenceAligner(fuzzy_threshold=configured_fuzzy_threshold()),
        embedding_version=build_embedding_version() if vectors_enabled() else "none",
        embedder_model=name if vectors_enabled() else "none",
        task_vectors=configured_task_vectors(config),
    )
