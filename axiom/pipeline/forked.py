"""A chunk's analysis shared with a forked child (`axiom.forking.SharedMap`), so that the
rule extractor, the aligner and the validator use the machine's second core
(`axiom.pipeline.batch`): the child is forked when the chunk is looked up, before the chunk
ahead of it is written, and the parent takes its share when it wants the builds.

The child never looks task vectors up: the embedding model and the vector table stay in
the parent, which adds them to every build (`add_task_vectors`). Only for extractors that
run on the CPU: an LLM extractor's chunks are analysed ahead on a thread instead.
"""

from __future__ import annotations

from typing import Any

from axiom.forking import Failed, SharedMap
from axiom.pipeline.process import AnalysedBuild, Pipeline, add_task_vectors, analyse_ingest
from axiom.store.db import Database
from axiom.store.events import StoredEvent


class ForkedAnalysis:
    """The analysis of `ingests`, shared with a child forked now."""

    def __init__(self, db: Database, pipeline: Pipeline, ingests: list[StoredEvent]) -> None:
        self.db, self.pipeline, self.ingests = db, pipeline, ingests
        self._shared: SharedMap[StoredEvent, tuple[Any, ...]] = SharedMap(self._analysed, ingests)

    def builds(self) -> list[AnalysedBuild]:
        """Every ingest's build, in order, with task vectors added here."""
        out = []
        for ingest, result in zip(self.ingests, self._shared.results(), strict=True):
            if isinstance(result, Failed):  # analyse_ingest records failures itself
                raise result.error
            report, timer, outcome, analysed = result
            build = AnalysedBuild(self.pipeline, ingest, report, timer, outcome, analysed)
            out.append(add_task_vectors(self.db, build))
        return out

    def close(self) -> None:
        self._shared.close()

    def _analysed(self, ingest: StoredEvent) -> tuple[Any, ...]:
        """What the child sends back of a build: the pipeline and the ingest stay here."""
        build = analyse_ingest(None, ingest, self.pipeline)
        return build.report, build.timer, build.outcome, build.analysed
