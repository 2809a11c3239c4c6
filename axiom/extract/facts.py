"""Stated facts in one sentence: who or what it is about, the value, and changes (EN + KO).

`find_fact(sentence, speaker)` returns a `FactMatch` (or None) for the first statement the
sentence makes, in this order:

1. changes: "X was changed from A to B", "X is now B", "X went from A to B", "switched
   X from A to B", "use B instead of A", "X no longer uses A", "X에서 Y로 바꿨", "더 이상 X
   사용하지 않", "이제 … 입니다";
2. values: "the rate limit of the API is 100 per minute", "our port is 8080", "X is set to
   Y", "X listens/runs on port N" (subject "X port"), "X는 N입니다";
3. attributes of the speaker: "my name is", "I live in", "I work as/at", "my favorite X
   is", "I'm N years old", "I have two kids", "I'm married" (subject "<speaker>'s home",
   "<speaker>'s job", ...);
4. statements of the speaker about themselves, their people and things: "I went to …",
   "I've been …ing", "we adopted …", "my sister …", "I'm now …", "저는 …", "… 했어요"
   (subject the speaker, no value: events do not contradict each other);
5. statements about a named person: "Jon started a dance studio".

Beside `find_fact`, the rule extractor reads what one sentence alone does not say:
a shared photo (`image_caption`: the "[image: …]" a chat export appends) that the speaker
points at (`shows_something`: "take a look at this", "here's a pic from when …") or that
comes with their statement; a reply naming what the other person asked (`asks_what`
"What concert was it?" → `names_the_answer` "It was Matt Patterson"). A thing named
before the speaker's verb ("These figurines I bought yesterday …") is a statement of
theirs (4).

`find_decision_fields(sentence)` gives subject/value/previous for a sentence a decision rule
matched ("we decided to use X for Y" → subject Y, value X).

Chit-chat (greetings, thanks, praise of the listener, "I think so", "I'm so happy for you")
matches nothing: a memory is something said about the world, not about the conversation.

Every pattern is a regular expression whose repetitions are bounded or separated by
literal text, so matching is linear in the sentence; callers cap sentences at 2,000
characters anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from axiom.extract.types import EntryType, FactFields
from axiom.ingest.words import fold, has_any


def _rx(pattern: str, flags: int = re.I) -> re.Pattern[str]:
    """Compile, letting every ASCII apostrophe also match a typographic one (I’m)."""
    return re.compile(pattern.replace("'", "['’]"), flags)


@dataclass(frozen=True)
class FactMatch:
    """A statement found in a sentence: `sentence[start:end]` is what triggered it."""

    start: int
    end: int
    type: EntryType
    kind: str  # change | value | attribute | personal | named
    fields: FactFields


# --------------------------------------------------------------------------- pieces

_NP_CHAR = r"[\w`\x27’\".+/@#-]"
# Starts only at a token start and tokens are at most 40 characters: a long run of word
# characters costs one scan, not one per position.
_NP = rf"(?<!{_NP_CHAR}){_NP_CHAR}{{1,40}}(?:\s+{_NP_CHAR}{{1,40}}){{0,5}}?"  # a short noun phrase, lazily
_VALUE = r"\S+(?:\s+\S+){0,7}"
_CLAUSE_END = re.compile(
    r"\s*(?:[,;:!?()]|\.(?:\s|$)|\s[-–—]\s|$)|\s+(?:and|but|because|so|which|who|when|while"
    r"|since|as|though|although|if|until|for\s+now|anymore|now)\b",
    re.I,
)
_LEAD = _rx(
    r"^(?:\W|(?:so|and|but|well|yeah|yes|yep|oh|also|actually|honestly|btw|by\s+the\s+way"
    r"|anyway|plus|now|then|lately|recently|today|yesterday|guess\s+what)\b)+"
)
_ARTICLE = re.compile(r"^(?:the|our|this|that|a|an|my|your)\s+", re.I)
# Words that stand for someone or something without naming it: never a subject.
PRONOUNS = frozenset(
    [
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "it",
        "this",
        "that",
        "these",
        "those",
        "there",
        "which",
        "who",
        "what",
        "here",
        "everything",
        "something",
        "nothing",
        "anything",
        "someone",
        "everyone",
    ]
)
_PRONOUN_SUBJECTS = PRONOUNS | {"one", "mine", "yours"}


def clause(text: str, limit: int = 60) -> str:
    """The first clause of `text`, stripped of quotes and trailing punctuation, at most
    `limit` characters (cut at a word boundary)."""
    end = _CLAUSE_END.search(text)
    value = text[: end.start()] if end else text
    value = value.strip().strip("`'\"*“”‘’").strip()
    if len(value) > limit:
        cut = value.rfind(" ", 0, limit)
        value = value[: cut if cut > limit // 2 else limit].rstrip()
    return value.rstrip(".,;:!?")


def _subject(text: str) -> str | None:
    """A noun phrase as a subject: leading articles off, None for pronouns and blanks."""
    text = _LEAD.sub("", text.strip()).strip("`'\"*“” ")
    text = _ARTICLE.sub("", text).strip()
    if not text or text.split(" ", 1)[0].casefold() in _PRONOUN_SUBJECTS:
        return None
    return text


def _owner(speaker: str) -> str:
    return f"{speaker}'s" if speaker else "the speaker's"


# --------------------------------------------------------------------------- changes (EN)

_CHANGED = _rx(
    rf"(?P<subj>{_NP})\s+(?:has\s+been|have\s+been|was|were|got|is|are|gets|get)\s+"
    r"(?:changed|switched|moved|migrated|updated|raised|lowered|increased|decreased|bumped"
    r"|reduced|set|upgraded|downgraded|renamed)\s+"
    rf"(?:from\s+(?P<prev>{_VALUE}?)\s+)?to\s+(?P<val>{_VALUE})"
)
_CHANGED_WORDS = (
    "changed",
    "switched",
    "moved",
    "migrated",
    "updated",
    "raised",
    "lowered",
    "increased",
    "decreased",
    "bumped",
    "reduced",
    "set",
    "upgraded",
    "downgraded",
    "renamed",
)
_WENT_FROM = _rx(
    rf"(?P<subj>{_NP})\s+(?:went|changed|moved|jumped|dropped|grew|rose|fell|increased"
    r"|decreased|has\s+gone|has\s+changed)\s+"
    rf"from\s+(?P<prev>{_VALUE}?)\s+to\s+(?P<val>{_VALUE})"
)
_SWITCHED = _rx(
    r"\b(?P<who>we|i|they|the\s+team|[A-Z]\w+)\s+(?:have\s+|'ve\s+|had\s+|just\s+|finally\s+)*"
    r"(?:switched|moved|migrated|changed|converted|swapped|replaced|went)\s+"
    rf"(?:(?:over\s+)?(?P<obj>(?!from\b){_NP})\s+)?from\s+(?P<prev>{_VALUE}?)\s+"
    rf"(?:to|with|for)\s+(?P<val>{_VALUE})"
)
_REPLACED = _rx(
    rf"\b(?:replaced|swapped(?:\s+out)?)\s+(?P<prev>{_VALUE}?)\s+with\s+(?P<val>{_VALUE})"
)
_INSTEAD = _rx(
    r"\b(?:use|using|uses|used|chose|choose|pick|picked|go\s+with|went\s+with|prefer"
    rf"|switch\s+to|move\s+to|adopt|adopted)\s+(?P<val>{_VALUE}?)\s+(?:instead\s+of|rather\s+than"
    rf"|over)\s+(?P<prev>{_VALUE})"
)
_INSTEAD_BARE = _rx(
    rf"(?<![\w.+/-])(?P<val>[\w.+/-]{{1,40}})\s+(?:instead\s+of|rather\s+than)\s+(?P<prev>{_VALUE})"
)
_MOVED_TO = _rx(
    r"\b(?:we|they|the\s+team)\s+(?:have\s+|'ve\s+|just\s+|finally\s+)*(?:moved|switched"
    rf"|migrated|changed)\s+(?P<obj>(?!from\b|to\b|over\b){_NP})\s+(?:over\s+)?to\s+(?P<val>{_VALUE})"
)
_MOVED_WORDS = ("moved", "switched", "migrated", "changed")
_NOW_USES = _rx(
    rf"(?P<subj>{_NP})\s+now\s+(?P<verb>uses|runs\s+on|depends\s+on|talks\s+to|points\s+to"
    rf"|is\s+stored\s+in|lives\s+in)\s+(?P<val>{_VALUE})"
)
_NOW_USES_WORDS = ("uses", "runs", "depends", "talks", "points", "stored", "lives")
_LISTENS_ON = _rx(
    rf"(?P<subj>{_NP})\s+(?:(?P<now>now)\s+|still\s+|(?:should|will|must|can)\s+)?"
    r"(?:listens?|runs?|is\s+(?:served|running|listening)|serves)\s+on\s+port\s+"
    r"(?P<val>\d{2,5})\b"
)
_IS_NOW = _rx(
    rf"(?P<subj>{_NP})\s+(?:is|are|'s|'re)\s+now\s+(?P<val>(?!that\b|the\s+time\b){_VALUE})"
)
_NO_LONGER = _rx(
    rf"(?P<subj>{_NP})\s+(?:is\s+|are\s+|am\s+|'m\s+|'re\s+)?no\s+longer\s+"
    rf"(?P<verb>\w+)\s+(?P<prev>{_VALUE})"
)
_NOT_ANYMORE = _rx(
    rf"(?P<subj>{_NP})\s+(?:don't|doesn't|do\s+not|does\s+not|didn't)\s+"
    rf"(?P<verb>use|run|need|have|own|play|live\s+in|work\s+(?:at|for|as))\s+"
    r"(?P<prev>[^.,;!?]{1,60}?)\s+any\s?more\b"
)
_FOR_WHAT = _rx(r"\s+(?:for|as|in)\s+(?:the\s+|our\s+|its\s+|their\s+)?(?P<what>[^.,;!?]{2,60})$")


def _split_for(raw: str) -> tuple[str, str | None]:
    """("Kafka", "event bus") from "Kafka for the event bus."; (value, None) without "for"."""
    value = clause(raw, limit=120)
    tail = _FOR_WHAT.search(value)
    if tail is None:
        return clause(value), None
    return clause(value[: tail.start()]), clause(tail.group("what"))


# --------------------------------------------------------------------------- values (EN)

_VALUE_START = r"(?:\d|\$|€|£|v\d|[A-Z]|`|\"|'|on\b|off\b|true\b|false\b|enabled\b|disabled\b)"
_IS_VALUE = re.compile(
    r"^(?P<subj>(?:[Tt]he|[Oo]ur|[Mm]y|[Tt]his|[Ii]ts|[Tt]heir)\s+[\w'.+/-]+(?:\s+[\w'.+/-]+){0,5}?)"
    r"\s+(?:is|are|was|were|=|equals|is\s+set\s+to|is\s+configured\s+as|stays\s+at)\s+"
    rf"(?P<val>{_VALUE_START}[^.,;!?]{{0,60}})"
)


# --------------------------------------------------------------------------- attributes

# Each with the words it cannot match without (`axiom.ingest.words`).
_ATTRIBUTES: list[tuple[re.Pattern[str], str, tuple[str, ...]]] = [
    (_rx(r"\bmy\s+name\s+is\s+(?P<val>\S.{0,40})"), "name", ("name",)),
    (
        _rx(r"\bi(?:'ve|\s+have)?\s+(?:just\s+)?moved\s+to\s+(?P<val>\S.{0,60})"),
        "home",
        ("moved",),
    ),
    (_rx(r"\bi\s+(?:now\s+)?live\s+in\s+(?P<val>\S.{0,60})"), "home", ("live",)),
    (
        _rx(r"\bi(?:'m|\s+am)\s+(?:originally\s+)?from\s+(?P<val>\S.{0,60})"),
        "origin",
        ("from",),
    ),
    (_rx(r"\bi\s+(?:now\s+)?work\s+as\s+(?P<val>\S.{0,60})"), "job", ("work",)),
    (_rx(r"\bi\s+(?:now\s+)?work\s+(?:at|for)\s+(?P<val>\S.{0,60})"), "employer", ("work",)),
    (_rx(r"\bi(?:'m|\s+am)\s+(?P<val>\d{1,3})\s+years?\s+old\b"), "age", ("year",)),
    (
        _rx(
            r"\bi(?:'m|\s+am)\s+(?:now\s+|happily\s+)?(?P<val>married|engaged|divorced|single"
            r"|widowed|retired|pregnant)\b"
        ),
        "status",
        ("married", "engaged", "divorced", "single", "widowed", "retired", "pregnant"),
    ),
    (
        _rx(r"\bmy\s+fav(?:ou?rite)?\s+(?P<what>[\w ]{1,30}?)\s+(?:is|are)\s+(?P<val>\S.{0,60})"),
        "favorite",
        ("fav",),
    ),
]
_HAVE_WORDS = ("have", "got", "own")  # _HAVE_COUNT
_ATTRIBUTE_WORDS = (
    *(word for _, _, words in _ATTRIBUTES for word in words),
    "now",  # _I_AM_NOW
    "my",  # _THEIR_ATTRIBUTE
    *_HAVE_WORDS,
)
_I_AM_NOW = _rx(r"\bi(?:'m|\s+am)\s+now\s+(?P<val>(?!that\b|here\b|going\b)\S.{0,60})")
_THEIR_ATTRIBUTE = _rx(
    r"\bmy\s+(?P<who>[a-z]+(?:\s+[a-z]+)?)\s+(?:now\s+)?(?:(?P<home>lives\s+in|moved\s+to)"
    r"|(?P<job>works\s+as|is\s+(?:a|an)(?=\s+\w+(?:er|or|ist|ian|ant|ent)\b))"
    r"|(?P<employer>works\s+(?:at|for)))\s+(?P<val>\S.{0,60})"
)
_HAVE_COUNT = _rx(
    r"\bi\s+(?:have|'ve\s+got|own)\s+(?P<val>two|three|four|five|six|seven|\d{1,2})\s+"
    r"(?P<what>[a-z]+)"
)


# --------------------------------------------------------------------------- personal

_ADVERBS = (
    r"(?:(?:just|also|finally|recently|actually|really|still|even|already|now|totally|always"
    r"|usually|often|sometimes|never|ever|currently|lately|mostly|especially|definitely|truly"
    r"|officially|eventually|once|kinda|kind\s+of|sort\s+of)\s+)*"
)
_FIRST = _rx(
    r"(?<!\w)(?P<who>i|we|my\s+(?:little\s+|big\s+|older\s+|younger\s+|best\s+)?[a-z]+|our\s+[a-z]+"
    r"|my\s+(?:family|kids|husband|wife|partner|friends?|sister|brother|mom|dad|parents"
    r")(?:\s+and\s+i)?|me\s+and\s+my\s+\w+)"
    r"(?P<aux>'m|'ve|'d|'ll|'re|\s+am|\s+have|\s+had|\s+was|\s+were|\s+will|\s+is|\s+are"
    r"|\s+has|\s+got|\s+gotta)?"
    rf"\s+{_ADVERBS}(?P<verb>[a-z]+(?:'[a-z]+|-[a-z]+)?)(?=[\s,.;:!?)—–-])"
)
# Verbs (or first words after "I'm"/"I've") that carry no fact about the speaker.
_CHAT_VERBS = frozenset(
    [
        "think",
        "thought",
        "guess",
        "hope",
        "hoped",
        "know",
        "knew",
        "mean",
        "meant",
        "agree",
        "bet",
        "wish",
        "wonder",
        "wondering",
        "suppose",
        "believe",
        "understand",
        "understood",
        "see",
        "saw",
        "hear",
        "heard",
        "feel",
        "felt",
        "appreciate",
        "appreciated",
        "admire",
        "admired",
        "love",
        "loved",
        "like",
        "liked",
        "adore",
        "can",
        "can't",
        "could",
        "couldn't",
        "should",
        "shouldn't",
        "would",
        "wouldn't",
        "will",
        "won't",
        "must",
        "might",
        "may",
        "do",
        "don't",
        "did",
        "didn't",
        "does",
        "doesn't",
        "so",
        "glad",
        "happy",
        "sorry",
        "sure",
        "thrilled",
        "excited",
        "proud",
        "stoked",
        "pleased",
        "curious",
        "amazed",
        "impressed",
        "touched",
        "grateful",
        "thankful",
        "blown",
        "not",
        "here",
        "there",
        "totally",
        "absolutely",
        "definitely",
        "always",
        "all",
        "just",
        "really",
        "gonna",
        "wanna",
        "want",
        "need",
        "needed",
        "let",
        "hope",
        "say",
        "said",
        "tell",
        "told",
        "thank",
        "thanks",
        "get",
        "gotta",
        "having",
        "trying",
        "try",
        "tried",
        "going",
        "been",
        "had",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "being",
        "kinda",
        "pretty",
        "very",
        "too",
        "also",
        "still",
        "glad",
    ]
)
# After "I'm/I've been/I was": words that describe an activity or state worth keeping.
_STATE_OK = frozenset(
    [
        "planning",
        "thinking",
        "learning",
        "taking",
        "working",
        "going",
        "starting",
        "training",
        "volunteering",
        "studying",
        "reading",
        "writing",
        "painting",
        "playing",
        "running",
        "doing",
        "helping",
        "getting",
        "making",
        "building",
        "saving",
        "preparing",
        "organizing",
        "teaching",
        "attending",
        "joining",
        "considering",
        "moving",
        "part",
        "now",
        "currently",
    ]
)
# What may come right before a first-person subject: the sentence start, a clause break,
# or a linking word ("..., and I went", "Yesterday I ..."); not "that we bond", "as we go".
_CLAUSE_START = _rx(
    r"(?:^|[,;:—–(-]|\b(?:and|but|so|then|because|since|actually|also|recently|lately|now"
    r"|plus|yesterday|today|well|yeah|yes|yep|oh|hey|wow|tonight|finally|honestly|anyway"
    r"|week|weekend|month|year|ago|night|morning|friday|saturday|sunday|monday|tuesday"
    r"|wednesday|thursday))\W*$"
)
_FUTURE_CHAT = frozenset({"'ll", "will", "gotta"})
_FEELING_ING = frozenset(
    [
        "feeling",
        "staying",
        "trying",
        "hoping",
        "wondering",
        "loving",
        "rooting",
        "cheering",
        "counting",
        "dying",
    ]
)
# "I'll never forget ...", "I'll always remember ...": memories, though in the future tense.
_REMEMBER = _rx(r"^\s+(?:never\s+forget|always\s+remember|always\s+cherish)\b")
_GOING_SOMEWHERE = _rx(r"^\s+(?:to|on|back|out|home|away|\w+ing)\b")
_HAVE_AUX = frozenset({"'ve", "have", "has", "had", "'d"})
_BE_AUX = frozenset({"'m", "am", "'re", "are", "is", "was", "were"})
# "I'm swamped with ...", "I'm lucky to have my husband", "I'm stoked to start": a state
# with an object; "I'm so happy for you" is about the listener.
_STATE_OBJECT = _rx(
    r"^\s+(?:(?:so|really|super|very|totally|pretty|kinda|quite|truly|definitely|also)\s+)*"
    r"(?!sure\b|glad\b|happy\b|sorry\b)[a-z]+\s+(?:to|with|about|by|at|in|of|on|from|seeing"
    r"|that|because)\s+(?!you\b|your\b|ya\b|see\b|hear\b|know\b|be\s+part\b)"
)
_FEEL_OK = _rx(r"^\s+(?!you\b|the\s+same\b|like\s+you|that\s+way|for\s+you)")
# "X is super special to me", "Family time matters to me", "Guitar's mostly my thing".
_MATTERS_TO_ME = _rx(
    r"\b(?:is|are|was|'s|matters?|means?|meant)\s+(?:\w+\s+){0,3}?(?:important|special|precious"
    r"|everything|the\s+world|a\s+lot|dear|vital|essential)\s+to\s+me\b"
    r"|\b(?:is|are|'s|was)\s+(?:\w+\s+){0,2}?my\s+(?:favou?rite|thing|passion|go-to|escape|rock"
    r"|muse|happy\s+place|dream|biggest)\b"
)
# Its two halves need "me" and one of the first words, or "my" and one of the second.
_MATTERS_WORDS = (
    "important",
    "special",
    "precious",
    "everything",
    "world",
    "lot",
    "dear",
    "vital",
    "essential",
)
_MINE_WORDS = (
    "favo",
    "thing",
    "passion",
    "go-to",
    "escape",
    "rock",
    "muse",
    "happy",
    "dream",
    "biggest",
)


def _may_matter(folded: str) -> bool:
    """Whether `_MATTERS_TO_ME` may match the sentence `folded` came from."""
    return ("me" in folded and has_any(folded, _MATTERS_WORDS)) or (
        "my" in folded and has_any(folded, _MINE_WORDS)
    )


# A sentence that starts with the speaker's own action, subject dropped: "Lost my job as a
# banker yesterday", "Researching adoption agencies", "Been reading that book".
_DROPPED_SUBJECT = _rx(
    r"^(?:gonna\s+|been\s+|just\s+|finally\s+|recently\s+|also\s+|still\s+)?"
    r"(?P<verb>[a-z]+(?:ed|ing)|lost|got|took|went|made|bought|found|won|started|began|met|ran"
    r"|saw|had|did|built|read|wrote|finished|joined|continue|start)\s+"
    r"(?P<next>(?!you\b|your\b|ya\b|to\s+(?:see|hear|know)\b)\w+)"
)
# "Taking care of ourselves is so important": a gerund subject of a general remark.
_GENERAL_REMARK = _rx(
    r"^[^,;:.!?—–]*?\b(?:is|are|was|'s|can|could|makes?|takes?|helps?|lets?|means?|brings?"
    r"|looks?|seems?|sounds?|feels?|gives?|keeps?|pays?)\b"
)
_OBJECT_WORDS = frozenset(
    [
        "my",
        "a",
        "an",
        "the",
        "some",
        "our",
        "this",
        "that",
        "up",
        "out",
        "back",
        "into",
        "off",
        "over",
        "around",
        "his",
        "her",
    ]
)
_NOT_DROPPED = frozenset(
    [
        "amazing",
        "exciting",
        "interesting",
        "inspiring",
        "relaxing",
        "wishing",
        "sending",
        "loving",
        "sounding",
        "looking",
        "seeing",
        "hearing",
        "talking",
        "thinking",
        "speaking",
        "considering",
        "according",
        "including",
        "regarding",
        "nothing",
        "something",
        "everything",
        "anything",
        "thing",
        "bring",
        "sing",
        "king",
        "wedding",
        "evening",
        "morning",
        "feeling",
        "darling",
        "ring",
        "spring",
        "string",
        "ceiling",
        "building",
        "being",
        "going",
        "getting",
        "glad",
        "need",
        "indeed",
        "red",
        "bed",
    ]
)
_EXCLAIM_ONLY = _rx(
    r"^\W*(?:wow|omg|aw+|haha|lol|congrats|congratulations|thanks?|thank\s+you"
    r"|hey|hi|hello|bye|good\s*bye|take\s+care|see\s+you|talk\s+(?:to\s+you\s+)?soon)\b"
)
_YOU_FOCUS = _rx(r"\b(?:you|your|you're|you've|you'll|yourself)\b")
_NAMED = re.compile(
    r"(?:^|(?<=\s))(?P<who>[A-Z][a-z]{2,}(?:\s+[A-Z][a-z]{2,})?)\s+"
    r"(?P<verb>is|was|has|had|went|started|got|made|won|lost|joined|moved|works|lives"
    r"|loves|plays|adopted|bought|visited|took|finished|became|turned|passed|graduated"
    r"|married|opened|launched|runs|owns|wrote|built|left|quit|began)\s+\S+(?:\s+\S+){1,}"
)
_NOT_NAMES = frozenset(
    [
        "The",
        "This",
        "That",
        "These",
        "Those",
        "There",
        "Here",
        "What",
        "When",
        "Where",
        "Which",
        "Who",
        "Why",
        "How",
        "And",
        "But",
        "So",
        "Yes",
        "Yeah",
        "Yep",
        "Wow",
        "Thanks",
        "Thank",
        "Hey",
        "Hi",
        "Hello",
        "Oh",
        "Well",
        "Also",
        "Then",
        "Now",
        "Today",
        "Yesterday",
        "Last",
        "Next",
        "Our",
        "Your",
        "My",
        "His",
        "Her",
        "Their",
        "Its",
        "Everything",
        "Something",
        "Nothing",
        "Everyone",
        "Someone",
        "Life",
        "Art",
        "Music",
        "Family",
        "Love",
        "Nature",
        "It",
        "He",
        "She",
        "They",
        "We",
        "You",
        "Sounds",
        "Looks",
        "Glad",
        "Sorry",
        "Congrats",
        "Congratulations",
        "Aww",
        "Haha",
        "Lol",
        "Omg",
        "Cool",
        "Great",
        "Nice",
        "Awesome",
        "Good",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ]
)


# --------------------------------------------------------------------------- Korean

_HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
_KO_CHANGE = re.compile(
    r"(?:(?P<subj>[^\s,]{1,20}?(?:\s+[^\s,]{1,20}?){0,2}?)(?:을|를|은|는|이|가)\s+)?(?P<prev>[^\s,]{1,30}?(?:\s+[^\s,]{1,30}?)?)에서\s+"
    r"(?P<val>[^\s,]{1,30}?)(?:으로|로)\s*(?:바꿨|바꾸었|바꿔|바뀌었|바뀜|변경|전환|옮겼|이전"
    r"|마이그레이션|교체|갈아탔|넘어갔|올렸|내렸|늘렸|줄였|늘었|줄었|올랐|내려갔|증가|감소|상향|하향)"
)
_KO_INSTEAD = re.compile(
    r"(?:(?P<subj>[^\s,]{1,20}?(?:\s+[^\s,]{1,20}?){0,2}?)(?:을|를|은|는|에는|에)\s+)?"
    r"(?P<prev>[^\s,]{1,30}?)\s*대신\s+(?P<val>[^\s,]{1,30}?(?:\s+[^\s,]{1,30}?)?)(?:을|를|으로|로)\s"
)
_KO_NOW_LEAD = re.compile(r"^\W*이제\s+")
_KO_NO_LONGER = re.compile(
    r"(?:(?P<subj>[^\s,]{1,20}?(?:\s+[^\s,]{1,20}?){0,2}?)(?:은|는|이|가|에서)\s+)?더\s*이상\s+(?P<prev>[^\s,]{1,30}?)"
    r"(?:을|를|은|는|이|가)?\s*(?:사용하지|쓰지|안\s*써|안\s*쓰|사용\s*안|하지|다니지|살지|키우지)"
)
_KO_NOW = re.compile(
    r"(?P<subj>[^\s,]{1,20}?(?:\s+[^\s,]{1,20}?){0,2}?)(?:은|는|이|가)\s+이제\s+(?P<val>[^,.!?]{1,40}?)\s*"
    r"(?:입니다|이에요|예요|이다|야|다|이야|으로\s*바뀌었|로\s*바뀌었|(?:이|가)\s*(?:됐|되었))"
)
_KO_VALUE = re.compile(
    r"(?P<subj>[^\s,]{1,20}?(?:\s+[^\s,]{1,20}?){0,2}?)(?:은|는)\s+(?P<val>(?:\d|[A-Za-z]|[^\s,.!?]{1,10}\s*\d)[^,.!?]{0,40}?)\s*"
    r"(?:입니다|이에요|예요|이다|야|다|이야|으로\s*설정|로\s*설정)"
)
_KO_ATTR: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"(?:제\s*)?이름은\s*(?P<val>[^\s,.!?]{1,20}?)(?:입니다|이에요|예요|이다|야)"),
        "name",
    ),
    (re.compile(r"(?P<val>[^\s,.!?]{1,30}?)에\s*(?:살아요|살고\s*있|삽니다|산다|살아)"), "home"),
    (re.compile(r"(?P<val>[^\s,.!?]{1,30}?)(?:으로|로)\s*이사(?:했|를\s*했|갔|왔)"), "home"),
    (
        re.compile(r"(?P<val>[^\s,.!?]{1,30}?)에서\s*일(?:해요|합니다|하고\s*있|한다|해)"),
        "employer",
    ),
]
_KO_FIRST = re.compile(
    r"(?:^|\s)(?:저는|제가|나는|내가|저희는|우리는|저도|나도|제\s+\S+|내\s+\S+|저희\s+\S+)"
)
_KO_STATEMENT = re.compile(
    r"(?:했|였|었|았|갔|왔|샀|봤|됐|렸|웠|졌|났|탔|받았|시작했|가입했|입양했)(?:어요|습니다|다|어|지요|죠)"
    r"|(?:하고|되고|살고|다니고|배우고|키우고|준비하고)\s*있(?:어요|습니다|다|어)"
    r"|(?:좋아|사랑)(?:해요|합니다|한다|해)|(?:할|갈|될)\s*(?:예정|계획)|(?:려고|기로)\s*(?:해요|했|합니다|한다)"
    r"|(?:입니다|이에요|예요)"
)
_KO_CHAT = re.compile(
    r"^\W*(?:안녕|고마워|고맙|감사|축하|반가|와|우와|대박|정말요|그렇군요|잘\s*가)"
)


# --------------------------------------------------------------------------- finders


def _fields(
    subject: str | None, value: str | None, previous: str | None = None, negated: bool = False
) -> FactFields:
    value = value or None
    previous = previous or None
    return FactFields(subject or None, value, previous, negated)


def _english_change(sentence: str) -> FactMatch | None:
    # Cheap word checks first: each pattern below starts a noun phrase at every token, so
    # it only runs on sentences holding the words it needs.
    lower = sentence.casefold()
    has = {
        "to": " to " in lower,
        "from": "from " in lower,
        "instead": "instead of" in lower or "rather than" in lower or " over " in lower,
        "replace": "replac" in lower or "swapped" in lower,
        "longer": "no longer" in lower,
        "anymore": "anymore" in lower or "any more" in lower,
        "now": "now " in lower,
    }
    if not any(has.values()):
        return None
    folded = fold(sentence)  # and the words each pattern needs (`axiom.ingest.words`)
    for pattern, words in (
        ((_CHANGED, _CHANGED_WORDS), (_WENT_FROM, ("from",))) if has["to"] else ()
    ):
        m = pattern.search(sentence) if has_any(folded, words) else None
        if m and _subject(m.group("subj")):
            fields = _fields(
                _subject(m.group("subj")), clause(m.group("val")), clause(m.group("prev") or "")
            )
            return FactMatch(m.start(), m.end(), "fact", "change", fields)
    m = _SWITCHED.search(sentence) if has["from"] else None
    if m:
        value, what = _split_for(m.group("val"))
        subject = _subject(m.group("obj") or "") or what
        fields = _fields(subject, value, clause(m.group("prev")))
        return FactMatch(m.start(), m.end(), "decision", "change", fields)
    replaced = (_REPLACED,) if has["replace"] else ()
    for pattern in (*replaced, _INSTEAD, _INSTEAD_BARE) if has["instead"] or replaced else ():
        m = pattern.search(sentence)
        if m:
            previous, what = _split_for(m.group("prev"))
            value, what_too = _split_for(m.group("val"))
            fields = _fields(what or what_too, value, previous)
            return FactMatch(m.start(), m.end(), "decision", "change", fields)
    negations = ((_NO_LONGER,) if has["longer"] else ()) + (
        (_NOT_ANYMORE,) if has["anymore"] else ()
    )
    for pattern in negations:
        m = pattern.search(sentence)
        if m:
            verb = m.group("verb").casefold()
            previous = clause(m.group("prev"))
            subject = _subject(m.group("subj"))
            if verb not in ("use", "uses", "using", "run", "runs", "need", "needs", "have", "has"):
                previous = clause(f"{m.group('verb')} {m.group('prev')}")
            fields = _fields(subject, None, previous, negated=True)
            return FactMatch(m.start(), m.end(), "fact", "change", fields)
    m = _MOVED_TO.search(sentence) if has["to"] and has_any(folded, _MOVED_WORDS) else None
    if m and _subject(m.group("obj")):
        fields = _fields(_subject(m.group("obj")), clause(m.group("val")))
        return FactMatch(m.start(), m.end(), "decision", "change", fields)
    if not has["now"]:
        return None
    m = _NOW_USES.search(sentence) if has_any(folded, _NOW_USES_WORDS) else None
    if m and _subject(m.group("subj")):
        fields = _fields(_subject(m.group("subj")), clause(m.group("val")))
        return FactMatch(m.start(), m.end(), "fact", "change", fields)
    m = _IS_NOW.search(sentence)
    if m and _subject(m.group("subj")):
        fields = _fields(_subject(m.group("subj")), clause(m.group("val")))
        return FactMatch(m.start(), m.end(), "fact", "change", fields)
    return None


def _english_value(sentence: str) -> FactMatch | None:
    body = _LEAD.sub("", sentence)
    offset = len(sentence) - len(body)
    m = _IS_VALUE.match(body)
    if not m:
        return None
    subject = _subject(m.group("subj"))
    if subject is None:
        return None
    fields = _fields(subject, clause(m.group("val")))
    return FactMatch(offset + m.start(), offset + m.end(), "fact", "value", fields)


def _port(sentence: str) -> FactMatch | None:
    """ "The API listens on port 9090" / "should listen on" / "runs on port": the port of
    what is named, a value that changes (subject "<name> port", so a later port conflicts)."""
    m = _LISTENS_ON.search(sentence) if "port" in sentence.casefold() else None
    subject = _subject(m.group("subj")) if m else None
    if m is None or subject is None:
        return None
    kind = "change" if m.group("now") else "value"
    return FactMatch(m.start(), m.end(), "fact", kind, _fields(f"{subject} port", m.group("val")))


def _attribute(sentence: str, speaker: str) -> FactMatch | None:
    folded = fold(sentence)
    if not has_any(folded, _ATTRIBUTE_WORDS):
        return None
    for pattern, what, words in _ATTRIBUTES:
        m = pattern.search(sentence) if has_any(folded, words) else None
        if m:
            name = f"favorite {m.group('what').strip()}" if what == "favorite" else what
            fields = _fields(f"{_owner(speaker)} {name}", clause(m.group("val")))
            return FactMatch(m.start(), m.end(), "fact", "attribute", fields)
    m = _I_AM_NOW.search(sentence) if "now" in folded else None
    if m:
        fields = _fields(speaker or None, clause(m.group("val")))
        return FactMatch(m.start(), m.end(), "fact", "change", fields)
    m = _THEIR_ATTRIBUTE.search(sentence) if "my" in folded else None
    if m:
        what = next(k for k in ("home", "job", "employer") if m.group(k) is not None)
        value = clause(m.group("val"))
        fields = _fields(f"{_owner(speaker)} {m.group('who')}'s {what}", value)
        return FactMatch(m.start(), m.end(), "fact", "attribute", fields)
    m = _HAVE_COUNT.search(sentence) if has_any(folded, _HAVE_WORDS) else None
    if m:
        fields = _fields(f"{_owner(speaker)} {m.group('what')}", m.group("val"))
        return FactMatch(m.start(), m.end(), "fact", "attribute", fields)
    return None


def _personal(sentence: str, speaker: str) -> FactMatch | None:
    """The first clause whose subject is the speaker (I, we, my X) and whose verb states
    something about them rather than about the conversation."""
    if _EXCLAIM_ONLY.match(sentence) and len(sentence) < 40:
        return None
    for m in _FIRST.finditer(sentence):
        before = sentence[max(0, m.start() - 30) : m.start()]
        if not _CLAUSE_START.search(before) and not _object_first(before, m):
            continue
        if _states_something(sentence, m):
            return _personal_match(m, speaker, m.group("who").casefold())
    return None


# "These figurines I bought yesterday …", "this pride parade I went to": a thing of the
# speaker named first, then what they did with it (a relative clause without "that").
_THING_FIRST = _rx(r"\b(?:this|these|those|that|the|my|our)\s+(?:[a-z]+\s+){0,2}[a-z]+\s+$")
_PAST_IRREGULAR = frozenset(
    [
        "bought",
        "read",
        "went",
        "made",
        "saw",
        "took",
        "got",
        "did",
        "had",
        "found",
        "met",
        "wrote",
        "drew",
        "built",
        "ate",
        "ran",
        "won",
        "began",
        "heard",
        "sang",
        "wore",
        "brought",
        "caught",
        "chose",
        "drove",
        "flew",
        "gave",
        "grew",
        "kept",
        "left",
        "lost",
        "paid",
        "sold",
        "sent",
        "spent",
        "taught",
        "thought",
        "told",
    ]
)


def _object_first(before: str, m: re.Match[str]) -> bool:
    if m.group("who").casefold() not in ("i", "we") or m.group("aux"):
        return False
    verb = m.group("verb").casefold()
    past = verb in _PAST_IRREGULAR or (verb.endswith("ed") and verb not in _CHAT_VERBS)
    return past and bool(_THING_FIRST.search(before))


def _states_something(sentence: str, m: re.Match[str]) -> bool:
    verb = m.group("verb").casefold()
    aux = (m.group("aux") or "").strip().casefold().replace("’", "'")
    rest = sentence[m.end() :]
    if aux in _FUTURE_CHAT:
        return bool(_REMEMBER.match(sentence[m.end("aux") :]))
    if verb in _FEELING_ING:
        return False
    if aux in _HAVE_AUX:
        if verb in ("got", "gotta") and rest.lstrip().startswith("to "):
            return False
        if verb in ("been", "had") and _YOU_FOCUS.match(rest.lstrip()):
            return False
        return verb not in _CHAT_VERBS or verb in _HAVE_OK
    if aux in _BE_AUX:
        if verb == "going":
            return bool(_GOING_SOMEWHERE.match(rest))
        if verb in _STATE_OK or verb.endswith("ing"):
            return True
        if verb in ("a", "an"):  # "I'm a big fan of pottery", "I'm a nurse"
            return not _NOT_A_ROLE.match(rest) and not _YOU_FOCUS.search(rest[:30])
        return bool(_STATE_OBJECT.match(sentence[m.end("aux") :]))
    if verb in ("want", "wanna", "hope", "plan", "planned", "intend", "aim"):
        return bool(_PLAN.match(rest)) or (verb == "wanna" and not _YOU_FOCUS.search(rest[:25]))
    if aux == "'d" and verb in ("love", "like"):
        return bool(_PLAN.match(rest))
    if verb in ("feel", "felt"):
        return bool(_FEEL_OK.match(rest))
    if verb in ("love", "loved", "like", "liked", "adore", "enjoy", "enjoyed"):
        return not _YOU_FOCUS.search(rest[:20]) and not _LOVE_CHAT.match(rest)
    return verb not in _CHAT_VERBS


_NOT_A_ROLE = _rx(r"^\s+(?:bit|little|lot|mix|huge\s+fan\s+of\s+you|fan\s+of\s+you)\b")
_HAVE_OK = frozenset({"been", "had", "felt", "thought", "seen", "heard", "loved", "got"})


_LISTENER_OR_IT = _rx(r"\b(?:you|your|you're|it|it's|that|this)\W*(?:\w+\W+){0,2}$")
_LOVE_CHAT = _rx(r"^\s+(?:it|that|this|those|these|them|how|all|the\s+way|when|what|seeing)\b")
MIN_PERSONAL_WORDS = 3
# "I want to create a place for dancers", "I hope to build my own family": plans.
_PLAN = _rx(
    r"^\s+(?:(?:really|also|still|always|just)\s+)?(?:to|on)\s+(?!see\b|hear\b|know\b|say\b|thank"
    r"|tell\b|ask\b|check\b|share\b|chat\b|talk\b|catch\b|let\b|give\s+you)(?!(?:\W*\w+){0,3}\W+(?:you"
    r"|your)\b)\w"
)
# A shared photo as chat exports write it after the turn's text ("… look at this. [image:
# a photo of a painting of a sunset]", `axiom.ingest.locomo.image_suffix`).
_CAPTION = re.compile(r"^\[image:\s*(?P<caption>[^\]\n]{3,300}?)\s*\]$")
# The speaker points at what they share: "take a look at this", "check out my painting",
# "here's a pic from when …", "this pic's from last night", "they made this!".
_SHOWS = _rx(
    r"\b(?:take\s+a\s+look|look\s+at\s+(?:this|these|my|our|what)|check\s+(?:it|this|these"
    r"|that)\s+out|check\s+(?:out\s+)?(?:this|these|my|our)|here's|here\s+(?:is|are)"
    r"|this\s+is\s+(?:my|our|what|one|a|the)\b|these\s+are\s+(?:my|our|the|some)"
    r"|(?:this|that|the)\s+(?:pic|photo|picture|snap|shot)\b|\b(?:i|we|they|he|she)\s+(?:just\s+)?"
    r"(?:made|did|painted|drew|built|took|bought|found|finished)\s+(?:this|these)\b)"
    r"|이(?:거|것)\s*(?:좀\s*)?(?:봐|보세요|보실래요)|(?:이|제|우리)\s*사진|사진\s*(?:보여|봐|보세요)"
)

_SHOWS_WORDS = (
    "look",
    "check",
    "here",
    "this",
    "these",
    "pic",
    "photo",
    "snap",
    "shot",
    "이거",
    "이것",
    "사진",
)

_PHOTO_OF = re.compile(r"^(?:a\s+)?(?:photo|photograph|photography|picture|pic)\s+of\s+", re.I)


def image_caption(sentence: str) -> str | None:
    """What a shared photo shows when `sentence` is one ("[image: a photo of a red kite]"
    → "a red kite"), else None."""
    m = _CAPTION.match(sentence)
    if m is None:
        return None
    caption = m.group("caption")
    return _PHOTO_OF.sub("", caption) or caption


def shows_something(sentence: str) -> bool:
    """Whether the sentence points at something the speaker shares (a photo)."""
    return has_any(fold(sentence), _SHOWS_WORDS) and bool(_SHOWS.search(sentence))


_SHORT_CHAT_END = _rx(r"\b(?:this|it|that|you|them|too|so|lol|ya)\W*$")
# "Here's a pic of my family camping at the beach": a shared photo of the speaker's life.
_SHOWING_MINE = _rx(
    r"^\W*(?:here's|here\s+is|here\s+are|this\s+is|these\s+are)\s+(?:\w+\s+){0,4}?"
    r"(?:my|our)\s+\w"
)


def _about_me(sentence: str, speaker: str) -> FactMatch | None:
    """What matters to the speaker, or an action with the subject dropped."""
    m = _MATTERS_TO_ME.search(sentence) if _may_matter(fold(sentence)) else None
    if m and not _LISTENER_OR_IT.search(sentence[: m.start()]):
        return FactMatch(m.start(), m.end(), "fact", "personal", _fields(speaker or None, None))
    m = _SHOWING_MINE.match(sentence)
    if m:
        return FactMatch(m.start(), m.end(), "fact", "personal", _fields(speaker or None, None))
    body = _LEAD.sub("", sentence)
    offset = len(sentence) - len(body)
    m = _DROPPED_SUBJECT.match(body)
    if m and m.group("verb").casefold() not in _NOT_DROPPED and body[:1].isupper():
        verb, after = m.group("verb").casefold(), m.group("next").casefold()
        if verb.endswith("ing") and _GENERAL_REMARK.match(body):
            return None
        if verb.endswith("ed") and after not in _OBJECT_WORDS:
            return None
        start = offset + m.start()
        return FactMatch(
            start, offset + m.end(), "fact", "personal", _fields(speaker or None, None)
        )
    return None


def _personal_match(m: re.Match[str], speaker: str, who: str) -> FactMatch:
    subject = speaker or None
    if who.startswith(("my ", "our ")) and " and " not in who:
        subject = f"{_owner(speaker)} {who.split(' ', 1)[1]}"
    return FactMatch(m.start(), m.end(), "fact", "personal", _fields(subject, None))


_COMMON_NOUN_ENDINGS = ("ing", "ness", "ment", "ity", "ion", "s", "ance", "ence", "ism")


def _named(sentence: str) -> FactMatch | None:
    for m in _NAMED.finditer(sentence):
        who = m.group("who")
        first = who.split(" ", 1)[0]
        if first in _NOT_NAMES or first.endswith(_COMMON_NOUN_ENDINGS):
            continue
        return FactMatch(m.start(), m.end(), "fact", "named", _fields(who, None))
    return None


def _korean(sentence: str, speaker: str) -> FactMatch | None:
    m = _KO_CHANGE.search(sentence)
    if m:
        fields = _fields(m.group("subj"), m.group("val"), m.group("prev"))
        return FactMatch(m.start(), m.end(), "fact", "change", fields)
    m = _KO_INSTEAD.search(sentence)
    if m:
        fields = _fields(m.group("subj"), m.group("val"), m.group("prev"))
        return FactMatch(m.start(), m.end(), "decision", "change", fields)
    m = _KO_NO_LONGER.search(sentence)
    if m:
        fields = _fields(m.group("subj"), None, m.group("prev"), negated=True)
        return FactMatch(m.start(), m.end(), "fact", "change", fields)
    m = _KO_NOW.search(sentence)
    if m:
        fields = _fields(m.group("subj"), m.group("val").strip())
        return FactMatch(m.start(), m.end(), "fact", "change", fields)
    for pattern, what in _KO_ATTR:
        m = pattern.search(sentence)
        if m:
            fields = _fields(f"{_owner(speaker)} {what}", m.group("val"))
            return FactMatch(m.start(), m.end(), "fact", "attribute", fields)
    now = _KO_NOW_LEAD.match(sentence)
    if now:  # "이제 결제 DB는 PostgreSQL입니다": a new value
        m = _KO_VALUE.match(sentence, now.end())
        if m:
            fields = _fields(m.group("subj"), m.group("val").strip())
            return FactMatch(m.start(), m.end(), "fact", "change", fields)
    m = _KO_VALUE.search(sentence)
    if m and m.group("subj") not in ("저는", "나는", "저", "나"):
        fields = _fields(m.group("subj"), m.group("val").strip())
        return FactMatch(m.start(), m.end(), "fact", "value", fields)
    if _KO_CHAT.match(sentence):
        return None
    first = _KO_FIRST.search(sentence)
    said = _KO_STATEMENT.search(sentence)
    if first and said:
        start = min(first.start(), said.start())
        return FactMatch(
            start, max(first.end(), said.end()), "fact", "personal", _fields(speaker, None)
        )
    return None


_QUESTION_START = _rx(
    r"^\W*(?:what|who|whom|whose|when|where|why|how|which|do|does|did|are|is|was|were|have"
    r"|has|had|can|could|would|will|should|shall|may|might|am|isn't|aren't|don't|didn't"
    r"|wanna|got|any|anything|ever)\b"
)
_LAST_BREAK = re.compile(r"[,;–—]|\s-\s")


def is_question(sentence: str) -> bool:
    """A sentence asking something. "I started a store last month - pretty cool, right?"
    states a fact with a tag question; "What did you paint?" asks."""
    text = sentence.rstrip("\"')]* ")
    if not text.endswith(("?", "？")):
        return False
    if _QUESTION_START.match(text):
        return True
    breaks = list(_LAST_BREAK.finditer(text))
    if not breaks:
        return True
    tail = text[breaks[-1].end() :]
    return len(tail.split()) > 2 or len(text[: breaks[0].start()].split()) < 4


# "What concert was it?" / "What's the band?" / "What were they so stoked about?": a
# question asking the listener to name a thing.
_ASKS_WHAT = _rx(
    r"^\W*(?:\w+\W+){0,3}?(?:what|which|who)\b(?!\s+(?:do\s+you\s+think|about\s+you|else)\b"
    r"|'s\s+(?:up|new|next)\b|\s+(?:is|was)\s+up\b)"
)
# The reply naming it: "It was Matt Patterson", "It was a transgender poetry reading",
# "They were stoked for the dinosaur exhibit", '"Summer Sounds" - …'.
_NAMES_IT = _rx(
    r"^\W*(?:(?i:(?:it|that|this|they|he|she)\s*(?:was|were|is|are|'s|'re)\s+(?:(?:so|really"
    r"|all|super)\s+)?)(?:(?:a|an|the|my|our)\s+(?!bit\b|lot\b|blast\b|great\b|good\b|nice\b"
    r"|fun\b|huge\b|big\b|real\b|total\b)\w|[A-Z\"“]\w|\w+\s+(?:for|about|by|at|of|with)\s+(?!you\b|your\b|it\b|that\b|this\b))"
    r")|^\s*[\"“][^\"”]{2,60}[\"”]\s*[-–—:!,]",
    0,
)


_KO_ASKS_WHAT = re.compile(r"(?:뭐|무엇|무슨|어떤|어느|누구)")
# "매트 패터슨이었어요", "시 낭독회였어요": the reply names it.
_KO_NAMES_IT = re.compile(
    r"^\W*(?P<what>[^?？]{1,60}?)(?:이었|였)(?:어요|습니다|어|다)|(?:이에요|예요|입니다)"
)


def asks_what(sentence: str) -> bool:
    """Whether `sentence` asks the listener to name something."""
    if not is_question(sentence):
        return False
    return bool(_ASKS_WHAT.match(sentence) or _KO_ASKS_WHAT.search(sentence))


def names_the_answer(sentence: str, speaker: str) -> FactMatch | None:
    """The reply to a "what was it?" question that names the thing, as a statement of the
    speaker (call only for a reply to `asks_what`)."""
    if is_question(sentence):
        return None
    if _HANGUL.search(sentence):
        m = _KO_NAMES_IT.search(sentence)
        if m is None:
            return None
        fields = _fields(speaker or None, None)
        return FactMatch(m.start(), m.end(), "fact", "personal", fields)
    body, offset = sentence, 0
    m = _NAMES_IT.match(body)
    if m is None:  # "Yeah, it was …"
        body = _LEAD.sub("", sentence)
        offset = len(sentence) - len(body)
        m = _NAMES_IT.match(body)
    if m is None:
        return None
    fields = _fields(speaker or None, None)
    return FactMatch(offset + m.start(), offset + m.end(), "fact", "personal", fields)


def find_fact(sentence: str, speaker: str = "", personal_ok: bool = True) -> FactMatch | None:
    """The statement `sentence` makes, if any (see the module docstring for the order).

    `speaker` names who says it (subject of first-person statements); `personal_ok` False
    skips first-person statements (a coding assistant's "I'll read the file").
    """
    if is_question(sentence):
        return None
    found = _english_change(sentence) or _english_value(sentence) or _port(sentence)
    if found is None and personal_ok:
        found = _attribute(sentence, speaker)
        words = len(sentence.split())
        short_chat = words < 5 and _SHORT_CHAT_END.search(sentence)
        if found is None and words >= MIN_PERSONAL_WORDS and not short_chat:
            found = _personal(sentence, speaker) or _about_me(sentence, speaker)
    if found is None and _HANGUL.search(sentence):
        found = _korean(sentence, speaker if personal_ok else "")
        if found and found.kind == "personal" and not personal_ok:
            found = None
    return found or _named(sentence)


_DECIDED_USE = _rx(
    rf"\b(?:use|using|adopt|go\s+with|going\s+with|stick\s+with|pick|choose|chose|picked"
    rf"|switch\s+to|move\s+to|settled\s+on|opted\s+for|went\s+with)\s+(?P<val>{_VALUE})"
)
_KO_DECIDED = re.compile(
    r"(?:(?P<subj>[^\s,]{1,20}?(?:\s+[^\s,]{1,20}?){0,2}?)(?:은|는|에는|에)\s+)?(?P<val>[^\s,]{1,30}?)(?:을|를|으로|로)\s*"
    r"(?:쓰기로|사용하기로|가기로|하기로|정했|결정|가자|하자|쓰자|사용하자)"
)


def find_decision_fields(sentence: str) -> FactFields:
    """Subject/value (and previous value) of a decision sentence, where it states them."""
    change = _english_change(sentence)
    if change is not None and change.kind == "change":
        return change.fields
    m = _DECIDED_USE.search(sentence)
    if m:
        value, subject = _split_for(m.group("val"))
        return _fields(subject, value)
    m = _KO_DECIDED.search(sentence) if _HANGUL.search(sentence) else None
    if m:
        return _fields(m.group("subj"), m.group("val"))
    return FactFields()
