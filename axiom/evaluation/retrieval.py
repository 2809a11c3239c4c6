"""`python -m axiom eval locomo FILE...`: retrieval quality of the product on LoCoMo.

For every conversation of every file (one file may hold one conversation or a list, like
the public `locomo10.json`), in a fresh temporary data dir:

1. import it with the LoCoMo parser (`import_paths`: `session_ingested`, the session
   tables), run the memory pipeline over each session (`process_session`: entries,
   citations, message citations, outbox jobs),
2. drain the vector outbox synchronously with the configured embedder (`AXIOM_EMBEDDER`,
   default e5) — the same writer that serves production, so the LanceDB table, its FTS
   index and its rows are exactly what search sees,
3. ask every category 1-4 question through `SearchService` (top `DEPTH` message hits) in
   each mode, and map hits to LoCoMo turns through the message's `meta["dia_id"]`,
4. score the rankings against the question's `evidence` turns: hit@k and recall@k for
   k = 1, 5, 10, and MRR (over the top `DEPTH`),
5. ask it once more the way a user does (entries and messages, top 5) and score what
   those hits cite: citation precision@1 and @5 (`axiom.evaluation.citation_precision`).
   A hit cites spans — an entry hit its evidence messages, a message hit itself — and
   precision@k = (cited spans inside a gold evidence turn among the top k hits) / (all
   cited spans of the top k hits); a question with no hits, or whose hits cite nothing,
   counts 0. Gold turns become spans through the imported messages' `meta["dia_id"]`,
   the same mapping recall uses.

Reported per conversation and over all questions, per mode: `fts`, `vector`, `hybrid`,
plus `hybrid-rrf` (the hybrid views fused with RRF instead of the z-score blend, so the
fusion choice keeps being measured on the product path); under `AXIOM_EMBEDDER=none` (no
model: a quick run) only `fts`. Also, for the hybrid top hit:
how often each confidence tier was given and how often a hit of that tier was a gold
turn (the calibration of the match score), and search latency.

Nothing of the benchmark's annotations is imported (see `axiom.ingest.locomo`), so the
rankings are what a user of Axiom would get.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from axiom.config import AxiomConfig
from axiom.entries.queries import count_entries
from axiom.evaluation.citation_precision import (
    PRECISION_KS,
    Span,
    entry_evidence,
    hit_spans,
    mean_precision,
)
from axiom.evaluation.locomo import (
    CATEGORY_NAMES,
    Conversation,
    load_conversations,
    normalize_dia_id,
)
from axiom.ingest.importer import import_paths
from axiom.ingest.session_queries import list_messages, list_session_ids
from axiom.observability.progress import Bar
from axiom.outbox.writer import OutboxWriter
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.retrieval.metrics import Report, evaluate
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.store.migrate import migrate
from axiom.vectors.config import configured_embedder, embedding_version_of, vectors_enabled
from axiom.vectors.lance_store import LanceStore

KS = (1, 5, 10)
DEPTH = 100
MODES: tuple[tuple[str, str, str], ...] = (  # (label, mode, fusion)
    ("fts", "fts", "zscore"),
    ("vector", "vector", "zscore"),
    ("hybrid", "hybrid", "zscore"),
    ("hybrid-rrf", "hybrid", "rrf"),
)


class EvalError(RuntimeError):
    """The evaluation cannot run (unreadable file, no embedder configured, ...)."""


@dataclass
class ConversationEval:
    file: str
    name: str
    sessions: int = 0
    messages: int = 0
    entries: int = 0
    questions: int = 0
    skipped_questions: int = 0
    import_issues: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    runs: dict[str, list[tuple[list[str], set[str]]]] = field(default_factory=dict)
    cited: dict[str, list[tuple[list[tuple[Span, ...]], set[Span]]]] = field(
        default_factory=dict
    )  # per mode, per question: (spans cited by each of the top hits, gold spans)
    categories: list[int] = field(default_factory=list)
    top_hits: list[tuple[str, float, bool]] = field(default_factory=list)  # (tier, match, gold)
    latencies_ms: list[float] = field(default_factory=list)

    def reports(self) -> dict[str, Report]:
        return {label: evaluate(runs, KS) for label, runs in self.runs.items()}

    def precisions(self) -> dict[str, dict[int, float]]:
        return {label: mean_precision(runs, PRECISION_KS) for label, runs in self.cited.items()}


def _report_json(report: Report, precision: dict[int, float] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "n": report.n,
        "hit": {str(k): round(v, 4) for k, v in report.hit.items()},
        "recall": {str(k): round(v, 4) for k, v in report.recall.items()},
        "mrr": round(report.mrr, 4),
    }
    if precision is not None:
        out["citation_precision"] = {str(k): round(v, 4) for k, v in precision.items()}
    return out


def _bar(total: int, unit: str, desc: str, enabled: bool) -> Bar:
    return Bar(total, unit, desc, enabled)


def _conversations(path: Path) -> list[tuple[Conversation, Any]]:
    """(questions side, raw JSON item) per conversation of the file."""
    try:
        raw = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise EvalError(f"{path}: cannot read LoCoMo JSON: {exc}") from exc
    try:
        conversations = load_conversations(path)
    except Exception as exc:  # noqa: BLE001 - LocomoFormatError, KeyError, ...
        raise EvalError(f"{path}: not a LoCoMo file: {exc}") from exc
    items = raw if isinstance(raw, list) else [raw]
    if len(items) != len(conversations):
        raise EvalError(f"{path}: {len(items)} items but {len(conversations)} conversations")
    return list(zip(conversations, items, strict=True))


def evaluate_conversation(
    path: Path,
    conv: Conversation,
    item: Any,
    single: bool,
    embedder: Any,
    progress: bool = False,
    modes: Sequence[tuple[str, str, str]] = MODES,
) -> ConversationEval:
    result = ConversationEval(file=str(path), name=conv.name)
    result.skipped_questions = conv.skipped_questions
    with tempfile.TemporaryDirectory(prefix="axiom-eval-") as tmp:
        data = Path(tmp) / "data"
        config = AxiomConfig(data_dir=data)
        db = Database(config.duckdb_path)
        migrate(db)
        source = path
        if not single:  # one conversation per data dir: write the item on its own
            source = Path(tmp) / f"{conv.name}.json"
            source.write_text(json.dumps(item), encoding="utf-8")

        t0 = time.perf_counter()
        report = import_paths(db, [source], fmt="locomo")
        result.seconds["import"] = time.perf_counter() - t0
        result.sessions = len(report.session_ids)
        result.messages = report.messages
        result.import_issues = len(report.issues)
        if not report.session_ids:
            raise EvalError(f"{path} ({conv.name}): no sessions imported")

        t0 = time.perf_counter()
        pipeline = configured_pipeline(config)
        bar = _bar(len(report.session_ids), "session", f"{conv.name} process", progress)
        with bar:
            for sid in report.session_ids:
                process_session(db, sid, pipeline)
                bar.advance()
        result.seconds["process"] = time.perf_counter() - t0
        with db.read() as conn:
            result.entries = count_entries(conn)

        t0 = time.perf_counter()
        store = LanceStore(config.lancedb_dir, embedding_version_of(embedder), embedder.dim)
        writer = OutboxWriter(db, store, embedder)
        pending = writer.pending_count()
        if pending == 0:
            raise EvalError(
                "the pipeline queued no embedding jobs: does AXIOM_EMBEDDER name another"
                f" model than {embedding_version_of(embedder)}?"
            )
        bar = _bar(pending, "doc", f"{conv.name} embed", progress)
        seen = 0

        def advance(drain: Any) -> None:
            nonlocal seen
            bar.advance(drain.claimed - seen)
            seen = drain.claimed

        with bar:
            drained = writer.drain(on_batch=advance)
        if drained.error or drained.remaining:
            raise EvalError(
                f"{conv.name}: the outbox did not drain ({drained.remaining} pending):"
                f" {drained.error}"
            )
        result.seconds["embed"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        service = SearchService(db, store, embedder)
        try:
            _ask(service, db, conv, result, modes, progress)
        finally:
            service.close()
        result.seconds["questions"] = time.perf_counter() - t0
    return result


def _dia_ids(hit: Any) -> list[str]:
    return normalize_dia_id(str((hit.meta or {}).get("dia_id") or ""))


def dia_id_spans(db: Database, session_ids: Sequence[str]) -> dict[str, Span]:
    """LoCoMo turn id -> the imported message (session_id, message_index) holding it."""
    out: dict[str, Span] = {}
    with db.read() as conn:
        for sid in session_ids:
            for message in list_messages(conn, sid):
                for dia_id in normalize_dia_id(str(message.meta.get("dia_id") or "")):
                    out.setdefault(dia_id, (sid, message.index))
    return out


def _cited_spans(
    service: SearchService, db: Database, question: str, mode: str, fusion: str
) -> list[tuple[Span, ...]]:
    """What the top hits of a user's search (entries and messages) cite, hit by hit."""
    found = service.search(question, k=max(PRECISION_KS), mode=mode, fusion=fusion)
    with db.read() as conn:
        evidence = entry_evidence(conn, found.hits)
    return [hit_spans(hit, evidence) for hit in found.hits]


def _ask(
    service: SearchService,
    db: Database,
    conv: Conversation,
    result: ConversationEval,
    modes: Sequence[tuple[str, str, str]],
    progress: bool,
) -> None:
    result.questions = len(conv.questions)
    result.runs = {label: [] for label, _, _ in modes}
    result.cited = {label: [] for label, _, _ in modes}
    with db.read() as conn:
        session_ids = list_session_ids(conn)
    spans = dia_id_spans(db, session_ids)
    bar = _bar(len(conv.questions), "question", f"{conv.name} ask", progress)
    for q in conv.questions:
        gold = set(q.evidence)
        gold_spans = {spans[d] for d in q.evidence if d in spans}
        result.categories.append(q.category)
        for label, mode, fusion in modes:
            t0 = time.perf_counter()
            found = service.search(
                q.question, k=DEPTH, mode=mode, kinds=("message",), fusion=fusion
            )
            elapsed = (time.perf_counter() - t0) * 1000
            ranking: list[str] = []
            for hit in found.hits:
                ranking.extend(i for i in _dia_ids(hit) if i not in ranking)
            result.runs[label].append((ranking, gold))
            cited = _cited_spans(service, db, q.question, mode, fusion)
            result.cited[label].append((cited, gold_spans))
            if label == "hybrid":
                result.latencies_ms.append(elapsed)
                if found.hits:
                    top = found.hits[0]
                    result.top_hits.append((top.tier, top.match, bool(gold & set(_dia_ids(top)))))
        bar.advance()
    bar.close()


@dataclass
class EvalReport:
    conversations: list[ConversationEval]
    embedder: str
    seconds: float

    def overall(self) -> dict[str, Report]:
        labels = list(self.conversations[0].runs) if self.conversations else []
        return {
            label: evaluate([r for c in self.conversations for r in c.runs[label]], KS)
            for label in labels
        }

    def overall_precision(self) -> dict[str, dict[int, float]]:
        labels = list(self.conversations[0].cited) if self.conversations else []
        return {
            label: mean_precision(
                [r for c in self.conversations for r in c.cited[label]], PRECISION_KS
            )
            for label in labels
        }

    def by_category(self, label: str = "hybrid") -> dict[str, Report]:
        out = {}
        for cat, name in CATEGORY_NAMES.items():
            runs = [
                run
                for c in self.conversations
                for run, qc in zip(c.runs.get(label, []), c.categories, strict=False)
                if qc == cat
            ]
            if runs:
                out[f"{cat} {name}"] = evaluate(runs, KS)
        return out

    def confidence(self) -> dict[str, Any]:
        tops = [t for c in self.conversations for t in c.top_hits]
        out: dict[str, Any] = {}
        for tier in ("high", "suggested", "none"):
            picked = [t for t in tops if t[0] == tier]
            out[tier] = {
                "top_hits": len(picked),
                "gold_share": round(sum(t[2] for t in picked) / len(picked), 4) if picked else None,
            }
        gold = [t[1] for t in tops if t[2]]
        other = [t[1] for t in tops if not t[2]]
        out["mean_match_gold_top1"] = round(statistics.fmean(gold), 4) if gold else None
        out["mean_match_other_top1"] = round(statistics.fmean(other), 4) if other else None
        return out

    def latency(self) -> dict[str, float | None]:
        values = sorted(v for c in self.conversations for v in c.latencies_ms)
        if not values:
            return {"p50_ms": None, "p95_ms": None}
        return {
            "p50_ms": round(values[len(values) // 2], 2),
            "p95_ms": round(values[min(len(values) - 1, int(len(values) * 0.95))], 2),
        }

    def to_json(self) -> dict[str, Any]:
        precision = self.overall_precision()
        return {
            "embedder": self.embedder,
            "depth": DEPTH,
            "seconds": round(self.seconds, 1),
            "conversations": [
                {
                    "file": c.file,
                    "name": c.name,
                    "sessions": c.sessions,
                    "messages": c.messages,
                    "entries": c.entries,
                    "questions": c.questions,
                    "skipped_questions": c.skipped_questions,
                    "seconds": {k: round(v, 1) for k, v in c.seconds.items()},
                    "modes": {
                        label: _report_json(r, c.precisions().get(label))
                        for label, r in c.reports().items()
                    },
                }
                for c in self.conversations
            ],
            "overall": {
                label: _report_json(r, precision.get(label)) for label, r in self.overall().items()
            },
            "hybrid_by_category": {k: _report_json(r) for k, r in self.by_category().items()},
            "confidence_top1_hybrid": self.confidence(),
            "search_latency_hybrid": self.latency(),
        }

    def render(self) -> str:
        lines = [f"LoCoMo retrieval, {self.embedder}, top {DEPTH} message hits per question"]

        def table(
            title: str,
            reports: dict[str, Report],
            precision: dict[str, dict[int, float]] | None = None,
        ) -> None:
            lines.append(f"\n{title}")
            heads = ["n", "H@1", "H@5", "H@10", "R@1", "R@5", "R@10", "MRR"]
            if precision is not None:
                heads += [f"P@{k}" for k in PRECISION_KS]
            lines.append(f"{'':<22}" + "".join(f"{h:>7}" for h in heads))
            for label, r in reports.items():
                cells = [r.hit[k] for k in KS] + [r.recall[k] for k in KS] + [r.mrr]
                if precision is not None:
                    cells += [precision.get(label, {}).get(k, 0.0) for k in PRECISION_KS]
                lines.append(f"{label:<22}{r.n:>7}" + "".join(f"{v:7.3f}" for v in cells))

        for c in self.conversations:
            secs = ", ".join(f"{k} {v:.0f}s" for k, v in c.seconds.items())
            table(
                f"{c.name} ({Path(c.file).name}): {c.sessions} sessions, {c.messages} messages,"
                f" {c.entries} entries; {secs}",
                c.reports(),
                c.precisions(),
            )
        if len(self.conversations) > 1:
            table("all conversations", self.overall(), self.overall_precision())
        table("hybrid by category", self.by_category())
        conf = self.confidence()
        lines.append("\nconfidence of the hybrid top hit (tier: count, share that is gold):")
        for tier in ("high", "suggested", "none"):
            lines.append(f"  {tier:<10}{conf[tier]['top_hits']:>5}  {conf[tier]['gold_share']}")
        lines.append(
            "P@k: citation precision, the share of the spans the top k hits of a search over"
            " entries and messages cite that are gold turns"
        )
        lat = self.latency()
        lines.append(
            f"hybrid search latency (k={DEPTH}): p50 {lat['p50_ms']} ms, p95 {lat['p95_ms']} ms;"
            f" total {self.seconds:.0f}s"
        )
        return "\n".join(lines)


def run_eval(
    paths: Sequence[Path],
    *,
    progress: bool = False,
    embedder: Any = None,
    modes: Sequence[tuple[str, str, str]] = MODES,
    on_conversation: Callable[[ConversationEval], None] | None = None,
) -> EvalReport:
    """Evaluate every conversation of `paths` (see the module docstring)."""
    if not paths:
        raise EvalError("no LoCoMo files given")
    for path in paths:
        if not Path(path).is_file():
            raise EvalError(f"{path}: no such file")
    if embedder is None:
        if not vectors_enabled():  # no model: what full-text search alone gives
            modes = [m for m in modes if m[1] == "fts"]
            if not modes:
                raise EvalError("AXIOM_EMBEDDER is 'none': only the fts mode can be measured")
        try:
            embedder = configured_embedder()
        except Exception as exc:  # noqa: BLE001 - EmbedderLoadError
            raise EvalError(f"cannot load the embedding model: {exc}") from exc
    started = time.perf_counter()
    results = []
    for path in map(Path, paths):
        pairs = _conversations(path)
        for conv, item in pairs:
            result = evaluate_conversation(
                path, conv, item, len(pairs) == 1, embedder, progress, modes
            )
            results.append(result)
            if on_conversation:
                on_conversation(result)
    return EvalReport(results, embedding_version_of(embedder), time.perf_counter() - started)
