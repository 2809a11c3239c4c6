"""The memory pipeline over many sessions at once, oldest first: what `axiom import` and
`axiom process` run in the foreground.

Sessions go in chunks: each chunk is analysed first (extraction, alignment, validation:
no lock; with an LLM extractor, the next chunk's on a second thread while this one's
builds are written: `process_many`), then its builds are written several per write
transaction: another build is taken while the time spent, the longest build so far and
the projection left for the end of the transaction (as long as last time) stay within
the write budget (`AXIOM_WRITE_BUDGET_MS`, default `WRITE_BUDGET_S`; at least one build),
so the lock is held about that long, or one build's time when a build takes longer.
Connecting, committing and the checkpoint are paid once per transaction, not
once per session: they were half the pipeline's time with one build per transaction, so
a chunk's last few builds wait for the next chunk's rather than take a transaction of
their own. What a later build reads of the derived tables (believed facts, open
conflicts, corroboration pools) it reads from views kept in memory over the events the
transaction appended (`axiom.pipeline.build_view`), so every projector runs once per
transaction, at its end, over those events (not read back). The events themselves are
held back and inserted once per transaction (`axiom.store.events.deferred`). Readers in
the processes that serve pages read a snapshot meanwhile (`axiom.store.snapshots`); the
README ("The memory pipeline") has the measurements behind the budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future

import duckdb

import axiom.projections
from axiom.forking import can_fork
from axiom.heap import batch_work
from axiom.ingest.session_queries import list_session_ids
from axiom.pipeline.build_view import BuildView
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.forked import AnalysisAhead, ForkedAnalysis
from axiom.pipeline.order import chronological
from axiom.pipeline.process import (
    AnalysedBuild,
    Pipeline,
    ProcessReport,
    analyse_ingest,
    ingested_once,
    never_built,
    pending_ingests,
    write_build,
)
from axiom.settings import Settings
from axiom.store.db import Database, is_interrupt
from axiom.store.events import StoredEvent, appended, deferred
from axiom.store.projection import (
    Follower,
    has_backlog,
    run_projectors_step,
    write_projecting,
)

ANALYSE_CHUNK = 64  # sessions analysed before their builds are written (README, "Session 20")
CATCH_UP_EVENTS = 150  # events per write transaction when the projectors catch up first
WRITE_BUDGET_S = 1.0  # a write transaction takes another build only if it still fits

# What a chunk's lookup finds of a session: its `skipped` report, its ingest to analyse, or
# its build analysed already (`AnalysisAhead`).
Found = ProcessReport | AnalysedBuild | StoredEvent
# What a chunk's lookup gives: what it found of each session, or why it failed.
Looked = list[StoredEvent | ProcessReport] | Exception


def stored_session_ids(db: Database) -> list[str]:
    """Every stored session, in id order (`process_sessions` orders them by time)."""
    with db.read() as conn:
        return list_session_ids(conn)


def ordered_sessions(db: Database, session_ids: Iterable[str]) -> list[str]:
    """`session_ids` oldest first (`axiom.pipeline.order.chronological`)."""
    with db.read() as conn:
        return chronological(conn, session_ids)


def write_builds(
    db: Database,
    builds: list[AnalysedBuild],
    budget_s: float | None = None,
    leave_tail: bool = False,
) -> list[ProcessReport]:
    """Write `builds` in order, several per short transaction (see the module docstring);
    `budget_s` defaults to `WRITE_BUDGET_S`. Between two builds the transaction's views
    take in the earlier builds' events (`BuildView.catch_up`); every projector runs once,
    when the transaction ends: the tables are those of one build per transaction
    (projectors read only their own tables), for a fraction of the statements.

    With `leave_tail`, builds fewer than the last transaction the budget ended took are
    left unwritten (the reports cover a prefix of `builds`): the caller writes them with
    the next chunk's, rather than in a transaction of their own, each costing a commit and
    a checkpoint whatever its size."""
    budget = WRITE_BUDGET_S if budget_s is None else budget_s
    reports: list[ProcessReport] = []
    ends: list[float] = []  # how long each transaction's final projection took
    full = 0  # builds the last transaction that filled its budget took
    while len(reports) < len(builds):
        first = len(reports)
        if leave_tail and len(builds) - first < full:
            break

        def work(conn: duckdb.DuckDBPyConnection, first: int = first) -> list[ProcessReport]:
            with appended() as log, deferred(conn):
                follower = Follower(
                    conn,
                    axiom.projections.all_projectors(),
                    log,
                    self_kept=axiom.projections.kept_by_builds(),
                )
                follower.start()
                view = BuildView(conn, log, follower)
                done = _write_within_budget(conn, builds[first:], view, budget, ends)
                began = time.perf_counter()
                follower.settle()
                ends.append(time.perf_counter() - began)
            return done

        done = write_projecting(db, work)
        reports += done
        full = len(done) if len(reports) < len(builds) else full
    return reports


def _write_within_budget(
    conn: duckdb.DuckDBPyConnection,
    builds: list[AnalysedBuild],
    view: BuildView,
    budget: float,
    ends: list[float],
) -> list[ProcessReport]:
    """Write `builds` in order while the next one fits the budget (`write_builds`); before
    each but the first, `view` takes in the events of the builds before it."""
    started = time.perf_counter()
    done: list[ProcessReport] = []
    longest = 0.0  # the longest build of this transaction so far
    sessions = [b.report.session_id for b in builds]
    once, unbuilt = ingested_once(conn, sessions), never_built(conn, sessions)
    for build in builds:
        began = time.perf_counter()
        # The projection left for the end: its statements are per transaction, not per
        # build, so as long as last time (unmeasured yet: a build's time).
        end = ends[-1] if ends else longest
        if done and began - started + longest + end > budget:
            break
        if done:  # this build reads what the earlier ones derived
            view.catch_up()
        sid = build.report.session_id
        fresh = sid in unbuilt and not any(d.session_id == sid for d in done)
        done.append(write_build(conn, build, False, sid in once, view, fresh))
        longest = max(longest, time.perf_counter() - began)
    return done


def catch_up(db: Database, behind: bool | None = None) -> int:
    """Advance the projectors over a backlog in write transactions of `CATCH_UP_EVENTS`
    events; return how many it took. An import run by a worker advances only the session
    projector, so after a large one the first build's transaction would otherwise apply
    every pending event at once, holding the lock for seconds before any read snapshot
    exists. A backlog smaller than one step is left to the first build (no transaction of
    its own). `behind`: whether there is one, when the caller has read it."""
    if behind is None:
        with db.read() as conn:
            behind = _backlog(conn)
    units = 0
    while behind:
        behind = write_projecting(
            db,
            lambda conn: run_projectors_step(
                conn, axiom.projections.all_projectors(), CATCH_UP_EVENTS
            ),
        )
        units += 1
    return units


def _backlog(conn: duckdb.DuckDBPyConnection) -> bool:
    """Whether the projectors are a `catch_up` step or more behind (a read)."""
    return has_backlog(conn, axiom.projections.all_projectors(), CATCH_UP_EVENTS)


@batch_work()
def process_many(
    db: Database,
    session_ids: list[str],
    pipeline: Pipeline,
    on_session: Callable[[str], None] | None = None,
    budget_s: float | None = None,
    fork: bool = False,
    ahead: AnalysisAhead | None = None,
    order: bool = False,
) -> list[ProcessReport]:
    """Run `pipeline` over `session_ids` in this order (with `order`, oldest first:
    `axiom.pipeline.order`, read with the first lookups), chunk by chunk (idempotent), once
    the projectors have caught up (`catch_up`); `budget_s` as in `write_builds`. With
    `fork`, an extractor that runs on the CPU shares each chunk's analysis with a forked
    child (`axiom.pipeline.forked`), which starts on the chunk while the one before it is
    written.

    The next chunk is looked up (which of its sessions still need a build) before this
    chunk's builds are written, unless it shares a session with a build not written yet:
    then after. A lookup that fails (an unknown session id) is raised once this chunk's
    builds are all written, its tail included. With an extractor whose work waits on an
    endpoint (`remote`, the LLM extractor), the next chunk is also analysed meanwhile, on a
    second thread (`ChunkAnalyst`), so the writes go on while the analysis waits for
    replies. The offline rule extractor keeps the CPU busy instead: analysed ahead on a
    thread, it took the second core from the processes serving pages and search for
    little gain (README, "Session 19"); its chunks are analysed between writes, or, with
    `fork`, by a niced child from the moment they are looked up. A build `ahead` analysed
    already (`AnalysisAhead`, started by the import) is taken from it."""
    if ahead is not None and ahead.pipeline is not pipeline:
        raise ValueError("the builds analysed ahead are another pipeline's")
    reports: list[ProcessReport | None] = []  # per session, None while its build waits
    waiting: list[tuple[int, AnalysedBuild]] = []  # (position, build) analysed, not written
    told = 0  # sessions reported to `on_session`, in order
    remote = getattr(pipeline.extractor, "remote", False)
    forking = fork and not remote and can_fork()
    with ChunkAnalyst(db, pipeline, remote, forking, ahead) as analyst:
        looked_up: Future[list[ProcessReport | AnalysedBuild]] | None = None
        session_ids, lookups = analyst.first_look(session_ids, order)
        chunks = _chunked(session_ids)
        if chunks:
            looked_up = analyst.start(chunks[0], lookups[0])
        catch_up(db, analyst.behind)
        for n, chunk in enumerate(chunks):
            if looked_up is None:  # not looked up while the chunk before was written
                if _sessions(waiting) & set(chunk):  # its build goes first
                    waiting = _write_waiting(db, reports, waiting, budget_s, leave_tail=False)
                looked_up = analyst.start(chunk)
            for found in looked_up.result():
                if isinstance(found, AnalysedBuild):
                    waiting.append((len(reports), found))
                reports.append(found if isinstance(found, ProcessReport) else None)
            more = n + 1 < len(chunks)
            looked_up = None
            if more and not _sessions(waiting) & set(chunks[n + 1]):
                read = lookups[n + 1] if n + 1 < len(lookups) else None
                looked_up = analyst.start(chunks[n + 1], read)
            tail = more and not _failed(looked_up)  # nothing comes after a failed lookup
            waiting = _write_waiting(db, reports, waiting, budget_s, leave_tail=tail)
            while on_session and told < len(reports) and reports[told] is not None:
                on_session(session_ids[told])
                told += 1
    return [r for r in reports if r is not None]


def _chunked(session_ids: list[str]) -> list[list[str]]:
    return [session_ids[i : i + ANALYSE_CHUNK] for i in range(0, len(session_ids), ANALYSE_CHUNK)]


def _first_chunks(chunks: list[list[str]]) -> list[list[str]]:
    """The chunks `process_many` looks up before writing: the first, and the second when
    it shares no session with the first (else it waits for the first's builds)."""
    if len(chunks) > 1 and not set(chunks[0]) & set(chunks[1]):
        return chunks[:2]
    return chunks[:1]


def _sessions(waiting: list[tuple[int, AnalysedBuild]]) -> set[str]:
    return {b.report.session_id for _, b in waiting}


def _failed(future: Future[list[ProcessReport | AnalysedBuild]] | None) -> bool:
    """Whether `future` is a lookup that failed (its exception is set at once)."""
    return future is not None and future.done() and future.exception() is not None


class ChunkAnalyst:
    """Looks a chunk's sessions up (a read, on the calling thread, at `start`) and analyses
    those that need a build (`analyse_ingest`: no lock). With `background`, on a thread of
    its own from `start` on, while the caller writes the chunk before (`process_many`);
    without, on the calling thread when it asks for the future's result.

    With `forking` instead, the sessions to analyse go to a child forked at `start`
    (`ForkedAnalysis`), and the calling thread takes its share when it asks for the
    result.

    A lookup that fails comes back as a future holding its exception, for the caller to
    raise once it has written what it holds. Leaving the `with` block on an error (Ctrl-C
    included) does not wait for the thread: it is a daemon that stops after the session
    it is on, whose analysis may wait on an LLM endpoint or `idris2` for long; a forked
    child still running is terminated."""

    def __init__(
        self,
        db: Database,
        pipeline: Pipeline,
        background: bool = True,
        forking: bool = False,
        ahead: AnalysisAhead | None = None,
    ) -> None:
        self.db, self.pipeline, self.background = db, pipeline, background
        self.forking = forking and not background
        self.ahead = ahead
        self.behind: bool | None = None  # the projectors' backlog, when a lookup read it
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._forked: list[ForkedAnalysis] = []

    def __enter__(self) -> ChunkAnalyst:
        return self

    def __exit__(self, error: type[BaseException] | None, *rest: object) -> None:
        self._stop.set()
        for forked in self._forked:
            forked.close()
        if error is None:  # every future was waited for: the threads have ended
            for thread in self._threads:
                thread.join()

    def first_look(self, session_ids: list[str], order: bool) -> tuple[list[str], list[Looked]]:
        """`session_ids` (oldest first with `order`) and the lookups of the first chunks
        (`_first_chunks`), in one read that also sets `behind` (`catch_up`). Nothing is
        written before the second chunk's lookup anyway but the catch-up, which adds no
        ingest and no build."""
        with self.db.read() as conn:
            if order:
                session_ids = chronological(conn, session_ids)
            self.behind = _backlog(conn)
            first = _first_chunks(_chunked(session_ids))
            return session_ids, [self._look_up(conn, chunk) for chunk in first]

    def _look_up(self, conn: duckdb.DuckDBPyConnection, chunk: list[str]) -> Looked:
        """What `chunk` finds (`pending_ingests`), or the exception its lookup raised (an
        unknown session id, a storage error), for `start` to raise when its builds are
        wanted: after the chunk before is written."""
        try:
            return pending_ingests(conn, chunk, self.pipeline)
        except Exception as exc:
            if is_interrupt(exc):  # Ctrl-C: now, not after the chunk before is written
                raise
            return exc

    def start(
        self, chunk: list[str], looked: Looked | None = None
    ) -> Future[list[ProcessReport | AnalysedBuild]]:
        """Each session of `chunk`, in order: its `skipped` report when its build
        succeeded, else its analysed build (the future's result). `looked`: what its
        lookup found, when `first_look` read it already."""
        found = looked
        if found is None:
            try:
                with self.db.read() as conn:  # one connection for the chunk's ingests
                    found = self._look_up(conn, chunk)
            except Exception as exc:  # connecting failed: raised later, as a lookup's
                if is_interrupt(exc):
                    raise
                found = exc
        if isinstance(found, Exception):
            failed: Future[list[ProcessReport | AnalysedBuild]] = Future()
            failed.set_exception(found)
            return failed
        if self.ahead is not None:
            found = [self._taken(f) for f in found]
        ingests = [f for f in found if isinstance(f, StoredEvent)]
        if self.forking and len(ingests) > 1:
            forked = ForkedAnalysis(self.db, self.pipeline, ingests)
            self._forked.append(forked)
            return _OnResult(lambda future: self._collect(found, forked, future))
        if not self.background:
            return _OnResult(lambda future: self._analyse(found, future))
        future: Future[list[ProcessReport | AnalysedBuild]] = Future()
        thread = threading.Thread(
            target=self._analyse, args=(found, future), name="axiom-analyse", daemon=True
        )
        self._threads.append(thread)
        thread.start()
        return future

    def _taken(self, found: Found) -> Found:
        """`found`'s build when it was analysed ahead, else `found`."""
        if self.ahead is None or not isinstance(found, StoredEvent):
            return found
        return self.ahead.take(self.db, found) or found

    def _analyse(
        self,
        found: list[Found],
        future: Future[list[ProcessReport | AnalysedBuild]],
    ) -> None:
        out: list[ProcessReport | AnalysedBuild] = []
        try:
            for f in found:
                if self._stop.is_set():
                    future.cancel()
                    return
                out.append(
                    analyse_ingest(self.db, f, self.pipeline) if isinstance(f, StoredEvent) else f
                )
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            future.set_exception(exc)
            return
        future.set_result(out)

    def _collect(
        self,
        found: list[Found],
        forked: ForkedAnalysis,
        future: Future[list[ProcessReport | AnalysedBuild]],
    ) -> None:
        """`found` in order, each ingest replaced by its build from `forked`."""
        try:
            builds = iter(forked.builds())
            future.set_result([next(builds) if isinstance(f, StoredEvent) else f for f in found])
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            future.set_exception(exc)
        finally:
            forked.close()
            self._forked.remove(forked)


class _OnResult(Future[list[ProcessReport | AnalysedBuild]]):
    """A future whose work runs on the caller's thread the first time its result is asked
    for (`ChunkAnalyst` without `background`)."""

    def __init__(self, work: Callable[[Future[list[ProcessReport | AnalysedBuild]]], None]) -> None:
        super().__init__()
        self._work: Callable[[Future[list[ProcessReport | AnalysedBuild]]], None] | None = work

    def result(self, timeout: float | None = None) -> list[ProcessReport | AnalysedBuild]:
        work, self._work = self._work, None
        if work is not None:
            work(self)
        return super().result(timeout)


def _write_waiting(
    db: Database,
    reports: list[ProcessReport | None],
    waiting: list[tuple[int, AnalysedBuild]],
    budget_s: float | None,
    leave_tail: bool,
) -> list[tuple[int, AnalysedBuild]]:
    """Write the `waiting` builds (`write_builds`) and put each report in its place;
    return those left waiting (with `leave_tail`: a tail for the next chunk's
    transactions)."""
    written = write_builds(db, [b for _, b in waiting], budget_s, leave_tail)
    for (n, _), report in zip(waiting, written, strict=False):
        reports[n] = report
    return waiting[len(written) :]


def process_sessions(
    db: Database,
    session_ids: Iterable[str],
    on_start: Callable[[int], None] | None = None,
    on_session: Callable[[str], None] | None = None,
    ahead: AnalysisAhead | None = None,
) -> list[ProcessReport]:
    """Run the pipeline over each session, oldest first (`axiom.pipeline.order`); a failing
    session is reported, the rest go on. `on_start(count)` then `on_session(id)` after each
    one let a caller show progress (`axiom.observability.progress`). With `ahead`
    (`analysis_ahead`, offered the sessions as they were imported), its pipeline runs and
    the builds it analysed are taken from it."""
    ids = list(dict.fromkeys(session_ids))  # put in order by `process_many`'s first read
    if on_start:
        on_start(len(ids))
    settings = Settings.from_env()
    budget_s = settings.write_budget_ms / 1000
    fork = settings.analysis_child
    pipeline = ahead.pipeline if ahead is not None else configured_pipeline()
    return process_many(db, ids, pipeline, on_session, budget_s, fork, ahead, order=True)


def analysis_ahead() -> AnalysisAhead:
    """An `AnalysisAhead` of the first chunk (the configured pipeline; a forked child when
    `AXIOM_ANALYSIS_CHILD`): an import's `before_write`, then `process_sessions`' `ahead`."""
    fork = Settings.from_env().analysis_child
    return AnalysisAhead(configured_pipeline(), fork, ANALYSE_CHUNK)


def summarize(reports: list[ProcessReport]) -> str:
    """One line for the sessions processed, then one per failed session."""
    failed = [r for r in reports if r.status != "success"]
    done = [r for r in reports if not r.skipped and r.status == "success"]
    entries = sum(r.entries for r in done)
    text = f"processed {len(done)} session(s) ({entries} entries), {len(reports) - len(done) - len(failed)} already up to date"
    for r in failed:
        text += f"\nsession {r.session_id}: pipeline failed: {r.error}"
    return text
