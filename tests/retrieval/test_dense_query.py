"""The dense views' query leaves out the names of the people the memory knows about."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from axiom.entries.queries import subject_names
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.retrieval.dense_query import REFRESH_SECONDS, KnownSubjects, dense_query
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from tests.retrieval.conftest import HashEmbedder, chat, serve

PEOPLE = frozenset({"melanie", "caroline"})


def _known() -> frozenset[str]:
    return PEOPLE


def test_known_names_are_cut_with_their_possessive() -> None:
    assert dense_query("What do Melanie's kids like?", _known) == "What do kids like?"
    assert dense_query("What has Melanie painted?", _known) == "What has painted?"
    assert (
        dense_query("What subject have Caroline and Melanie both painted?", _known)
        == "What subject have and both painted?"
    )


def test_names_the_store_does_not_know_stay() -> None:
    assert (
        dense_query("What LGBTQ+ events has Caroline attended?", _known)
        == "What LGBTQ+ events has attended?"
    )
    assert dense_query("Which city have Jean and John visited?", _known) == (
        "Which city have Jean and John visited?"
    )


def test_when_questions_and_name_only_queries_keep_their_names() -> None:
    assert dense_query("When did Melanie go camping?", _known) == "When did Melanie go camping?"
    assert dense_query("How long has Caroline had her friends?", _known) == (
        "How long has Caroline had her friends?"
    )
    assert dense_query("- Melanie?", _known) == "- Melanie?"


def test_the_store_is_asked_only_when_the_query_names_someone() -> None:
    asked: list[bool] = []

    def known() -> frozenset[str]:
        asked.append(True)
        return PEOPLE

    assert dense_query("what did melanie paint", known) == "what did melanie paint"
    assert dense_query("When did Melanie paint?", known) == "When did Melanie paint?"
    assert not asked
    dense_query("What did Melanie paint?", known)
    assert asked == [True]


class RecordingEmbedder(HashEmbedder):
    """The test embedder, keeping the texts it embedded as queries."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed(self, texts: Sequence[str], kind: str = "document") -> np.ndarray:
        if kind == "query":
            self.queries.extend(texts)
        return super().embed(texts, kind)


SESSIONS = [
    chat(
        "s1",
        "2023-05-08T13:56:00",
        [
            ("Melanie", "I signed up for a pottery class, clay is so calming."),
            ("Caroline", "Melanie, your pottery looks amazing!"),
            ("Melanie", "I painted a sunset over the lake last weekend."),
            ("Caroline", "I'm researching adoption agencies for my family."),
        ],
    ),
]


@pytest.fixture
def recorder() -> RecordingEmbedder:
    return RecordingEmbedder()


@pytest.fixture
def friends(
    tmp_path: Path, db: Database, store: LanceStore, recorder: RecordingEmbedder
) -> Iterator[SearchService]:
    yield from serve(tmp_path, db, store, recorder, SESSIONS)


def test_the_entries_subjects_are_the_known_names(db: Database, friends: SearchService) -> None:
    assert {"melanie", "caroline"} <= KnownSubjects(db).names()


def test_hybrid_search_embeds_the_question_without_the_known_names(
    friends: SearchService, recorder: RecordingEmbedder
) -> None:
    recorder.queries.clear()
    found = friends.search("What has Melanie painted?", k=3, kinds=("message",))
    assert recorder.queries == ["What has painted?"]
    # the full-text views and the subject cue still see the name
    assert found.hits[0].meta["speaker"] == "Melanie"
    assert found.hits[0].breakdown["subject_boost"] > 1.0


def test_other_rankings_embed_the_question_as_asked(
    friends: SearchService, recorder: RecordingEmbedder
) -> None:
    recorder.queries.clear()
    friends.search("What has Melanie painted?", k=3, fusion="rrf")
    friends.search("What has Melanie made?", k=3, mode="vector")
    friends.search("When did Melanie paint the lake?", k=3)
    assert recorder.queries == [
        "What has Melanie painted?",
        "What has Melanie made?",
        "When did Melanie paint the lake?",
    ]


def test_a_new_subject_is_known_after_the_store_changes(
    tmp_path: Path, db: Database, friends: SearchService
) -> None:
    """...once `REFRESH_SECONDS` have passed since the last read (a clock, not a sleep)."""
    now = [0.0]
    known = KnownSubjects(db, clock=lambda: now[0])
    assert "gina" not in known.names()
    ingest_transcripts(
        db, [chat("s2", "2023-06-01T10:00:00", [("Gina", "I opened my own clothing store.")])]
    )
    process_session(db, "s2", Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris"))
    assert "gina" not in known.names()  # read again at most once per REFRESH_SECONDS
    now[0] += REFRESH_SECONDS
    assert "gina" in known.names()


def test_things_entries_are_about_are_not_people(tmp_path: Path, db: Database) -> None:
    """A coding session's facts are about "Redis" and "Docker", but no session names them
    as a speaker: the question is embedded as asked."""
    said = ["The Redis port is 6380.", "Docker is the default runtime for the workers."]
    messages = tuple(
        Message(i, role, t)
        for i, (role, t) in enumerate(zip(("user", "assistant"), said, strict=True))
    )
    ingest_transcripts(db, [Transcript("code", "api", "claude_code", messages)])
    process_session(db, "code", Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris"))
    with db.read() as conn:
        subjects = {(s or "").split()[0].lower() for s in subject_names(conn)}
    assert "redis" in subjects  # the fact is about Redis...
    known = KnownSubjects(db)
    assert known.names() == frozenset()  # ...but Redis is no person
    question = "Which port does Redis use?"
    assert dense_query(question, known.names) == question
