"""Korean retrieval check: which embedder (and the lexical analyzer) find Korean memories.

    python bench/retrieval_korean.py                 # minilm and e5, with LoCoMo distractors
    python bench/retrieval_korean.py --no-distractors

LoCoMo is English only, so the embedder choice also gets a small hand-written Korean set
(`bench/data/korean_dev.json`: 30 coding-session and everyday turns, 30 questions that
paraphrase them with other endings, particles and word order, one gold turn each). The
Korean turns are mixed into the 788 English turns of the two locomo-dev conversations as
distractors, as a real memory mixes languages. For each method: recall@1/5 and MRR.

Methods: bm25 (axiom's analyzer: Porter for Latin words, 2-3 character n-grams for
Hangul/CJK), each embedder alone (cosine, exact), and the z-score blend of bm25 and the
embedder that search uses (`axiom.retrieval.fusion.blend`). For torch e5 also "in
context": each turn's vector pooled from its pass with the turn before it in the file, as
the outbox writer stores a message's own vector (README, "Session 15 levers").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol import locomo_dev  # noqa: E402 - bench/protocol.py, beside this script

from axiom.evaluation.locomo import load_conversations, turn_text  # noqa: E402
from axiom.outbox.documents import embedding_text_for_context  # noqa: E402
from axiom.retrieval.fusion import blend  # noqa: E402
from axiom.retrieval.metrics import evaluate  # noqa: E402
from axiom.vectors.embedder import load_embedder  # noqa: E402
from axiom.vectors.lexical import BM25  # noqa: E402

DATA = ROOT / "bench" / "data" / "korean_dev.json"
DEV_DIR = locomo_dev(ROOT)  # found from a worktree too
DEPTH = 100


def load_corpus(distractors: bool) -> tuple[list[str], list[str], list[tuple[str, list[str]]]]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    ids = [d["id"] for d in data["documents"]]
    texts = [d["text"] for d in data["documents"]]
    if distractors:
        if not DEV_DIR.is_dir():
            raise SystemExit(f"no locomo-dev distractors at {DEV_DIR} (or --no-distractors)")
        for path in sorted(DEV_DIR.glob("*.json")):
            for conv in load_conversations(path):
                for turn in conv.turns:
                    ids.append(f"{conv.name}:{turn.dia_id}")
                    texts.append(turn_text(turn))
    questions = [(q["q"], q["gold"]) for q in data["questions"]]
    return ids, texts, questions


def top(scores: np.ndarray, ids: list[str]) -> list[tuple[str, float]]:
    order = np.argsort(-scores, kind="stable")[:DEPTH]
    return [(ids[i], float(scores[i])) for i in order]


def report(name: str, rankings: list[list[tuple[str, float]]], questions) -> dict:  # noqa: ANN001
    rep = evaluate(
        (([str(d) for d, _ in r], gold) for r, (_q, gold) in zip(rankings, questions, strict=True)),
        ks=(1, 5),
    )
    row = {"method": name, "r@1": rep.recall[1], "r@5": rep.recall[5], "mrr": rep.mrr}
    print(f"{name:<16} {row['r@1']:.3f}  {row['r@5']:.3f}  {row['mrr']:.3f}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedders", default="minilm,e5")
    ap.add_argument("--no-distractors", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    ids, texts, questions = load_corpus(not args.no_distractors)
    print(f"{len(questions)} Korean questions over {len(texts)} documents")
    print("method            r@1    r@5    mrr")
    bm25 = BM25()
    bm25.add(texts)
    lexical = [top(bm25.scores(q), ids) for q, _ in questions]
    rows = [report("bm25", lexical, questions)]
    for name in args.embedders.split(","):
        embedder = load_embedder(name.strip())
        docs = embedder.embed(texts, kind="document")
        queries = embedder.embed([q for q, _ in questions], kind="query")
        dense = [top(docs @ qv, ids) for qv in queries]
        rows.append(report(name, dense, questions))
        fused = [
            [(h.id, h.score) for h in blend([lex, den], norm="zscore")]
            for lex, den in zip(lexical, dense, strict=True)
        ]
        rows.append(report(f"bm25+{name} (z)", fused, questions))
        if getattr(embedder, "in_context", False):
            contexts = [
                embedding_text_for_context(texts[i - 1] if i else None, t)
                for i, t in enumerate(texts)
            ]
            pooled = embedder.embed_in_context(contexts, texts)[1]  # type: ignore[attr-defined]
            dense = [top(pooled @ qv, ids) for qv in queries]
            rows.append(report(f"{name} in context", dense, questions))
            fused = [
                [(h.id, h.score) for h in blend([lex, den], norm="zscore")]
                for lex, den in zip(lexical, dense, strict=True)
            ]
            rows.append(report(f"bm25+{name} in ctx", fused, questions))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
