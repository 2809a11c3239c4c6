"""Shared photos, things named before the speaker's verb, and replies naming what was asked:
chat turns whose facts sit outside a plain "I did X" sentence. Sentences written for these
tests (not from any data set), through the whole rule extractor."""

from __future__ import annotations

from axiom.extract.facts import find_fact
from axiom.extract.rules import RuleExtractor
from axiom.extract.types import ExtractedEntry
from axiom.ingest.transcript import Message, Transcript


def _chat(*turns: tuple[str, str]) -> Transcript:
    messages = tuple(
        Message(i, "user" if speaker == "Dana" else "assistant", text, meta={"speaker": speaker})
        for i, (speaker, text) in enumerate(turns)
    )
    return Transcript("s1", "demo", "locomo", messages)


def _entries(t: Transcript, index: int) -> list[ExtractedEntry]:
    found = RuleExtractor().extract(t).entries
    return [e for e in found if any(ev.message_index == index for ev in e.evidence)]


def test_a_photo_the_speaker_points_at_is_a_fact_quoting_the_caption() -> None:
    t = _chat(
        ("Dana", "Great to hear, Sam! Oh, take a look at this. [image: a photo of a clay vase]")
    )
    (entry,) = _entries(t, 0)
    assert entry.type == "fact" and entry.subject == "Dana"
    assert entry.title == "Dana shared a photo: a clay vase"
    quotes = [e.quote for e in entry.evidence]
    assert quotes == ["Oh, take a look at this.", "[image: a photo of a clay vase]"]
    assert all(q in t.messages[0].text for q in quotes)


def test_a_photo_nobody_refers_to_is_no_memory() -> None:
    t = _chat(("Dana", "You got this, Sam! [image: a photo of a sunrise over the hills]"))
    assert _entries(t, 0) == []


def test_a_caption_joins_what_the_speaker_says_in_the_same_message() -> None:
    t = _chat(("Dana", "I started a weaving class last week. [image: a photo of a blue rug]"))
    (entry,) = _entries(t, 0)
    assert [e.quote for e in entry.evidence][-1] == "[image: a photo of a blue rug]"


def test_a_thing_named_before_what_the_speaker_did_with_it_is_their_fact() -> None:
    for sentence in (
        "These boots I bought on Monday keep my feet warm.",
        "One great memory is this folk festival we went to in June.",
    ):
        found = find_fact(sentence, "Dana")
        assert found is not None and found.fields.subject == "Dana", sentence
    assert find_fact("The way I see it, rain is fine.", "Dana") is None


def test_a_reply_naming_what_was_asked_is_a_fact_of_the_one_replying() -> None:
    t = _chat(
        ("Sam", "Sounds fun! Which choir was it?"),
        ("Dana", "Thanks! It was the Riverside Singers, they were wonderful."),
    )
    (entry,) = _entries(t, 1)
    assert entry.subject == "Dana"
    assert "It was the Riverside Singers" in entry.evidence[0].quote


def test_the_same_words_without_a_question_before_are_not_a_fact() -> None:
    t = _chat(
        ("Sam", "Sounds fun! Glad you went."),
        ("Dana", "Thanks! It was the Riverside Singers, they were wonderful."),
    )
    assert _entries(t, 1) == []


def test_a_chat_question_is_no_question_to_answer() -> None:
    t = _chat(
        ("Sam", "Hey Dana! What's up?"),
        ("Dana", "Thanks! It's a busy week, the rain never stops."),
    )
    assert _entries(t, 1) == []


def test_korean_photos_and_replies_are_read_the_same_way() -> None:
    t = _chat(
        ("Dana", "주말 잘 보냈어? 이거 좀 봐! [image: a photo of a kite on a beach]"),
        ("Sam", "멋지다! 어떤 공연이었어?"),
        ("Dana", "고마워. 시 낭독회였어요."),
    )
    (photo,) = _entries(t, 0)
    assert photo.evidence[-1].quote == "[image: a photo of a kite on a beach]"
    (reply,) = _entries(t, 2)
    assert reply.subject == "Dana" and "시 낭독회였어요." in reply.evidence[0].quote
