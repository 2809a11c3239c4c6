"""What an extractor hands to the rest of the pipeline.

An extractor reads a `Transcript` and proposes memory entries. Each entry points at its
proof with `ExtractedEvidence(message_index, quote)`: the index of a message and a quote
copied from that message's text. Extractors never compute character offsets; the evidence
aligner finds the span later and is the only judge of whether a quote really is there.

Every type here is a frozen dataclass with `to_json()` / `from_json()` using snake_case
keys, so a result can be stored in a `memory_extracted` event and read back unchanged.
`from_json` validates and raises `ValueError` on malformed data.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from axiom.ingest.transcript import Transcript

EntryType = Literal["fact", "decision", "insight", "task_note", "reference", "error"]
TaskStatus = Literal["pending", "in_progress", "blocked", "done", "cancelled"]
TaskPriority = Literal["low", "medium", "high"]
TaskSource = Literal["todowrite", "text"]

ENTRY_TYPES: tuple[str, ...] = ("fact", "decision", "insight", "task_note", "reference", "error")
TASK_STATUSES: tuple[str, ...] = ("pending", "in_progress", "blocked", "done", "cancelled")
TASK_PRIORITIES: tuple[str, ...] = ("low", "medium", "high")
TASK_SOURCES: tuple[str, ...] = ("todowrite", "text")

_SPACES = re.compile(r"\s+")


def normalize_title(title: str) -> str:
    """The form of a title that identity is computed from.

    Unicode NFKC, case-folded, runs of whitespace collapsed to one space, and surrounding
    whitespace and sentence punctuation removed. "Use  DuckDB." and "use duckdb" are equal.
    """
    text = unicodedata.normalize("NFKC", title).casefold()
    return _SPACES.sub(" ", text).strip().strip(".!?。;:,").strip()


def make_entry_id(
    session_id: str, entry_type: str, title: str, first_message_index: int | None
) -> str:
    """`ent_` + 16 hex of sha256 over (session, type, normalized title, first evidence index).

    The same session extracted twice gives the same ids, which is what makes re-imports
    idempotent downstream. The parts are hashed as a JSON array so no separator can collide.
    """
    index = -1 if first_message_index is None else first_message_index
    key = json.dumps(
        [session_id, entry_type, normalize_title(title), index],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return "ent_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _require_str(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{where}: '{key}' must be a string, got {type(value).__name__}")
    return value


def _require_choice(value: Any, choices: tuple[str, ...], what: str, optional: bool) -> Any:
    if value is None and optional:
        return None
    if value not in choices:
        raise ValueError(f"{what} must be one of {', '.join(choices)}; got {value!r}")
    return value


@dataclass(frozen=True)
class ExtractedEvidence:
    """A quote from message `message_index` that supports an entry (no offsets)."""

    message_index: int
    quote: str

    def __post_init__(self) -> None:
        if isinstance(self.message_index, bool) or not isinstance(self.message_index, int):
            raise ValueError(f"message_index must be an int, got {self.message_index!r}")
        if not isinstance(self.quote, str):
            raise ValueError(f"quote must be a string, got {type(self.quote).__name__}")

    def to_json(self) -> dict[str, Any]:
        return {"message_index": self.message_index, "quote": self.quote}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExtractedEvidence:
        if not isinstance(data, dict):
            raise ValueError(f"evidence must be an object, got {type(data).__name__}")
        return cls(message_index=data.get("message_index"), quote=data.get("quote"))  # type: ignore[arg-type]


TASK_PROBLEM_FIELDS: tuple[str, ...] = ("mention", "title", "status", "priority")
# A rejected value whose JSON is longer than this is kept as its first characters of JSON.
MAX_PROBLEM_VALUE_CHARS = 2000


def json_value(value: Any) -> Any:
    """`value` as a JSON-ready value: unchanged when it is JSON and short, else its JSON (or
    repr) text cut to `MAX_PROBLEM_VALUE_CHARS`."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = repr(value)
        value = text
    if len(text) > MAX_PROBLEM_VALUE_CHARS:
        return text[:MAX_PROBLEM_VALUE_CHARS] + "…"
    return value


@dataclass(frozen=True)
class TaskInputProblem:
    """Part of a task observation that could not be used, with the value as found.

    `field` is what was wrong (``mention`` for a whole TodoWrite call or item, ``title``,
    ``status``, ``priority``), `value` the original JSON value (None when absent; longer
    than `MAX_PROBLEM_VALUE_CHARS` as JSON → that JSON text, cut), `reason` a short code
    (see `axiom.tasks.events`). `message_index`, `tool_use_id` and `item` (the position
    in the ``todos`` list) say where it was.
    """

    field: str
    value: Any
    reason: str
    message_index: int | None = None
    tool_use_id: str | None = None
    item: int | None = None

    def __post_init__(self) -> None:
        _require_choice(self.field, TASK_PROBLEM_FIELDS, "task problem field", optional=False)
        if not isinstance(self.reason, str) or not self.reason:
            raise ValueError("task problem reason must be a non-empty string")
        object.__setattr__(self, "value", json_value(self.value))

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "value": self.value,
            "reason": self.reason,
            "message_index": self.message_index,
            "tool_use_id": self.tool_use_id,
            "item": self.item,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskInputProblem:
        if not isinstance(data, dict):
            raise ValueError(f"task problem must be an object, got {type(data).__name__}")
        index, item = data.get("message_index"), data.get("item")
        for name, number in (("message_index", index), ("item", item)):
            if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
                raise ValueError(f"task problem {name} must be an integer or null")
        tool_use_id = data.get("tool_use_id")
        if tool_use_id is not None and not isinstance(tool_use_id, str):
            raise ValueError("task problem tool_use_id must be a string or null")
        return cls(
            field=_require_str(data, "field", "task problem"),
            value=data.get("value"),
            reason=_require_str(data, "reason", "task problem"),
            message_index=index,
            tool_use_id=tool_use_id,
            item=item,
        )


def _problems(data: Any, where: str) -> tuple[TaskInputProblem, ...]:
    if data is None:
        return ()
    if not isinstance(data, list | tuple):
        raise ValueError(f"{where} must be a list")
    return tuple(TaskInputProblem.from_json(p) for p in data)


@dataclass(frozen=True)
class TaskFields:
    """Task facts carried by a `task_note` entry.

    `status` and `priority` are None when the source did not say, or said something that
    is not one of the choices: then `problems` holds what it said (``unknown_status`` with
    the original value, ...). `source` tells whether the task came from a Claude Code
    TodoWrite call or from prose. `update_only` marks a status report about a task that
    should already exist ("X is done", "X is still blocked"): it never creates one.
    """

    title: str
    status: TaskStatus | None = None
    priority: TaskPriority | None = None
    blocked_by: tuple[str, ...] = ()
    source: TaskSource = "text"
    problems: tuple[TaskInputProblem, ...] = ()
    update_only: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.title, str):
            raise ValueError("task title must be a string")
        if not isinstance(self.update_only, bool):
            raise ValueError("task update_only must be a bool")
        _require_choice(self.status, TASK_STATUSES, "task status", optional=True)
        _require_choice(self.priority, TASK_PRIORITIES, "task priority", optional=True)
        _require_choice(self.source, TASK_SOURCES, "task source", optional=False)
        if not isinstance(self.blocked_by, tuple) or not all(
            isinstance(b, str) for b in self.blocked_by
        ):
            raise ValueError("blocked_by must be a tuple of strings")
        if not isinstance(self.problems, tuple) or not all(
            isinstance(p, TaskInputProblem) for p in self.problems
        ):
            raise ValueError("problems must be a tuple of TaskInputProblem")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "title": self.title,
            "status": self.status,
            "priority": self.priority,
            "blocked_by": list(self.blocked_by),
            "source": self.source,
        }
        if self.problems:  # absent when empty, so entries without problems keep their payload
            data["problems"] = [p.to_json() for p in self.problems]
        if self.update_only:  # likewise absent unless set
            data["update_only"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskFields:
        if not isinstance(data, dict):
            raise ValueError(f"task must be an object, got {type(data).__name__}")
        blocked_by = data.get("blocked_by") or []
        if not isinstance(blocked_by, list | tuple):
            raise ValueError("task blocked_by must be a list")
        return cls(
            title=_require_str(data, "title", "task"),
            status=data.get("status"),
            priority=data.get("priority"),
            blocked_by=tuple(blocked_by),
            source=data.get("source", "text"),
            problems=_problems(data.get("problems"), "task problems"),
            update_only=data.get("update_only", False),
        )


FACT_FIELDS: tuple[str, ...] = ("subject", "value", "previous_value", "negated")


@dataclass(frozen=True)
class FactFields:
    """What a fact or decision states, for conflict detection across sessions.

    `subject` is who or what the statement is about ("Caroline", "rate limit of the api",
    "payments-service datastore"); `value` the stated value ("100 per minute",
    "PostgreSQL"); `previous_value` the value a change replaced ("switched from A to B"
    → previous "A", value "B"); `negated` marks a denial ("no longer uses A" → previous
    "A", value None, negated). All None/False when the rule did not state them.
    """

    subject: str | None = None
    value: str | None = None
    previous_value: str | None = None
    negated: bool = False


@dataclass(frozen=True)
class ExtractedEntry:
    """One proposed memory: what it says (`title`, `content`) and where it came from.

    `subject`, `value`, `previous_value` and `negated` are the `FactFields` (see there);
    events written before they existed read back as None/False.
    """

    entry_id: str
    type: EntryType
    title: str
    content: str
    evidence: tuple[ExtractedEvidence, ...]
    task: TaskFields | None = None
    # What a fact or decision is about and what it says about it ("rate limit" / "200 per
    # minute"), and the value it replaced when it states a change: conflict detection
    # compares these. None when the extractor did not say.
    subject: str | None = None
    value: str | None = None
    previous_value: str | None = None
    negated: bool = False  # the statement denies the subject's (previous) value

    def __post_init__(self) -> None:
        for name in ("subject", "value", "previous_value"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string or None")
        if not isinstance(self.entry_id, str) or not self.entry_id:
            raise ValueError("entry_id must be a non-empty string")
        _require_choice(self.type, ENTRY_TYPES, "entry type", optional=False)
        if not isinstance(self.title, str) or not isinstance(self.content, str):
            raise ValueError("title and content must be strings")
        if not isinstance(self.evidence, tuple) or not all(
            isinstance(e, ExtractedEvidence) for e in self.evidence
        ):
            raise ValueError("evidence must be a tuple of ExtractedEvidence")
        if self.task is not None and not isinstance(self.task, TaskFields):
            raise ValueError("task must be TaskFields or None")
        for name in FACT_FIELDS[:3]:
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string or None")
        if not isinstance(self.negated, bool):
            raise ValueError("negated must be a bool")

    @classmethod
    def create(
        cls,
        session_id: str,
        type: EntryType,
        title: str,
        content: str,
        evidence: tuple[ExtractedEvidence, ...],
        task: TaskFields | None = None,
        fact: FactFields | None = None,
    ) -> ExtractedEntry:
        """Build an entry whose id is derived with `make_entry_id` (the fact fields do not
        enter the id, so adding them never changes an entry's identity)."""
        first = evidence[0].message_index if evidence else None
        fact = fact or FactFields()
        return cls(
            entry_id=make_entry_id(session_id, type, title, first),
            type=type,
            title=title,
            content=content,
            evidence=evidence,
            task=task,
            subject=fact.subject,
            value=fact.value,
            previous_value=fact.previous_value,
            negated=fact.negated,
        )

    def fact_json(self) -> dict[str, Any]:
        """The fact fields that are set (subject, value, previous_value, negated when true).

        Absent keys mean "not stated", so payloads of entries without them stay as they were.
        """
        data: dict[str, Any] = {
            name: getattr(self, name) for name in FACT_FIELDS[:3] if getattr(self, name) is not None
        }
        if self.negated:
            data["negated"] = True
        return data

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry_id,
            "type": self.type,
            "title": self.title,
            "content": self.content,
            "evidence": [e.to_json() for e in self.evidence],
            "task": self.task.to_json() if self.task is not None else None,
            **self.fact_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExtractedEntry:
        if not isinstance(data, dict):
            raise ValueError(f"entry must be an object, got {type(data).__name__}")
        evidence = data.get("evidence") or []
        if not isinstance(evidence, list | tuple):
            raise ValueError("entry evidence must be a list")
        task = data.get("task")
        return cls(
            entry_id=_require_str(data, "entry_id", "entry"),
            type=data.get("type"),  # type: ignore[arg-type]
            title=_require_str(data, "title", "entry"),
            content=_require_str(data, "content", "entry"),
            evidence=tuple(ExtractedEvidence.from_json(e) for e in evidence),
            task=TaskFields.from_json(task) if task is not None else None,
            subject=data.get("subject"),
            value=data.get("value"),
            previous_value=data.get("previous_value"),
            negated=data.get("negated", False),
        )


@dataclass(frozen=True)
class ExtractionResult:
    """Everything one extractor run produced for one transcript.

    `extractor`, `model` and `prompt_hash` identify the build (they go into `build_runs`);
    `errors` lists what was skipped or could not be read, in human-readable form.
    `failures` lists the parts of the transcript the extractor could not read at all (an
    LLM chunk lost to a timeout, an HTTP error or a reply that is not JSON): such a result
    is incomplete, and the pipeline records its build as `failed` so it is retried.
    `task_problems` are task observations that yielded no task at all (a TodoWrite item
    that is not an object or has no usable title, a call without a ``todos`` list), kept
    with their original values so the task system can record each one.
    """

    entries: tuple[ExtractedEntry, ...]
    extractor: str
    model: str
    prompt_hash: str
    errors: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    task_problems: tuple[TaskInputProblem, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": [e.to_json() for e in self.entries],
            "extractor": self.extractor,
            "model": self.model,
            "prompt_hash": self.prompt_hash,
            "errors": list(self.errors),
            "failures": list(self.failures),
            "task_problems": [p.to_json() for p in self.task_problems],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExtractionResult:
        if not isinstance(data, dict):
            raise ValueError(f"result must be an object, got {type(data).__name__}")
        errors = data.get("errors") or []
        failures = data.get("failures") or []
        for what, items in (("errors", errors), ("failures", failures)):
            if not isinstance(items, list | tuple) or not all(isinstance(e, str) for e in items):
                raise ValueError(f"result {what} must be a list of strings")
        return cls(
            entries=tuple(ExtractedEntry.from_json(e) for e in data.get("entries") or []),
            extractor=_require_str(data, "extractor", "result"),
            model=_require_str(data, "model", "result"),
            prompt_hash=_require_str(data, "prompt_hash", "result"),
            errors=tuple(errors),
            failures=tuple(failures),
            task_problems=_problems(data.get("task_problems"), "result task_problems"),
        )


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns a transcript into proposed entries.

    `name`, `model` and `prompt_hash` are recorded with every build so results can be
    traced to the exact rules or prompt that produced them. `extract` must not raise on bad
    input or failing back ends: it reports problems in `ExtractionResult.errors`. An
    extractor whose work waits on an endpoint may say so with `remote = True`
    (optional, read with `getattr`): `axiom.pipeline.batch` then analyses the next chunk
    of sessions while it writes this one.
    """

    name: str
    model: str
    prompt_hash: str

    def extract(self, transcript: Transcript) -> ExtractionResult: ...


def dedupe_entries(entries: list[ExtractedEntry]) -> tuple[ExtractedEntry, ...]:
    """Keep the first entry for each `entry_id`, preserving order."""
    seen: set[str] = set()
    kept: list[ExtractedEntry] = []
    for entry in entries:
        if entry.entry_id not in seen:
            seen.add(entry.entry_id)
            kept.append(entry)
    return tuple(kept)
