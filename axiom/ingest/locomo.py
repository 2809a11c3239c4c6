"""Parser for LoCoMo conversations (Maharana et al., ACL 2024).

Two shapes are read, alone or in a list (the public `locomo10.json` is a list of ten):

* nested, as in `locomo10.json`: `{"sample_id": "conv-26", "conversation": {...}, "qa": …}`
* flat, as in the locomo-dev files: the `conversation` keys at the top level.

The conversation holds `speaker_a`, `speaker_b`, and per session `session_N` (a list of
turns `{speaker, dia_id, text, img_url?, blip_caption?, query?}`) with
`session_N_date_time` ("1:56 pm on 8 May, 2023"). A date without a session list (the dev
files have dates for sessions 20-35 that hold no turns) is ignored.

Each `session_N` becomes one `Transcript`:

* session id `<sample_id>-session_N` (`conv-26-session_1`). Without a `sample_id`: a
  stand-alone file named by digits gives `conv-<stem>` (`26.json` → `conv-26`, the id the
  same conversation has in locomo10.json), any other stand-alone file `<stem>`, and the
  item `[i]` of a list `<stem>-<i>`.
* `project` "locomo"; `source` "locomo"; title "Caroline & Melanie — 8 May 2023";
  `started_at` the session date as naive ISO ("2023-05-08T13:56:00"; LoCoMo gives no time
  zone). Messages carry no timestamp of their own — the data has none per turn.
* role: the speaker named by `speaker_a` → `user`, by `speaker_b` → `assistant`. Both are
  people; the mapping only keeps the two sides apart and stable. The real name is in
  `meta["speaker"]`. A turn by anyone else is reported and kept as `user`.
* `meta` of each message: `dia_id` (as written in the file), `speaker`, `session_date` (as
  written), and for a shared photo `img_url` and `blip_caption`.
* text: the turn's `text` verbatim; when the turn has a `blip_caption`, ` [image: <caption>]`
  is appended (without the leading space if the text is empty). The other speaker saw the
  photo, so its caption is part of what was said and questions ask about it ("What did
  Melanie paint?"); appending at the end keeps the verbatim turn text as the prefix
  `text[:len(text) - len(suffix)]`, so offsets into the turn are unchanged, and the result
  is a pure function of the file, so re-imports are stable.
* left out on purpose: the image `query` (the phrase the dataset authors searched to find
  the photo; never part of the dialog and often a paraphrase of a question), `qa`,
  `events_session_N`, `session_N_observation` and `session_N_summary` (benchmark
  annotations, not conversation — importing them would leak answers into retrieval).

Bad input never raises: a conversation, session or turn of the wrong shape is reported as an
`InputIssue` whose reason starts with a JSON path (`session_3[7]: 'text' is missing`) and
is skipped; the rest is kept. Invalid JSON, invalid UTF-8 and empty files are handled as in
`axiom.ingest.generic_json`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from axiom.ingest.claude_code import ParsedFile
from axiom.ingest.generic_json import load_json
from axiom.ingest.issues import InputIssue
from axiom.ingest.transcript import Message, Transcript

PROJECT = "locomo"
SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE_FORMATS = ("%I:%M %p on %d %B %Y", "%I:%M %p on %d %b %Y", "%d %B %Y", "%d %b %Y")


def conversation_of(obj: Any) -> dict[str, Any] | None:
    """The conversation mapping of a nested or flat LoCoMo object, else None."""
    if not isinstance(obj, dict):
        return None
    nested = obj.get("conversation")
    if isinstance(nested, dict) and "speaker_a" in nested:
        return nested
    if "speaker_a" in obj and any(SESSION_KEY.match(k) for k in obj):
        return obj
    return None


def looks_like_locomo(doc: Any) -> bool:
    items = doc if isinstance(doc, list) else [doc]
    return any(conversation_of(item) is not None for item in items)


def parse_session_date(raw: str) -> datetime | None:
    """ "1:56 pm on 8 May, 2023" → datetime(2023, 5, 8, 13, 56); other shapes → None."""
    text = " ".join(raw.replace(",", " ").split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def format_session_day(raw: str) -> str:
    """A day-level date for document text ("1:56 pm on 8 May, 2023" → "8 May 2023"), or
    the raw text stripped when it has another shape."""
    parsed = parse_session_date(raw)
    if parsed is None:
        return raw.strip()
    return f"{parsed.day} {parsed.strftime('%B %Y')}"


def _caption(turn: dict[str, Any]) -> str:
    caption = turn.get("blip_caption")
    if isinstance(caption, list):
        caption = " ".join(str(c) for c in caption if c)
    return str(caption).strip() if caption else ""


def image_suffix(caption: str) -> str:
    return f"[image: {caption}]"


def _message(
    turn: Any, index: int, where: str, speakers: dict[str, str], date: str | None
) -> tuple[Message, str | None]:
    """The message and, if any, a problem that did not stop it from being kept."""
    if not isinstance(turn, dict):
        raise ValueError(f"{where}: turn is not an object")
    speaker = turn.get("speaker")
    if not isinstance(speaker, str) or not speaker.strip():
        raise ValueError(f"{where}: 'speaker' is missing or not a string")
    text = turn.get("text")
    if not isinstance(text, str):
        raise ValueError(f"{where}: 'text' is missing or not a string")
    problem = None
    role = speakers.get(speaker)
    if role is None:
        role = "user"
        problem = f"{where}: speaker {speaker!r} is neither speaker_a nor speaker_b; kept as user"
    dia_id = turn.get("dia_id")
    if not isinstance(dia_id, str) or not dia_id.strip():
        dia_id = None
        problem = problem or f"{where}: 'dia_id' is missing; turn kept without it"
    meta: dict[str, Any] = {"dia_id": dia_id, "speaker": speaker, "session_date": date}
    caption = _caption(turn)
    if "img_url" in turn:
        meta["img_url"] = turn["img_url"]
    if caption:
        meta["blip_caption"] = caption
        text = f"{text} {image_suffix(caption)}" if text else image_suffix(caption)
    return Message(index=index, role=role, text=text, meta=meta), problem


def _day(parsed: datetime | None, raw: str | None) -> str | None:
    if parsed is not None:
        return f"{parsed.day} {parsed.strftime('%B %Y')}"
    return raw.strip() if raw else None


def _conversation(
    path: Path, obj: Any, item: int | None, issues: list[InputIssue]
) -> list[Transcript]:
    at = f"[{item}]" if item is not None else ""
    conv = conversation_of(obj)
    if conv is None:
        issues.append(
            InputIssue(
                str(path),
                None,
                f"{at or '$'}: not a LoCoMo conversation (no speaker_a and session_N lists)",
            )
        )
        return []
    prefix = f"{at}.conversation." if conv is not obj else (f"{at}." if at else "")
    speaker_a, speaker_b = conv.get("speaker_a"), conv.get("speaker_b")
    if not isinstance(speaker_a, str) or not isinstance(speaker_b, str) or speaker_a == speaker_b:
        issues.append(
            InputIssue(
                str(path), None, f"{prefix}speaker_a/speaker_b: missing, not text or the same"
            )
        )
        return []
    found = _Found(path, prefix, speaker_a, speaker_b, _sample_id(path, obj, item))
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := SESSION_KEY.match(key)))
    transcripts: list[Transcript] = []
    for number, key in sessions:
        transcript = _session(found, conv, number, key, issues)
        if transcript is not None:
            transcripts.append(transcript)
    if not sessions:
        issues.append(InputIssue(str(path), None, f"{at or '$'}: no session_N lists"))
    return transcripts


@dataclass(frozen=True)
class _Found:
    """Where a conversation was found in the file, and who speaks in it."""

    path: Path
    prefix: str  # the JSON path of the conversation, for issues
    speaker_a: str
    speaker_b: str
    sample_id: str


def _sample_id(path: Path, obj: dict[str, Any], item: int | None) -> str:
    raw_id = obj.get("sample_id")
    if isinstance(raw_id, str) and raw_id.strip():
        return raw_id.strip()
    if item is not None:
        return f"{path.stem}-{item}"
    return f"conv-{path.stem}" if path.stem.isdigit() else path.stem


def _session(
    found: _Found, conv: dict[str, Any], number: int, key: str, issues: list[InputIssue]
) -> Transcript | None:
    """Session `key` of the conversation (None, with an issue, when it has no usable turn)."""
    path, prefix = found.path, found.prefix
    turns = conv[key]
    if not isinstance(turns, list):
        issues.append(InputIssue(str(path), None, f"{prefix}{key}: not a list of turns"))
        return None
    raw_date = conv.get(f"{key}_date_time")
    date = raw_date if isinstance(raw_date, str) and raw_date.strip() else None
    parsed_date = parse_session_date(date) if date else None
    if date and parsed_date is None:
        issues.append(
            InputIssue(str(path), None, f"{prefix}{key}_date_time: unrecognised date {date!r}")
        )
    speakers = {found.speaker_a: "user", found.speaker_b: "assistant"}
    messages: list[Message] = []
    for i, turn in enumerate(turns):
        try:
            message, problem = _message(turn, len(messages), f"{prefix}{key}[{i}]", speakers, date)
        except ValueError as exc:
            issues.append(InputIssue(str(path), None, str(exc)))
            continue
        if problem:
            issues.append(InputIssue(str(path), None, problem))
        messages.append(message)
    if not messages:
        issues.append(InputIssue(str(path), None, f"{prefix}{key}: no usable turns"))
        return None
    day = _day(parsed_date, date)
    return Transcript(
        session_id=f"{found.sample_id}-{key}",
        project=PROJECT,
        source="locomo",
        messages=tuple(messages),
        started_at=parsed_date.isoformat() if parsed_date else None,
        title=f"{found.speaker_a} & {found.speaker_b}" + (f" — {day}" if day else ""),
        meta={
            "path": str(path),
            "sample_id": found.sample_id,
            "session": number,
            "session_date": date,
            "speaker_a": found.speaker_a,
            "speaker_b": found.speaker_b,
        },
    )


def parse_locomo(path: Path, data: bytes | None = None) -> ParsedFile:
    raw = path.read_bytes() if data is None else data
    result = ParsedFile()
    ok, doc = load_json(path, raw, result.issues)
    if not ok:
        return result
    if isinstance(doc, list):
        items: list[tuple[int | None, Any]] = list(enumerate(doc))
        if not items:
            result.issues.append(InputIssue(str(path), None, "the list holds no conversations"))
    else:
        items = [(None, doc)]
    seen: set[str] = set()
    for item, obj in items:
        for transcript in _conversation(path, obj, item, result.issues):
            if transcript.session_id in seen:
                result.issues.append(
                    InputIssue(
                        str(path),
                        None,
                        f"[{item}]: duplicate session id {transcript.session_id!r}; skipped",
                    )
                )
                continue
            seen.add(transcript.session_id)
            result.transcripts.append(transcript)
    return result
