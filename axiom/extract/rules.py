"""The offline default extractor: regular-expression rules over a transcript, English and Korean.

What it finds, per message:

- decisions ("we decided", "let's go with", "I'll use X instead of Y", "Decision:", "결정했",
  "하기로 했", "로 가자", ...) -> `decision`;
- errors (a Python traceback's final exception line, `Error:`/`FAILED`/`fatal:` lines,
  prose like "the build failed", "에러", "오류") -> `error`; a later fix ("fixed by",
  "the fix was", "해결했", ...) within the next 20 messages is folded into the same entry,
  whose evidence then quotes both messages;
- facts (`axiom.extract.facts`): changes ("X was changed from A to B", "X is now B",
  "no longer", "X에서 Y로 바꿨"), values ("the rate limit is 100 per minute"), attributes
  of the speaker ("I live in", "my favorite X is"), first-person statements about the
  speaker's life, people, plans and preferences ("I've started …", "my sister …", "저는 …
  했어요"), and project statements ("X uses Y", "runs on") -> `fact` (a change some "we"
  made -> `decision`), each with `subject`/`value`/`previous_value`/`negated` where stated;
  the same subject and value is kept once per session; small talk is left out;
- references: URLs, file paths, JIRA keys (`ABC-123`), GitHub issues (`owner/repo#12`,
  `#123`) -> `reference`, one entry per distinct reference at its first mention;
- tasks: Claude Code `TodoWrite` tool calls and prose ("TODO:", "next step", "need to",
  "blocked by X", "waiting on X", "할 일:", "다음 단계", "막혀") -> `task_note` with
  `TaskFields`.

Quotes. Every prose or error quote is an exact substring of the message text, cut at
sentence (for error output: line) boundaries and 20-200 characters long. A sentence
shorter than 20 characters is widened with its neighbours; when the whole visible part of
a message is shorter than 20 characters the quote is that whole part. A sentence longer
than 200 characters is cut to a 200-character window around the matched words, at word
boundaries. TodoWrite items are the exception: their evidence quotes the todo's text as
written, whatever its length, from the TodoWrite list in the message text (see
`_Run._todo`); prose, error and reference rules do not read that list. `[PRIVATE]`
markers (and any `<private>...</private>` the privacy filter may have missed) split the
text into segments; no quote crosses or contains them. Prose rules ignore fenced code blocks; the
error rule reads them (tracebacks live there).

Cost. Reading is linear in the text. Sentences over 2,000 characters (minified code,
base64) are not read as prose, and the decision/task/fact rules read at most the first
200,000 characters of a message, saying so in `errors`; errors and references are looked
for in the whole text.

Who is read. Tool results and system messages feed only the error rule (a file listing or
a `# TODO` inside a file's content is not a statement by a participant). First-person
personal facts are not taken from an assistant's messages unless the message names a
speaker (`meta["speaker"]`) or the transcript is a LoCoMo conversation: a coding assistant
saying "I'm going to read the file" states no fact.

Ids. Entry ids come from `make_entry_id`; entries with the same id are kept once, so
extracting the same transcript twice gives the same entries in the same order.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from axiom.extract.facts import (
    PRONOUNS,
    FactMatch,
    asks_what,
    clause,
    find_decision_fields,
    find_fact,
    image_caption,
    is_question,
    names_the_answer,
    shows_something,
)
from axiom.extract.task_text import (
    artifacts_in,
    clauses,
    status_update,
    vague_title,
    work_verb,
    working_on,
)
from axiom.extract.types import (
    EntryType,
    ExtractedEntry,
    ExtractedEvidence,
    ExtractionResult,
    FactFields,
    TaskFields,
    TaskInputProblem,
    TaskPriority,
    TaskStatus,
    dedupe_entries,
    normalize_title,
)
from axiom.ingest.privacy.filter import holds_masked_secret
from axiom.ingest.transcript import Message, Transcript
from axiom.ingest.words import fold, has_any

RULESET_VERSION = "axiom.extract.rules/7"
# 2: TodoWrite problems kept as task_problems; 3: TodoWrite items quoted from the list
# the Claude Code parser writes into the message text, which prose rules skip; 4: stated
# facts with subject/value/changes (axiom.extract.facts), tag questions read; 5: shared
# photos the speaker points at, things named before the verb, replies naming what was asked;
# 6: "I'm fixing X" as current work, ", so" splits clauses, "X is fixed/closed" is done;
# 7: no fact or decision of a statement whose value the privacy filter masked ("my key is
# [SECRET:…]")
"""Bump whenever a rule changes: its hash is the `prompt_hash` recorded with every build."""

RULES_PROMPT_HASH = hashlib.sha256(RULESET_VERSION.encode("utf-8")).hexdigest()

MIN_QUOTE = 20
MAX_QUOTE = 200
MAX_TITLE = 100
FIX_WINDOW = 20  # a fix must come at most this many messages after its error
MAX_SENTENCE = 2_000  # longer "sentences" are blobs (minified code, base64), not statements
MAX_PROSE_CHARS = 200_000  # decision/task/fact rules read this much of one message

_PROSE_SKIP_ROLES = frozenset({"tool_result", "system"})
_RANK: dict[str, int] = {"error": 0, "decision": 1, "task_note": 2, "fact": 3, "reference": 4}

# --------------------------------------------------------------------------- text layout

_PRIVATE = re.compile(r"\[PRIVATE\]|<private>.*?(?:</private>|\Z)", re.I | re.S)
# A TodoWrite list as `axiom.ingest.claude_code.todo_text` writes it into the message text.
_TODO_BLOCK = re.compile(r"^TodoWrite:(?:\n- \[[^\]\n]*\] [^\n]*)+", re.M)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
_LINE = re.compile(r"[^\n]+")
_LIST_MARKER = re.compile(r"(?:[-*+•>]|\d{1,3}[.)]|#{1,6})[ \t]+")
_SENTENCE_END = re.compile(r"[.!?。！？]+[\"'”’)\]]*(?=\s)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "jr", "no", "approx", "cf", "fig"}
)


@dataclass(frozen=True)
class _Unit:
    """A sentence or a line: `text[start:end]`, inside segment number `segment`."""

    start: int
    end: int
    segment: int


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


@dataclass
class _TodoItem:
    """One TodoWrite item being read: where it is (for errors and problems), the item, and
    the problems found in it so far."""

    where: str
    item: dict[str, Any]
    spot: dict[str, Any]
    problems: list[TaskInputProblem] = field(default_factory=list)


class _View:
    """A message's text cut into what the rules may read and quote."""

    def __init__(self, message: Message) -> None:
        self.message = message
        text = message.text or ""
        self.text = text
        self.segments: list[tuple[int, int]] = []
        self.todo_blocks: list[tuple[int, int]] = []  # TodoWrite lists: quoted, not read
        if any(c.name == "TodoWrite" for c in message.tool_calls):
            self.todo_blocks = [(m.start(), m.end()) for m in _TODO_BLOCK.finditer(text)]
        cursor = 0
        cuts = []
        if "private" in fold(text):
            cuts = [(m.start(), m.end()) for m in _PRIVATE.finditer(text)]
        for start, end in sorted(cuts + self.todo_blocks):
            self._add_segment(cursor, start)
            cursor = max(cursor, end)
        self._add_segment(cursor, len(text))
        self.code = []
        if "```" in text or "~~~" in text:
            self.code = [(m.start(), m.end()) for m in _FENCE.finditer(text)]
        self._code_starts = [s for s, _ in self.code]
        self.lines: list[_Unit] = []
        self.sentences: list[_Unit] = []
        for number, (s, e) in enumerate(self.segments):
            for line in _LINE.finditer(text, s, e):
                ls, le = _trim(text, line.start(), line.end())
                if ls < le:
                    self.lines.append(_Unit(ls, le, number))
                    self.sentences.extend(self._split_sentences(ls, le, number))
        self._line_starts = [u.start for u in self.lines]
        self._sentence_starts = [u.start for u in self.sentences]

    def _add_segment(self, start: int, end: int) -> None:
        start, end = _trim(self.text, start, end)
        if start < end:
            self.segments.append((start, end))

    def _split_sentences(self, start: int, end: int, segment: int) -> Iterator[_Unit]:
        text = self.text
        while True:
            marker = _LIST_MARKER.match(text, start, end)
            if not marker or marker.end() >= end:
                break
            start = marker.end()
        cursor = start
        for m in _SENTENCE_END.finditer(text, start, end):
            word = _WORD_BEFORE.search(text, max(cursor, m.start() - 12), m.start())
            if word and (
                word.group(1).lower().rstrip(".") in _ABBREVIATIONS
                or (len(word.group(1)) == 1 and word.group(1).isupper())
            ):
                continue  # "e.g. x", "J. Smith": not the end of a sentence
            s, e = _trim(text, cursor, m.end())
            if s < e:
                yield _Unit(s, e, segment)
            cursor = m.end()
        s, e = _trim(text, cursor, end)
        if s < e:
            yield _Unit(s, e, segment)

    def in_code(self, pos: int) -> bool:
        i = bisect.bisect_right(self._code_starts, pos) - 1
        return i >= 0 and pos < self.code[i][1]

    def sentence_at(self, pos: int) -> _Unit | None:
        i = bisect.bisect_right(self._sentence_starts, pos) - 1
        if i >= 0 and pos < self.sentences[i].end:
            return self.sentences[i]
        return None

    def quote(self, start: int, end: int, by_line: bool = False) -> ExtractedEvidence:
        """Evidence for the match `text[start:end]`: its sentence (or line), 20-200 chars."""
        units = self.lines if by_line else self.sentences
        starts = self._line_starts if by_line else self._sentence_starts
        first = max(0, bisect.bisect_right(starts, start) - 1)
        last = max(first, bisect.bisect_right(starts, max(start, end - 1)) - 1)
        if units[last].segment != units[first].segment:
            last = first
        lo, hi = first, last
        s, e = units[lo].start, units[hi].end
        segment = units[first].segment
        while e - s < MIN_QUOTE:
            if hi + 1 < len(units) and units[hi + 1].segment == segment:
                hi += 1
                e = units[hi].end
            elif lo > 0 and units[lo - 1].segment == segment:
                lo -= 1
                s = units[lo].start
            else:
                break
        if e - s > MAX_QUOTE:
            s, e = _window(self.text, s, e, max(start, s), min(end, e))
        return ExtractedEvidence(self.message.index, self.text[s:e])


def _window(text: str, s: int, e: int, ms: int, me: int) -> tuple[int, int]:
    """At most MAX_QUOTE characters of `text[s:e]` around `text[ms:me]`, at word boundaries."""
    if me - ms >= MAX_QUOTE:
        a, b = ms, ms + MAX_QUOTE
    else:
        slack = MAX_QUOTE - (me - ms)
        a = max(s, ms - slack // 3)
        b = min(e, a + MAX_QUOTE)
        a = max(s, b - MAX_QUOTE)
    if a > s and not text[a - 1].isspace():
        space = text.find(" ", a, ms)
        if space != -1:
            a = space + 1
    if b < e and not text[b].isspace():
        space = text.rfind(" ", max(me, a), b)
        if space != -1:
            b = space
    return _trim(text, a, b)


# --------------------------------------------------------------------------- titles

_SPACES = re.compile(r"\s+")
_LABEL = re.compile(r"^(?:[A-Za-z]+|결정|참고|메모)\s*[:：]\s*")
_ARTICLE = re.compile(r"^(?:the|our|this|a|an|my)\s+", re.I)


def _title(text: str, capitalize: bool = True, drop_label: bool = False) -> str:
    title = _SPACES.sub(" ", text).strip()
    if drop_label:
        title = _LABEL.sub("", title, count=1)
    title = title.strip("*#>• ").rstrip(".!?。;:,").strip()
    if len(title) > MAX_TITLE:
        cut = title.rfind(" ", 0, MAX_TITLE - 1)
        title = title[: cut if cut > MAX_TITLE // 2 else MAX_TITLE - 1].rstrip(" ,;:") + "…"
    first = title.split(" ", 1)[0] if title else ""
    if capitalize and first and first[0].islower() and not re.search(r"[/._`]", first):
        title = title[0].upper() + title[1:]
    return title


def _cut_clause(text: str) -> str:
    """The first clause of a captured phrase: up to `;`, `(`, ` - `, or a sentence end."""
    return re.split(r"\s*(?:[;(]|\s[-–—]\s|[.!?。](?:\s|$))", text, maxsplit=1)[0]


# --------------------------------------------------------------------------- rule patterns


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile, letting every ASCII apostrophe also match a typographic one (I’m, let’s)."""
    return re.compile(pattern.replace("'", "['’]"), flags)


_NEGATED = _rx(r"(?:\bnot|n't|\bnever|\bno|\bwithout)\s+(?:\w+\s+){0,2}$", re.I)


def _negated(sentence: str, pos: int) -> bool:
    return bool(_NEGATED.search(sentence[max(0, pos - 30) : pos]))


# Each rule with the words it cannot match without (`axiom.ingest.words`): a sentence
# holding none of them skips it.
_DECISION: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (_rx(r"^\W*(?:final\s+)?decision\s*[:：\-–]", re.I), ("decision",)),
    (_rx(r"\b(?:we|i)(?:'ve|\s+have)?\s+(?:finally\s+|just\s+)?decided\b", re.I), ("decided",)),
    (_rx(r"\bdecided\s+(?:to|on|that|against)\b", re.I), ("decided",)),
    (
        _rx(
            r"\b(?:let'?s|let\s+us|we(?:'ll|\s+will|'re\s+going\s+to|\s+are\s+going\s+to)"
            r"|i(?:'ll|\s+will))\s+(?:go|stick)\s+with\b",
            re.I,
        ),
        ("with",),
    ),
    (
        _rx(
            r"\b(?:i|we|let'?s)(?:'ll|\s+will)?\s+(?:use|switch\s+to|move\s+to)\s+\S.{0,80}?"
            r"\s+instead\s+of\b",
            re.I,
        ),
        ("instead",),
    ),
    (
        _rx(
            r"\b(?:we|i)\s+(?:chose|picked|opted\s+for|settled\s+on|went\s+with"
            r"|agreed\s+(?:to|on))\b",
            re.I,
        ),
        ("chose", "picked", "opted", "settled", "went", "agreed"),
    ),
    (
        _rx(r"\b(?:we|i)(?:'ve|\s+have)?\s+switched\s+(?:from\s+\S.{0,60}?\s+)?to\b", re.I),
        ("switched",),
    ),
    (_rx(r"결정(?:했|하였|함|됐|되었|\s*사항|\s*[:：])"), ("결정",)),
    (_rx(r"기로\s*(?:했|하였|함|결정|합의)"), ("기로",)),
    (
        _rx(r"\S(?:으)?로\s*(?:가자|갑시다|하자|합시다|가기로|정했)"),
        ("가자", "갑시다", "하자", "합시다", "가기로", "정했"),
    ),
    (
        _rx(r"대신\s*\S+?\s*(?:을|를)?\s*(?:쓰자|쓰기로|쓸게|씁시다|사용하자|사용하기로|사용할게)"),
        ("대신",),
    ),
]
_DECISION_WORDS = tuple(word for _, words in _DECISION for word in words)

_TASK_WHAT: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (_rx(r"(?:\bTODO\b|\btodo(?=\s*:))\s*[:：\-–]?\s*(?P<what>\S.*)"), ("todo",)),
    (
        _rx(
            r"\bnext\s+steps?\b\s*(?:is|are|will\s+be|would\s+be|[:：\-–])\s*(?:to\s+)?"
            r"(?P<what>\S.*)",
            re.I,
        ),
        ("next",),
    ),
    (
        _rx(
            r"(?:^\W*|\b(?:we|i|you|still|also)\s+(?:still\s+|also\s+|really\s+|will\s+|'ll\s+)?)"
            r"need\s+to\s+(?P<what>\S.*)",
            re.I,
        ),
        ("need",),
    ),
    (_rx(r"할\s*일\s*(?:은|는)?\s*[:：\-]\s*(?P<what>\S.*)"), ("할",)),
    (_rx(r"^\W*할\s*일\s*(?:은|는)\s+(?P<what>\S.*)"), ("할",)),
    (_rx(r"다음\s*단계\s*(?:(?:는|은)\s*[:：\-]?|[:：\-])\s*(?P<what>\S.*)"), ("다음",)),
]
_TASK_BLOCKED = re.compile(r"\b(?:blocked\s+(?:by|on)|waiting\s+on)\s+(?P<blk>\S.*)", re.I)
_BLOCKED_WORDS = ("blocked", "waiting")
_BLOCKER_END = re.compile(
    r"\s*(?:[;!?(]|[.,](?:\s|$)|$|\s+(?:until|before|so|because|which|but|for\s+now)\b)", re.I
)
_BLOCKER_SPLIT = re.compile(r"\s*(?:,|\band\b|&)\s*", re.I)
_BLOCKED_SUBJECT_TAIL = _rx(
    r"\s*(?:(?:is|are|was|were|am|'s|'re|'m|currently|still|now|been|being|has|have|got)\s*)+$",
    re.I,
)
_NOW_TAIL = re.compile(r"\s+(?:right\s+now|now|currently|today|at\s+the\s+moment)\W*$", re.I)
_KO_BLOCKED = re.compile(r"막혀|막혔|막힌|막힘")
_KO_BLOCKER_LINK = re.compile(
    r"(?<!\S)(?P<blk>\S{1,40}(?:\s+\S{1,40}){0,4}?)\s*(?:때문에|(?:으)?로\s*인해|전까지|까지|에)\s*(?:막혀|막혔|막힌|막힘)"
)
_KO_WAITING = re.compile(
    r"(?<!\S)(?P<blk>\S{1,40}(?:\s+\S{1,40})?)\s*(?:을|를)\s*기다리(?:는\s*중|고\s*있)"
)
_KO_NEED = re.compile(r"해야\s*(?:한다|합니다|해요|함|돼|됩니다|된다)")
# A clause with none of these words is no task mention (`working_on` needs "-ing").
_TASK_WORDS = (
    *_BLOCKED_WORDS,
    *(word for _, words in _TASK_WHAT for word in words),
    "ing",
    "막혀",
    "막혔",
    "막힌",
    "막힘",
    "기다리",
    "해야",
)
_KO_TOPIC = re.compile(r"^(?P<noun>\S+?)(?:은|는|이|가)$")
# A word that ends a Korean noun phrase's run of modifiers when read backwards: one carrying
# a particle or a verb ending (the genitive 의 joins nouns, so it does not), or punctuation.
_KO_PHRASE_BREAK = re.compile(
    r"(?:에서|에게|으로|로|에|을|를|은|는|이|가|도|와|과|고|니|서|면|데|지만|요|다|[^\w])$"
)
_KO_LEADERS = frozenset(
    [
        "그리고",
        "그런데",
        "근데",
        "또",
        "또한",
        "그래서",
        "참고로",
        "그럼",
        "좋아",
        "아",
        "음",
        "이제",
        "지금",
        "오늘",
        "오늘은",
    ]
)

_FACT_VERB = re.compile(
    r"^(?P<subj>[\w`'\".+/-]+(?:\s+[\w`'\".+/-]+){0,5}?)\s+"
    r"(?:uses|runs\s+on|requires|depends\s+on|is\s+written\s+in|is\s+built\s+(?:on|with)"
    r"|is\s+backed\s+by|is\s+stored\s+in|listens\s+on|defaults\s+to"
    r"|is\s+configured\s+(?:in|by|with|via))\s+\S",
    re.I,
)
_FACT_VERB_WORDS = (
    "uses",
    "runs",
    "requires",
    "depends",
    "written",
    "built",
    "backed",
    "stored",
    "listens",
    "defaults",
    "configured",
)
_CODEY = (
    r"`[^`\n]{1,60}`|[\w-]+(?:[./][\w-]+)+|[a-z]+_\w+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"
    r"|[A-Z]{2,}[a-z]*\w*"
)
_FACT_IS = re.compile(
    r"^(?P<subj>[Tt]he\s+(?:default|main|production|prod|staging|dev|test|current)\s+[\w-]+"
    r"|(?:[Tt]he|[Oo]ur|[Tt]his)\s+(?:[\w-]+\s+)?(?:port|version|branch|database|db|endpoint"
    r"|url|path|directory|folder|model|schema|stack|language|framework|runtime|backend"
    r"|frontend|server|repo|repository|project|app|api|cli|config|settings)"
    rf"|{_CODEY})\s+(?:is|are)\s+(?!not\b|n't|going\b|being\b|gonna\b|still\b|now\b)\S"
)
_FACT_KO = re.compile(
    r"(?:제\s*)?이름은\s*\S|저는\s*\S+(?:입니다|이에요|예요)"
    r"|에\s*(?:살아요|살고\s*있|삽니다|산다|살았)"
    r"|(?:을|를)\s*(?:사용한다|사용합니다|사용해요|사용하고\s*있|사용\s*중)"
    r"|(?:에서|위에서)\s*(?:실행된다|실행됩니다|실행돼|돌아간다|돌아갑니다|동작한다|동작합니다)"
    r"|(?:이|가)\s*필요(?:하다|합니다|해요|함)"
    r"|에\s*(?:다녀왔|갔다|갔어|갔습니다|갔었)"
)

_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
_EXCEPTION_LINE = re.compile(
    r"^(?P<line>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::[^\n]*)?)$", re.M
)
_ERROR_LINE = re.compile(
    r"^[ \t>]*(?:E[ \t]+)?(?P<line>(?:[A-Za-z_][\w.]*(?:Error|Exception)(?::|[ \t]*$)"
    r"|(?:error|Error|ERROR|fatal|FATAL|panic)(?:\[[\w-]+\])?:|FAILED[ \t]|npm ERR!)[^\n]*)$",
    re.M,
)
_ERROR_PROSE = re.compile(
    r"\bfailed\s+to\s+\w+"
    r"|\b(?:build|test|tests|install(?:ation)?|migration|import|command|job|deploy(?:ment)?|ci"
    r"|check|compil(?:e|ation)|request|connection|query|step|pipeline|upload|download|push"
    r"|script)s?\s+(?:has\s+|have\s+|had\s+|is\s+|was\s+|were\s+|are\s+|keeps?\s+|still\s+)?"
    r"(?:failed|failing|fails)\b"
    r"|\b(?:raised|raises|threw|throws)\s+(?:an?\s+)?(?:[\w.]+\s+)?(?:exception|error)\b"
    r"|(?:에러|오류|예외)(?!\s*(?:가|는|이|도)?\s*(?:없|안\s*나))"
    r"|실패(?:했|함|합니다|한다|하고|해)",
    re.I,
)
_ERROR_PROSE_WORDS = ("fail", "rais", "threw", "throw", "에러", "오류", "예외", "실패")
_FIX = _rx(
    r"\b(?:fixed|resolved|solved)\s+(?:it\s+|this\s+|that\s+|the\s+(?:\w+\s+){0,2})?by\b"
    r"|\bthe\s+fix\s+(?:was|is)\b|\bfix(?:ed)?\s*:|\b(?:that|this)\s+fixed\s+(?:it|the\s+\w+)"
    r"|\b(?:i|we)(?:'ve|\s+have)?\s+(?:now\s+)?fixed\b|\bnow\s+(?:passes|passing|works)\b"
    r"|해결(?:했|됐|되었|함|합니다|된다|완료|\s*방법은|책은)|고쳤|고침",
    re.I,
)
_FIX_WORDS = ("fix", "solved", "pass", "works", "해결", "고쳤", "고침")
_FIX_NEGATED = re.compile(r"해결(?:이)?\s*안|해결되지\s*않|해결\s*못")

_URL = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.I)
_GH_ISSUE = re.compile(r"(?<![\w/.-])[A-Za-z0-9][\w.-]*/[\w.-]+#\d+(?!\w)")
_JIRA = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,9}-[1-9]\d{0,6}(?![\w-])")
_JIRA_NOT = frozenset(
    [
        "UTF",
        "SHA",
        "ISO",
        "COVID",
        "GPT",
        "MD",
        "AES",
        "RSA",
        "HTTP",
        "TLS",
        "SSL",
        "IPV",
        "PEP",
        "RFC",
        "CVE",
        "ES",
        "ECMA",
        "MP",
        "UTC",
        "GMT",
    ]
)
_BARE_ISSUE = re.compile(r"(?<![\w&/#])#\d{1,6}(?!\w)")
_FILE_EXTENSION = (
    r"\.(?:py|pyi|ipynb|js|jsx|mjs|ts|tsx|json|jsonl|md|rst|toml|yaml|yml"
    r"|sql|sh|txt|cfg|ini|html|css|rs|go|java|rb|c|h|cpp|hpp|idr|lock|csv|env)"
)
_PATH = re.compile(
    r"(?<![\w/.:~-])(?:(?:~|\.{1,2})?/(?:[\w.@-]+/)+[\w.@-]*\w"
    r"|(?:[\w@-][\w.@-]*/)+[\w.@-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}"
    rf"|[\w-]+(?:\.[\w-]+)*{_FILE_EXTENSION})(?![\w/])"
)
_NOT_FILES = frozenset({"node.js", "next.js", "vue.js", "react.js", "d3.js", "three.js"})
# Each with a cheap pattern (a literal first, or one character class) that finds some part
# of any match: text it finds nothing in is not scanned with the costly pattern.
_REFERENCE_PATTERNS = (
    ("url", _URL, re.compile("://")),
    ("github", _GH_ISSUE, re.compile(r"/[\w.-]+#\d")),
    ("path", _PATH, re.compile(rf"/|{_FILE_EXTENSION}(?![\w/])")),
    ("jira", _JIRA, re.compile(r"[A-Z0-9]-[1-9]")),
    ("issue", _BARE_ISSUE, re.compile(r"#\d")),
)


# --------------------------------------------------------------------------- extraction


@dataclass
class _OpenError:
    position: int  # order of the message in the transcript
    at: int  # character offset in the message
    title: str
    evidence: ExtractedEvidence
    fix: ExtractedEvidence | None = None


class _Run:
    """One extraction of one transcript: collects drafts, then builds sorted entries."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.session_id = transcript.session_id
        self.drafts: list[tuple[tuple[int, int, int, int], ExtractedEntry]] = []
        self.errors: list[str] = []
        self.open_errors: list[_OpenError] = []
        self.closed_errors: list[_OpenError] = []
        self.seen_references: set[str] = set()
        self.todo_state: dict[str, tuple[int, tuple[str | None, str | None]]] = {}
        self.task_problems: list[TaskInputProblem] = []
        self.problems_seen: set[tuple[str, str, str]] = set()
        self.views: list[_View] = []
        self.sequence = 0
        self.facts_said: set[tuple[str, str | None, str | None, str | None, bool]] = set()
        self.statements: dict[tuple[int, str], int] = {}  # (message, subject) -> draft

    def add(
        self,
        at: tuple[int, int],
        type: EntryType,
        title: str,
        content: str,
        evidence: tuple[ExtractedEvidence, ...],
        task: TaskFields | None = None,
        fact: FactFields | None = None,
    ) -> None:
        if not normalize_title(title) or not evidence or not all(e.quote for e in evidence):
            return
        if fact is not None and (fact.value is not None or fact.negated):
            said = (type, fact.subject, fact.value, fact.previous_value, fact.negated)
            if said in self.facts_said:
                return  # the same subject and value once per session
            self.facts_said.add(said)
        elif type == "fact" and fact is not None and fact.subject is not None:
            # Statements of one speaker about themselves in one message are one memory
            # with one quote per statement, not one entry per sentence.
            key = (at[0], fact.subject)
            where = self.statements.get(key)
            if where is not None:
                draft_key, kept = self.drafts[where]
                if not any(e.quote == q.quote for e in kept.evidence for q in evidence):
                    merged = replace(
                        kept,
                        evidence=kept.evidence + evidence,
                        content=f"{kept.content}\n{content}",
                    )
                    self.drafts[where] = (draft_key, merged)
                return
            self.statements[key] = len(self.drafts)
        entry = ExtractedEntry.create(self.session_id, type, title, content, evidence, task, fact)
        self.sequence += 1
        self.drafts.append(((at[0], at[1], _RANK[type], self.sequence), entry))

    def run(
        self,
    ) -> tuple[tuple[ExtractedEntry, ...], tuple[str, ...], tuple[TaskInputProblem, ...]]:
        for position, message in enumerate(self.transcript.messages):
            try:
                view = _View(message)
            except Exception as exc:  # a rule bug must not lose the other messages
                self.errors.append(f"message {message.index}: could not be read: {exc!r}")
                view = _View(Message(index=message.index, role=message.role, text=""))
            self.views.append(view)
            for step in (self._errors_and_fixes, self._prose, self._references, self._todos):
                try:
                    step(position, view)
                except Exception as exc:
                    self.errors.append(
                        f"message {message.index}: rule {step.__name__.strip('_')} failed: {exc!r}"
                    )
        for err in [*self.closed_errors, *self.open_errors]:
            evidence = (err.evidence,) if err.fix is None else (err.evidence, err.fix)
            content = err.evidence.quote
            if err.fix is not None:
                content = f"{content}\nFix: {err.fix.quote}"
            self.add((err.evidence.message_index, err.at), "error", err.title, content, evidence)
        self.drafts.sort(key=lambda draft: draft[0])
        entries = dedupe_entries([entry for _, entry in self.drafts])
        return entries, tuple(self.errors), tuple(self.task_problems)

    # ---------------------------------------------------------------- errors and fixes

    def _errors_and_fixes(self, position: int, view: _View) -> None:
        text = view.text
        found: tuple[int, int, str, bool] | None = None  # start, end, title source, by line
        for s, e in view.segments:
            trace = _TRACEBACK.search(text, s, e)
            line = _EXCEPTION_LINE.search(text, trace.end(), e) if trace else None
            line = line or _ERROR_LINE.search(text, s, e)
            if line:
                found = (line.start("line"), line.end("line"), line.group("line"), True)
                break
        if found is None and view.message.role != "system":
            found = self._prose_error(view)
        error_at = -1
        if found is not None:
            start, end, source, by_line = found
            error_at = start
            title = _title(source)
            key = normalize_title(title)
            if not any(normalize_title(o.title) == key for o in self.open_errors):
                evidence = view.quote(start, end, by_line=by_line)
                self.open_errors.append(_OpenError(position, start, title, evidence))
        if view.message.role in _PROSE_SKIP_ROLES or not self.open_errors:
            return
        for unit in view.sentences:
            if not self.open_errors:
                break
            if view.in_code(unit.start) or unit.start < error_at:
                continue
            if unit.end - unit.start > MAX_SENTENCE:
                continue
            sentence = text[unit.start : unit.end]
            m = _FIX.search(sentence) if has_any(fold(sentence), _FIX_WORDS) else None
            if not m or _negated(sentence, m.start()) or _FIX_NEGATED.search(sentence):
                continue
            candidates = [
                o
                for o in self.open_errors
                if position - o.position <= FIX_WINDOW
                and (o.position < position or o.at < unit.start)
            ]
            if not candidates:
                continue
            err = candidates[-1]
            err.fix = view.quote(unit.start + m.start(), unit.start + m.end())
            self.open_errors.remove(err)
            self.closed_errors.append(err)

    @staticmethod
    def _prose_error(view: _View) -> tuple[int, int, str, bool] | None:
        text = view.text
        for s, e in view.segments:
            if not has_any(fold(text[s:e]), _ERROR_PROSE_WORDS):
                continue
            for m in _ERROR_PROSE.finditer(text, s, e):
                unit = view.sentence_at(m.start())
                if unit is None or view.in_code(m.start()):
                    continue
                sentence = text[unit.start : unit.end]
                if not _negated(sentence, m.start() - unit.start):
                    return (m.start(), m.end(), sentence, False)
        return None

    # ---------------------------------------------------------------- decisions, tasks, facts

    def _prose(self, position: int, view: _View) -> None:
        message = view.message
        if message.role in _PROSE_SKIP_ROLES:
            return
        personal_ok = (
            message.role != "assistant"
            or bool(message.meta.get("speaker"))
            or self.transcript.source == "locomo"
        )
        speaker = str(message.meta.get("speaker") or "")
        text = view.text
        budget = MAX_PROSE_CHARS
        asked = self._asked_what(position, speaker) if personal_ok else None
        caption: _Unit | None = None  # a shared photo's "[image: …]"
        shown: _Unit | None = None  # the sentence pointing at it ("take a look at this")
        for unit in view.sentences:
            if view.in_code(unit.start) or unit.end - unit.start > MAX_SENTENCE:
                continue
            budget -= unit.end - unit.start
            if budget < 0:
                self.errors.append(
                    f"message {message.index}: decision, task and fact rules read only the "
                    f"first {MAX_PROSE_CHARS} characters of its {len(text)}"
                )
                break
            sentence = text[unit.start : unit.end]
            if image_caption(sentence) is not None:
                caption = unit
                continue
            if sentence.rstrip("\"')]*").endswith(("?", "？")) and is_question(sentence):
                continue  # questions state nothing (a tag question like "right?" does)
            if shown is None and shows_something(sentence):
                shown = unit
            at = (message.index, unit.start)
            if self._decision(view, unit, sentence, at):
                continue
            if self._tasks(view, unit, sentence):
                continue
            self._fact(view, unit, sentence, at, personal_ok, speaker, asked)
        if caption is not None and speaker and personal_ok:
            self._photo(view, caption, shown, speaker)

    def _asked_what(self, position: int, speaker: str) -> str | None:
        """The question of the message before, by someone else, asking this speaker to name
        something ("What concert was it?"): the reply's "It was Matt Patterson" answers it."""
        if position == 0 or not speaker:
            return None
        before = self.views[position - 1]
        if str(before.message.meta.get("speaker") or "") in ("", speaker):
            return None
        for unit in before.sentences:
            question = before.text[unit.start : unit.end]
            if asks_what(question):
                return question
        return None

    def _photo(self, view: _View, caption: _Unit, shown: _Unit | None, speaker: str) -> None:
        """A photo the speaker shares is part of what they say in the message: its caption
        joins their statement there, or is one of its own when they point at it ("take a
        look at this", "here's a pic from when …"); a photo nobody refers to is not."""
        said = (view.message.index, speaker) in self.statements
        if not said and shown is None:
            return
        evidence = [view.quote(caption.start, caption.end)]
        if not said and shown is not None:
            evidence.insert(0, view.quote(shown.start, shown.end))
        what = image_caption(view.text[caption.start : caption.end])
        title = _title(f"{speaker} shared a photo: {what}")
        content = "\n".join(f"{speaker}: {e.quote}" for e in evidence)
        at = (view.message.index, caption.start)
        self.add(at, "fact", title, content, tuple(evidence), fact=FactFields(speaker, None))

    def _decision(self, view: _View, unit: _Unit, sentence: str, at: tuple[int, int]) -> bool:
        folded = fold(sentence)
        if not has_any(folded, _DECISION_WORDS):
            return False
        for pattern, words in _DECISION:
            m = pattern.search(sentence) if has_any(folded, words) else None
            if m and not _negated(sentence, m.start()):
                evidence = view.quote(unit.start + m.start(), unit.start + m.end())
                title = _title(sentence, drop_label=True)
                fact = find_decision_fields(sentence)
                if _says_a_masked_secret(fact, title):
                    return True  # the sentence is taken, and yields nothing
                self.add(at, "decision", title, evidence.quote, (evidence,), fact=fact)
                return True
        return False

    def _tasks(self, view: _View, unit: _Unit, sentence: str) -> bool:
        """Task mentions of each clause ("…; X is blocked by OPS-77" is its own mention)."""
        found = False
        for start, end in clauses(sentence):
            part = _Unit(unit.start + start, unit.start + end, unit.segment)
            at = (view.message.index, part.start)
            found = self._task(view, part, sentence[start:end], at) or found
        return found

    def _status_update(self, view: _View, unit: _Unit, sentence: str, at: tuple[int, int]) -> bool:
        update = status_update(sentence)
        if update is None:
            return False
        evidence = view.quote(unit.start + update.start, unit.start + update.end)
        task = TaskFields(title=update.title, status=update.status, update_only=True)
        self.add(at, "task_note", _title(update.title), evidence.quote, (evidence,), task)
        return True

    def _task(self, view: _View, unit: _Unit, sentence: str, at: tuple[int, int]) -> bool:
        if self._status_update(view, unit, sentence, at):
            return True
        folded = fold(sentence)
        if not has_any(folded, _TASK_WORDS):
            return False
        blocked = _TASK_BLOCKED.search(sentence) if has_any(folded, _BLOCKED_WORDS) else None
        if blocked and _negated(sentence, blocked.start()):
            blocked = None
        ko_blocked = _KO_BLOCKED.search(sentence) or (
            _KO_WAITING.search(sentence) if "기다리" in sentence else None
        )
        what = None
        for pattern, words in _TASK_WHAT:
            what = pattern.search(sentence) if has_any(folded, words) else None
            if what and not _negated(sentence, what.start()):
                break
            what = None
        working = None if what else working_on(sentence)
        what = what or working
        ko_need = _KO_NEED.search(sentence)
        if not (blocked or ko_blocked or what or ko_need):
            return False
        blocked_by: list[str] = []
        subject = ""
        if blocked:
            tail = blocked.group("blk")
            end = _BLOCKER_END.search(tail)
            raw = tail[: end.start()] if end else tail
            blocked_by = [_strip_blocker(b) for b in _BLOCKER_SPLIT.split(raw)]
            # Keep the ticket keys and URLs of the blocker even where its text was cut.
            blocked_by += [a for a in artifacts_in(tail) if not any(a in b for b in blocked_by)]
            subject = _BLOCKED_SUBJECT_TAIL.sub("", sentence[: blocked.start()])
            subject = _ARTICLE.sub("", _LABEL.sub("", subject.strip()))
        elif ko_blocked:
            blocked_by, subject = _korean_blocker(sentence)
        blocked_by = [b for b in blocked_by if b]
        if what:
            cut = what.group("what")
            if blocked and blocked.start() > what.start("what"):
                cut = sentence[what.start("what") : blocked.start()]
            if working is not None:  # "I'm working on the retry logic now" → "Retry logic"
                cut = _NOW_TAIL.sub("", _cut_clause(cut))
                verb = work_verb(working)  # "I'm fixing the login bug" → "Fix the login bug"
                cut = f"{verb} {cut}" if verb else _ARTICLE.sub("", cut)
            title = _title(_cut_clause(cut), capitalize=True)
            if vague_title(title) or (len(title) < 3 and not (blocked or ko_blocked)):
                return False  # "TODO: Fix", "do it", "… where you need to be" name no task
        elif subject and subject.split(" ", 1)[0].lower() not in PRONOUNS and len(subject) >= 2:
            title = _title(subject, capitalize=True)
        else:
            title = _title(sentence, drop_label=True)
        if not normalize_title(title):
            title = _title(sentence, drop_label=True)
        trigger = blocked or ko_blocked or what or ko_need
        assert trigger is not None
        status: TaskStatus = "blocked" if (blocked or ko_blocked) else "pending"
        if working is not None and status == "pending":
            status = "in_progress"
        evidence = view.quote(unit.start + trigger.start(), unit.start + trigger.end())
        task = TaskFields(title=title, status=status, blocked_by=tuple(blocked_by), source="text")
        self.add(at, "task_note", title, evidence.quote, (evidence,), task)
        return True

    def _fact(
        self,
        view: _View,
        unit: _Unit,
        sentence: str,
        at: tuple[int, int],
        personal_ok: bool,
        speaker: str,
        asked: str | None = None,
    ) -> None:
        found = find_fact(sentence, speaker or view.message.role, personal_ok)
        said = sentence
        if found is None and asked is not None:
            found = names_the_answer(sentence, speaker)
            if found is not None:  # "It was Matt Patterson" says little without the question
                said = f"{asked} {sentence}"
        if found is None:
            found = _project_fact(sentence)
        if found is None or (found.kind != "change" and _negated(sentence, found.start)):
            return
        evidence = view.quote(unit.start + found.start, unit.start + found.end)
        title = _title(said, drop_label=True)
        personal = found.kind in ("personal", "attribute")
        if personal and speaker:
            title = f"{speaker}: {title}"
        quote = evidence.quote if said is sentence else f"{asked} {evidence.quote}"
        content = f"{speaker}: {quote}" if personal and speaker else quote
        if _says_a_masked_secret(found.fields, title):
            return
        self.add(at, found.type, title, content, (evidence,), fact=found.fields)

    # ---------------------------------------------------------------- references

    def _references(self, position: int, view: _View) -> None:
        if view.message.role in _PROSE_SKIP_ROLES:
            return
        text = view.text
        for s, e in view.segments:
            found: list[tuple[int, int, int, str, str]] = []
            for rank, (kind, pattern, part) in enumerate(_REFERENCE_PATTERNS):
                if not part.search(text, s, e):
                    continue
                for m in pattern.finditer(text, s, e):
                    start, end, ref = m.start(), m.end(), m.group()
                    if kind == "url":
                        ref = ref.rstrip(".,;:!?'\"")
                        while ref.endswith((")", "]", "}")) and ref.count("(") < ref.count(")"):
                            ref = ref[:-1]
                        end = start + len(ref)
                    if kind == "jira" and ref.split("-", 1)[0] in _JIRA_NOT:
                        continue
                    if kind == "path" and (ref.lower() in _NOT_FILES or "://" in ref):
                        continue
                    if not view.in_code(start):
                        found.append((start, rank, end, kind, ref))
            kept: list[tuple[int, int, str, str]] = []
            reached = -1
            for start, _, end, kind, ref in sorted(found):  # earliest first, then by rank
                if start >= reached:
                    kept.append((start, end, kind, ref))
                    reached = end
            for start, end, kind, ref in kept:
                key = f"{kind}:{ref.lower() if kind == 'url' else ref}"
                if key in self.seen_references:
                    continue
                self.seen_references.add(key)
                evidence = view.quote(start, end)
                at = (view.message.index, start)
                self.add(
                    at, "reference", ref, f"{_REF_LABEL[kind]} {ref}: {evidence.quote}", (evidence,)
                )

    # ---------------------------------------------------------------- TodoWrite

    def _todos(self, position: int, view: _View) -> None:
        message = view.message
        for call in message.tool_calls:
            if call.name != "TodoWrite":
                continue
            where = f"message {message.index}: TodoWrite call {call.tool_use_id or '?'}"
            spot = {"message_index": message.index, "tool_use_id": call.tool_use_id or None}
            raw = call.input
            if isinstance(raw, dict) and "todos" not in raw and set(raw) == {"value"}:
                raw = raw["value"]  # the Claude Code parser wraps an input that is no object
            if not isinstance(raw, dict):
                self.errors.append(f"{where}: input is not an object; call skipped")
                self._problem("mention", raw, "input_not_an_object", **spot)
                continue
            todos = raw.get("todos")
            if not isinstance(todos, list):
                self.errors.append(f"{where}: no 'todos' list; call skipped")
                reason = "missing_todos" if todos is None else "todos_not_a_list"
                self._problem("mention", todos, reason, **spot)
                continue
            for number, item in enumerate(todos):
                self._todo(
                    position, view, f"{where} todo #{number}", item, {**spot, "item": number}
                )

    def _problem(self, field: str, value: object, reason: str, **spot: Any) -> None:
        """A TodoWrite call or item that yields no task; the same problem (field, value,
        reason) is kept once per session, since TodoWrite resends its whole list."""
        problem = TaskInputProblem(field, value, reason, **spot)
        seen = (field, json.dumps(problem.value, sort_keys=True, ensure_ascii=False), reason)
        if seen not in self.problems_seen:
            self.problems_seen.add(seen)
            self.task_problems.append(problem)

    def _todo(
        self, position: int, view: _View, where: str, item: object, spot: dict[str, Any]
    ) -> None:
        """One TodoWrite item -> a `task_note`, when its status or priority changed.

        TodoWrite resends the whole list on every call, so an item is reported only the
        first time it appears and whenever its status or priority changes.

        Evidence: the todo's text is looked for verbatim first in the TodoWrite list the
        Claude Code parser writes into the tool call's own message text (`todo_text`), then
        in the messages since this item's previous report, nearest first. If no text
        contains it (a transcript whose parser does not write the list, or text the privacy
        filter changed), the evidence still quotes the todo's text at the tool call's
        message: the aligner will then report it as `not_found`, which is the honest
        outcome, and the entry cannot graduate on that evidence alone. Searching only since
        the previous report also keeps ids of successive reports distinct, since each
        report's first evidence is a different message.
        """
        if not isinstance(item, dict):
            self.errors.append(f"{where}: not an object; skipped")
            self._problem("mention", item, "todo_not_an_object", **spot)
            return
        todo = _TodoItem(where, item, spot)
        content = self._todo_content(todo)
        if content is None:
            return
        status, priority = self._todo_fields(todo)
        key = normalize_title(content)
        previous = self.todo_state.get(key)
        if previous is not None and previous[1] == (status, priority):
            return
        since = previous[0] + 1 if previous is not None else 0
        self.todo_state[key] = (position, (status, priority))
        evidence = self._todo_evidence(position, since, content)
        title = _title(content)
        described = f"{content} (status: {status or 'unknown'}"
        described += f", priority: {priority})" if priority else ")"
        task = TaskFields(
            title=title,
            status=status,
            priority=priority,
            source="todowrite",
            problems=tuple(todo.problems),
        )
        self.add((view.message.index, -1), "task_note", title, described, (evidence,), task)

    def _todo_content(self, todo: _TodoItem) -> str | None:
        """The item's title: its ``content``, else its ``activeForm`` (recording the missing
        content in `problems`); None, with the problem recorded, when it has no words."""
        content = todo.item.get("content")
        if not isinstance(content, str) or not content.strip():
            reason = (
                "missing_title"
                if content is None
                else "empty_title"
                if isinstance(content, str)
                else "title_not_a_string"
            )
            fallback = todo.item.get("activeForm")
            if isinstance(fallback, str) and normalize_title(fallback):
                self.errors.append(f"{todo.where}: no 'content'; used 'activeForm'")
                todo.problems.append(TaskInputProblem("title", content, reason, **todo.spot))
                content = fallback
            else:
                self.errors.append(f"{todo.where}: no 'content' or 'activeForm'; skipped")
                self._problem(
                    "title", todo.item if content is None else content, reason, **todo.spot
                )
                return None
        content = content.strip()
        if not normalize_title(content):
            self.errors.append(f"{todo.where}: 'content' {content!r} has no words; skipped")
            self._problem("title", content, "empty_title", **todo.spot)
            return None
        return content

    def _todo_fields(self, todo: _TodoItem) -> tuple[TaskStatus | None, TaskPriority | None]:
        """The item's status and priority (None when absent or unknown: an unknown one is
        recorded in `problems` with its value)."""
        raw_status = todo.item.get("status")
        status: TaskStatus | None = None
        if raw_status is None:
            self.errors.append(f"{todo.where}: no 'status'; recorded as unknown")
        elif isinstance(raw_status, str) and raw_status.strip().lower() in _TODO_STATUS:
            status = _TODO_STATUS[raw_status.strip().lower()]
        else:
            self.errors.append(f"{todo.where}: unknown status {raw_status!r}; recorded as unknown")
            todo.problems.append(
                TaskInputProblem("status", raw_status, "unknown_status", **todo.spot)
            )
        raw_priority = todo.item.get("priority")
        priority: TaskPriority | None = None
        if isinstance(raw_priority, str) and raw_priority.strip().lower() in _PRIORITIES:
            priority = _PRIORITIES[raw_priority.strip().lower()]
        elif raw_priority is not None:
            self.errors.append(f"{todo.where}: unknown priority {raw_priority!r}; ignored")
            todo.problems.append(
                TaskInputProblem("priority", raw_priority, "unknown_priority", **todo.spot)
            )
        return status, priority

    def _todo_evidence(self, position: int, since: int, content: str) -> ExtractedEvidence:
        for back in range(position, since - 1, -1):
            view = self.views[back]
            for s, e in [*(view.todo_blocks if back == position else ()), *view.segments]:
                found = view.text.find(content, s, e)
                if found != -1:
                    if len(content) <= MAX_QUOTE:
                        return ExtractedEvidence(view.message.index, content)
                    a, b = _window(view.text, found, found + len(content), found, found)
                    return ExtractedEvidence(view.message.index, view.text[a:b])
        here = self.views[position].message.index
        if len(content) > MAX_QUOTE:
            cut = content.rfind(" ", 0, MAX_QUOTE)
            content = content[: cut if cut > MAX_QUOTE // 2 else MAX_QUOTE]
        return ExtractedEvidence(here, content)


def _says_a_masked_secret(fields: FactFields | None, title: str) -> bool:
    """Whether what a statement says is a secret the privacy filter masked, so all a memory
    would keep is the mask: its value or subject holds it (even cut at its colon: "use the
    key [SECRET"), or, naming no value, its title does ("My OpenAI key is
    [SECRET:api_key]"). A mask beside the value ("… at db.internal:5432 with password
    [SECRET:password]") leaves the rest a memory."""
    if fields is not None and fields.value:
        return any(holds_masked_secret(p) for p in (fields.value, fields.subject or ""))
    return holds_masked_secret(title)


def _project_fact(sentence: str) -> FactMatch | None:
    """Project statements: "X uses Y", "X runs on Y", "`config.py` is ..." (Korean: "X를
    사용한다"), with X as subject and what follows the verb as value."""
    verb = has_any(fold(sentence), _FACT_VERB_WORDS)
    m = (_FACT_VERB.match(sentence) if verb else None) or _FACT_IS.match(sentence)
    if m and m.group("subj").strip("`'\"").split(" ", 1)[0].lower() not in PRONOUNS:
        subject = _ARTICLE.sub("", m.group("subj").strip("`'\" ")) or None
        fields = FactFields(subject, clause(sentence[m.end() - 1 :]) or None)
        return FactMatch(m.start(), m.end(), "fact", "value", fields)
    m = None if sentence.isascii() else _FACT_KO.search(sentence)  # Korean words only
    if m:
        return FactMatch(m.start(), m.end(), "fact", "value", FactFields())
    return None


def _strip_blocker(text: str) -> str:
    return text.strip().strip("`'\"*").rstrip(".,;:").strip()


def _ko_subject(before: list[str], topic: str) -> str:
    """The noun phrase a topic word ends: "한글 폰트 임베딩 작업은" → "한글 폰트 임베딩 작업",
    up to three modifier words read back from the topic until a particle, a verb ending,
    punctuation or a leading conjunction."""
    words = [_KO_TOPIC.sub(r"\g<noun>", topic)]
    for word in reversed(before[-3:]):
        if word in _KO_LEADERS or _KO_PHRASE_BREAK.search(word):
            break
        words.insert(0, word)
    return " ".join(words)


def _korean_blocker(sentence: str) -> tuple[list[str], str]:
    """(blockers, subject) from "배포는 ABC-1 때문에 막혀 있다" or "X를 기다리는 중"."""
    m = _KO_BLOCKER_LINK.search(sentence) or _KO_WAITING.search(sentence)
    if not m:
        tokens = _KO_BLOCKED.split(sentence, maxsplit=1)[0].split()
        at = next((i for i, t in enumerate(tokens) if _KO_TOPIC.match(t) and len(t) > 1), None)
        return [], _ko_subject(tokens[:at], tokens[at]) if at is not None else ""
    head = sentence[: m.start("blk")].split()
    tokens = m.group("blk").split()
    subject = ""
    for i in range(len(tokens) - 1, -1, -1):
        token = tokens[i]
        if len(token) > 1 and _KO_TOPIC.match(token) and i < len(tokens) - 1:
            subject = _ko_subject(head + tokens[:i], token)
            tokens = tokens[i + 1 :]
            break
    if not subject:
        at = next(
            (
                i
                for i in range(len(head) - 1, -1, -1)
                if _KO_TOPIC.match(head[i]) and len(head[i]) > 1
            ),
            None,
        )
        subject = _ko_subject(head[:at], head[at]) if at is not None else ""
    blocker = " ".join(tokens)
    blocker = re.sub(r"(?:을|를)$", "", blocker) if m.re is _KO_WAITING else blocker
    return [_strip_blocker(blocker)], subject


_TODO_STATUS: dict[str, TaskStatus] = {
    "pending": "pending",
    "todo": "pending",
    "in_progress": "in_progress",
    "in-progress": "in_progress",
    "in progress": "in_progress",
    "completed": "done",
    "complete": "done",
    "done": "done",
    "blocked": "blocked",
    "cancelled": "cancelled",
    "canceled": "cancelled",
}
_PRIORITIES: dict[str, TaskPriority] = {"low": "low", "medium": "medium", "high": "high"}
_REF_LABEL = {
    "url": "URL",
    "github": "GitHub issue",
    "path": "File",
    "jira": "Issue key",
    "issue": "Issue",
}


class RuleExtractor:
    """The offline default `Extractor`: see the module docstring for what it finds."""

    name = "rules"
    model = "rules-v1"
    prompt_hash = RULES_PROMPT_HASH

    def extract(self, transcript: Transcript) -> ExtractionResult:
        entries, errors, task_problems = _Run(transcript).run()
        return ExtractionResult(
            entries=entries,
            extractor=self.name,
            model=self.model,
            prompt_hash=self.prompt_hash,
            errors=errors,
            task_problems=task_problems,
        )
