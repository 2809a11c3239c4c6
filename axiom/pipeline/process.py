"""process_session: one ingested session → entries that carry proof.

Slow work (extraction, alignment, validation, and the vector neighbours of the session's
task texts — `axiom.pipeline.task_vectors`) runs without holding the database lock; the
results are then appended in one short write transaction. Every event has a deterministic
dedupe key derived from the build id, so processing a session again appends nothing. The
transaction goes through `write_projecting`: an event a projector cannot apply, even one
the build appended itself, is recorded in `projection_errors` and the build still commits.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

import axiom.projections
from axiom.builds.projector import BuildSpec, StageMetric
from axiom.conflicts.detector import (
    COMPARED_TYPES,
    Fact,
    restates,
)
from axiom.conflicts.graduate import graduate_kept
from axiom.evidence.aligner import AlignedEvidence, EvidenceAligner, EvidenceQuote, quote_hash
from axiom.extract.types import ExtractedEntry, ExtractionResult, normalize_title
from axiom.graduation.candidate import CandidateEntry, EvidenceSpan
from axiom.graduation.corroboration import SessionPool
from axiom.graduation.idris import CheckResult, IdrisChecker
from axiom.graduation.invariants import VALIDATOR_VERSION
from axiom.graduation.policy import GraduationPolicy
from axiom.ingest.transcript import Transcript
from axiom.pipeline.build_conflicts import BuildConflicts, fact_of
from axiom.pipeline.build_view import BuildView
from axiom.pipeline.pool_view import memory_words
from axiom.store.db import Database, is_interrupt
from axiom.store.event_types import (
    BUILD_FINISHED,
    BUILD_STARTED,
    ENTRY_APPROVED,
    ENTRY_CREATED,
    ENTRY_PROMOTED,
    ENTRY_STATUS_CHANGED,
    EVIDENCE_ALIGNED,
    IDRIS_CHECKED,
    MEMORY_EXTRACTED,
    PROMOTION_BLOCKED,
    SESSION_INGESTED,
)
from axiom.store.events import (
    EncodedPayload,
    EventStore,
    NewEvent,
    StoredEvent,
    encode_payload,
    trusting_fresh,
)
from axiom.store.projection import run_projectors, write_projecting
from axiom.store.timepoints import source_time
from axiom.tasks.matcher import Neighbours, precomputed_search
from axiom.tasks.resolver import RejectedInput, TaskMention, TaskResolver, matcher_texts

if TYPE_CHECKING:
    from axiom.pipeline.task_vectors import TaskVectors

log = logging.getLogger(__name__)
T = TypeVar("T")


class Extractor:  # the protocol every extractor satisfies (see axiom/extract)
    name: str
    model: str
    prompt_hash: str

    def extract(self, transcript: Transcript) -> ExtractionResult: ...


@dataclass
class Pipeline:
    """The configured parts of the pipeline."""

    extractor: Extractor
    workdir: Path  # where the validator writes its .idr modules
    aligner: EvidenceAligner = field(default_factory=EvidenceAligner)
    checker: IdrisChecker = field(default_factory=IdrisChecker)
    policy: GraduationPolicy = field(default_factory=GraduationPolicy)
    embedder_model: str = "none"
    embedding_version: str = "none"
    # Vector suggestions for task matching (None: exact + full-text only). Not part of the
    # build spec: vectors only add candidates, never change which task a mention names.
    task_vectors: TaskVectors | None = None

    @property
    def spec(self) -> BuildSpec:
        return BuildSpec(
            extractor_model=f"{self.extractor.name}:{self.extractor.model}",
            extractor_prompt_hash=self.extractor.prompt_hash,
            embedder_model=self.embedder_model,
            embedding_version=self.embedding_version,
            idris_version=f"{VALIDATOR_VERSION}/{self.policy.version}",
            fuzzy_threshold=self.aligner.fuzzy_threshold,
        )


@dataclass
class ProcessReport:
    session_id: str
    build_id: str
    skipped: bool = False
    entries: int = 0
    events_appended: int = 0
    status: str = "success"
    error: str | None = None
    metrics: list[StageMetric] = field(default_factory=list)


class _Timer:
    def __init__(self) -> None:
        self.metrics: list[StageMetric] = []

    @contextmanager
    def stage(self, name: str, accumulate: bool = False) -> Iterator[None]:
        """Time a stage; with `accumulate`, repeated runs add up in one metric."""
        started = time.perf_counter()
        try:
            yield
        except Exception as exc:
            self.metrics.append(StageMetric(name, _ms(started), False, repr(exc)[:500]))
            raise
        earlier = next((m for m in self.metrics if m.stage == name), None) if accumulate else None
        if earlier is None:
            self.metrics.append(StageMetric(name, _ms(started), True))
        else:
            total = round(earlier.latency_ms + _ms(started), 3)
            self.metrics[self.metrics.index(earlier)] = replace(earlier, latency_ms=total)

    def run(self, name: str, fn: Callable[[], T]) -> T:
        with self.stage(name):
            return fn()

    def fail(self, name: str, error: str) -> None:
        """Mark a stage that returned as failed after all (its result was incomplete)."""
        self.metrics = [
            replace(m, success=False, error=error[:500]) if m.stage == name else m
            for m in self.metrics
        ]


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def latest_ingest(conn: duckdb.DuckDBPyConnection, session_id: str) -> StoredEvent | None:
    return EventStore(conn).latest_of_session(SESSION_INGESTED, session_id)


def _build_succeeded(conn: duckdb.DuckDBPyConnection, build_id: str) -> bool:
    return EventStore(conn).get_by_dedupe_key(f"{BUILD_FINISHED}:{build_id}:success") is not None


@dataclass
class _Outcome:
    transcript: Transcript
    extraction: ExtractionResult
    alignments: dict[str, list[AlignedEvidence]]
    checks: dict[str, CheckResult]
    candidates: dict[str, CandidateEntry]
    task_mentions: list[TaskMention] = field(default_factory=list)  # as the resolver gets them
    task_neighbours: Neighbours | None = None  # text -> [(task_id, cosine)], precomputed
    # The payloads of the build's events the analysis alone decides (`_encoded_payloads`),
    # by (event type, entry id; "" for the build's own)
    payloads: dict[tuple[str, str], EncodedPayload] = field(default_factory=dict)


def _candidate(
    entry: ExtractedEntry, session_id: str, aligned: list[AlignedEvidence]
) -> CandidateEntry:
    return CandidateEntry(
        entry_id=entry.entry_id,
        entry_type=entry.type,
        title=entry.title,
        content=entry.content,
        session_id=session_id,
        evidence=tuple(EvidenceSpan.from_alignment(session_id, a) for a in aligned),
        task_title=entry.task.title if entry.task else None,
    )


def versioned_entry_id(entry: ExtractedEntry, texts: dict[int, str]) -> str:
    """The stored id of an extracted entry: its extractor id plus the text it quotes.

    The extractor's id names the memory (session, type, title, first message); the sha256
    of each distinct message its evidence points at (as stored, in evidence order) pins the
    version of the text the spans are computed against. Re-importing a session whose
    quoted messages did not change (the same file, or a transcript that only grew) gives
    the same ids, so existing entries and citation ids stay; an entry quoting a message
    whose text changed gets a new id, and the old one is superseded (`_supersede`).
    """
    quoted = (texts.get(i) for i in dict.fromkeys(q.message_index for q in entry.evidence))
    digests = [None if text is None else quote_hash(text) for text in quoted]
    key = json.dumps([entry.entry_id, digests], ensure_ascii=False, separators=(",", ":"))
    return "ent_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _versioned(extraction: ExtractionResult, transcript: Transcript) -> ExtractionResult:
    texts = {m.index: m.text for m in transcript.messages}
    entries: dict[str, ExtractedEntry] = {}
    for entry in extraction.entries:
        eid = versioned_entry_id(entry, texts)
        entries.setdefault(eid, replace(entry, entry_id=eid))
    return replace(extraction, entries=tuple(entries.values()))


def _warn_unaligned(session_id: str, alignments: dict[str, list[AlignedEvidence]]) -> None:
    """One WARNING line per quote the aligner could not place (the event records it too)."""
    for entry_id, items in alignments.items():
        for number, item in enumerate(items):
            if item.aligned:
                continue
            similarity = "" if item.similarity is None else f" (best similarity {item.similarity})"
            log.warning(
                "session %s entry %s evidence #%d: quote not aligned to message %s: %s%s",
                session_id,
                entry_id,
                number,
                item.message_index,
                item.failure_reason,
                similarity,
            )


def _task_mentions(
    transcript: Transcript,
    extraction: ExtractionResult,
    alignments: dict[str, list[AlignedEvidence]],
) -> list[TaskMention]:
    """The task mentions of the session's extracted entries, as the resolver gets them."""
    times = {m.index: m.timestamp for m in transcript.messages}
    mentions = []
    for entry in extraction.entries:
        aligned = alignments[entry.entry_id]
        first = entry.evidence[0].message_index if entry.evidence else None
        mention = TaskMention.from_entry(
            entry,
            transcript.session_id,
            evidence_aligned=bool(aligned) and all(a.aligned for a in aligned),
            observed_at=times.get(first) or transcript.started_at,
        )
        if mention is not None:
            mentions.append(mention)
    return mentions


def _task_vectors(pipeline: Pipeline, db: Database, outcome: _Outcome, timer: _Timer) -> None:
    """Stage `task_vectors`: the vector neighbours of every text the task resolver will look
    up, embedded and searched now, outside the write lock (`axiom.pipeline.task_vectors`).
    No vectors configured or nothing to look up: no stage. Never raises: a missing table
    leaves `task_neighbours` None, a broken one or a model that fails marks the stage
    failed (the build goes on with exact + full-text matching)."""
    vectors = pipeline.task_vectors
    if vectors is None:
        return
    try:
        texts = matcher_texts(outcome.task_mentions)
        if not texts:
            return
        with timer.stage("task_vectors"):
            found = vectors.neighbours(db, outcome.transcript.project, texts)
    except Exception as exc:  # suggestions only: never worth failing the build for
        if is_interrupt(exc):
            raise
        log.warning("task vectors failed; matching uses exact and full-text", exc_info=True)
        return
    if found.error is not None:
        timer.fail("task_vectors", found.error)
    outcome.task_neighbours = found.neighbours


def _analyse(
    pipeline: Pipeline, transcript: Transcript, timer: _Timer, db: Database | None = None
) -> _Outcome:
    """Extraction, alignment, validation and task vectors: the slow part, done outside the
    lock (task vectors need `db` for one short read)."""
    extraction = timer.run(
        "extract", lambda: _versioned(pipeline.extractor.extract(transcript), transcript)
    )
    texts = [m.text for m in transcript.messages]

    def align() -> dict[str, list[AlignedEvidence]]:
        return {
            e.entry_id: pipeline.aligner.align_all(
                texts, [EvidenceQuote(q.message_index, q.quote) for q in e.evidence]
            )
            for e in extraction.entries
        }

    alignments = timer.run("align", align)
    _warn_unaligned(transcript.session_id, alignments)
    candidates = {
        e.entry_id: _candidate(e, transcript.session_id, alignments[e.entry_id])
        for e in extraction.entries
    }

    def validate() -> dict[str, CheckResult]:
        return {
            c.entry_id: pipeline.checker.check(c, pipeline.workdir)
            for c in candidates.values()
            if c.evidence and all(s.aligned for s in c.evidence)
        }

    checks = timer.run("validate", validate)
    mentions = _task_mentions(transcript, extraction, alignments)
    outcome = _Outcome(transcript, extraction, alignments, checks, candidates, mentions)
    outcome.payloads = _encoded_payloads(pipeline, outcome)
    if db is not None and not extraction.failures:  # a failed extraction is not materialized
        _task_vectors(pipeline, db, outcome, timer)
    return outcome


def _encoded_payloads(
    pipeline: Pipeline, outcome: _Outcome
) -> dict[tuple[str, str], EncodedPayload]:
    """The payloads of `evidence_aligned`, `entry_created` and `idris_checked`, which no
    stored state changes, encoded with the analysis: outside the lock, and on the second
    core when a forked child analyses (`axiom.pipeline.forked`)."""
    evidence = {eid: [a.to_json() for a in items] for eid, items in outcome.alignments.items()}
    times = {m.index: m.timestamp for m in outcome.transcript.messages}
    aligned = {"entries": [{"entry_id": eid, "evidence": items} for eid, items in evidence.items()]}
    out = {(EVIDENCE_ALIGNED, ""): encode_payload(aligned)}
    for entry in outcome.extraction.entries:
        eid = entry.entry_id
        created = _entry_created(pipeline, outcome.transcript, entry, evidence[eid], times)
        out[(ENTRY_CREATED, eid)] = encode_payload(created)
        check = outcome.checks.get(eid)
        if check is not None:
            out[(IDRIS_CHECKED, eid)] = encode_payload({"entry_id": eid, **check.to_json()})
    return out


def _entry_created(
    pipeline: Pipeline,
    transcript: Transcript,
    entry: ExtractedEntry,
    aligned: list[dict[str, Any]],
    times: dict[int, str | None],
) -> dict[str, Any]:
    """The `entry_created` payload (`aligned`: the entry's alignments as JSON; `times`:
    the transcript's message times by index)."""
    session_id = transcript.session_id
    return {
        "said_at": _said_at(entry, transcript, times),
        "entry_id": entry.entry_id,
        "session_id": session_id,
        "entry_type": entry.type,
        "title": entry.title,
        "content": entry.content,
        "task": entry.task.to_json() if entry.task else None,
        "canonical_key": fact_of(entry, session_id).canonical_key,
        "evidence": [{"session_id": session_id, **a} for a in aligned],
        "embedding_version": pipeline.embedding_version,
        **entry.fact_json(),  # subject/value/previous_value/negated, when stated
    }


@dataclass
class AnalysedBuild:
    """A session's build with the slow work done (`analyse_session`, outside the lock),
    ready to be written (`write_build`, inside a write transaction)."""

    pipeline: Pipeline
    ingest: StoredEvent
    report: ProcessReport
    timer: _Timer
    outcome: _Outcome | None
    analysed: list[StageMetric]


def analyse_session(
    db: Database, session_id: str, pipeline: Pipeline
) -> AnalysedBuild | ProcessReport:
    """Extraction, alignment, validation (and task vectors) of the newest ingest of
    `session_id`, without the write lock; a `skipped` report when its build succeeded."""
    with db.read() as conn:
        found = pending_ingest(conn, session_id, pipeline)
    return found if isinstance(found, ProcessReport) else analyse_ingest(db, found, pipeline)


class UnknownSession(LookupError):
    """A session id asked for that no `session_ingested` event names."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"no session_ingested event for session {session_id!r}")
        self.session_id = session_id


def pending_ingest(
    conn: duckdb.DuckDBPyConnection, session_id: str, pipeline: Pipeline
) -> StoredEvent | ProcessReport:
    """The newest ingest of the session, or a `skipped` report when its build succeeded."""
    ingest = latest_ingest(conn, session_id)
    if ingest is None:
        raise UnknownSession(session_id)
    build_id = pipeline.spec.build_id_for(ingest.event_id)
    if _build_succeeded(conn, build_id):
        return ProcessReport(session_id, build_id, skipped=True)
    return ingest


def pending_ingests(
    conn: duckdb.DuckDBPyConnection, session_ids: list[str], pipeline: Pipeline
) -> list[StoredEvent | ProcessReport]:
    """`pending_ingest` of each session, in two reads whatever their number."""
    store = EventStore(conn)
    ingests = store.latest_per_session(SESSION_INGESTED, session_ids)
    missing = next((sid for sid in session_ids if sid not in ingests), None)
    if missing is not None:
        raise UnknownSession(missing)
    builds = {sid: pipeline.spec.build_id_for(ingests[sid].event_id) for sid in session_ids}
    done = store.stored_keys([f"{BUILD_FINISHED}:{b}:success" for b in builds.values()])
    return [
        ProcessReport(sid, builds[sid], skipped=True)
        if f"{BUILD_FINISHED}:{builds[sid]}:success" in done
        else ingests[sid]
        for sid in session_ids
    ]


def analyse_ingest(db: Database | None, ingest: StoredEvent, pipeline: Pipeline) -> AnalysedBuild:
    """`analyse_session` once the ingest is known (no lock; `db` only for task vectors:
    without it, none are looked up, and `add_task_vectors` can add them later)."""
    build_id = pipeline.spec.build_id_for(ingest.event_id)
    report, timer, outcome = analyse_payload(
        db, pipeline, ingest.session_id or "", ingest.payload, build_id
    )
    return AnalysedBuild(pipeline, ingest, report, timer, outcome, list(timer.metrics))


def analyse_payload(
    db: Database | None,
    pipeline: Pipeline,
    session_id: str,
    payload: dict[str, Any],
    build_id: str | None,
) -> tuple[ProcessReport, _Timer, _Outcome | None]:
    """The analysis of a `session_ingested` payload (`analyse_ingest`). The build id names
    the stored ingest: None for a payload analysed before it is stored
    (`axiom.pipeline.forked.AnalysisAhead`), whose report gets the id once it is."""
    transcript = Transcript.from_json(payload["transcript"])
    report = ProcessReport(session_id, build_id or "")
    timer = _Timer()
    outcome: _Outcome | None = None
    try:
        outcome = _analyse(pipeline, transcript, timer, db)
    except Exception as exc:  # a failing stage fails the build, recorded, never a crash
        log.exception("pipeline failed for session %s", session_id)
        report.status, report.error = "failed", repr(exc)[:1000]
    if outcome is not None and outcome.extraction.failures:
        # Part of the transcript was never read (an LLM timeout, a reply that is not JSON):
        # materializing the rest would make the build look complete and, its events keyed by
        # the build id, stop a retry from adding what was lost. Fail it; `process` retries.
        report.status = "failed"
        report.error = ("extraction incomplete: " + "; ".join(outcome.extraction.failures))[:1000]
        timer.fail("extract", report.error)
        build = build_id or "(of an ingest not stored yet)"
        log.warning("session %s: build %s failed: %s", session_id, build, report.error)
        outcome = None
    return report, timer, outcome


def add_task_vectors(db: Database, build: AnalysedBuild) -> AnalysedBuild:
    """The task-vector stage of a build analysed without `db` (in a forked child:
    `axiom.pipeline.forked`), run here, where the model and the vector table are."""
    outcome = build.outcome
    if outcome is not None and not outcome.extraction.failures:
        _task_vectors(build.pipeline, db, outcome, build.timer)
        build.analysed = list(build.timer.metrics)
    return build


def write_build(
    conn: duckdb.DuckDBPyConnection,
    build: AnalysedBuild,
    project: bool = True,
    only_ingest: bool = False,
    view: BuildView | None = None,
    fresh: bool = False,
) -> ProcessReport:
    """Append the build's events and, with `project`, advance every projector (the next
    build reads their tables). Call it inside `write_projecting`: run again from scratch
    when a projector's failure aborts the transaction, so the stages timed in here start
    over with each attempt. `only_ingest`: the caller read, in this transaction, that the
    session has no other ingest (`ingested_once`); `fresh`: nor any build (`never_built`),
    so the keys of the build's own events are not read before they are appended (they
    are read once, when the events go in: `axiom.store.events.FreshKeyStored`). `view`:
    what the build reads of the derived tables, when it is not their projected state
    (`axiom.pipeline.build_view`)."""
    report, timer, outcome = build.report, build.timer, build.outcome
    timer.metrics = list(build.analysed)
    view = view or BuildView(conn)
    writer = _BuildWriter(
        conn, build.pipeline, build.ingest, report.build_id, view, only_ingest, fresh
    )
    writer.started()
    if outcome is not None:
        with timer.stage("materialize"):
            writer.record(outcome, timer)
        report.entries = len(outcome.extraction.entries)
    report.metrics = timer.metrics
    writer.finished(report)
    if project:
        # Looked up at call time (the module, not the name), so a test can add a projector.
        run_projectors(conn, axiom.projections.all_projectors())
    report.events_appended = writer.appended
    return report


def process_session(
    db: Database, session_id: str, pipeline: Pipeline, project: bool = True
) -> ProcessReport:
    """Run the memory pipeline over the newest ingest of `session_id` (idempotent)."""
    build = analyse_session(db, session_id, pipeline)
    if isinstance(build, ProcessReport):
        return build
    return write_projecting(db, lambda conn: write_build(conn, build, project))


def ingested_once(conn: duckdb.DuckDBPyConnection, session_ids: Sequence[str]) -> set[str]:
    """Which of `session_ids` have exactly one ingest, in one read: every entry of such a
    session was built on it, so its build has nothing to supersede (`write_build`'s
    `only_ingest`). Read inside the write transaction: builds append no ingests."""
    counts = EventStore(conn).count_per_session(SESSION_INGESTED, session_ids)
    return {sid for sid, n in counts.items() if n == 1}


def never_built(conn: duckdb.DuckDBPyConnection, session_ids: Sequence[str]) -> set[str]:
    """Which of `session_ids` no build has started on, in one read: with one ingest, no
    event keyed by their build or their entries is stored yet (`write_build`'s `fresh`)."""
    return set(session_ids) - set(EventStore(conn).count_per_session(BUILD_STARTED, session_ids))


def _said_at(
    entry: ExtractedEntry, transcript: Transcript, times: dict[int, str | None]
) -> str | None:
    """When the entry's source was complete: the latest timestamp of the messages it
    quotes (`times`: the transcript's, by message index; else the session's start), as
    stored. "As of" views filter on it."""
    quoted = [times.get(q.message_index) for q in entry.evidence]
    known = [t for t in quoted if t]
    return (
        max(known, key=lambda t: source_time(t) or datetime.min) if known else transcript.started_at
    )


class _BuildWriter:
    """Appends one build's events; every key is derived from the build so reruns dedupe."""

    def __init__(
        self,
        conn: duckdb.DuckDBPyConnection,
        pipeline: Pipeline,
        ingest: StoredEvent,
        build_id: str,
        view: BuildView,
        only_ingest: bool = False,
        fresh: bool = False,
    ) -> None:
        self.conn = conn
        self.view = view
        self.only_ingest = only_ingest  # the session has no other ingest (`ingested_once`)
        self.fresh = fresh and only_ingest  # nor any build (`never_built`)
        self._own: set[str] = set()  # this build's entry ids (`record`)
        self._fresh_keys: set[str] = set()  # keys of its own events when `fresh`
        self.store = EventStore(conn)
        self.pipeline = pipeline
        self.ingest = ingest
        self.build_id = build_id
        self.session_id = ingest.session_id
        self.appended = 0
        # type -> (believed list, how many of it seen, those in the pool with a value)
        self._restatable: dict[str, tuple[list[Fact], int, list[Fact]]] = {}
        self.conflicts = BuildConflicts(view.facts, self.session_id, self.append)
        self._stages: dict[str, str] = {}  # this build's entries: stage as of the events so far
        self._approvers: dict[str, str | None] = {}  # this build's entries: who approved
        self._pending: list[NewEvent] = []  # appended, not yet written (`flush`)

    def append(
        self,
        event_type: str,
        payload: dict[str, Any],
        key: str,
        encoded: EncodedPayload | None = None,
    ) -> None:
        """Queue an event; `flush` writes the queue in a few statements. The build reads
        events only after a flush (`_supersede` when an earlier ingest built entries,
        `_tasks` when there are tasks, `finished`), from what it loaded up front
        (`_load_entry_state`), or where its queued events cannot change the answer
        (`_built_on_this_ingest_only`), so queueing changes nothing it sees: a first
        import writes a build's events in one flush."""
        if self.fresh and self._owns(key):
            self._fresh_keys.add(f"{event_type}:{key}")
        self._pending.append(
            NewEvent(
                event_type,
                payload,
                dedupe_key=f"{event_type}:{key}",
                session_id=self.session_id,
                actor="pipeline",
                build_id=self.build_id,
                encoded=encoded,
            )
        )
        if event_type == ENTRY_PROMOTED:
            self._stages[payload["entry_id"]] = payload["to"]

    def append_encoded(self, event_type: str, encoded: EncodedPayload, key: str) -> None:
        """`append` of a payload the analysis encoded (`_encoded_payloads`)."""
        self.append(event_type, encoded.stored, key, encoded)

    def _owns(self, key: str) -> bool:
        """Whether an event key names this build or one of its entries first: in a session
        never built before, no such event can be stored (what others name can)."""
        head = key.split(":", 1)[0]
        return head == self.build_id or head in self._own

    def flush(self) -> None:
        """Write the queued events (deduplicated as one by one: `EventStore.append_many`)."""
        if self._pending:
            results = self.store.append_many(self._pending, fresh=self._fresh_keys)
            self.appended += sum(r.created for r in results)
            self._pending = []

    def started(self) -> None:
        spec = self.pipeline.spec
        self.append(
            BUILD_STARTED,
            {
                "build_id": self.build_id,
                "ingest_event_id": self.ingest.event_id,
                "spec": spec.__dict__,
            },
            self.build_id,
        )

    def finished(self, report: ProcessReport) -> None:
        """`build_finished`: once on success; each failed attempt is its own event (keys
        `<build>:failed`, `<build>:failed:2`, ...), and only a success stops the retries."""
        payload = {
            "build_id": self.build_id,
            "status": report.status,
            "error": report.error,
            "entries": report.entries,
            "metrics": [m.__dict__ for m in report.metrics],
        }
        key = f"{self.build_id}:{report.status}"
        if report.status != "success":
            self.flush()
            failed_before = self.store.count_dedupe_prefix(f"{BUILD_FINISHED}:{key}")
            if failed_before:
                key += f":{failed_before + 1}"
        self.append(BUILD_FINISHED, payload, key)
        self.flush()

    def record(self, outcome: _Outcome, timer: _Timer) -> None:
        """Append the build's events. `materialize` (timed by the caller) includes the two
        stages timed here: `promote` (graduation, summed over entries) and
        `resolve_tasks`."""
        extraction = outcome.extraction
        self.append(
            MEMORY_EXTRACTED,
            {"ingest_event_id": self.ingest.event_id, **extraction.to_json()},
            self.build_id,
        )
        self.append_encoded(
            EVIDENCE_ALIGNED, outcome.payloads[(EVIDENCE_ALIGNED, "")], self.build_id
        )
        self._own = {e.entry_id for e in extraction.entries}
        if self.fresh and trusting_fresh():  # checked with their keys (`FreshKeyStored`)
            self.conflicts.never_stored(self._own)
        self._load_entry_state([e.entry_id for e in extraction.entries])
        self.conflicts.said_changes(extraction.entries)
        for entry in extraction.entries:
            self._entry(entry, outcome, timer)
        if self.conflicts.reactivated:  # the other side of a conflict its session settled
            self.flush()
            self.view.tables_current()  # graduate_kept reads the tables
            reason = f"conflict settled by session {self.session_id}"
            graduate_kept(
                self.conn,
                self.conflicts.reactivated,
                reason,
                self.pipeline.policy,
                projected=False,
            )
        self._supersede(outcome)
        timer.run("resolve_tasks", lambda: self._tasks(outcome))

    def _load_entry_state(self, entry_ids: list[str]) -> None:
        """Stages and approvals of this build's entries and every open conflict, each read
        in one query (instead of one per entry) before the build appends anything. Only
        entries already created can have been promoted or approved (a promotion follows
        its entry's creation, an approval needs its row), so the payloads are read only
        for those: a first import reads one narrow dedupe column instead."""
        keys = [f"{ENTRY_CREATED}:{eid}" for eid in entry_ids]
        created = self.store.stored_keys(keys, fresh=keys if self.fresh else ())
        known = [eid for eid in entry_ids if f"{ENTRY_CREATED}:{eid}" in created]
        types = (ENTRY_PROMOTED, ENTRY_APPROVED)
        events = self.store.about_any("entry_id", known, types) if known else []
        for event in events:  # oldest first: the last promotion, the first approval
            eid = event.payload["entry_id"]
            if event.event_type == ENTRY_PROMOTED:
                self._stages[eid] = event.payload["to"]
            else:
                self._approvers.setdefault(eid, event.payload.get("approved_by"))
        self.conflicts.open_by_entry()

    def _supersede(self, outcome: _Outcome) -> None:
        """Entries built from an earlier ingest of this session that this build did not
        produce again quote text that is no longer stored: they become `superseded` (by the
        entry of this build with the same canonical key, if any). An entry this build
        produces again that an earlier re-ingest superseded (the text came back) becomes
        `active` again. Keys carry the ingest event, so each change happens once per version.
        """
        ingest_id = self.ingest.event_id
        current = {e.entry_id for e in outcome.extraction.entries}
        by_key = {
            f"{e.type}:{normalize_title(e.title)}": e.entry_id for e in outcome.extraction.entries
        }
        if self._built_on_this_ingest_only():
            # Nothing from an earlier ingest: nothing to supersede, and an entry to
            # reactivate was always created on another ingest. Skip reading statuses.
            return
        self.flush()  # what follows reads this build's events too, as it always did
        rows = self._created_in_session()
        status = self._statuses([r[0] for r in rows])
        reason = (
            f"session {self.session_id} was re-imported with changed text (ingest {ingest_id});"
            " this entry quotes an earlier version"
        )
        for eid, canonical_key, built_on in dict.fromkeys(rows):
            was, superseded_by_reingest = status.get(eid, ("active", False))
            if eid not in current and built_on != ingest_id and was != "superseded":
                self._status(eid, was, "superseded", reason, by_key.get(canonical_key))
            elif eid in current and was == "superseded" and superseded_by_reingest:
                self._status(
                    eid, was, "active", f"ingest {ingest_id} quotes the same text again", None
                )

    def _created_in_session(self) -> list[tuple[str | None, ...]]:
        """(entry id, canonical key, ingest it was built on) of the session's stored
        `entry_created` events, oldest first."""
        return self.store.fields_with_build_event(
            ENTRY_CREATED,
            self.session_id,
            ("entry_id", "canonical_key"),
            BUILD_STARTED,
            ("ingest_event_id",),
        )

    def _built_on_this_ingest_only(self) -> bool:
        """True when every entry of the session was built on this build's ingest. Read
        before the build's queued events are written: those were all built on it (its own
        `build_started` names it), so they cannot change the answer, and a build that
        finds nothing to supersede (a first import) writes its events in one flush."""
        if self.only_ingest:  # every build of the session, so every entry, is on this one
            return True
        ingest_id = self.ingest.event_id
        return all(built_on == ingest_id for _, _, built_on in self._created_in_session())

    def _statuses(self, entry_ids: list[str]) -> dict[str, tuple[str, bool]]:
        """entry id -> (status after its last status change, set by a re-ingest?)."""
        changes = EventStore(self.conn).about_any("entry_id", entry_ids, (ENTRY_STATUS_CHANGED,))
        out: dict[str, tuple[str, bool]] = {}
        for change in changes:
            p = change.payload
            out[p["entry_id"]] = (p["to"], "ingest_event_id" in p)
        return out

    def _status(self, eid: str, was: str, to: str, reason: str, superseded_by: str | None) -> None:
        self.append(
            ENTRY_STATUS_CHANGED,
            {
                "entry_id": eid,
                "from": was,
                "to": to,
                "superseded_by": superseded_by,
                "reason": reason,
                "ingest_event_id": self.ingest.event_id,
            },
            f"{eid}:{to}:{self.ingest.event_id}",
        )

    def _tasks(self, outcome: _Outcome) -> None:
        """Task mentions become task entity events (one entity per task across sessions)."""
        mentions = outcome.task_mentions
        rejected = [
            RejectedInput(
                self.session_id,
                p.field,
                p.value,
                p.reason,
                {"message_index": p.message_index, "tool_use_id": p.tool_use_id, "item": p.item},
            )
            for p in outcome.extraction.task_problems
        ]
        if mentions or rejected:
            self.flush()  # the resolver appends after the build's events and reads them
            project = outcome.transcript.project
            neighbours = outcome.task_neighbours
            resolver = TaskResolver(
                self.conn,
                project,
                build_id=self.build_id,
                # Only looks up what _task_vectors computed: no model inside the lock.
                vector_search=None
                if neighbours is None
                else precomputed_search(project, neighbours),
                projected=self.view.tasks_projected,
                fresh_entries=self._own if self.fresh else (),
            )
            self.appended += len(resolver.resolve(mentions, rejected))

    def _entry(self, entry: ExtractedEntry, outcome: _Outcome, timer: _Timer) -> None:
        """The entry's events (encoded with the analysis), then its graduation."""
        eid = entry.entry_id
        self.append_encoded(ENTRY_CREATED, outcome.payloads[(ENTRY_CREATED, eid)], eid)
        check = outcome.checks.get(eid)
        if check is not None:
            encoded = outcome.payloads[(IDRIS_CHECKED, eid)]
            self.append_encoded(IDRIS_CHECKED, encoded, f"{eid}:{self.build_id}")
        if not self.conflicts.weigh(eid):
            return  # not promoted: taken back by its session, or contested (until resolved)
        with timer.stage("promote", accumulate=True):
            canonical_key = self.conflicts.facts[eid].canonical_key
            self._promote(outcome.candidates[eid], canonical_key, check)

    def _promote(
        self, candidate: CandidateEntry, canonical_key: str, check: CheckResult | None
    ) -> None:
        eid = candidate.entry_id
        current = self._stage_of(eid)
        siblings = self._corroborating(candidate, canonical_key)
        sessions = {self.session_id, *(s[1] for s in siblings)}
        approved_by = self._approved_by(eid)
        decisions = self.pipeline.policy.decide(
            candidate, current, check, len(sessions), approved_by
        )
        for d in decisions:
            if d.to_stage is None:
                continue
            payload = d.event_payload(self.pipeline.policy.version)
            if d.promoted:
                self.append(ENTRY_PROMOTED, payload, f"{eid}:{d.to_stage}")
            else:
                self.append(
                    PROMOTION_BLOCKED, payload, f"{eid}:{d.to_stage}:{_short_hash(d.reason)}"
                )
        if decisions and decisions[-1].promoted and str(decisions[-1].to_stage) == "certified":
            self._certify_siblings(eid, siblings)

    def _corroborating(
        self, candidate: CandidateEntry, canonical_key: str
    ) -> list[tuple[str, str, str]]:
        """(entry_id, session_id, stage) of verified entries from other sessions stating the
        same memory: the same canonical key, or a restatement (`same_memory`)."""
        pool = self.view.pools.pool(candidate.entry_type)
        words = memory_words(candidate.entry_type, candidate.title)
        matched = dict.fromkeys(pool.matching(canonical_key, words, self.session_id))
        matched.update(dict.fromkeys(self._restatements(candidate.entry_id)))
        # A contradiction never corroborates: contested entries certify nothing.
        return [
            row
            for row in matched
            if row[0] != candidate.entry_id and not self.conflicts.open_conflicts(row[0])
        ]

    def _restatements(self, entry_id: str) -> list[tuple[str, str, str]]:
        """Corroboration-pool rows whose fact has the same subject and value as this one."""
        fact = self.conflicts.facts.get(entry_id)
        if fact is None or fact.entry_type not in COMPARED_TYPES or not fact.value:
            return []  # `restates` needs a value on both sides
        pool = self.view.pools.pool(fact.entry_type)
        return [
            pool.member(old.entry_id, self.session_id)  # type: ignore[misc]
            for old in self._restatable_facts(fact.entry_type, pool)
            if restates(fact, old)
        ]

    def _restatable_facts(self, entry_type: str, pool: SessionPool) -> list[Fact]:
        """The believed facts of a type in its corroboration pool with a value, in believed
        order. A build's believed list does not change while it runs (`FactView` takes
        in the build's events after it), so the filter runs once per fact, not once per
        fact and entry."""
        believed = self.conflicts.believed(entry_type)
        cached = self._restatable.get(entry_type)
        if cached is None or cached[0] is not believed:
            cached = (believed, 0, [])
        _, seen, kept = cached
        kept.extend(
            old
            for old in believed[seen:]
            if old.value and pool.member(old.entry_id, self.session_id) is not None
        )
        self._restatable[entry_type] = (believed, len(believed), kept)
        return kept

    def _certify_siblings(self, eid: str, siblings: list[tuple[str, str, str]]) -> None:
        """A newly corroborated fact also corroborates the verified entries it agrees with.
        Their keys are read (with the build's other events', in one read): a verified
        entry may have been certified before and demoted since (the half-life policy
        does that daily), and its key is stored then."""
        for sibling_id, sibling_session, stage in siblings:
            if stage == "verified" and sibling_session != self.session_id:
                self.append(
                    ENTRY_PROMOTED,
                    {
                        "entry_id": sibling_id,
                        "from": "verified",
                        "to": "certified",
                        "reason": f"corroborated by {eid} from session {self.session_id}",
                        "policy_version": self.pipeline.policy.version,
                    },
                    f"{sibling_id}:certified",
                )

    def _stage_of(self, entry_id: str) -> str:
        """The entry's stage as of the events appended so far (projection may lag)."""
        return self._stages.get(entry_id, "raw")

    def _approved_by(self, entry_id: str) -> str | None:
        return self._approvers.get(entry_id)
