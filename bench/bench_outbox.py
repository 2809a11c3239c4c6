"""Vector outbox drain: embedding throughput, batch timings and memory of the single writer.

    python bench/bench_outbox.py                      # 10,000 items, the configured batch size
    python bench/bench_outbox.py -n 2000 --batch-size 16,64,256   # compare batch sizes
    python bench/bench_outbox.py --json out.json      # the bench protocol's JSON
    python bench/bench_outbox.py --quick              # 300 items (bench/run --quick)

Builds N synthetic items in a fresh temporary data dir — 90 % messages (sessions of 50
turns, 40-400 characters, English with some Korean) and 10 % entries (appended as
`entry_created` events) — projects them into `vector_outbox`, then drains it with the real
configured embedder (AXIOM_EMBEDDER; torch threads as the writer sets them) into LanceDB.
Reports per batch size:
embedding throughput (texts/s, embed time only), end-to-end items/s, total drain time,
per-batch timing (p50/p95 and where the time goes: claim / load / embed / upsert / mark),
index upkeep, one FTS and one vector query on the result, and RSS (before, after and peak
during the drain). The machine is shared: the load average is printed with every run.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol import result, write_json  # noqa: E402 - bench/protocol.py, beside this script

_WORDS_TEXT = """
    the writer embeds queued items into lancedb after duckdb commits the event and marks
    each job done; a crash leaves jobs processing until reconcile puts them back so nothing
    is lost and no vector is stored twice because merge insert replaces rows by id while
    search reads the table with hybrid full text and vector scores fused by reciprocal rank
    caroline painted a sunset last weekend melanie went camping with her kids in july the
    support group met on tuesday and everyone shared stories about adoption career plans
    redis celery worker beat schedule projection offset rebuild replay idempotent dedupe key
"""
_KOREAN_TEXT = "벡터는 단일 writer가 기록합니다 결정했습니다 검색 품질을 측정했습니다 배포 일정"
WORDS = _WORDS_TEXT.split()
KOREAN = _KOREAN_TEXT.split()


def rss_mb() -> float:
    """Peak RSS of this process so far, MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def current_rss_mb() -> float:
    return _status_mb("VmRSS")


def reset_peak_rss() -> bool:
    """Restart the kernel's peak-RSS count (VmHWM) so it measures the drain alone."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def text(rng: random.Random) -> str:
    n = rng.randint(8, 70)
    words = [rng.choice(KOREAN if rng.random() < 0.05 else WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def build(db: Any, n: int, seed: int = 7) -> tuple[int, int]:
    """Append ~0.9 n messages and ~0.1 n entries; project them into the outbox."""
    from axiom.ingest.importer import ingest_transcripts
    from axiom.ingest.transcript import Message, Transcript
    from axiom.projections import project_all
    from axiom.store.events import EventStore, NewEvent

    rng = random.Random(seed)
    n_entries = n // 10
    n_messages = n - n_entries
    per = 50
    transcripts = []
    for s in range(0, n_messages, per):
        count = min(per, n_messages - s)
        transcripts.append(
            Transcript(
                f"bench-{s // per}",
                "bench",
                "json",
                tuple(
                    Message(i, "user" if i % 2 == 0 else "assistant", text(rng))
                    for i in range(count)
                ),
            )
        )
    ingest_transcripts(db, transcripts, project=False)
    with db.write() as conn:
        store = EventStore(conn)
        for i in range(n_entries):
            entry_id = f"ent_bench_{i:06d}"
            store.append(
                NewEvent(
                    "entry_created",
                    {
                        "entry_id": entry_id,
                        "session_id": f"bench-{i % max(1, len(transcripts))}",
                        "entry_type": "fact",
                        "title": " ".join(rng.choice(WORDS) for _ in range(6)),
                        "content": text(rng),
                        "task": None,
                        "canonical_key": f"fact:{entry_id}",
                        "evidence": [],
                    },
                    dedupe_key=entry_id,
                )
            )
    project_all(db)
    return n_messages, n_entries


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def run(n: int, batch_size: int, embedder: Any) -> dict[str, Any]:
    from axiom.config import AxiomConfig
    from axiom.outbox.writer import OutboxWriter
    from axiom.store.db import Database
    from axiom.store.migrate import migrate
    from axiom.vectors.config import configured_dim, configured_embedding_version
    from axiom.vectors.lance_store import LanceStore
    from axiom.vectors.lexical import LanceLexicalIndex

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["AXIOM_DATA_DIR"] = tmp
        config = AxiomConfig.from_env()
        db = Database(config.duckdb_path)
        migrate(db)
        started = time.perf_counter()
        n_messages, n_entries = build(db, n)
        build_s = time.perf_counter() - started
        rss_before_drain = current_rss_mb()
        exact_peak = reset_peak_rss()
        load_before = os.getloadavg()[0]
        store = LanceStore(config.lancedb_dir, configured_embedding_version(), configured_dim())
        writer = OutboxWriter(db, store, embedder, batch_size=batch_size)

        report = writer.drain()
        rss_after_drain = current_rss_mb()
        drain_peak = _status_mb("VmHWM") if exact_peak else float("nan")

        assert report.done == n and report.failed == 0, report.to_json()
        counts = store.count_by_id()
        assert set(counts.values()) == {1}, "an id was stored twice"
        with db.read() as conn:
            chars = conn.execute("SELECT avg(length(text)) FROM messages").fetchone()[0]
        table = store.open_table_for_read()
        lex = LanceLexicalIndex()
        t0 = time.perf_counter()
        lex.search(table, "writer crash reconcile", k=10)
        fts_ms = (time.perf_counter() - t0) * 1000
        query = embedder.embed(["when did caroline paint a sunset"], kind="query")[0]
        t0 = time.perf_counter()
        table.search(query).limit(10).select(["id"]).to_list()
        knn_ms = (time.perf_counter() - t0) * 1000

    batches = report.batches
    totals = [b.total_s for b in batches]
    parts = {
        part: sum(getattr(b, f"{part}_s") for b in batches)
        for part in ("claim", "load", "embed", "upsert", "mark")
    }
    in_batches = sum(parts.values())
    return {
        "n": n,
        "messages": n_messages,
        "entries": n_entries,
        "avg_message_chars": round(float(chars), 1),
        "batch_size": batch_size,
        "batches": len(batches),
        "rows": len(counts),  # one per item, plus a context row per message when enabled
        "texts_embedded": sum(b.embedded for b in batches),
        "build_s": round(build_s, 2),
        "drain_s": round(report.seconds, 2),
        "items_per_s": round(n / report.seconds, 1),
        "embed_texts_per_s": round(report.texts_per_second, 1),
        "batch_p50_ms": round(statistics.median(totals) * 1000, 1),
        "batch_p95_ms": round(percentile(totals, 0.95) * 1000, 1),
        "batch_max_ms": round(max(totals) * 1000, 1),
        "share": {k: round(v / in_batches, 3) for k, v in parts.items()},
        "upkeep_s": round(report.seconds - in_batches, 2),
        "optimized": report.optimized,
        "fts_query_ms": round(fts_ms, 1),
        "knn_query_ms": round(knn_ms, 1),
        "rss_before_drain_mb": round(rss_before_drain),
        "rss_after_drain_mb": round(rss_after_drain),
        "rss_drain_peak_mb": round(drain_peak),
        "rss_process_peak_mb": round(rss_mb()),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="items to build and drain")
    parser.add_argument(
        "--batch-size",
        help="comma list of batch sizes (default: the writer's, AXIOM_OUTBOX_BATCH_SIZE or 256)",
    )
    parser.add_argument(
        "--threads", type=int, help="torch threads (default: the writer's, AXIOM_EMBED_THREADS)"
    )
    parser.add_argument("--quick", action="store_true", help="300 items")
    parser.add_argument("--json", type=Path, help="write the bench protocol's JSON here")
    args = parser.parse_args()
    if args.quick:
        args.n = 300
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from axiom.outbox.service import apply_embed_threads, configured_embed_threads
    from axiom.vectors.config import configured_embedder, configured_embedding_version

    rss_start = rss_mb()
    t0 = time.perf_counter()
    embedder = configured_embedder()
    load_s = time.perf_counter() - t0
    apply_embed_threads(args.threads or configured_embed_threads())
    import torch

    print(
        f"embedder {configured_embedding_version()} loaded in {load_s:.1f}s;"
        f" torch threads {torch.get_num_threads()}, cpus {os.cpu_count()},"
        f" load average {os.getloadavg()[0]:.2f};"
        f" RSS {rss_start:.0f} MB before, {rss_mb():.0f} MB after loading"
    )
    embedder.embed(["warm up"] * 8)
    results = []
    from axiom.outbox.service import configured_batch_size

    sizes = args.batch_size or str(configured_batch_size())
    for size in (int(s) for s in sizes.split(",")):
        measured = run(args.n, size, embedder)
        results.append(measured)
        share = "  ".join(f"{k} {v:.0%}" for k, v in measured["share"].items())
        print(
            f"\nbatch {size}: {measured['n']} items ({measured['messages']} messages, avg"
            f" {measured['avg_message_chars']} chars; {measured['entries']} entries)"
            f"\n  drain {measured['drain_s']}s = {measured['items_per_s']} items/s end to end;"
            f" embedding {measured['embed_texts_per_s']} texts/s"
            f" ({measured['texts_embedded']} texts, {measured['rows']} LanceDB rows)"
            f"\n  {measured['batches']} batches: p50 {measured['batch_p50_ms']} ms,"
            f" p95 {measured['batch_p95_ms']} ms, max {measured['batch_max_ms']} ms; {share}"
            f"\n  index upkeep {measured['upkeep_s']}s ({measured['optimized']} optimize runs);"
            f" afterwards FTS {measured['fts_query_ms']} ms, kNN {measured['knn_query_ms']} ms"
            f"\n  RSS {measured['rss_before_drain_mb']} MB before the drain,"
            f" {measured['rss_after_drain_mb']} MB after, peak during the drain"
            f" {measured['rss_drain_peak_mb']} MB (whole process incl. building the data:"
            f" {measured['rss_process_peak_mb']} MB); load average {measured['load_average'][0]}"
            f" → {measured['load_average'][1]}"
        )
    params = {"n": args.n, "embedder": configured_embedding_version(), "runs": results}
    write_json(args.json, "outbox", params, protocol_results(results))
    return 0


def protocol_results(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per batch size: end-to-end items/s, embedding texts/s (the reference the drain is
    bound by; ratio = the share of the embedding rate the whole drain keeps) and batch time."""
    out = []
    for run in runs:
        size = run["batch_size"]
        out += [
            result(f"drain items/s (batch {size})", "items/s", value=run["items_per_s"]),
            result(
                f"drain texts/s vs embedding alone (batch {size})",
                "texts/s",
                value=run["texts_embedded"] / run["drain_s"],
                reference=run["embed_texts_per_s"],
                ratio=run["texts_embedded"] / run["drain_s"] / run["embed_texts_per_s"],
            ),
            result(f"batch time (batch {size})", "ms", [run["batch_p50_ms"]] * 2),
        ]
        out[-1].update(p95=run["batch_p95_ms"])
    return out


if __name__ == "__main__":
    sys.exit(main())
