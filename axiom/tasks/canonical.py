"""Canonical keys and deterministic ids for tasks, conditions and artifacts.

Everything here is a pure function of its arguments: the same text always yields the same
key, and the same key always yields the same entity id, so replaying the event log after a
rebuild recreates exactly the same entities.

Key shapes::

    task:{project}:{normalize_title(title)}
    cond:{project}:{normalize_text(text)}
    art:url:{sha1(normalize_url(url))}
    art:jira:{KEY-123}
    art:gh_issue:{owner}/{repo}:{number}

Entity ids are ``tsk_`` / ``cnd_`` / ``art_`` followed by the first 12 hex digits of the
SHA-1 of the key (see `entity_id_for`).

Task keys drop the English articles (`normalize_title`); keys made before that rule are
still found: `task_lookup_keys` gives the current key and, when it differs, the key under
the older rule (`normalize_text` alone). Keys are computed when an observation is resolved
and stored in the event payloads (``task_created.canonical_key``,
``task_mentioned.alias_key``), so replaying an existing log recreates the same entities.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "DEFAULT_PROJECT",
    "artifact_key_for",
    "artifact_keys_in",
    "condition_key",
    "entity_id_for",
    "kind_of_key",
    "normalize_project",
    "normalize_text",
    "normalize_title",
    "normalize_url",
    "placeholder_condition_key",
    "task_key",
    "task_lookup_keys",
]

DEFAULT_PROJECT = "default"

# Characters deleted outright (not turned into a space) so that "don't" == "dont".
_APOSTROPHES = frozenset("'\u2018\u2019\u02bc")


def _nfkc_casefold(text: str) -> str:
    # casefold() can produce sequences that are not NFKC-normal (and NFKC can produce
    # characters that casefold further), hence the sandwich; this is the usual
    # "NFKC_Casefold" construction.
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def normalize_text(text: str) -> str:
    """Normalize free text for use inside a canonical key.

    The exact rule, applied in this order:

    1. Unicode NFKC, then case-fold (``str.casefold``), then NFKC again. Full-width forms,
       ligatures, compatibility digits and decomposed Hangul jamo all become their
       ordinary composed form; ``"ß"`` becomes ``"ss"``.
    2. Each character is then mapped by its Unicode general category:

       * letters (``L*``), marks (``M*``) and numbers (``N*``) are kept unchanged, so
         Hangul, CJK, accented Latin letters and Devanagari vowel signs survive (accents
         are significant: ``"café" != "cafe"``);
       * apostrophes (``'`` ``‘`` ``’`` ``ʼ``) and invisible format characters (``Cf``:
         zero-width space/joiner, soft hyphen, BOM) are deleted, so ``"don't"`` equals
         ``"dont"`` and ``"log\\u200bin"`` equals ``"login"``;
       * everything else — punctuation (``P*``, including ``_`` and ``-``), symbols
         (``S*``, including emoji), separators (``Z*``) and control characters (``Cc``) —
         becomes a single space.
    3. NFKC once more (deleting a character may bring a letter and a combining mark
       together), then runs of whitespace are collapsed to one ASCII space and the
       result is trimmed.

    The function is idempotent: ``normalize_text(normalize_text(s)) == normalize_text(s)``.
    Spacing inside Korean phrases is *not* removed (``"로그인 버그"`` and ``"로그인버그"``
    stay different); neither is word order or spelling.
    """
    folded = _nfkc_casefold(text)
    out: list[str] = []
    for ch in folded:
        category = unicodedata.category(ch)
        if category[0] in "LMN":
            out.append(ch)
        elif ch in _APOSTROPHES or category == "Cf":
            continue
        else:
            out.append(" ")
    return " ".join(unicodedata.normalize("NFKC", "".join(out)).split())


# English articles, dropped from task titles as whole words (see `normalize_title`).
ARTICLES = frozenset({"a", "an", "the"})


def drop_articles(norm: str) -> str:
    """`norm` (a `normalize_text` result) without the words ``a``, ``an``, ``the``.

    Whole words only ("theme", "another", "an8n" stay), and never the last word: an
    article always precedes a noun, so a final "a" is a name ("Plan A", "Vitamin A").
    A title made of articles only keeps its last word (``"the"``).
    """
    words = norm.split(" ")
    return " ".join(w for i, w in enumerate(words) if w not in ARTICLES or i == len(words) - 1)


def normalize_title(text: str) -> str:
    """Normalize a task title for its canonical key: `normalize_text`, then `drop_articles`.

    ``"Fix the login redirect bug"`` and ``"Fix login redirect bug"`` share one key;
    ``"Plan A"`` and ``"Plan B"`` do not (a final article is kept). Text in other scripts
    is untouched (Korean has no articles; ``"로그인 버그 수정"`` stays as it is). Idempotent.
    """
    return drop_articles(normalize_text(text))


def normalize_project(project: str | None) -> str:
    """Normalize a project name for use inside a key.

    Rule: NFKC, trim, then if the value looks like a path (contains ``/`` or ``\\``) keep
    only its last non-empty component (``"/home/me/work/Axiom/"`` → ``"Axiom"``,
    ``"C:\\src\\axiom"`` → ``"axiom"``); then case-fold, delete control/format
    characters, replace runs of whitespace and every ``:`` (the key separator) with
    ``-``. ``None`` or a value that ends up empty becomes ``"default"``.

    Other punctuation is kept (``my-repo`` and ``my_repo`` are different projects). The
    function is idempotent. Claude Code's encoded project directory names
    (``-home-me-work-axiom``) are not decoded here: that is the ingest layer's job.
    """
    if project is None:
        return DEFAULT_PROJECT
    value = unicodedata.normalize("NFKC", project).strip()
    parts = [p for p in re.split(r"[/\\]", value) if p.strip()]
    value = parts[-1] if parts else ""
    value = _nfkc_casefold(value)
    value = "".join(ch for ch in value if unicodedata.category(ch) not in ("Cc", "Cf"))
    value = "-".join(value.split()).replace(":", "-")
    return value or DEFAULT_PROJECT


def _require_norm(text: str, what: str) -> str:
    norm = normalize_text(text)
    if not norm:
        raise ValueError(f"{what} {text!r} has no letters or digits; it cannot be keyed")
    return norm


def task_key(project: str | None, title: str) -> str:
    """``task:{project}:{normalize_title(title)}``.

    Raises ValueError when the title normalizes to nothing (e.g. ``"!!!"``).
    """
    return f"task:{normalize_project(project)}:{drop_articles(_require_norm(title, 'task title'))}"


def task_lookup_keys(project: str | None, title: str) -> tuple[str, ...]:
    """The keys under which a task named `title` may be stored, current rule first.

    ``(task_key(...),)`` plus, when it differs, the key under the rule used before
    articles were dropped (``task:{project}:{normalize_text(title)}``): tasks created
    then keep those keys, so a lookup must try both. Raises ValueError like `task_key`.
    """
    norm = _require_norm(title, "task title")
    project = normalize_project(project)
    current = f"task:{project}:{drop_articles(norm)}"
    older = f"task:{project}:{norm}"
    return (current,) if older == current else (current, older)


def condition_key(project: str | None, text: str) -> str:
    """``cond:{project}:{normalized text}``.

    Raises ValueError when the text normalizes to nothing.
    """
    return f"cond:{normalize_project(project)}:{_require_norm(text, 'condition text')}"


def placeholder_condition_key(project: str | None, task_id: str) -> str:
    """Key of the "unknown blocker" condition auto-inserted for one blocked task.

    One placeholder per task (not one per project), so that resolving the placeholder of
    one task (``condition_resolved_to``) does not silently unblock every other task.
    """
    return condition_key(project, f"unknown blocker of {task_id}")


# --------------------------------------------------------------------------- artifacts

# A URL runs until whitespace or one of these ASCII delimiters; non-ASCII punctuation is
# cut off afterwards (see `_cut_url`).
_URL_RE = re.compile(r"https?://[^\s<>\"'`{}|\\^]+", re.IGNORECASE)
_TRAILING_PUNCT = ".,;:!?*~_'\""
_CLOSERS = {")": "(", "]": "[", "}": "{"}

_GH_URL_RE = re.compile(
    r"^https?://(?:www\.)?github\.com/"
    r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/"
    r"(?P<repo>[A-Za-z0-9._-]{1,100})/"
    r"(?:issues|pull|pulls)/(?P<num>[1-9][0-9]*)"
    r"(?:[/?#].*)?$",
    re.IGNORECASE,
)
_GH_SHORT_RE = re.compile(
    r"(?<![A-Za-z0-9_./-])"
    r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/"
    r"(?P<repo>[A-Za-z0-9._-]{1,100})"
    r"#(?P<num>[1-9][0-9]*)"
    r"(?![A-Za-z0-9_])"
)
# Jira: project key = uppercase letter + ≥1 uppercase letters/digits/underscores, then a
# dash and an issue number without a leading zero. Boundaries are ASCII-only so that a
# Korean particle glued to the key ("ABC-123을") does not hide it.
_JIRA_RE = re.compile(
    r"(?<![A-Za-z0-9_./-])"
    r"(?P<key>(?P<project>[A-Z][A-Z0-9_]{1,9})-[1-9][0-9]{0,8})"
    r"(?![A-Za-z0-9_-])"
)
_JIRA_BROWSE_RE = re.compile(r"/browse/(?P<key>[A-Z][A-Z0-9_]{1,9}-[1-9][0-9]{0,8})(?:[/?#]|$)")
# Uppercase-dash-number tokens that are standards, algorithms or versions, not Jira keys.
_NOT_JIRA_PROJECTS = frozenset(
    {
        "AES", "ANSI", "ARM", "ASCII", "BASE", "COVID", "CP", "CVE", "CWE", "DES", "EC",
        "ECMA", "ES", "FIPS", "GPT", "HTTP", "IEC", "IEEE", "IPV", "ISO", "LATIN", "MD",
        "PEP", "RFC", "RS", "RSA", "SHA", "SSL", "TLS", "UCS", "UTF", "WIN", "X86",
    }
)  # fmt: skip


def _cut_url(url: str) -> str:
    """Trim what the URL regex over-captures: everything from the first non-ASCII
    punctuation/space or the first closing bracket that closes nothing opened inside the
    URL, then trailing ASCII punctuation."""
    depth = dict.fromkeys(_CLOSERS.values(), 0)
    for i, ch in enumerate(url):
        if ord(ch) > 127 and unicodedata.category(ch)[0] in "PSZC":
            url = url[:i]
            break
        if ch in depth:
            depth[ch] += 1
        elif ch in _CLOSERS:
            if depth[_CLOSERS[ch]] == 0:  # closes a bracket opened before the URL
                url = url[:i]
                break
            depth[_CLOSERS[ch]] -= 1
    return url.rstrip(_TRAILING_PUNCT)


def normalize_url(url: str) -> str:
    """Normalize a URL before hashing it into ``art:url:{sha1}``.

    Rule: trailing punctuation and an unbalanced closing bracket (with what follows it) are
    stripped (they belong to the sentence, not the URL); scheme and host are lower-cased; a default port (``:80``
    for http, ``:443`` for https) is dropped; the fragment (``#...``) is dropped, since it
    points inside the same document; trailing ``/`` of the path is stripped; the query is
    kept as written. ``http`` and ``https`` stay distinct.
    """
    url = _cut_url(url.strip())
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    netloc = parts.netloc
    userinfo, at, hostport = netloc.rpartition("@")
    hostport = hostport.lower()
    if (scheme == "http" and hostport.endswith(":80")) or (
        scheme == "https" and hostport.endswith(":443")
    ):
        hostport = hostport.rsplit(":", 1)[0]
    netloc = f"{userinfo}{at}{hostport}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def _key_for_url(url: str) -> str:
    gh = _GH_URL_RE.match(url)
    if gh:
        return _gh_key(gh["owner"], gh["repo"], gh["num"])
    browse = _JIRA_BROWSE_RE.search(urlsplit(url).path)
    if browse:
        return f"art:jira:{browse['key']}"
    digest = hashlib.sha1(normalize_url(url).encode("utf-8")).hexdigest()
    return f"art:url:{digest}"


def _gh_key(owner: str, repo: str, num: str) -> str:
    # GitHub owner and repository names are case-insensitive.
    return f"art:gh_issue:{owner.lower()}/{repo.lower()}:{int(num)}"


def artifact_keys_in(text: str) -> list[str]:
    """All strong artifact ids found in `text`, in order of appearance, without duplicates.

    Recognised, in this precedence (a span claimed by one form is not re-read by the next):

    1. URLs (``http://`` / ``https://``). A GitHub issue or pull-request URL
       (``github.com/{owner}/{repo}/issues/{n}`` or ``/pull/{n}``, any suffix) yields
       ``art:gh_issue:{owner}/{repo}:{n}``; a Jira browse URL (``.../browse/ABC-123``)
       yields ``art:jira:ABC-123``; any other URL yields ``art:url:{sha1}`` of
       `normalize_url`. URLs without a scheme (``www.example.com``) are not recognised.
    2. GitHub shorthand ``owner/repo#12`` → ``art:gh_issue:owner/repo:12`` (owner and repo
       lower-cased). A bare ``#12`` is ambiguous and ignored.
    3. Jira keys ``ABC-123`` (uppercase project key of 2–10 characters) →
       ``art:jira:ABC-123``. Common standard/version names (``UTF-8``, ``SHA-1``,
       ``ISO-8601``, ``GPT-4``, ``CVE-…``) are not taken as Jira keys.
    """
    found: list[tuple[int, str]] = []
    masked = list(text)

    def claim(start: int, end: int) -> None:
        for i in range(start, end):
            masked[i] = " "

    for m in _URL_RE.finditer(text):
        url = _cut_url(m.group(0))
        if len(url) <= len("https://") or not urlsplit(url).netloc:
            continue
        found.append((m.start(), _key_for_url(url)))
        claim(m.start(), m.start() + len(url))

    rest = "".join(masked)
    for m in _GH_SHORT_RE.finditer(rest):
        found.append((m.start(), _gh_key(m["owner"], m["repo"], m["num"])))
        claim(m.start(), m.end())

    rest = "".join(masked)
    for m in _JIRA_RE.finditer(rest):
        if m["project"] in _NOT_JIRA_PROJECTS:
            continue
        found.append((m.start(), f"art:jira:{m['key']}"))

    found.sort(key=lambda item: item[0])
    keys: list[str] = []
    for _, key in found:
        if key not in keys:
            keys.append(key)
    return keys


def artifact_key_for(text: str) -> str | None:
    """The first strong artifact id in `text` (see `artifact_keys_in`), or None."""
    keys = artifact_keys_in(text)
    return keys[0] if keys else None


# --------------------------------------------------------------------------- entity ids

_ID_PREFIX = {"task": "tsk_", "cond": "cnd_", "art": "art_"}
_KIND = {"task": "task", "cond": "condition", "art": "artifact"}


def kind_of_key(key: str) -> str:
    """``"task"``, ``"condition"`` or ``"artifact"`` for a canonical key."""
    head = key.split(":", 1)[0]
    if head not in _KIND or ":" not in key:
        raise ValueError(f"not a canonical key: {key!r}")
    return _KIND[head]


def entity_id_for(key: str) -> str:
    """Deterministic short id for a canonical key.

    ``tsk_`` / ``cnd_`` / ``art_`` + the first 12 hex digits (48 bits) of SHA-1 of the
    UTF-8 key. Replaying the same events therefore recreates the same ids.
    """
    kind_of_key(key)  # validates
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]
    return _ID_PREFIX[key.split(":", 1)[0]] + digest
