"""A chunk's analysis shared with a forked child (`axiom.forking.SharedMap`), so that the
rule extractor, the aligner and the validator use the machine's second core
(`axiom.pipeline.batch`): the child is forked when the chunk is looked up, before the chunk
ahead of it is written, and the parent takes its share when it wants the builds.

The first chunk has no chunk before it, so its analysis would keep both cores while the
store waits. `AnalysisAhead` starts it earlier: while `axiom import` writes the sessions,
from the payloads it is about to append (the analysis reads nothing else). The pipeline then
takes each build whose stored ingest is the same session with the same payload (checksum),
and names it after the stored event.

The child never looks task vectors up: the embedding model and the vector table stay in
the parent, which adds them to every build (`add_task_vectors`). Only for extractors that
run on the CPU: an LLM extractor's chunks are analysed ahead on a thread instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from axiom.forking import Failed, SharedMap, can_fork
from axiom.ingest.importer import PreparedSession
from axiom.pipeline.order import payload_order
from axiom.pipeline.process import (
    AnalysedBuild,
    Pipeline,
    add_task_vectors,
    analyse_ingest,
    analyse_payload,
)
from axiom.store.db import Database
from axiom.store.events import EncodedPayload, StoredEvent

log = logging.getLogger(__name__)


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


class AnalysisAhead:
    """The first `sessions` of an import analysed by a child while the import writes them
    (see the module docstring). `offer` is the import's `before_write`; `take` gives a
    stored ingest's build when it was analysed here."""

    def __init__(self, pipeline: Pipeline, fork: bool, sessions: int) -> None:
        self.pipeline, self.sessions = pipeline, sessions
        remote = getattr(pipeline.extractor, "remote", False)
        self._forking = fork and not remote and can_fork()
        self._keys: list[str] = []  # the session id of each item
        self._shared: SharedMap[tuple[str, EncodedPayload], tuple[Any, ...]] | None = None
        # by session: (payload checksum, analysis) of each item (`_analysed`), once taken
        self._results: dict[str, list[tuple[Any, ...]]] | None = None

    def offer(self, prepared: Sequence[PreparedSession]) -> None:
        """Fork the child over the first sessions of `prepared` in processing order
        (`axiom.pipeline.order`), the first time only: later groups of a large import come
        after the pipeline's own children. A head start only: when it cannot be had (no
        fork, no shared memory), the import goes on and the pipeline analyses as before."""
        if not self._forking or self._shared is not None or not prepared:
            return
        try:
            self._start(prepared)
        except Exception:  # noqa: BLE001 - never worth failing the import for
            log.warning("could not analyse ahead of the write; analysing after", exc_info=True)
            self._forking = False
            self._keys = []

    def _start(self, prepared: Sequence[PreparedSession]) -> None:
        items = [(p.transcript.session_id, p.encoded.stored) for p in prepared]
        order = payload_order(items)[: self.sessions]
        chosen = [(prepared[i].transcript.session_id, prepared[i].encoded) for i in order]
        self._keys = [sid for sid, _ in chosen]
        self._shared = SharedMap(self._analysed, chosen)

    def take(self, db: Database, ingest: StoredEvent) -> AnalysedBuild | None:
        """`ingest`'s build when its payload was analysed here (the parent finishes what the
        child has not at the first call), with task vectors added; else None."""
        if self._shared is None:
            return None
        if self._results is None:
            try:
                done = self._shared.results()
            finally:
                self._shared.close()
            self._results = {}
            for sid, result in zip(self._keys, done, strict=True):
                if not isinstance(result, Failed):  # analysed again, as without
                    self._results.setdefault(sid, []).append(result)
        sid = ingest.session_id or ""
        found = self._results.get(sid, [])
        match = next((r for r in found if r[0] == ingest.checksum), None)
        if match is None:  # another payload was stored: analysed again, as without
            return None
        found.remove(match)
        if not found:
            del self._results[sid]
        _, (report, timer, outcome) = match
        report.build_id = self.pipeline.spec.build_id_for(ingest.event_id)
        build = AnalysedBuild(self.pipeline, ingest, report, timer, outcome, list(timer.metrics))
        return add_task_vectors(db, build)

    def close(self) -> None:
        """Stop the child if it still runs (nothing was taken: an error, no processing)."""
        if self._shared is not None and self._results is None:
            self._shared.close()

    def _analysed(self, item: tuple[str, EncodedPayload]) -> tuple[Any, ...]:
        """(the checksum the payload is stored under, its analysis), in the child: the
        payload as a read gives it back is what the analysis of the stored ingest reads."""
        session_id, encoded = item
        analysis = analyse_payload(None, self.pipeline, session_id, encoded.stored, None)
        return encoded.checksum, analysis
