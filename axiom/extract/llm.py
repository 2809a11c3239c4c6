"""An optional extractor that asks a language model, over any OpenAI-compatible endpoint.

`LLMExtractor` posts the numbered messages of a transcript to `/v1/chat/completions`
(llama.cpp, vLLM, Ollama, LM Studio, OpenAI ...) with the module's `EXTRACTION_PROMPT` and
reads back `{"entries": [...]}`. The model gives quotes only, never offsets: the evidence
aligner finds the spans later and judges whether each quote is really in its message, so
entries quoting text that is not there are kept here and rejected there.

Failure is reported, never raised: an unreachable endpoint, a timeout, an HTTP error or a
reply that is not JSON gives a result whose `errors` and `failures` say what happened (and
which part of the transcript was lost; the pipeline then records the build as failed and
`process` retries it); an entry with a malformed field is skipped with one error each.

Long transcripts are sent in chunks of at most `max_chars` characters of message text,
each message keeping its original index; a single message longer than that is sent in
parts under the same index (a quote from a part is still a quote from the message).
Only standard-library HTTP (`urllib`) is used. `timeout` applies to each socket operation
(connect, each read), as urllib defines it.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from axiom.extract.types import (
    ENTRY_TYPES,
    ExtractedEntry,
    ExtractedEvidence,
    ExtractionResult,
    TaskFields,
    dedupe_entries,
)
from axiom.ingest.privacy.filter import holds_masked_secret
from axiom.ingest.transcript import Transcript

log = logging.getLogger(__name__)

EXTRACTION_PROMPT = """\
You extract durable memories from a transcript of a conversation between people and/or an
AI coding agent. The user message contains numbered messages, each written as

<message index="N" role="ROLE">
TEXT
</message>

Reply with ONE JSON object and nothing else, in exactly this shape:

{"entries": [
  {"type": "fact | decision | insight | task_note | reference | error",
   "title": "a short summary, at most 100 characters",
   "content": "one or two sentences that state the memory on their own",
   "evidence": [{"messageIndex": N, "quote": "text copied exactly from message N"}],
   "task": {"title": "...", "status": "pending | in_progress | blocked | done | cancelled",
            "priority": "low | medium | high", "blockedBy": ["what it waits for"]}}
]}

Types:
- fact: a stable statement about the project, its tools and environment, or about a person.
- decision: a choice that was made, with what was chosen over what when stated.
- insight: a lesson learned or a non-obvious finding.
- task_note: work to be done or a change in its status; give "task" for these only.
- reference: a file path, URL or issue key that matters later.
- error: an error that occurred, with its cause and fix in "content" when the transcript has them.

Evidence rules:
- Every entry needs at least one evidence item.
- "quote" must be copied character for character from the text of message "messageIndex":
  same words, spelling, letter case, punctuation and language. Do not paraphrase,
  translate, shorten with "...", or join pieces from different places.
- A quote is one whole sentence or line where possible, 20 to 200 characters.
- Give only messageIndex and quote. Never give character offsets, positions or line numbers.
- Never quote or restate text that reads [PRIVATE].

Write title and content in the language of the conversation. Leave out greetings, small
talk and anything nobody would need a month from now; omit task fields you do not know.
If nothing is worth keeping, reply {"entries": []}.
"""

EXTRACTION_PROMPT_HASH = hashlib.sha256(EXTRACTION_PROMPT.encode("utf-8")).hexdigest()

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.S)
_TYPE_ALIASES = {"task": "task_note", "todo": "task_note", "tasknote": "task_note"}
_STATUS_ALIASES = {
    "pending": "pending",
    "todo": "pending",
    "open": "pending",
    "in_progress": "in_progress",
    "in progress": "in_progress",
    "in-progress": "in_progress",
    "blocked": "blocked",
    "done": "done",
    "completed": "done",
    "complete": "done",
    "cancelled": "cancelled",
    "canceled": "cancelled",
}
_MAX_ERROR_BODY = 300


@dataclass(frozen=True)
class _Block:
    index: int
    role: str
    text: str
    part: str = ""  # "2/3" when one message is split across chunks

    def render(self) -> str:
        part = f' part="{self.part}"' if self.part else ""
        return f'<message index="{self.index}" role="{self.role}"{part}>\n{self.text}\n</message>'


class LLMError(Exception):
    """One chunk could not be turned into entries; the message is what `errors` records."""


def chat_completions_url(base_url: str) -> str:
    """`http://host:8080`, `http://host:8080/v1` or the full URL -> the completions URL."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if url.endswith("/v1"):
        return url + "/chat/completions"
    return url + "/v1/chat/completions"


class LLMExtractor:
    """`Extractor` backed by an OpenAI-compatible chat-completions endpoint."""

    name = "llm"
    remote = True  # waits on the endpoint: the pipeline analyses ahead of its writes

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_chars: int = 24_000,
    ) -> None:
        if max_chars < 1_000:
            raise ValueError("max_chars must be at least 1000")
        self.base_url = base_url
        self.url = chat_completions_url(base_url)
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_chars = max_chars
        self.prompt_hash = EXTRACTION_PROMPT_HASH

    def extract(self, transcript: Transcript) -> ExtractionResult:
        entries: list[ExtractedEntry] = []
        errors: list[str] = []
        failures: list[str] = []  # chunks lost: the result is incomplete, the build fails
        try:
            chunks = self.chunks(transcript)
            for number, chunk in enumerate(chunks, start=1):
                label = _chunk_label(number, len(chunks), chunk)
                try:
                    reply = self._complete(_user_prompt(transcript, number, len(chunks), chunk))
                    parsed, problems = parse_entries(reply, transcript.session_id)
                except LLMError as exc:
                    errors.append(f"{label}: {exc}; its messages yielded no entries")
                    failures.append(f"{label}: {exc}")
                    log.warning(
                        "session %s, %s: %s; its messages yielded no entries",
                        transcript.session_id,
                        label,
                        exc,
                    )
                    continue
                entries.extend(parsed)
                for problem in problems:
                    errors.append(f"{label}: {problem}")
                    log.warning("session %s, %s: %s", transcript.session_id, label, problem)
        except Exception as exc:  # the protocol promises a result, whatever happens
            errors.append(f"LLM extraction failed unexpectedly: {exc!r}")
            failures.append(f"LLM extraction failed unexpectedly: {exc!r}")
            log.warning(
                "session %s: LLM extraction failed unexpectedly: %r", transcript.session_id, exc
            )
        return ExtractionResult(
            entries=dedupe_entries(entries),
            extractor=self.name,
            model=self.model,
            prompt_hash=self.prompt_hash,
            errors=tuple(errors),
            failures=tuple(failures),
        )

    def chunks(self, transcript: Transcript) -> list[list[_Block]]:
        """Messages with text, packed in order into chunks of at most `max_chars` of text."""
        blocks: list[_Block] = []
        for message in transcript.messages:
            text = message.text or ""
            if not text.strip():
                continue
            pieces = _split_text(text, self.max_chars)
            for k, piece in enumerate(pieces, start=1):
                part = f"{k}/{len(pieces)}" if len(pieces) > 1 else ""
                blocks.append(_Block(message.index, message.role, piece, part))
        chunks: list[list[_Block]] = []
        size = 0
        for block in blocks:
            if chunks and size + len(block.text) <= self.max_chars:
                chunks[-1].append(block)
                size += len(block.text)
            else:
                chunks.append([block])
                size = len(block.text)
        return chunks

    def _complete(self, user_prompt: str) -> str:
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": EXTRACTION_PROMPT},
                {"role": "user", "content": user_prompt},
            ],
            "temperature": 0,
        }
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            try:
                detail = _snippet(exc.read() if exc.fp else b"")
            except OSError:
                detail = "(body unreadable)"
            raise LLMError(f"HTTP {exc.code} from {self.url}: {detail}") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise LLMError(f"timed out after {self.timeout}s waiting for {self.url}") from exc
            raise LLMError(f"cannot reach {self.url}: {exc.reason}") from exc
        except TimeoutError as exc:
            raise LLMError(f"timed out after {self.timeout}s waiting for {self.url}") from exc
        except (http.client.HTTPException, OSError, ValueError) as exc:
            raise LLMError(f"request to {self.url} failed: {exc!r}") from exc
        try:
            payload = json.loads(raw.decode("utf-8"))
            content = payload["choices"][0]["message"]["content"]
        except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"not a chat-completions response: {_snippet(raw)}") from exc
        if not isinstance(content, str):
            raise LLMError("the response's message has no text content")
        return content


def _chunk_label(number: int, total: int, chunk: list[_Block]) -> str:
    return f"chunk {number}/{total} (messages {chunk[0].index}-{chunk[-1].index})"


def _user_prompt(transcript: Transcript, number: int, total: int, chunk: list[_Block]) -> str:
    head = f"Transcript {transcript.session_id}"
    if total > 1:
        head += f", part {number} of {total}"
    return head + ":\n\n" + "\n\n".join(block.render() for block in chunk)


def _split_text(text: str, limit: int) -> list[str]:
    """Cut `text` into pieces of at most `limit` characters, at a newline or space if any."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > limit:
        end = start + limit
        cut = max(
            text.rfind("\n", start + limit // 2, end), text.rfind(" ", start + limit // 2, end)
        )
        end = cut + 1 if cut != -1 else end
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").strip().replace("\n", " ")
    if len(text) > _MAX_ERROR_BODY:
        text = text[:_MAX_ERROR_BODY] + "…"
    return repr(text) if text else "(empty body)"


# --------------------------------------------------------------------------- reply parsing


def find_json_object(reply: str) -> Any:
    """The JSON the model meant: the whole reply, a ``` fenced block, or the first object.

    Raises `LLMError` when no JSON object can be found.
    """
    text = reply.strip().lstrip("\ufeff")
    candidates = [text] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    first: Any = None
    start = text.find("{")
    tries = 0
    while start != -1 and tries < 200:
        tries += 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict) and "entries" in value:
            return value
        if first is None:
            first = value
        start = text.find("{", start + 1)
    if first is not None:
        return first
    raise LLMError(f"reply is not valid JSON: {_snippet(reply.encode('utf-8'))}")


def parse_entries(reply: str, session_id: str) -> tuple[list[ExtractedEntry], list[str]]:
    """Entries from a model reply, and one problem description per entry skipped.

    Raises `LLMError` when the reply holds no JSON object or no `entries` list.
    """
    data = find_json_object(reply)
    if isinstance(data, list):
        raw_entries: Any = data
    elif isinstance(data, dict):
        raw_entries = data.get("entries")
    else:
        raw_entries = None
    if not isinstance(raw_entries, list):
        raise LLMError(f"reply has no 'entries' list: {_snippet(reply.encode('utf-8'))}")
    entries: list[ExtractedEntry] = []
    problems: list[str] = []
    for number, raw in enumerate(raw_entries):
        try:
            entries.append(_entry(raw, session_id))
        except ValueError as exc:
            problems.append(f"entry #{number} skipped: {exc}")
    return entries, problems


def _entry(raw: Any, session_id: str) -> ExtractedEntry:
    if not isinstance(raw, dict):
        raise ValueError(f"not an object ({type(raw).__name__})")
    kind = raw.get("type")
    if not isinstance(kind, str):
        raise ValueError("'type' is missing")
    kind = kind.strip().lower().replace("-", "_")
    kind = _TYPE_ALIASES.get(kind, kind)
    if kind not in ENTRY_TYPES:
        raise ValueError(f"unknown type {raw.get('type')!r}")
    title = raw.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ValueError("'title' is missing or empty")
    title = title.strip()
    if holds_masked_secret(title):
        raise ValueError("its title holds a masked secret (only the mask could be kept)")
    content = raw.get("content", title)
    if content is None:
        content = title
    if not isinstance(content, str):
        raise ValueError("'content' is not a string")
    evidence = _evidence(raw.get("evidence"))
    task = _task(raw.get("task"), title) if kind == "task_note" else None
    return ExtractedEntry.create(session_id, kind, title, content.strip(), evidence, task)  # type: ignore[arg-type]


def _evidence(raw: Any) -> tuple[ExtractedEvidence, ...]:
    if not isinstance(raw, list) or not raw:
        raise ValueError("'evidence' is missing or empty")
    items: list[ExtractedEvidence] = []
    for number, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"evidence #{number} is not an object")
        index = item.get("messageIndex", item.get("message_index"))
        if isinstance(index, str) and index.strip().isdigit():
            index = int(index.strip())
        if isinstance(index, float) and index.is_integer():
            index = int(index)
        if isinstance(index, bool) or not isinstance(index, int):
            raise ValueError(f"evidence #{number} has no integer messageIndex ({index!r})")
        quote = item.get("quote")
        if not isinstance(quote, str):
            raise ValueError(f"evidence #{number} has no quote string")
        items.append(ExtractedEvidence(index, quote))
    return tuple(items)


def _task(raw: Any, entry_title: str) -> TaskFields:
    if raw is None:
        return TaskFields(title=entry_title, source="text")
    if not isinstance(raw, dict):
        raise ValueError("'task' is not an object")
    title = raw.get("title")
    title = title.strip() if isinstance(title, str) and title.strip() else entry_title
    status = raw.get("status")
    if status is not None:
        key = status.strip().lower() if isinstance(status, str) else status
        if key not in _STATUS_ALIASES:
            raise ValueError(f"unknown task status {status!r}")
        status = _STATUS_ALIASES[key]
    priority = raw.get("priority")
    if priority is not None:
        priority = priority.strip().lower() if isinstance(priority, str) else priority
        if priority not in ("low", "medium", "high"):
            raise ValueError(f"unknown task priority {raw.get('priority')!r}")
    blocked_by = raw.get("blockedBy", raw.get("blocked_by")) or []
    if isinstance(blocked_by, str):
        blocked_by = [blocked_by]
    if not isinstance(blocked_by, list) or not all(isinstance(b, str) for b in blocked_by):
        raise ValueError("task 'blockedBy' is not a list of strings")
    return TaskFields(
        title=title,
        status=status,
        priority=priority,
        blocked_by=tuple(b.strip() for b in blocked_by if b.strip()),
        source="text",
    )
