"""The text the outbox embeds for each kind of document."""

from __future__ import annotations

from axiom.ingest.locomo import format_session_day
from axiom.outbox.documents import (
    document_text_for_context,
    document_text_for_entry,
    document_text_for_message,
    document_text_for_task,
    embedding_text_for_context,
)


def test_document_text_for_locomo_messages_names_speaker_and_day() -> None:
    meta = {"speaker": "Caroline", "session_date": "1:56 pm on 8 May, 2023", "dia_id": "D1:3"}
    assert (
        document_text_for_message("user", "I went to a support group yesterday.", meta)
        == "Caroline (8 May 2023): I went to a support group yesterday."
    )
    assert document_text_for_message("assistant", " Fixed it. ", {}) == "assistant: Fixed it."
    assert document_text_for_message("user", "hi", {"name": "bob"}) == "bob: hi"
    assert document_text_for_message("user", "x" * 20_000, None).endswith("x")
    assert len(document_text_for_message("user", "x" * 20_000, None)) == 16_000


def test_document_text_for_entries_and_tasks() -> None:
    assert document_text_for_entry("Use RRF", "We fuse with RRF, k=60.") == (
        "Use RRF\nWe fuse with RRF, k=60."
    )
    assert document_text_for_entry("Ship on Friday", "Decision: ship on  friday.") == (
        "Decision: ship on  friday."
    )
    assert document_text_for_entry("Only a title", "") == "Only a title"
    assert document_text_for_task("  Add   retries ") == "Add retries"


def test_context_text_is_the_previous_document_then_its_own() -> None:
    assert document_text_for_context("a: hi", "b: hello") == "a: hi\nb: hello"
    assert document_text_for_context(None, "b: hello") == "b: hello"


def test_session_day_formats_locomo_dates_and_keeps_other_text() -> None:
    assert format_session_day("1:56 pm on 8 May, 2023") == "8 May 2023"
    assert format_session_day(" last spring ") == "last spring"


def test_the_embedded_context_keeps_the_previous_speaker_and_last_words() -> None:
    previous = "Caroline (8 May 2023): " + " ".join(f"w{i}" for i in range(30))
    short = embedding_text_for_context(previous, "Mel (8 May 2023): wow")
    assert (
        short == "Caroline: " + " ".join(f"w{i}" for i in range(10, 30)) + "\nMel (8 May 2023): wow"
    )
    assert embedding_text_for_context("a: hi", "b: hello") == "a: hi\nb: hello"
    assert embedding_text_for_context(None, "b: hello") == "b: hello"
