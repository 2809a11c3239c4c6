"""Retrieval benchmark on LoCoMo: every dialog turn is a document, every category 1-4
question a query, gold = the question's `evidence` turns.

    python bench/retrieval_locomo.py                        # the two dev files, all methods
    python bench/retrieval_locomo.py a.json b.json --embedders e5 --quick
    python bench/retrieval_locomo.py --json out.json --cache /tmp/emb-cache

Prints, per file and for all files together, recall@1/5/10, hit@1/5/10 and MRR for each
method, then embedding throughput. Each retriever returns its top `--candidates` (100)
documents, as the product's stores would; fusions work on those lists.

Document views (see axiom.evaluation.locomo):
  plain  the turn text (+ photo caption)
  own    "[8 May 2023] Caroline: <text> [shares a photo of ...]"   (speaker + session date)
  ctx    the previous turn of the same session followed by `own`

Methods: bm25 (axiom.vectors.lexical.BM25), lance-fts (the same analyzed terms served by
LanceDB's native FTS), lance-ngram (LanceDB's own 2-3 char n-gram tokenizer on the raw
text), <embedder> (cosine, exact), and fusions: rrf (k=60 unless named), z (z-score
blend), mm (min-max blend); all fusions weigh their sources equally.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from axiom.evaluation.locomo import (  # noqa: E402
    CATEGORY_NAMES,
    Conversation,
    load_conversations,
    turn_text,
    with_context,
)
from axiom.retrieval.fusion import blend, rrf  # noqa: E402
from axiom.retrieval.metrics import Report, evaluate  # noqa: E402
from axiom.vectors.embedder import Embedder, load_embedder  # noqa: E402
from axiom.vectors.lexical import BM25, LanceLexicalIndex  # noqa: E402

DEV_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev"
KS = (1, 5, 10)
Ranked = list[tuple[int, float]]


@dataclass
class Corpus:
    conv: Conversation
    views: dict[str, list[str]]
    queries: list[str]
    sources: dict[str, list[Ranked]] = field(default_factory=dict)  # method -> per question


def build_views(conv: Conversation) -> dict[str, list[str]]:
    own = [turn_text(t, speaker=True, date=True) for t in conv.turns]
    return {
        "plain": [turn_text(t, speaker=False, date=False) for t in conv.turns],
        "spk": [turn_text(t, speaker=True, date=False) for t in conv.turns],
        "own": own,
        "ctx": with_context(own, conv.turns, before=1),
    }


def top(scores: np.ndarray, n: int, positive_only: bool = False) -> Ranked:
    order = np.argsort(-scores, kind="stable")[:n]
    return [(int(i), float(scores[i])) for i in order if not positive_only or scores[i] > 0]


class EmbedCache:
    """Embeddings keyed by model version, kind and text hash; timing of real embeds."""

    def __init__(self, directory: str | None):
        self.dir = Path(directory) if directory else None
        if self.dir:
            self.dir.mkdir(parents=True, exist_ok=True)
        self.timings: dict[str, list[tuple[int, float, int]]] = {}  # name -> (n, secs, chars)

    def embed(self, model: Embedder, texts: list[str], kind: str) -> np.ndarray:
        digest = hashlib.sha256(
            "\x00".join([model.name, model.version, kind, *texts]).encode()
        ).hexdigest()[:32]
        path = self.dir / f"{digest}.npy" if self.dir else None
        if path and path.exists():
            return np.load(path)
        start = time.perf_counter()
        vectors = model.embed(texts, kind=kind)  # type: ignore[arg-type]
        elapsed = time.perf_counter() - start
        self.timings.setdefault(model.name, []).append((len(texts), elapsed, sum(map(len, texts))))
        if path:
            np.save(path, vectors)
        return vectors


def lexical_sources(corpus: Corpus, views: Sequence[str], n: int, lance: bool) -> None:
    for view in views:
        index = BM25(corpus.views[view])
        name = "bm25" if view == "own" else f"bm25[{view}]"
        corpus.sources[name] = [top(index.scores(q), n, positive_only=True) for q in corpus.queries]
    if lance:
        corpus.sources["lance-fts"] = lance_fts(corpus.views["own"], corpus.queries, n)
        corpus.sources["lance-ngram"] = lance_ngram(corpus.views["own"], corpus.queries, n)


def lance_fts(docs: list[str], queries: list[str], n: int) -> list[Ranked]:
    import lancedb
    import pyarrow as pa

    lex = LanceLexicalIndex()
    with tempfile.TemporaryDirectory() as tmp:
        table = lancedb.connect(tmp).create_table(
            "turns",
            data=pa.table(
                {"doc": list(range(len(docs))), lex.column: list(map(lex.terms_for, docs))}
            ),
        )
        lex.create(table)
        return [
            [(int(r["doc"]), float(r["_score"])) for r in lex.search(table, q, n, columns=["doc"])]
            for q in queries
        ]


def lance_ngram(docs: list[str], queries: list[str], n: int) -> list[Ranked]:
    """LanceDB's own n-gram tokenizer on raw text: no analyzer of ours involved."""
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    with tempfile.TemporaryDirectory() as tmp:
        table = lancedb.connect(tmp).create_table(
            "turns", data=pa.table({"doc": list(range(len(docs))), "text": docs})
        )
        table.create_index(
            "text",
            config=FTS(
                base_tokenizer="ngram",
                ngram_min_length=2,
                ngram_max_length=3,
                stem=False,
                remove_stop_words=False,
            ),
        )
        out = []
        for q in queries:
            rows = table.search(q, query_type="fts").limit(n).select(["doc", "_score"]).to_list()
            out.append([(int(r["doc"]), float(r["_score"])) for r in rows])
        return out


def dense_sources(
    corpus: Corpus, model: Embedder, cache: EmbedCache, views: Sequence[str], n: int
) -> None:
    q = cache.embed(model, corpus.queries, "query")
    for view in views:
        d = cache.embed(model, corpus.views[view], "document")
        scores = q @ d.T
        name = model.name if view == "own" else f"{model.name}[{view}]"
        corpus.sources[name] = [top(row, n) for row in scores]


def fused(corpus: Corpus, names: Sequence[str], how: Callable[..., list]) -> list[Ranked]:
    lists = [corpus.sources[name] for name in names]
    return [
        [(h.id, h.score) for h in how([lst[i] for lst in lists])]
        for i in range(len(corpus.queries))
    ]


def add_fusions(corpus: Corpus, dense: Sequence[str], full: bool) -> list[str]:
    methods: list[str] = []
    z = lambda s: blend(s, norm="zscore")  # noqa: E731
    mm = lambda s: blend(s, norm="minmax")  # noqa: E731
    for d in dense:
        pair = ["bm25", d]
        for label, how in [
            ("rrf", lambda s: rrf(s, k=60)),
            ("rrf k=5", lambda s: rrf(s, k=5)),
            ("mm", mm),
            ("z", z),
        ]:
            if not full and label in ("rrf k=5", "mm"):
                continue
            name = f"{label}(bm25, {d})"
            corpus.sources[name] = fused(corpus, pair, how)
            methods.append(name)
        views4 = ["bm25", "bm25[ctx]", d, f"{d}[ctx]"]
        if all(v in corpus.sources for v in views4):
            for label, how in [("rrf", lambda s: rrf(s, k=60)), ("mm", mm), ("z", z)]:
                if not full and label == "mm":
                    continue
                name = f"{label}(bm25, bm25[ctx], {d}, {d}[ctx])"
                corpus.sources[name] = fused(corpus, views4, how)
                methods.append(name)
        views3 = ["bm25", "bm25[ctx]", f"{d}[ctx]"]
        if full and all(v in corpus.sources for v in views3):
            name = f"z(bm25, bm25[ctx], {d}[ctx])"
            corpus.sources[name] = fused(corpus, views3, z)
            methods.append(name)
    return methods


def speed(names: Sequence[str], texts: list[str], queries: list[str], repeats: int = 3) -> None:
    """Best-of-`repeats` document throughput and median one-query latency per embedder.

    Best-of, because the machine is shared: the minimum is the least disturbed run.
    """
    print(f"\nspeed: {len(texts)} documents ({sum(map(len, texts)) / len(texts):.0f} chars avg)")
    for name in names:
        start = time.perf_counter()
        model = load_embedder(name)
        loaded = time.perf_counter() - start
        model.embed(texts[:8])  # warm-up
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            model.embed(texts)
            best = min(best, time.perf_counter() - start)
        latencies = []
        for q in queries[:25]:
            start = time.perf_counter()
            model.embed([q], kind="query")
            latencies.append(time.perf_counter() - start)
        p50 = float(np.median(latencies)) * 1000
        print(
            f"  {name:<12} load {loaded:5.1f}s  {len(texts) / best:6.0f} docs/s"
            f"  query p50 {p50:5.1f} ms"
        )
        del model


def score(corpora: Sequence[Corpus], method: str) -> list[Report]:
    """One report per corpus, then one over all questions."""
    per: list[Report] = []
    everything = []
    for c in corpora:
        ids = [t.dia_id for t in c.conv.turns]
        runs = [
            ([ids[i] for i, _ in ranked], set(q.evidence))
            for ranked, q in zip(c.sources[method], c.conv.questions, strict=True)
        ]
        per.append(evaluate(runs, KS))
        everything.extend(runs)
    return [*per, evaluate(everything, KS)]


def by_category(corpora: Sequence[Corpus], method: str) -> list[tuple[str, Report]]:
    rows = []
    for cat, label in CATEGORY_NAMES.items():
        runs = []
        for c in corpora:
            ids = [t.dia_id for t in c.conv.turns]
            runs.extend(
                ([ids[i] for i, _ in ranked], set(q.evidence))
                for ranked, q in zip(c.sources[method], c.conv.questions, strict=True)
                if q.category == cat
            )
        if runs:
            rows.append((f"{cat} {label} (n={len(runs)})", evaluate(runs, KS)))
    return rows


def print_table(title: str, rows: list[tuple[str, Report]]) -> None:
    width = max(len(name) for name, _ in rows)
    head = "  ".join(f"{x:>5}" for x in ("R@1", "R@5", "R@10", "H@1", "H@5", "H@10", "MRR"))
    print(f"\n{title}\n{'method':<{width}}  {head}")
    for name, r in rows:
        cells = [r.recall[k] for k in KS] + [r.hit[k] for k in KS] + [r.mrr]
        print(f"{name:<{width}}  " + "  ".join(f"{v:5.3f}" for v in cells))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="LoCoMo JSON files (default: dev set)")
    ap.add_argument("--embedders", default="minilm,e5", help="comma list; '' for none")
    ap.add_argument("--candidates", type=int, default=100, help="top-N each retriever returns")
    ap.add_argument("--quick", action="store_true", help="skip ablations and LanceDB runs")
    ap.add_argument("--cache", help="directory to cache embeddings in")
    ap.add_argument("--json", type=Path, help="write all numbers here")
    ap.add_argument(
        "--speed",
        action="store_true",
        help="only measure embedding speed (best of 3) for minilm, minilm-fp32 and e5",
    )
    args = ap.parse_args(argv)
    files = args.files or sorted(DEV_DIR.glob("*.json"))
    full = not args.quick
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    corpora = []
    for path in files:
        for conv in load_conversations(path):
            corpora.append(Corpus(conv, build_views(conv), [q.question for q in conv.questions]))
            print(
                f"{conv.name}: {len(conv.turns)} turns, {len(conv.questions)} questions"
                f" (skipped {conv.skipped_questions} without a known evidence turn)"
            )

    if args.speed:
        sample = corpora[0].views["own"][:200]
        speed(["minilm", "minilm-fp32", "e5"], sample, corpora[0].queries)
        return 0

    methods: list[str] = []
    t0 = time.perf_counter()
    for c in corpora:
        lexical_sources(
            c, ["own", "ctx", *(["plain", "spk"] if full else [])], args.candidates, full
        )
    lex_secs = time.perf_counter() - t0
    methods += ["bm25", "bm25[ctx]"]
    if full:
        methods += ["bm25[plain]", "bm25[spk]", "lance-fts", "lance-ngram"]

    cache = EmbedCache(args.cache)
    dense_names = []
    for name in filter(None, (n.strip() for n in args.embedders.split(","))):
        model = load_embedder(name)
        for c in corpora:
            dense_sources(
                c,
                model,
                cache,
                ["own", "ctx", *(["plain", "spk"] if full else [])],
                args.candidates,
            )
        dense_names.append(model.name)
        methods += [model.name, f"{model.name}[ctx]"]
        if full:
            methods += [f"{model.name}[plain]", f"{model.name}[spk]"]
        del model
    fusion_methods: list[str] = []
    for c in corpora:
        fusion_methods = add_fusions(c, dense_names, full)
    methods += fusion_methods

    results = {m: score(corpora, m) for m in methods}
    labels = [c.conv.name for c in corpora] + ["all"]
    for i, label in enumerate(labels):
        n = results[methods[0]][i].n
        print_table(f"== {label} ({n} questions)", [(m, results[m][i]) for m in methods])

    for m in methods:
        if m.startswith("z(bm25, bm25[ctx], ") and m.count(",") == 3:
            print_table(f"== by category, all files: {m}", by_category(corpora, m))
        if m in ("bm25", "bm25[ctx]"):
            print_table(f"== by category, all files: {m}", by_category(corpora, m))

    print(f"\nBM25 index+query, all files, all lexical views: {lex_secs:.2f}s")
    for name, timings in cache.timings.items():
        n = sum(t[0] for t in timings)
        secs = sum(t[1] for t in timings)
        chars = sum(t[2] for t in timings)
        print(
            f"embed {name}: {n} texts in {secs:.1f}s = {n / secs:.0f} texts/s ({chars / n:.0f} chars/text)"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    m: {
                        label: {"n": r.n, "recall": r.recall, "hit": r.hit, "mrr": r.mrr}
                        for label, r in zip(labels, reps, strict=True)
                    }
                    for m, reps in results.items()
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
