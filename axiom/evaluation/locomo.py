"""Load a LoCoMo conversation as retrieval documents (one per dialog turn) and gold questions.

LoCoMo (Maharana et al., ACL 2024) files hold `speaker_a`, `speaker_b`, `session_N` lists of
turns (`speaker`, `dia_id` "D<session>:<turn>", `text`, optional `img_url`/`blip_caption`),
`session_N_date_time`, and `qa` entries (`question`, `answer`, `evidence`, `category`).

Only what a participant of the conversation could see becomes document text: the turn text
and, for a shared photo, its BLIP caption. The `query` field next to an image is the search
phrase the dataset authors used to *find* that photo; it was never part of the dialog and
often paraphrases the question, so it is deliberately left out.

Category 5 questions are adversarial (no answer exists) and are skipped, as are questions
whose evidence names no turn of the conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from axiom.ingest.locomo import format_session_day

RETRIEVAL_CATEGORIES = frozenset({1, 2, 3, 4})
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"D\s*(\d+)\s*:\s*(\d+)")


class LocomoFormatError(ValueError):
    """The file is not a LoCoMo conversation (missing speakers or sessions)."""


@dataclass(frozen=True)
class Turn:
    """One dialog turn: a retrieval document."""

    dia_id: str
    speaker: str
    text: str
    session_index: int
    session_date: str  # as written in the file, e.g. "1:56 pm on 8 May, 2023"; "" if absent
    position: int  # 0-based order of the turn in the whole conversation
    image_caption: str = ""


@dataclass(frozen=True)
class Question:
    """A question with the dialog turns that answer it."""

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    skipped_questions: int  # category 1-4 questions dropped for lack of a known evidence turn


def normalize_dia_id(raw: str) -> list[str]:
    """Every "D<s>:<t>" id inside `raw`, canonicalized ("D8:6; D9:17" -> two ids, "D3:05" -> "D3:5")."""
    return [f"D{int(s)}:{int(t)}" for s, t in _DIA_ID.findall(str(raw))]


def _caption(turn: dict[str, Any]) -> str:
    caption = turn.get("blip_caption")
    if isinstance(caption, list):
        caption = " ".join(str(c) for c in caption if c)
    return str(caption).strip() if caption else ""


def parse_conversation(data: dict[str, Any], name: str = "") -> Conversation:
    """Build a `Conversation` from the parsed JSON of one LoCoMo file."""
    if "speaker_a" not in data and isinstance(data.get("conversation"), dict):
        # The combined locomo10.json nests turns under "conversation".
        data = {**data["conversation"], "qa": data.get("qa", [])}
    if "speaker_a" not in data or "speaker_b" not in data:
        raise LocomoFormatError(f"{name or 'conversation'}: missing speaker_a/speaker_b")
    sessions = sorted((int(m.group(1)), key) for key in data if (m := _SESSION_KEY.match(key)))
    if not sessions:
        raise LocomoFormatError(f"{name or 'conversation'}: no session_N lists")

    turns: list[Turn] = []
    for index, key in sessions:
        date = str(data.get(f"{key}_date_time") or "")
        for raw in data[key] or []:
            ids = normalize_dia_id(raw.get("dia_id", ""))
            if not ids:
                continue
            turns.append(
                Turn(
                    dia_id=ids[0],
                    speaker=str(raw.get("speaker", "")),
                    text=str(raw.get("text", "")),
                    session_index=index,
                    session_date=date,
                    position=len(turns),
                    image_caption=_caption(raw),
                )
            )

    known = {t.dia_id for t in turns}
    questions: list[Question] = []
    skipped = 0
    for qa in data.get("qa", []):
        category = int(qa.get("category", 0))
        if category not in RETRIEVAL_CATEGORIES:
            continue
        evidence: list[str] = []
        for raw_id in qa.get("evidence") or []:
            evidence.extend(i for i in normalize_dia_id(raw_id) if i in known)
        if not evidence:
            skipped += 1
            continue
        questions.append(
            Question(
                question=str(qa.get("question", "")),
                answer=str(qa.get("answer", "")),
                evidence=tuple(dict.fromkeys(evidence)),
                category=category,
            )
        )
    return Conversation(
        name=name,
        speakers=(str(data["speaker_a"]), str(data["speaker_b"])),
        turns=tuple(turns),
        questions=tuple(questions),
        skipped_questions=skipped,
    )


def load_conversations(path: str | Path) -> list[Conversation]:
    """Read a LoCoMo JSON file: one conversation (dev files) or a list (`locomo10.json`)."""
    path = Path(path)
    with path.open(encoding="utf-8") as fh:
        data = json.load(fh)
    if isinstance(data, list):
        return [
            parse_conversation(item, name=str(item.get("sample_id") or f"{path.stem}-{i}"))
            for i, item in enumerate(data)
        ]
    return [parse_conversation(data, name=str(data.get("sample_id") or path.stem))]


def turn_text(
    turn: Turn,
    *,
    speaker: bool = True,
    date: bool = False,
    caption: bool = True,
) -> str:
    """The text a turn is indexed under.

    `speaker` prefixes "Name: " (questions name people: "When did Caroline ..."), `date`
    prefixes the session day, `caption` appends "[shares a photo: <caption>]".
    """
    parts: list[str] = []
    if date and turn.session_date:
        parts.append(f"[{format_session_day(turn.session_date)}]")
    body = turn.text
    if caption and turn.image_caption:
        body = f"{body} [image: {turn.image_caption}]".strip()
    parts.append(f"{turn.speaker}: {body}" if speaker and turn.speaker else body)
    return " ".join(parts)


def with_context(
    texts: list[str], turns: Iterable[Turn], before: int = 1, after: int = 0
) -> list[str]:
    """Each text joined with up to `before` earlier and `after` later turns of its session.

    A reply ("Yes, last summer!") often only makes sense with the turn it answers.
    """
    turns = list(turns)
    if len(turns) != len(texts):
        raise ValueError(f"{len(texts)} texts for {len(turns)} turns")
    out: list[str] = []
    for i, text in enumerate(texts):
        session = turns[i].session_index
        lo, hi = max(0, i - before), min(len(texts), i + after + 1)
        ctx_before = [texts[j] for j in range(lo, i) if turns[j].session_index == session]
        ctx_after = [texts[j] for j in range(i + 1, hi) if turns[j].session_index == session]
        out.append(" ".join([*ctx_before, text, *ctx_after]))
    return out
