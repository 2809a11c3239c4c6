"""RuleExtractor on hand-written Claude-Code-like sessions (English and Korean) and on a real
LoCoMo conversation. The invariant checked everywhere: every quote is an exact substring of
the message it names, so the aligner downstream can find it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from axiom.extract import (
    ExtractedEntry,
    ExtractionResult,
    Extractor,
    RuleExtractor,
    make_entry_id,
    normalize_title,
)
from axiom.extract.rules import MAX_QUOTE, MIN_QUOTE, RULESET_VERSION
from axiom.ingest.transcript import Message, ToolCall, Transcript
from tests.locomo_data import LOCOMO_DEV

LOCOMO_26 = LOCOMO_DEV / "26.json"


# --------------------------------------------------------------------------- helpers


def session(
    *messages: tuple[str, str], source: str = "claude_code", sid: str = "s-1"
) -> Transcript:
    return Transcript(
        session_id=sid,
        project="axiom",
        source=source,
        messages=tuple(Message(index=i, role=r, text=t) for i, (r, t) in enumerate(messages)),
    )


def todo_call(todos: object, call_id: str = "toolu_1") -> ToolCall:
    return ToolCall(tool_use_id=call_id, name="TodoWrite", input={"todos": todos})


def extract(transcript: Transcript) -> ExtractionResult:
    result = RuleExtractor().extract(transcript)
    assert_quotes_are_exact(result, transcript)
    return result


def of_type(result: ExtractionResult, kind: str) -> list[ExtractedEntry]:
    return [e for e in result.entries if e.type == kind]


def visible_parts(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\[PRIVATE\]", text) if p.strip()]


def assert_quotes_are_exact(result: ExtractionResult, transcript: Transcript) -> None:
    by_index = {m.index: m for m in transcript.messages}
    for entry in result.entries:
        assert entry.evidence, entry
        for ev in entry.evidence:
            assert ev.quote, entry
            assert "[PRIVATE]" not in ev.quote
            if entry.task is not None and entry.task.source == "todowrite":
                continue  # documented: the todo text is quoted even where the text lacks it
            text = by_index[ev.message_index].text
            assert ev.quote in text, (entry.type, ev)
            assert len(ev.quote) <= MAX_QUOTE, ev
            assert len(ev.quote) >= MIN_QUOTE or any(ev.quote == p for p in visible_parts(text))


# --------------------------------------------------------------------------- identity


def test_it_satisfies_the_extractor_protocol_and_names_its_rule_set() -> None:
    extractor = RuleExtractor()
    assert isinstance(extractor, Extractor)
    assert extractor.name == "rules"
    assert extractor.model == "rules-v1"
    assert extractor.prompt_hash == hashlib.sha256(RULESET_VERSION.encode()).hexdigest()


def test_entry_ids_are_derived_from_session_type_title_and_first_message() -> None:
    entry_id = make_entry_id("s-1", "decision", "Use  DuckDB.", 3)
    assert re.fullmatch(r"ent_[0-9a-f]{16}", entry_id)
    assert entry_id == make_entry_id("s-1", "decision", "use duckdb", 3)
    assert entry_id != make_entry_id("s-2", "decision", "use duckdb", 3)
    assert entry_id != make_entry_id("s-1", "fact", "use duckdb", 3)
    assert entry_id != make_entry_id("s-1", "decision", "use duckdb", 4)
    assert normalize_title("  Ｄｕｃｋ  DB! ") == "duck db"


# --------------------------------------------------------------------------- decisions


def test_it_finds_english_decisions_and_ignores_questions_and_negations() -> None:
    t = session(
        ("user", "Postgres feels heavy. Should we go with Redis instead?"),
        ("assistant", "We decided to use DuckDB for the event store, with JSON columns."),
        ("user", "Agreed, let's go with DuckDB. We haven't decided on the queue yet."),
        ("assistant", "I'll use rapidfuzz instead of difflib for the fuzzy alignment step."),
        ("assistant", "Decision: vectors are written by a single outbox writer only."),
    )
    result = extract(t)
    decisions = of_type(result, "decision")
    quotes = [d.evidence[0].quote for d in decisions]
    assert quotes == [
        "We decided to use DuckDB for the event store, with JSON columns.",
        "Agreed, let's go with DuckDB.",
        "I'll use rapidfuzz instead of difflib for the fuzzy alignment step.",
        "Decision: vectors are written by a single outbox writer only.",
    ]
    assert [d.evidence[0].message_index for d in decisions] == [1, 2, 3, 4]
    assert decisions[3].title == "Vectors are written by a single outbox writer only"
    assert not any("queue" in q or "Redis" in q for q in quotes)


def test_it_finds_korean_decisions() -> None:
    t = session(
        ("user", "이벤트 저장소는 DuckDB를 쓰기로 했습니다."),
        ("assistant", "결정: 임베딩 모델은 오프라인으로 로드되는 것만 사용한다."),
        ("user", "패키지 관리는 uv로 가자."),
        ("user", "pip 대신 uv를 사용하기로 합의했어요."),
        ("user", "아직 결정하지 못했어요."),
    )
    decisions = of_type(extract(t), "decision")
    assert [d.evidence[0].message_index for d in decisions] == [0, 1, 2, 3]
    assert decisions[0].evidence[0].quote == "이벤트 저장소는 DuckDB를 쓰기로 했습니다."
    # a message shorter than 20 characters is quoted whole
    assert decisions[2].evidence[0].quote == "패키지 관리는 uv로 가자."


# --------------------------------------------------------------------------- errors and fixes


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "axiom/store/migrate.py", line 12, in migrate\n'
    "    conn.execute(sql)\n"
    "duckdb.CatalogException: Catalog Error: Type with name JSONB does not exist!"
)


def test_it_pairs_an_error_with_the_fix_found_later() -> None:
    t = session(
        ("assistant", "Running the migrations now."),
        ("tool_result", TRACEBACK),
        ("assistant", "Let me look at the schema file."),
        ("assistant", "Fixed by changing the payload column to JSON in 0001_events.sql."),
    )
    errors = of_type(extract(t), "error")
    assert len(errors) == 1
    error = errors[0]
    assert error.title.startswith("duckdb.CatalogException: Catalog Error")
    assert [ev.message_index for ev in error.evidence] == [1, 3]
    assert error.evidence[0].quote == (
        "duckdb.CatalogException: Catalog Error: Type with name JSONB does not exist!"
    )
    assert "Fix: Fixed by changing the payload column to JSON" in error.content


def test_an_error_without_a_fix_has_one_piece_of_evidence() -> None:
    t = session(
        ("tool_result", "npm ERR! code ERESOLVE unable to resolve dependency tree"),
        ("user", "The build failed again on CI, can you check the lockfile."),
        ("assistant", "There are no errors in the log now."),
    )
    errors = of_type(extract(t), "error")
    assert [len(e.evidence) for e in errors] == [1, 1]
    assert errors[0].evidence[0].quote.startswith("npm ERR! code ERESOLVE")
    assert (
        errors[1].evidence[0].quote == "The build failed again on CI, can you check the lockfile."
    )


def test_it_pairs_korean_errors_and_fixes() -> None:
    t = session(
        ("user", "마이그레이션을 실행하니 JSONB 타입이 없다는 오류가 납니다."),
        ("assistant", "컬럼 타입을 JSON으로 바꿔서 해결했습니다."),
        ("user", "아직 해결 안 됐어요? 다른 에러는 없어요."),
    )
    errors = of_type(extract(t), "error")
    assert len(errors) == 1
    assert [ev.message_index for ev in errors[0].evidence] == [0, 1]
    assert errors[0].evidence[1].quote == "컬럼 타입을 JSON으로 바꿔서 해결했습니다."


def test_the_same_error_repeated_is_one_entry_and_gets_the_fix() -> None:
    line = "ModuleNotFoundError: No module named 'duckdb_ext_fts'"
    t = session(
        ("tool_result", line),
        ("tool_result", line),
        ("assistant", "The fix was to pin duckdb-ext-fts next to duckdb in pyproject.toml."),
    )
    errors = of_type(extract(t), "error")
    assert len(errors) == 1
    assert [ev.message_index for ev in errors[0].evidence] == [0, 2]


# --------------------------------------------------------------------------- references


def test_it_finds_each_reference_once_at_its_first_mention() -> None:
    t = session(
        (
            "user",
            "See https://github.com/duckdb/duckdb/issues/123, and axiom/extract/rules.py. "
            "Tracked as PLAT-142 and in anthropics/claude-code#12; also #77.",
        ),
        ("assistant", "I read axiom/extract/rules.py again. UTF-8 and GPT-4 are not tickets."),
        ("assistant", "```\ncat /etc/hosts docs/ignored_in_code.md\n```"),
        ("tool_result", "src/listing_from_a_tool.py"),
    )
    refs = of_type(extract(t), "reference")
    assert [r.title for r in refs] == [
        "https://github.com/duckdb/duckdb/issues/123",
        "axiom/extract/rules.py",
        "PLAT-142",
        "anthropics/claude-code#12",
        "#77",
    ]
    assert all(r.evidence[0].message_index == 0 for r in refs)
    assert all(r.title in r.evidence[0].quote for r in refs)


# --------------------------------------------------------------------------- facts


def test_it_finds_project_and_personal_facts_but_not_every_sentence() -> None:
    t = session(
        ("user", "Hi! Sounds good. The project uses DuckDB 1.4.4 pinned in pyproject."),
        ("user", "Axiom runs on Python 3.11 only. `config.py` is the only settings module."),
        ("user", "My name is Jisoo and I live in Busan."),
        ("assistant", "I'm going to read the file first. It is a big file."),
        ("user", "저는 부산에 살아요. 이 서비스는 DuckDB를 사용합니다."),
    )
    facts = of_type(extract(t), "fact")
    quotes = [(f.evidence[0].message_index, f.evidence[0].quote) for f in facts]
    assert quotes == [
        (0, "The project uses DuckDB 1.4.4 pinned in pyproject."),
        (1, "Axiom runs on Python 3.11 only."),
        (1, "`config.py` is the only settings module."),
        (2, "My name is Jisoo and I live in Busan."),
        # "저는 부산에 살아요." is 11 characters: widened with the next sentence
        (4, "저는 부산에 살아요. 이 서비스는 DuckDB를 사용합니다."),
        (4, "이 서비스는 DuckDB를 사용합니다."),
    ]
    assert len({f.entry_id for f in facts}) == len(facts)


# --------------------------------------------------------------------------- tasks from text


def test_it_reads_english_task_phrases_with_their_blockers() -> None:
    t = session(
        ("assistant", "TODO: add retries to the outbox writer."),
        ("assistant", "Next step: wire the aligner into process_session; then rerun."),
        ("user", "We still need to pin duckdb-ext-fts in the lock file."),
        ("user", "The release is blocked by ABC-123 and the security review until Friday."),
        ("user", "Deploying the viewer is waiting on owner/repo#7."),
        ("user", "You don't need to touch the parser."),
    )
    tasks = of_type(extract(t), "task_note")
    got = [(e.title, e.task.status, e.task.blocked_by) for e in tasks if e.task]
    assert got == [
        ("Add retries to the outbox writer", "pending", ()),
        ("Wire the aligner into process_session", "pending", ()),
        ("Pin duckdb-ext-fts in the lock file", "pending", ()),
        ("Release", "blocked", ("ABC-123", "the security review")),
        ("Deploying the viewer", "blocked", ("owner/repo#7",)),
    ]
    assert all(e.task and e.task.source == "text" for e in tasks)


def test_it_reads_korean_task_phrases_with_their_blockers() -> None:
    t = session(
        ("user", "할 일: 검색 인덱스를 다시 만들기"),
        ("user", "다음 단계는 LoCoMo 평가 스크립트를 작성하는 것입니다."),
        ("user", "배포가 인증서 발급 때문에 막혀 있어요."),
        ("user", "릴리스는 보안 검토를 기다리는 중입니다."),
    )
    tasks = of_type(extract(t), "task_note")
    got = [(e.title, e.task.status, e.task.blocked_by) for e in tasks if e.task]
    assert got == [
        ("검색 인덱스를 다시 만들기", "pending", ()),
        ("LoCoMo 평가 스크립트를 작성하는 것입니다", "pending", ()),
        ("배포", "blocked", ("인증서 발급",)),
        ("릴리스", "blocked", ("보안 검토",)),
    ]


def test_a_korean_blocked_subject_keeps_its_whole_noun_phrase() -> None:
    """ "한글 폰트 임베딩 작업은 BILL-77 때문에 막혀 있어" names the font embedding work, not
    "작업" (work): the nouns before the topic word belong to the title (a genitive 의
    included); a leading conjunction, an earlier clause or a word carrying another particle
    do not."""
    t = session(
        ("user", "한글 폰트 임베딩 작업은 BILL-77 때문에 막혀 있어."),
        ("user", "그리고 스테이징 배포는 OPS-311 때문에 막혀 있어요."),
        ("user", "어제 확인해보니 결제 웹훅 테스트가 인증서 발급 때문에 막혀 있다."),
        ("user", "로그인 페이지의 디자인 작업이 아직 막혀 있어요."),
    )
    tasks = of_type(extract(t), "task_note")
    got = [(e.title, e.task.status, e.task.blocked_by) for e in tasks if e.task]
    assert got == [
        ("한글 폰트 임베딩 작업", "blocked", ("BILL-77",)),
        ("스테이징 배포", "blocked", ("OPS-311",)),
        ("결제 웹훅 테스트", "blocked", ("인증서 발급",)),
        ("로그인 페이지의 디자인 작업", "blocked", ()),
    ]


def test_first_person_current_work_and_status_reports_about_tickets() -> None:
    t = session(
        ("user", "I'm fixing the login bug; the deploy is blocked by OPS-99."),
        ("user", "We're currently refactoring the billing module."),
        ("user", "I'm updating the schema docs."),
        ("assistant", "OPS-99 is done, so the deploy is unblocked."),
        ("user", "#412 was closed."),
    )
    tasks = of_type(extract(t), "task_note")
    got = [(e.task.title, e.task.status, e.task.blocked_by, e.task.update_only) for e in tasks]
    assert got == [
        ("Fix the login bug", "in_progress", (), False),
        ("Deploy", "blocked", ("OPS-99",), False),
        ("Refactor the billing module", "in_progress", (), False),
        ("Update the schema docs", "in_progress", (), False),
        ("OPS-99", "done", (), True),
        ("deploy", "in_progress", (), True),
        ("#412", "done", (), True),
    ]


_SMALL_TALK_VERBS = ["feeling", "going", "staying", "thinking", "loving", "writing", "updating"]
_SMALL_TALK_OBJECTS = ["good", "for my dreams", "positive", "of you", "it", "all my plans down"]


@settings(max_examples=60, deadline=None)
@given(
    who=st.sampled_from(["I'm", "I am", "We're", "I’m"]),
    verb=st.sampled_from(_SMALL_TALK_VERBS),
    what=st.sampled_from(_SMALL_TALK_OBJECTS),
)
def test_small_talk_in_the_progressive_is_no_task(who: str, verb: str, what: str) -> None:
    t = session(("user", f"{who} {verb} {what} these days."))
    assert of_type(extract(t), "task_note") == []


# --------------------------------------------------------------------------- TodoWrite


def test_it_maps_todowrite_calls_and_reports_only_changes() -> None:
    first = [
        {"content": "Write the events migration", "status": "in_progress", "priority": "high"},
        {"content": "Build the importer", "status": "pending", "activeForm": "Building"},
    ]
    second = [
        {"content": "Write the events migration", "status": "completed", "priority": "high"},
        {"content": "Build the importer", "status": "pending", "activeForm": "Building"},
    ]
    t = Transcript(
        session_id="s-1",
        project="axiom",
        source="claude_code",
        messages=(
            Message(0, "user", "Please write the events migration and build the importer."),
            Message(1, "assistant", "I'll track this.", tool_calls=(todo_call(first),)),
            Message(2, "tool_result", "Todos have been modified successfully."),
            Message(3, "assistant", "Migration done.", tool_calls=(todo_call(second, "t2"),)),
        ),
    )
    result = extract(t)
    tasks = of_type(result, "task_note")
    got = [(e.task.title, e.task.status, e.task.priority, e.task.source) for e in tasks if e.task]
    assert got == [
        ("Write the events migration", "in_progress", "high", "todowrite"),
        ("Build the importer", "pending", None, "todowrite"),
        ("Write the events migration", "done", "high", "todowrite"),
    ]
    assert tasks[0].entry_id != tasks[2].entry_id
    assert result.errors == ()


def test_todo_evidence_points_at_visible_text_when_there_is_some() -> None:
    t = Transcript(
        session_id="s-1",
        project="axiom",
        source="claude_code",
        messages=(
            Message(0, "user", "First: Publish the package to the internal index, please."),
            Message(
                1,
                "assistant",
                "On it.",
                tool_calls=(
                    todo_call(
                        [
                            {"content": "Publish the package to the internal index"},
                            {"content": "Rotate the registry credentials", "status": "pending"},
                        ]
                    ),
                ),
            ),
        ),
    )
    tasks = of_type(RuleExtractor().extract(t), "task_note")
    found, absent = tasks[0], tasks[1]
    assert found.evidence[0].message_index == 0
    assert found.evidence[0].quote in t.messages[0].text
    # not in any text: the todo content is quoted at the tool call; the aligner reports it
    assert absent.evidence[0].message_index == 1
    assert absent.evidence[0].quote == "Rotate the registry credentials"
    assert absent.evidence[0].quote not in t.messages[1].text


def test_missing_or_bad_todowrite_fields_are_tolerated_and_recorded() -> None:
    todos = [
        {"content": "No status here"},
        {"activeForm": "Running the linter", "status": "in_progress"},
        {"status": "pending"},
        "not an object",
        {"content": "Odd values", "status": "waiting", "priority": "urgent"},
    ]
    t = Transcript(
        session_id="s-1",
        project="axiom",
        source="claude_code",
        messages=(
            Message(0, "assistant", "", tool_calls=(todo_call(todos),)),
            Message(
                1,
                "assistant",
                "",
                tool_calls=(ToolCall("t9", "TodoWrite", {"items": []}),),
            ),
        ),
    )
    result = RuleExtractor().extract(t)
    tasks = [(e.task.title, e.task.status, e.task.priority) for e in result.entries if e.task]
    assert tasks == [
        ("No status here", None, None),
        ("Running the linter", "in_progress", None),
        ("Odd values", None, None),
    ]
    errors = "\n".join(result.errors)
    assert "todo #0: no 'status'" in errors
    assert "todo #1: no 'content'; used 'activeForm'" in errors
    assert "todo #2: no 'content' or 'activeForm'; skipped" in errors
    assert "todo #3: not an object" in errors
    assert "todo #4: unknown status 'waiting'" in errors
    assert "todo #4: unknown priority 'urgent'" in errors
    assert "message 1: TodoWrite call t9: no 'todos' list" in errors
    # ... and kept with their original values for the task system
    odd = next(e for e in result.entries if e.task and e.task.title == "Odd values")
    assert [(p.field, p.value, p.reason) for p in odd.task.problems] == [
        ("status", "waiting", "unknown_status"),
        ("priority", "urgent", "unknown_priority"),
    ]
    assert [(p.field, p.value, p.reason, p.item) for p in result.task_problems] == [
        ("title", {"status": "pending"}, "missing_title", 2),
        ("mention", "not an object", "todo_not_an_object", 3),
        ("mention", None, "missing_todos", None),
    ]
    assert ExtractionResult.from_json(result.to_json()) == result


# --------------------------------------------------------------------------- quoting


def test_private_segments_are_never_read_or_quoted() -> None:
    t = session(
        ("user", "My token is [PRIVATE] and we decided to use Valkey for the broker."),
        ("user", "<private>We decided to use the secret plan.</private>"),
        ("user", "[PRIVATE]"),
    )
    result = extract(t)
    decisions = of_type(result, "decision")
    assert [d.evidence[0].quote for d in decisions] == [
        "and we decided to use Valkey for the broker."
    ]
    assert not any("secret" in e.content for e in result.entries)


def test_long_sentences_are_cut_to_200_characters_around_the_match() -> None:
    filler = "the quick brown fox jumps over the lazy dog " * 8
    text = f"After a long discussion about {filler}we decided to use LanceDB for vectors and {filler}end."
    t = session(("user", text))
    decision = of_type(extract(t), "decision")[0]
    quote = decision.evidence[0].quote
    assert len(quote) <= MAX_QUOTE
    assert "we decided" in quote
    start = text.index(quote)
    assert text[start - 1] == " " and text[start + len(quote)] == " "


def test_short_sentences_are_widened_to_twenty_characters() -> None:
    t = session(("user", "Okay. Let's go with uv. It is simpler than pip-tools."))
    quote = of_type(extract(t), "decision")[0].evidence[0].quote
    assert quote == "Let's go with uv. It is simpler than pip-tools."


def test_code_blocks_are_not_read_as_prose_but_errors_in_them_are() -> None:
    t = session(
        (
            "assistant",
            "Here is the output:\n```\n# TODO: we decided nothing here\nValueError: bad quote\n```",
        )
    )
    result = extract(t)
    assert [e.type for e in result.entries] == ["error"]


# --------------------------------------------------------------------------- determinism


def test_extracting_twice_gives_identical_entries_and_ids_are_unique() -> None:
    t = session(
        ("user", "We decided to use DuckDB. TODO: add a benchmark in bench/ingest.py."),
        ("tool_result", "Error: connection refused"),
        ("assistant", "Fixed by starting valkey first. See https://valkey.io/topics/."),
    )
    first, second = RuleExtractor().extract(t), RuleExtractor().extract(t)
    assert first == second
    assert json.dumps(first.to_json()) == json.dumps(second.to_json())
    ids = [e.entry_id for e in first.entries]
    assert len(ids) == len(set(ids))


def test_results_round_trip_through_json() -> None:
    t = session(
        ("user", "Publishing is blocked by PLAT-142. We decided to use DuckDB."),
        ("tool_result", TRACEBACK),
        ("assistant", "The fix was to use JSON."),
    )
    result = RuleExtractor().extract(t)
    assert result.entries
    assert ExtractionResult.from_json(json.loads(json.dumps(result.to_json()))) == result


def test_entries_from_json_reject_unknown_types() -> None:
    data = {"entry_id": "ent_1", "type": "rumour", "title": "x", "content": "x", "evidence": []}
    with pytest.raises(ValueError, match="entry type"):
        ExtractedEntry.from_json(data)


_FRAGMENTS = [
    "We decided to use DuckDB.",
    "let's go with uv",
    "TODO: write tests",
    "blocked by ABC-12",
    "결정: 정렬은 rapidfuzz로 한다.",
    "배포가 인증서 때문에 막혀 있다",
    "Error: boom",
    "Fixed by restarting.",
    "[PRIVATE]",
    "see axiom/x.py and https://example.org/a.",
    "I went to Busan last week.",
    "\n```\n",
    "\n",
    ". ",
    "  ",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=25), max_size=12).map("".join),
        min_size=1,
        max_size=4,
    )
)
def test_any_text_yields_exact_bounded_quotes_and_no_crash(texts: list[str]) -> None:
    roles = ["user", "assistant", "tool_result", "user"]
    t = session(*((roles[i % 4], text) for i, text in enumerate(texts)))
    result = RuleExtractor().extract(t)
    assert result.errors == ()
    for entry in result.entries:
        for ev in entry.evidence:
            assert ev.quote and ev.quote in t.messages[ev.message_index].text
            assert len(ev.quote) <= MAX_QUOTE
            assert "[PRIVATE]" not in ev.quote


def test_a_huge_message_is_read_within_a_budget_and_reported() -> None:
    text = "We decided to use DuckDB for events. Blah blah ordinary words here. " * 20_000
    result = extract(session(("user", text)))
    assert len(of_type(result, "decision")) == 1
    assert any("read only the first" in e for e in result.errors)


# --------------------------------------------------------------------------- real transcripts


def locomo_transcript(path: Path) -> Transcript:
    data = json.loads(path.read_text(encoding="utf-8"))
    conversation = data.get("conversation", data)
    messages: list[Message] = []
    number = 1
    while f"session_{number}" in conversation:
        for turn in conversation[f"session_{number}"]:
            role = "user" if turn["speaker"] == conversation["speaker_a"] else "assistant"
            meta = {"speaker": turn["speaker"], "dia_id": turn["dia_id"]}
            messages.append(Message(len(messages), role, turn["text"], meta=meta))
        number += 1
    return Transcript("locomo-26", "locomo", "locomo", tuple(messages))


def _observation_turns(path: Path) -> set[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        turn.strip()
        for key, value in data.items()
        if key.endswith("_observation")
        for items in value.values()
        for _, evidence in items
        for turn in (evidence if isinstance(evidence, list) else [evidence])
    }


def _dia(t: Transcript, entry: ExtractedEntry) -> str:
    return str(t.messages[entry.evidence[0].message_index].meta["dia_id"])


@pytest.mark.skipif(not LOCOMO_26.exists(), reason="LoCoMo dev split not present")
def test_it_extracts_precise_personal_facts_from_a_real_locomo_conversation() -> None:
    t = locomo_transcript(LOCOMO_26)
    result = extract(t)
    assert result.errors == ()
    assert result == RuleExtractor().extract(t)
    facts = of_type(result, "fact")
    assert len(facts) >= 40
    # precise, not every turn: most entries quote a turn the annotators took a fact from
    gold = _observation_turns(LOCOMO_26)
    quoting = [e for e in result.entries if _dia(t, e) in gold]
    assert len(quoting) / len(result.entries) >= 0.7
    support_group = next(f for f in facts if "LGBTQ support group yesterday" in f.title)
    assert support_group.title.startswith("Caroline: I went to")
    message = t.messages[support_group.evidence[0].message_index]
    assert message.meta["dia_id"] == "D1:3"
    assert support_group.evidence[0].quote == (
        "I went to a LGBTQ support group yesterday and it was so powerful."
    )
    charity = next(f for f in facts if any("charity race" in e.quote for e in f.evidence))
    assert t.messages[charity.evidence[0].message_index].meta["dia_id"] == "D2:1"


def test_it_reads_the_bundled_claude_code_sample(sample_session: Path) -> None:
    from axiom.ingest.claude_code import parse_claude_code

    t = parse_claude_code(sample_session).transcripts[0]
    result = extract(t)
    kinds = {e.type for e in result.entries}
    assert {"decision", "error", "reference", "task_note"} <= kinds
    error = of_type(result, "error")[0]
    assert len(error.evidence) == 2  # the traceback and the "Fixed by" message
    todo_statuses = [
        (e.task.title, e.task.status)
        for e in result.entries
        if e.task and e.task.source == "todowrite"
    ]
    assert ("Write the events migration", "done") in todo_statuses


def test_a_statement_whose_value_was_masked_as_a_secret_is_no_fact() -> None:
    t = session(
        ("user", "My OpenAI key for the summarizer is [SECRET:api_key], keep it out of the repo."),
        ("user", "The DB password is [SECRET:password] on staging."),
        ("user", "The DB port is 5432 on the dev box."),
    )
    facts = of_type(extract(t), "fact")
    assert [e.title for e in facts] == ["The DB port is 5432 on the dev box"]
    assert not any("[SECRET:" in e.title or "[SECRET:" in e.content for e in extract(t).entries)


def test_a_decision_on_a_masked_secret_is_none_and_a_mask_beside_the_value_keeps_the_fact() -> None:
    """The mask is what the decision says ("the key [SECRET" was its value): no decision.
    A password masked beside the host is not what the fact says: the fact stays."""
    t = session(
        ("user", "Decision: we will use the key [SECRET:api_key] for the summarizer."),
        ("user", "The staging DB is at db.internal:5432 with password [SECRET:password]"),
        (
            "user",
            "We decided to use Postgres for the warehouse, the password is [SECRET:password].",
        ),
    )
    entries = extract(t).entries
    assert [(e.type, e.subject, e.value) for e in entries] == [
        ("fact", "staging DB", "at db.internal"),
        ("decision", "warehouse", "Postgres"),
    ]
    assert not any(e.value and "SECRET" in e.value for e in entries)
