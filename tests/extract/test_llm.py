"""LLMExtractor against a real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions
protocol: good replies, replies wrapped in prose, broken JSON, invented quotes, timeouts,
HTTP errors, and transcripts long enough to be sent in chunks."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from axiom.extract import EXTRACTION_PROMPT, Extractor, LLMExtractor
from axiom.extract.llm import chat_completions_url, find_json_object
from axiom.ingest.transcript import Message, Transcript

MODEL = "axiom-test-model"


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    delay: float = 0.0


def completion(content: str) -> Reply:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    return Reply(body=json.dumps(body).encode())


@dataclass
class FakeChatServer:
    """Records every request; answers with `respond(request_body) -> Reply`."""

    respond: Callable[[dict[str, Any]], Reply] = lambda body: completion('{"entries": []}')
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    fake = FakeChatServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length).decode("utf-8"))
            fake.requests.append(
                {"path": self.path, "headers": dict(self.headers.items()), "body": body}
            )
            reply = fake.respond(body)
            time.sleep(reply.delay)
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()


def transcript() -> Transcript:
    return Transcript(
        session_id="s-llm",
        project="axiom",
        source="claude_code",
        messages=(
            Message(0, "user", "We need somewhere to keep session events."),
            Message(1, "assistant", "Decision: we will use DuckDB for the event store."),
            Message(2, "tool_result", ""),
            Message(3, "user", "배포는 PLAT-142 때문에 막혀 있어요."),
        ),
    )


GOOD_ENTRIES = {
    "entries": [
        {
            "type": "decision",
            "title": "DuckDB is the event store",
            "content": "The team chose DuckDB to store session events.",
            "evidence": [
                {
                    "messageIndex": 1,
                    "quote": "Decision: we will use DuckDB for the event store.",
                }
            ],
        },
        {
            "type": "task_note",
            "title": "배포",
            "content": "배포가 PLAT-142에 막혀 있다.",
            "evidence": [{"messageIndex": 3, "quote": "배포는 PLAT-142 때문에 막혀 있어요."}],
            "task": {"status": "blocked", "priority": "High", "blockedBy": ["PLAT-142"]},
        },
    ]
}


def test_it_satisfies_the_extractor_protocol_and_hashes_its_prompt() -> None:
    extractor = LLMExtractor("http://127.0.0.1:9", MODEL)
    assert isinstance(extractor, Extractor)
    assert extractor.name == "llm"
    assert extractor.model == MODEL
    assert extractor.prompt_hash == hashlib.sha256(EXTRACTION_PROMPT.encode()).hexdigest()
    assert "messageIndex" in EXTRACTION_PROMPT and "offset" in EXTRACTION_PROMPT


def test_it_accepts_base_urls_with_or_without_the_api_path() -> None:
    want = "http://h:8080/v1/chat/completions"
    assert chat_completions_url("http://h:8080") == want
    assert chat_completions_url("http://h:8080/v1/") == want
    assert chat_completions_url(want) == want


def test_a_good_reply_becomes_entries_and_the_request_carries_model_and_prompt(
    server: FakeChatServer,
) -> None:
    server.respond = lambda body: completion("```json\n" + json.dumps(GOOD_ENTRIES) + "\n```")
    result = LLMExtractor(server.url, MODEL, api_key="sk-test").extract(transcript())

    assert result.errors == ()
    assert (result.extractor, result.model) == ("llm", MODEL)
    decision, task = result.entries
    assert decision.type == "decision"
    assert decision.evidence[0].message_index == 1
    assert decision.evidence[0].quote in transcript().messages[1].text
    assert task.task is not None
    assert (task.task.status, task.task.priority, task.task.blocked_by) == (
        "blocked",
        "high",
        ("PLAT-142",),
    )
    assert decision.entry_id.startswith("ent_")

    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == MODEL
    assert body["messages"][0] == {"role": "system", "content": EXTRACTION_PROMPT}
    user = body["messages"][1]["content"]
    assert '<message index="1" role="assistant">\n' in user
    assert "Decision: we will use DuckDB for the event store." in user
    assert "배포는 PLAT-142 때문에 막혀 있어요." in user  # sent verbatim, not \u-escaped
    assert 'index="2"' not in user  # messages without text are not sent


def test_the_same_reply_gives_the_same_ids(server: FakeChatServer) -> None:
    server.respond = lambda body: completion(json.dumps(GOOD_ENTRIES))
    first = LLMExtractor(server.url, MODEL).extract(transcript())
    second = LLMExtractor(server.url, MODEL).extract(transcript())
    assert first == second


def test_json_wrapped_in_prose_is_found(server: FakeChatServer) -> None:
    reply = "Sure! Here are the memories:\n" + json.dumps(GOOD_ENTRIES) + "\nLet me know {if} more."
    server.respond = lambda body: completion(reply)
    result = LLMExtractor(server.url, MODEL).extract(transcript())
    assert result.errors == ()
    assert len(result.entries) == 2


def test_a_reply_that_is_not_json_gives_no_entries_and_a_clear_error(
    server: FakeChatServer,
) -> None:
    server.respond = lambda body: completion('I could not do that. {"entries": [oops')
    result = LLMExtractor(server.url, MODEL).extract(transcript())
    assert result.entries == ()
    (error,) = result.errors
    assert "not valid JSON" in error and "chunk 1/1 (messages 0-3)" in error


def test_quotes_not_in_the_session_are_kept_for_the_aligner_to_judge(
    server: FakeChatServer,
) -> None:
    invented = {
        "entries": [
            {
                "type": "fact",
                "title": "Postgres is the store",
                "content": "The store is Postgres.",
                "evidence": [{"messageIndex": 1, "quote": "We will use Postgres everywhere."}],
            },
            {
                "type": "insight",
                "title": "Out of range",
                "evidence": [{"messageIndex": 99, "quote": "nothing like this was said"}],
            },
        ]
    }
    server.respond = lambda body: completion(json.dumps(invented))
    result = LLMExtractor(server.url, MODEL).extract(transcript())
    assert result.errors == ()
    fact, insight = result.entries
    assert fact.evidence[0].quote == "We will use Postgres everywhere."
    assert fact.evidence[0].quote not in transcript().messages[1].text
    assert insight.evidence[0].message_index == 99
    assert insight.content == "Out of range"  # content defaults to the title


def test_entries_with_bad_fields_are_skipped_one_error_each(server: FakeChatServer) -> None:
    good = GOOD_ENTRIES["entries"][0]
    bad = [
        {**good, "type": "rumour"},
        {**good, "title": ""},
        {**good, "evidence": []},
        {**good, "evidence": [{"messageIndex": "one", "quote": "x"}]},
        {**good, "evidence": [{"messageIndex": 1}]},
        {**good, "type": "task_note", "task": {"status": "someday"}},
        {**good, "title": "OpenAI key is [SECRET:api_key]"},
        "just a string",
    ]
    server.respond = lambda body: completion(json.dumps({"entries": [good, *bad]}))
    result = LLMExtractor(server.url, MODEL).extract(transcript())
    assert len(result.entries) == 1
    assert len(result.errors) == len(bad)
    joined = "\n".join(result.errors)
    for fragment in (
        "unknown type 'rumour'",
        "'title' is missing",
        "'evidence' is missing or empty",
        "no integer messageIndex",
        "no quote string",
        "unknown task status 'someday'",
        "its title holds a masked secret",
        "not an object",
    ):
        assert fragment in joined


def test_an_endpoint_that_times_out_gives_an_error_not_an_exception(
    server: FakeChatServer,
) -> None:
    server.respond = lambda body: Reply(delay=2.0, body=b"{}")
    started = time.monotonic()
    result = LLMExtractor(server.url, MODEL, timeout=0.5).extract(transcript())
    assert time.monotonic() - started < 1.9
    assert result.entries == ()
    (error,) = result.errors
    assert "timed out after 0.5s" in error


def test_an_http_500_is_reported_with_its_body(server: FakeChatServer) -> None:
    server.respond = lambda body: Reply(status=500, body=b'{"error": "model crashed"}')
    result = LLMExtractor(server.url, MODEL).extract(transcript())
    assert result.entries == ()
    (error,) = result.errors
    assert "HTTP 500" in error and "model crashed" in error


def test_a_response_that_is_not_chat_completions_is_reported(server: FakeChatServer) -> None:
    server.respond = lambda body: Reply(body=b"<html>proxy login</html>")
    result = LLMExtractor(server.url, MODEL).extract(transcript())
    assert result.entries == ()
    assert "not a chat-completions response" in result.errors[0]


def test_an_unreachable_endpoint_is_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = LLMExtractor(f"http://127.0.0.1:{port}", MODEL, timeout=2).extract(transcript())
    assert result.entries == ()
    assert "cannot reach" in result.errors[0]


def test_long_transcripts_are_sent_in_chunks_keeping_message_indices(
    server: FakeChatServer,
) -> None:
    sentence = "The writer retries failed outbox jobs with backoff. "
    messages = [Message(i, "user", f"{i}: " + sentence * 8) for i in range(6)]
    messages.append(Message(6, "assistant", "word " * 700))  # 3500 chars: sent in parts
    t = Transcript("s-long", "axiom", "json", tuple(messages))

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        first = int(user.split('<message index="', 1)[1].split('"', 1)[0])
        entry = {
            "type": "fact",
            "title": f"Chunk starting at {first}",
            "evidence": [{"messageIndex": first, "quote": sentence.strip()}],
        }
        return completion(json.dumps({"entries": [entry]}))

    server.respond = respond
    result = LLMExtractor(server.url, MODEL, max_chars=1_000).extract(t)

    users = [r["body"]["messages"][1]["content"] for r in server.requests]
    assert len(users) > 3
    assert all(len(u) < 1_500 for u in users)
    sent_indices = [
        int(part.split('"', 1)[0]) for u in users for part in u.split('<message index="')[1:]
    ]
    assert sorted(set(sent_indices)) == list(range(7))
    assert any('index="6" role="assistant" part="1/' in u for u in users)
    assert "part 1 of" in users[0]
    assert result.errors == ()
    assert len(result.entries) == len({e.entry_id for e in result.entries}) > 3


def test_one_failing_chunk_keeps_the_others(server: FakeChatServer) -> None:
    messages = tuple(Message(i, "user", f"{i} " + "x" * 900) for i in range(3))
    calls = {"n": 0}

    def respond(body: dict[str, Any]) -> Reply:
        calls["n"] += 1
        if calls["n"] == 2:
            return Reply(status=503, body=b"busy")
        user = body["messages"][1]["content"]
        first = int(user.split('<message index="', 1)[1].split('"', 1)[0])
        entry = {
            "type": "fact",
            "title": f"t{first}",
            "evidence": [{"messageIndex": first, "quote": "x"}],
        }
        return completion(json.dumps({"entries": [entry]}))

    server.respond = respond
    result = LLMExtractor(server.url, MODEL, max_chars=1_000).extract(
        Transcript("s", "p", "json", messages)
    )
    assert [e.title for e in result.entries] == ["t0", "t2"]
    (error,) = result.errors
    assert "chunk 2/3 (messages 1-1): HTTP 503" in error


def test_find_json_object_prefers_the_object_with_entries() -> None:
    reply = 'Example: {"a": 1}. Answer: {"entries": []} done'
    assert find_json_object(reply) == {"entries": []}
