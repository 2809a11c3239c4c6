"""SearchService over real DuckDB and LanceDB files filled by the real pipeline."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from axiom.evidence.citations import get_citation
from axiom.projections import project_all
from axiom.retrieval.fusion import blend
from axiom.retrieval.query import MAX_QUERY_CHARS, QueryError, SearchUnavailable, validate_query
from axiom.retrieval.scoring import (
    recency_factor,
    stage_weight,
    status_penalty,
    term_coverage,
    tier_for,
)
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.store.event_types import ENTRY_STATUS_CHANGED
from axiom.store.events import EventStore, NewEvent
from axiom.vectors.embedder import EmbedderLoadError
from axiom.vectors.lance_store import LanceStore

# --- pure parts -----------------------------------------------------------------------------


def test_stage_weights_order_certified_first_and_messages_between() -> None:
    order = [stage_weight("entry", s) for s in ("certified", "verified", "candidate", "working")]
    assert order == sorted(order, reverse=True)
    assert stage_weight("entry", "raw") < stage_weight("message", None) < order[1]


def test_status_penalties() -> None:
    assert status_penalty("active") == 1.0
    assert status_penalty("contested") == 0.5
    assert status_penalty("deprecated") == 0.3
    assert status_penalty("superseded") == 0.2


def test_recency_halves_its_bonus_every_thirty_days_down_to_a_floor() -> None:
    now = datetime(2026, 6, 1)
    today, _ = recency_factor(now, now)
    month, age = recency_factor(now - timedelta(days=30), now)
    ancient, _ = recency_factor(now - timedelta(days=3000), now)
    unknown, no_age = recency_factor(None, now)
    assert today == 1.0 and age == pytest.approx(30)
    assert month == pytest.approx(0.85 + 0.15 / 2)
    assert ancient == pytest.approx(0.85) and unknown == 0.85 and no_age is None


def test_tiers_need_a_gap_for_high() -> None:
    assert tier_for(0.95, 0.5) == "high"
    assert tier_for(0.95, 0.94) == "suggested"
    assert tier_for(0.8, 0.0) == "suggested"
    assert tier_for(0.5, 0.0) == "none"
    assert term_coverage({"redi", "cach"}, {"redi", "other"}) == 0.5
    assert term_coverage(set(), {"x"}) == 0.0


def test_queries_are_validated_and_long_ones_cut_with_a_warning() -> None:
    for bad in ("", "   \n\t", None, 42):
        with pytest.raises(QueryError):
            validate_query(bad)
    text, warnings = validate_query("word " * 3000)
    assert len(text) <= MAX_QUERY_CHARS and text.endswith("word")
    assert warnings and "14,999 characters" in warnings[0]  # spaces squashed first
    assert validate_query("  redis   cache ") == ("redis cache", [])


def test_a_view_that_found_one_document_still_lifts_it() -> None:
    # z-score of a single candidate is undefined: it counts 1.0, the others 0.0.
    hits = {h.id: h for h in blend([[("rare", 3.2)], [("a", 0.9), ("b", 0.5), ("rare", 0.1)]])}
    assert hits["rare"].parts[0] == 1.0 and hits["a"].parts[0] == 0.0


# --- searching ------------------------------------------------------------------------------


def test_it_finds_the_decision_and_its_source_message(indexed: SearchService) -> None:
    result = indexed.search("why did we choose redis for the cache", k=5)
    ids = [h.id for h in result.hits]
    assert ids[0].startswith("entry:")
    assert "message:cache:1" in ids[:3]
    top = result.hits[0]
    assert top.entry_type == "decision" and "Redis" in top.summary
    assert result.timings_ms["total"] > 0 and result.candidates >= len(result.hits)


@pytest.mark.parametrize("mode", ["hybrid", "fts", "vector"])
def test_every_mode_finds_the_migration_error(indexed: SearchService, mode: str) -> None:
    result = indexed.search("migration timed out adding the index", k=3, mode=mode)
    assert result.mode == mode
    assert any(
        h.id in ("message:deploy:1", "message:deploy:2") or h.entry_type == "error"
        for h in result.hits
    )
    views = set(result.hits[0].breakdown["views"])
    expected = {
        "hybrid": {"lexical_own", "lexical_ctx", "dense_own", "dense_ctx"},
        "fts": {"lexical_own", "lexical_ctx"},
        "vector": {"dense_own", "dense_ctx"},
    }[mode]
    assert views == expected


def test_every_hit_carries_a_breakdown_a_tier_and_a_citation_that_opens(
    indexed: SearchService,
) -> None:
    # The fact extractor makes a memory of the Lisbon message too: among messages, the
    # message itself leads; among all hits, every hit (entries too) must open its citation.
    top = indexed.search("Lisbon weather river walk", k=5, kinds=("message",)).hits[0]
    result = indexed.search("Lisbon weather river walk", k=5)
    assert result.hits[0].session_id == "deploy"
    assert top.id == "message:deploy:3" and top.kind == "message"
    assert top.tier == "high" and top.match >= 0.92
    b = top.breakdown
    assert {
        "views",
        "fusion",
        "stage_weight",
        "status_penalty",
        "recency",
        "final",
        "match",
    } <= set(b)
    assert b["stage_weight"] == 0.9 and b["final"] == pytest.approx(top.score, abs=1e-4)
    assert b["match"]["gap"] >= 0.03
    for hit in result.hits:
        assert hit.tier in ("high", "suggested", "none")
        assert hit.citation is not None, hit.id
        with indexed.db.read() as conn:
            citation = get_citation(conn, hit.citation)
        assert citation is not None and citation.session_id == hit.session_id
        if hit.kind == "message":
            assert citation.kind == "message" and citation.message_index == hit.message_index
            assert citation.quote and not citation.before and not citation.after
        else:
            assert citation.entry_id == hit.entry_id
    json_hit = top.to_json()
    assert json_hit["citation"] == top.citation and json_hit["breakdown"]["views"]


def test_korean_text_is_found_through_its_stems(indexed: SearchService) -> None:
    # "결정했습니다" (decided) and "배포하기로" (to deploy) meet "결정" and "배포" on bigrams.
    for mode in ("fts", "hybrid"):
        result = indexed.search("배포 결정", k=3, mode=mode)
        ids = [h.id for h in result.hits]
        assert "message:ko:1" in ids, (mode, ids)


def test_entries_can_be_searched_alone_and_messages_alone(indexed: SearchService) -> None:
    only_messages = indexed.search("redis cache", k=10, kinds=("message",))
    only_entries = indexed.search("redis cache", k=10, kinds=("entry",))
    assert only_messages.hits and {h.kind for h in only_messages.hits} == {"message"}
    assert only_entries.hits and {h.kind for h in only_entries.hits} == {"entry"}
    with pytest.raises(QueryError):
        indexed.search("redis", kinds=("task",))


def test_a_contested_entry_drops_below_its_source_message(indexed: SearchService) -> None:
    before = indexed.search("redis cache listing queries decided", k=5)
    entry = before.hits[0]
    assert entry.kind == "entry" and entry.status == "active"
    with indexed.db.write() as conn:
        EventStore(conn).append(
            NewEvent(ENTRY_STATUS_CHANGED, {"entry_id": entry.entry_id, "to": "contested"})
        )
    project_all(indexed.db)
    after = indexed.search("redis cache listing queries decided", k=5)
    moved = next(h for h in after.hits if h.id == entry.id)
    assert moved.status == "contested" and moved.breakdown["status_penalty"] == 0.5
    assert moved.score == pytest.approx(entry.score * 0.5, rel=1e-3)
    assert after.hits[0].id == "message:cache:1"


def test_query_errors(indexed: SearchService) -> None:
    with pytest.raises(QueryError, match="empty"):
        indexed.search("   ")
    with pytest.raises(QueryError, match="mode"):
        indexed.search("redis", mode="semantic")
    with pytest.raises(QueryError, match="k must"):
        indexed.search("redis", k=0)
    with pytest.raises(QueryError, match="k must"):
        indexed.search("redis", k=101)


def test_a_ten_thousand_character_query_is_cut_not_fatal(indexed: SearchService) -> None:
    query = ("redis cache decision " * 500)[:10_000]
    result = indexed.search(query, k=3)
    assert len(result.query) <= MAX_QUERY_CHARS
    assert result.warnings and "10,000" in result.warnings[0]
    assert result.hits


def test_a_query_without_searchable_words_says_so(indexed: SearchService) -> None:
    result = indexed.search("the and of ?!", k=3, mode="fts")
    assert result.hits == []
    assert any("no searchable words" in w for w in result.warnings)


def test_a_model_that_fails_to_load(db: Database, store: LanceStore, indexed) -> None:
    def broken():  # noqa: ANN202
        raise EmbedderLoadError("could not load multilingual-e5-small: weights are missing")

    service = SearchService(db, store, broken)
    degraded = service.search("redis cache", k=3)
    assert degraded.hits and all("dense_own" not in h.breakdown["views"] for h in degraded.hits)
    assert any("weights are missing" in w for w in degraded.warnings)
    with pytest.raises(SearchUnavailable, match="could not be loaded.*weights are missing"):
        service.search("redis cache", mode="vector")


def test_a_query_embedder_of_another_vector_space_is_refused(db, store, indexed) -> None:  # noqa: ANN001
    class Other:
        name, version, dim = "other-model", "9", 384

        def embed(self, texts, kind="document"):  # noqa: ANN001, ANN202
            raise AssertionError("never called")

    with pytest.raises(SearchUnavailable, match="other-model@9.*hash-bow@test/1"):
        SearchService(db, store, Other).search("redis", mode="vector")


def test_a_missing_lancedb_directory_is_a_clear_error(db: Database, embedder, data_dir) -> None:  # noqa: ANN001
    store = LanceStore(data_dir / "nowhere", "hash-bow@test/1", 384)
    with pytest.raises(SearchUnavailable, match="does not exist: nothing has been embedded"):
        SearchService(db, store, embedder).search("redis")


def test_a_corrupt_table_is_a_clear_error(db, store, embedder, indexed) -> None:  # noqa: ANN001
    for path in Path(store.table_path).rglob("*.lance"):
        if path.is_file():
            path.write_bytes(b"not lance data")
    shutil.rmtree(Path(store.table_path) / "_versions", ignore_errors=True)
    with pytest.raises(SearchUnavailable, match="search index"):
        SearchService(db, store, embedder).search("redis cache")


def test_a_row_whose_entry_is_gone_from_duckdb_is_dropped(db, store, embedder, indexed) -> None:  # noqa: ANN001
    vector = embedder.embed(["redis cache ghost entry"])[0]
    with store.writer_lock():
        store.upsert(
            [
                {
                    "id": "entry:ent_ghost",
                    "kind": "entry",
                    "entry_id": "ent_ghost",
                    "text": "redis cache ghost entry",
                    "vector": vector,
                }
            ]
        )
        store.optimize()
    result = SearchService(db, store, embedder).search("redis cache ghost entry", k=10)
    assert "entry:ent_ghost" not in [h.id for h in result.hits]
    assert result.stale == 1


def test_an_empty_store_gives_no_hits(db, store, embedder) -> None:  # noqa: ANN001
    with store.writer_lock():
        store.upsert([])
        store._write_table()  # the writer creates the table before the first rows
    result = SearchService(db, store, embedder).search("anything at all")
    assert result.hits == [] and result.candidates == 0


# --- context rows (written by the outbox writer for search) ----------------------------------


def test_each_message_also_has_a_context_row_with_the_message_before(indexed, store) -> None:  # noqa: ANN001
    table = store.open_table_for_read()
    rows = {r["id"]: r for r in table.search().limit(None).to_list()}
    first, second = rows["context:cache:0"], rows["context:cache:1"]
    assert first["kind"] == "context" and first["text"] == rows["message:cache:0"]["text"]
    assert (
        second["text"] == rows["message:cache:0"]["text"] + "\n" + rows["message:cache:1"]["text"]
    )
    assert (second["session_id"], second["message_index"]) == ("cache", 1)


def test_reconcile_restores_a_lost_context_row(indexed, db, store, embedder) -> None:  # noqa: ANN001
    from axiom.outbox.writer import OutboxWriter

    with store.writer_lock():
        store.delete_ids(["context:cache:3"])
    writer = OutboxWriter(db, store, embedder)
    assert writer.reconcile().lost_requeued == 1
    writer.drain()
    assert store.count_by_id()["context:cache:3"] == 1


def test_threads_change_nothing_but_time(indexed, db, store, embedder) -> None:  # noqa: ANN001
    inline = SearchService(db, store, embedder, workers=0)
    for mode in ("hybrid", "fts", "vector"):
        a = indexed.search("cache entries expire", k=5, mode=mode)
        b = inline.search("cache entries expire", k=5, mode=mode)
        assert [(h.id, round(h.score, 6)) for h in a.hits] == [
            (h.id, round(h.score, 6)) for h in b.hits
        ]
