"""EvidenceAligner V2: the three methods, every failure reason, Unicode, and properties."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from axiom.evidence.aligner import (
    AlignedEvidence,
    EvidenceAligner,
    EvidenceQuote,
    normalize,
    quote_hash,
)

ALIGNER = EvidenceAligner()

SESSION = [
    "Let's look at the schema first.",
    "We decided: content JSONB → JSON, because DuckDB has no JSONB type.",
    "OK. I'll update the migration and re-run the tests.",
]


def align(messages: list[str], index: int, quote: str) -> AlignedEvidence:
    return ALIGNER.align(messages, EvidenceQuote(index, quote))


def span_text(messages: list[str], result: AlignedEvidence) -> str:
    assert result.span_start is not None and result.span_end is not None
    return messages[result.message_index][result.span_start : result.span_end]


# ----------------------------------------------------------------------------- the seed's cases


def test_quote_present_gives_the_exact_span() -> None:
    result = align(SESSION, 1, "content JSONB → JSON")
    assert result.aligned
    assert result.method == "exact"
    assert result.confidence == 1.0
    assert (result.span_start, result.span_end) == (12, 32)
    assert span_text(SESSION, result) == "content JSONB → JSON"
    assert result.failure_reason is None
    assert not result.ambiguous and result.alternatives == 0


def test_quote_absent_is_not_aligned() -> None:
    result = align(SESSION, 1, "we will migrate everything to PostgreSQL next quarter")
    assert not result.aligned
    assert result.method is None
    assert result.span_start is None and result.span_end is None
    assert result.confidence == 0.0
    assert result.failure_reason in ("below_threshold", "not_found")


def test_quote_hash_is_sha256_of_the_quote() -> None:
    result = align(SESSION, 1, "JSONB")
    assert result.quote_hash == quote_hash("JSONB")
    assert len(result.quote_hash) == 64
    assert result.quote_hash == hashlib.sha256(b"JSONB").hexdigest()


# ----------------------------------------------------------------------------- ambiguity


def test_repeated_quote_takes_the_first_and_counts_the_others() -> None:
    messages = ["ok then ok again and ok once more"]
    result = align(messages, 0, "ok")
    assert result.method == "exact"
    assert (result.span_start, result.span_end) == (0, 2)
    assert result.ambiguous
    assert result.alternatives == 2


def test_overlapping_occurrences_count_as_alternatives() -> None:
    result = align(["aaaa"], 0, "aa")
    assert (result.span_start, result.span_end) == (0, 2)
    assert result.alternatives == 2


def test_normalized_ambiguity_is_recorded() -> None:
    messages = ["Run The Tests. then run  the tests again."]
    result = align(messages, 0, "run the tests")
    assert result.method == "normalized"
    assert span_text(messages, result) == "Run The Tests"
    assert result.ambiguous and result.alternatives == 1


# ----------------------------------------------------------------------------- failures


@pytest.mark.parametrize("quote", ["", "   ", "\n\t", "\u200b\u200d"])
def test_empty_quote(quote: str) -> None:
    result = align(SESSION, 0, quote)
    assert not result.aligned
    assert result.failure_reason == "empty_quote"


@pytest.mark.parametrize("index", [-1, 3, 99])
def test_message_index_out_of_range(index: int) -> None:
    result = align(SESSION, index, "schema")
    assert result.failure_reason == "message_index_out_of_range"
    assert result.message_index == index


def test_no_messages_at_all() -> None:
    assert align([], 0, "x").failure_reason == "message_index_out_of_range"


def test_not_found_when_nothing_in_common() -> None:
    result = align(["abc def"], 0, "xyzuvwqrsmn")
    assert result.failure_reason == "not_found"
    assert result.similarity == 0.0


def test_a_quote_that_only_shares_letters_is_not_found_not_below_threshold() -> None:
    text = ["We decided to ship on Friday."]
    for quote in ("words that are nowhere in the text", "nowhere at all"):
        result = align(text, 0, quote)
        assert result.failure_reason == "not_found"
        assert result.similarity is not None and result.similarity < 0.6


def test_a_short_quote_must_be_there_exactly_or_normalized() -> None:
    text = ["the car is red"]
    assert align(text, 0, "the cat").failure_reason == "not_found"  # 0.86 if fuzzy
    assert align(text, 0, "THE  CAR").method == "normalized"
    assert align(text, 0, "the car").method == "exact"
    assert align(["We will ship on Friday."], 0, "ship on Fridya").method == "fuzzy"


def test_not_found_in_an_empty_message() -> None:
    assert align(["", "  \r\n "], 0, "anything").failure_reason == "not_found"
    assert align(["", "  \r\n "], 1, "anything").failure_reason == "not_found"


def test_below_threshold_records_the_best_similarity() -> None:
    result = align(SESSION, 2, "I will update the schema and rerun the benchmarks")
    assert result.failure_reason == "below_threshold"
    assert result.similarity is not None and 0.0 < result.similarity < 0.85


def test_bad_input_never_raises() -> None:
    bad = [
        EvidenceQuote(True, "x"),  # a bool is not an index
        EvidenceQuote("1", "JSONB"),  # type: ignore[arg-type]
        EvidenceQuote(None, "JSONB"),  # type: ignore[arg-type]
        EvidenceQuote(1, None),  # type: ignore[arg-type]
        EvidenceQuote(1, 42),  # type: ignore[arg-type]
        EvidenceQuote(0, "\ud800 lone surrogate"),
    ]
    results = ALIGNER.align_all([*SESSION, None], bad)  # type: ignore[list-item]
    assert [r.failure_reason for r in results] == [
        "message_index_out_of_range",
        "message_index_out_of_range",
        "message_index_out_of_range",
        "empty_quote",
        "empty_quote",
        "not_found",
    ]
    assert ALIGNER.align([None], EvidenceQuote(0, "x")).failure_reason == "not_found"  # type: ignore[list-item]


def test_threshold_must_be_a_fraction() -> None:
    with pytest.raises(ValueError):
        EvidenceAligner(fuzzy_threshold=85)
    with pytest.raises(ValueError):
        EvidenceAligner(fuzzy_threshold=0)


# ----------------------------------------------------------------------------- normalized


def test_whitespace_only_difference_scores_higher_than_case() -> None:
    messages = ["first line\r\n   second   line", "Mixed CASE here"]
    ws = align(messages, 0, "first line second line")
    assert ws.method == "normalized"
    assert span_text(messages, ws) == "first line\r\n   second   line"
    assert ws.confidence == 0.99
    case = align(messages, 1, "mixed case")
    assert case.method == "normalized"
    assert span_text(messages, case) == "Mixed CASE"
    assert case.confidence == 0.97


def test_crlf_message_and_lf_quote() -> None:
    messages = ["Plan:\r\n1. migrate\r\n2. rebuild\r\n3. verify"]
    result = align(messages, 0, "1. migrate\n2. rebuild")
    assert result.method == "normalized"
    assert span_text(messages, result) == "1. migrate\r\n2. rebuild"


def test_crlf_exact() -> None:
    messages = ["a\r\nb\r\nc"]
    result = align(messages, 0, "b\r\nc")
    assert (result.method, result.span_start, result.span_end) == ("exact", 3, 7)


def test_curly_quotes_and_dashes_are_unified() -> None:
    messages = ["He said “don’t ship it” — and we didn’t."]
    result = align(messages, 0, '"don\'t ship it" - and')
    assert result.method == "normalized"
    assert span_text(messages, result) == "“don’t ship it” — and"


def test_nfkc_changes_lengths_and_the_span_still_covers_the_original() -> None:
    messages = ["Le cafe\u0301 est ferme\u0301. ﬁnal answer… Straße ＡＢＣ ㎏"]
    cases = {
        "café est fermé": "cafe\u0301 est ferme\u0301",  # composed quote, decomposed text
        "final answer...": "ﬁnal answer…",  # ligature and ellipsis expand
        "STRASSE abc": "Straße ＡＢＣ",  # ß → ss, full-width → ASCII
        "abc kg": "ＡＢＣ ㎏",
    }
    for quote, expected in cases.items():
        result = align(messages, 0, quote)
        assert result.method == "normalized", quote
        assert span_text(messages, result) == expected


def test_a_match_may_not_end_inside_an_expansion() -> None:
    # "stras" is inside normalize("Straße") = "strasse" but ends in the middle of ß's
    # "ss": not a normalized match. Fuzzy takes the whole ß and scores what it returns.
    # (A quote this long: shorter ones are never matched fuzzily.)
    messages = ["Die Straße ist lang"]
    result = align(messages, 0, "DIE STRAS IST")
    assert result.method == "fuzzy"
    assert span_text(messages, result) == "Die Straße ist"
    assert result.similarity == pytest.approx(26 / 28, abs=1e-4)


def test_decomposed_hangul_aligns_with_composed_quote() -> None:
    import unicodedata

    text = "회의 결과: 인덱스를 다시 만들기로 했습니다"
    messages = [unicodedata.normalize("NFD", text)]  # as macOS file names arrive
    result = align(messages, 0, "인덱스를 다시")
    assert result.method == "normalized"
    assert unicodedata.normalize("NFC", span_text(messages, result)) == "인덱스를 다시"


def test_zero_width_characters_are_ignored() -> None:
    messages = ["the fam\u200bily emoji 👩\u200d💻 is here"]
    result = align(messages, 0, "family emoji 👩💻")
    assert result.method == "normalized"
    assert span_text(messages, result) == "fam\u200bily emoji 👩\u200d💻"


# ----------------------------------------------------------------------------- Korean, emoji

KOREAN = [
    "안녕하세요. 오늘 회의에서 결정한 내용을 정리합니다.",
    "DuckDB의 JSONB 컬럼을 JSON으로 바꾸기로 했습니다 😀 그리고 인덱스는 나중에 다시 만듭니다.",
]


def test_korean_exact_offsets_are_code_points() -> None:
    result = align(KOREAN, 1, "JSON으로 바꾸기로 했습니다")
    assert result.method == "exact"
    assert (result.span_start, result.span_end) == (18, 34)
    assert len(KOREAN[1][:18].encode("utf-8")) == 26  # not byte offsets
    assert span_text(KOREAN, result) == "JSON으로 바꾸기로 했습니다"


def test_emoji_counts_as_one_index() -> None:
    result = align(KOREAN, 1, "😀 그리고")
    assert result.method == "exact"
    assert result.span_end - result.span_start == 5  # type: ignore[operator]
    after = align(KOREAN, 1, "인덱스는 나중에")
    assert span_text(KOREAN, after) == "인덱스는 나중에"


def test_korean_with_extra_spaces_is_normalized() -> None:
    result = align(KOREAN, 0, "오늘   회의에서\n결정한")
    assert result.method == "normalized"
    assert span_text(KOREAN, result) == "오늘 회의에서 결정한"


def test_korean_fuzzy() -> None:
    result = align(KOREAN, 1, "JSONB 칼럼을 JSON으로 바꾸기로 했습니다")  # 컬럼 misspelled
    assert result.method == "fuzzy"
    assert span_text(KOREAN, result) == "JSONB 컬럼을 JSON으로 바꾸기로 했습니다"


def test_emoji_around_a_normalized_match() -> None:
    messages = ["🚀🚀 Deploy  Finished 🎉 at 10:00"]
    result = align(messages, 0, "deploy finished 🎉")
    assert result.method == "normalized"
    assert span_text(messages, result) == "Deploy  Finished 🎉"


# ----------------------------------------------------------------------------- fuzzy

PROSE = (
    "We spent the morning on the retrieval harness. It reports recall@k and MRR on the "
    "gold set, and we will measure RRF against the normalized blend next week. The outbox "
    "writer stays single-threaded because LanceDB duplicates keys under concurrent "
    "merge_insert calls."
)


@pytest.mark.parametrize(
    ("quote", "expected"),
    [
        # substitutions
        (
            "It reprots recall@k and MRR on the gold sat",
            "It reports recall@k and MRR on the gold set",
        ),
        # a dropped word: the source is longer than the quote
        (
            "The outbox writer stays single-threaded because LanceDB duplicates keys",
            "The outbox writer stays single-threaded because LanceDB duplicates keys",
        ),
        (
            "The outbox writer single-threaded because LanceDB duplicates keys under",
            "The outbox writer stays single-threaded because LanceDB duplicates keys under",
        ),
        # an inserted word: the source is shorter than the quote
        (
            "we will definitely measure RRF against the normalized blend next week",
            "we will measure RRF against the normalized blend next week",
        ),
    ],
)
def test_fuzzy_with_typos_finds_the_words(quote: str, expected: str) -> None:
    result = align([PROSE], 0, quote)
    assert result.aligned
    assert result.method in ("fuzzy", "exact")
    assert span_text([PROSE], result) == expected
    if result.method == "fuzzy":
        assert 0.85 <= result.confidence <= 0.95
        assert result.similarity is not None and result.similarity >= 0.85
        assert not result.ambiguous


def test_fuzzy_confidence_grows_with_similarity() -> None:
    close = align([PROSE], 0, "It reports recall@k and MRR on the gold sett")
    far = align([PROSE], 0, "It reprots recal@k and MMR on teh gold sett")
    assert close.method == far.method == "fuzzy"
    assert close.similarity > far.similarity  # type: ignore[operator]
    assert close.confidence > far.confidence


def test_lower_threshold_accepts_more() -> None:
    quote = EvidenceQuote(0, "the harness reports recall and mrr values on a golden set")
    assert not ALIGNER.align([PROSE], quote).aligned
    loose = EvidenceAligner(fuzzy_threshold=0.6).align([PROSE], quote)
    assert loose.aligned and loose.method == "fuzzy"
    assert 0.85 <= loose.confidence <= 0.95


def test_quote_longer_than_the_message() -> None:
    result = align(["deploy finished"], 0, "the deploy finished")
    assert result.method == "fuzzy"
    assert span_text(["deploy finished"], result) == "deploy finished"


def test_fuzzy_in_a_long_message() -> None:
    rng = random.Random(7)
    vocabulary = "memory proof citation span event store ledger task blocker outbox"
    words = vocabulary.split()
    text = " ".join(rng.choice(words) for _ in range(4000))
    start = text.index(" ", 10_000) + 1
    end = text.index(" ", start + 150)
    original = text[start:end]
    noisy = list(original)
    for i in range(5, len(noisy), 23):
        noisy[i] = "x"
    result = align([text], 0, "".join(noisy))
    assert result.method == "fuzzy"
    assert (result.span_start, result.span_end) == (start, end)


# ----------------------------------------------------------------------------- API


def test_align_all_keeps_order_and_reuses_work() -> None:
    quotes = [
        EvidenceQuote(1, "content JSONB → JSON"),
        EvidenceQuote(1, "duckdb has no jsonb type"),
        EvidenceQuote(5, "x"),
        EvidenceQuote(2, "re-run the tests"),
    ]
    results = ALIGNER.align_all(SESSION, quotes)
    assert [r.method for r in results] == ["exact", "normalized", None, "exact"]
    assert [r.quote for r in results] == [q.quote for q in quotes]


def test_json_round_trip() -> None:
    for quote in ["content JSONB → JSON", "duckdb has no jsonb", "nothing like it at all", ""]:
        result = align(SESSION, 1, quote)
        data = json.loads(json.dumps(result.to_json(), ensure_ascii=False))
        assert AlignedEvidence.from_json(data) == result
    assert set(result.to_json()) == {
        "message_index",
        "quote",
        "quote_hash",
        "aligned",
        "method",
        "span_start",
        "span_end",
        "confidence",
        "similarity",
        "ambiguous",
        "alternatives",
        "failure_reason",
    }


def test_evidence_quote_json_accepts_extractor_spelling() -> None:
    assert EvidenceQuote.from_json({"messageIndex": 3, "quote": "q"}) == EvidenceQuote(3, "q")
    quote = EvidenceQuote(2, "가나다")
    assert EvidenceQuote.from_json(quote.to_json()) == quote


def test_normalize_is_idempotent_on_examples() -> None:
    for text in ["  A\r\n B  ", "Straße ﬁ …", "cafe\u0301", "ㄱㅏ 가"]:
        assert normalize(normalize(text)) == normalize(text)


# ----------------------------------------------------------------------------- properties

ANY_TEXT = st.lists(
    st.sampled_from(
        [
            *"abcXYZ .,-",
            "가",
            "나",
            "한국어",
            "😀",
            "👩\u200d💻",
            "\r\n",
            "\n",
            "\t",
            "e\u0301",
            "ß",
            "ﬁ",
            "…",
            "  ",
        ]
    ),
    max_size=60,
).map("".join)


@given(ANY_TEXT, st.data())
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_exact_substring_round_trips(text: str, data: st.DataObject) -> None:
    assume(text.strip())
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    quote = text[i:j]
    assume(quote.strip())
    result = align([text], 0, quote)
    assert result.aligned and result.method == "exact"
    assert text[result.span_start : result.span_end] == quote  # type: ignore[misc]


WORDY = st.lists(
    st.sampled_from([*"abcdefXYZ", "가", "나", "다", "😀", "ß", "σ", "ς", "Σ", "É"]),
    min_size=1,
    max_size=6,
).map("".join)
GAPS = st.sampled_from([" ", "  ", "\n", "\r\n", "\t", " \r\n "])


@st.composite
def perturbed_substring(draw: st.DrawFn) -> tuple[str, str]:
    words = draw(st.lists(WORDY, min_size=1, max_size=12))
    gaps = [draw(GAPS) for _ in words]
    text = "".join(w + g for w, g in zip(words, gaps, strict=True))
    i = draw(st.integers(0, len(words) - 1))
    j = draw(st.integers(i + 1, len(words)))
    quote = ""
    for w in words[i:j]:
        cased = "".join(draw(st.sampled_from([c, c.upper(), c.lower(), c.swapcase()])) for c in w)
        quote += cased + draw(GAPS)
    return text, quote


@given(perturbed_substring())
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_whitespace_and_case_perturbations_align_normalized(case: tuple[str, str]) -> None:
    text, quote = case
    result = align([text], 0, quote)
    assert result.aligned
    assert result.method in ("exact", "normalized")
    covered = text[result.span_start : result.span_end]  # type: ignore[misc]
    assert normalize(covered) == normalize(quote)


@given(ANY_TEXT, ANY_TEXT)
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_spans_are_always_in_bounds(text: str, quote: str) -> None:
    result = align([text], 0, quote)
    if result.aligned:
        assert 0 <= result.span_start <= result.span_end <= len(text)  # type: ignore[operator]
        assert result.failure_reason is None
        assert 0.85 <= result.confidence <= 1.0
    else:
        assert result.span_start is None and result.span_end is None
        assert result.failure_reason is not None
        assert result.confidence == 0.0


@given(st.text(max_size=80), st.text(max_size=30), st.integers(-2, 2))
@settings(max_examples=300)
def test_arbitrary_unicode_never_raises(text: str, quote: str, index: int) -> None:
    result = align([text], index, quote)
    if result.aligned:
        assert 0 <= result.span_start <= result.span_end <= len(text)  # type: ignore[operator]


def test_plain_fast_path_characters_really_fold_to_themselves() -> None:
    # The aligner skips these when collecting a text's distinct characters; any of them
    # that folded to something else would silently break normalized matching.
    from axiom.evidence import aligner

    for code in range(0x10000):
        ch = chr(code)
        if 0xD800 <= code <= 0xDFFF or not aligner._PLAIN.fullmatch(ch):
            continue
        assert normalize("a" + ch + "b") == "a" + ch + "b" or ch == " ", repr(ch)
        assert ch.lower() == ch


# Hostile quotes as an extractor (or an LLM) may send them: any JSON where a quote is expected.
HOSTILE_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True),
        st.text(st.characters(codec=None), max_size=30),  # lone surrogates included
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),  # fmt: skip
    max_leaves=10,
)
FAILURES = {"empty_quote", "message_index_out_of_range", "not_found", "below_threshold"}


@given(
    st.lists(st.one_of(st.text(st.characters(codec=None), max_size=80), HOSTILE_JSON), max_size=3),
    st.dictionaries(
        st.sampled_from(["message_index", "messageIndex", "quote", "other"]), HOSTILE_JSON
    ),
    st.data(),
)
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_a_hostile_quote_reproduces_its_span_or_fails_with_a_reason(
    messages: list[object], raw: dict[str, object], data: st.DataObject
) -> None:
    if messages and isinstance(messages[0], str) and messages[0] and data.draw(st.booleans()):
        text = messages[0]
        i = data.draw(st.integers(0, len(text) - 1))
        raw = {"messageIndex": 0, "quote": text[i : data.draw(st.integers(i + 1, len(text)))]}
    (result,) = ALIGNER.align_all(messages, [EvidenceQuote.from_json(raw)])  # type: ignore[arg-type]
    if not result.aligned:
        assert result.failure_reason in FAILURES and result.span_start is None
        return
    covered = span_text(messages, result)  # type: ignore[arg-type]
    if result.method == "exact":
        assert covered == result.quote
    elif result.method == "normalized":
        assert normalize(covered) == normalize(result.quote)
    else:
        assert result.method == "fuzzy" and result.similarity is not None
        assert result.similarity >= ALIGNER.fuzzy_threshold


def test_to_json_is_what_asdict_gives() -> None:
    """`AlignedEvidence.to_json` is written out for speed: it must stay `asdict`."""
    results = [
        align(SESSION, 1, "We decided: content JSONB"),
        align(SESSION, 1, "we DECIDED:  content jsonb"),
        align(SESSION, 5, "nothing"),
        align(SESSION, 0, ""),
    ]
    for result in results:
        assert result.to_json() == asdict(result)
        assert list(result.to_json()) == list(asdict(result))
