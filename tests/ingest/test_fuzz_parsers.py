"""Hostile input through every importer (hypothesis): random bytes, random JSON shaped like
each format, broken UTF-8 and deep nesting. A parser never raises: what it cannot read is
an `InputIssue` naming the file (and line), and what it reads is a valid transcript. The
same inputs go through `import_paths` into a real DuckDB file, whose import never raises
either and stores only what the parsers returned."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from axiom.ingest.claude_code import ParsedFile
from axiom.ingest.formats import PARSERS, parse_file
from axiom.ingest.importer import import_paths
from axiom.ingest.issues import InputIssue
from axiom.ingest.transcript import Transcript
from axiom.store.db import Database
from axiom.store.migrate import migrate

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
SUFFIX = {"claude_code": ".jsonl", "json": ".json", "markdown": ".md", "locomo": ".json"}

# Scalars a hostile file likes: huge and negative numbers, NaN-free floats, odd strings.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["user", "assistant", "2025-10-01T10:00:00Z", "", "\x00", "\udc80", "\ud800x"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=25,
)
ROLE = st.one_of(st.sampled_from(["user", "assistant", "human", "system", "tool"]), JSON)
CONTENT = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["text", "tool_use", "x"])},
            optional={"text": JSON, "input": JSON},
        ),
        max_size=3,
    ),  # fmt: skip
    JSON,
)


@st.composite
def claude_code_file(draw: st.DrawFn) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        obj: dict[str, Any] = {
            "type": draw(st.sampled_from(["user", "assistant", "summary", "system"])),
            "sessionId": draw(st.one_of(st.sampled_from(["s1", "s2"]), JSON)),
            "uuid": draw(st.one_of(st.uuids().map(str), JSON)),
            "parentUuid": draw(st.one_of(st.none(), st.uuids().map(str), JSON)),
            "timestamp": draw(st.one_of(st.datetimes().map(lambda d: d.isoformat()), JSON)),
            "message": draw(
                st.one_of(st.fixed_dictionaries({"role": ROLE, "content": CONTENT}), JSON)
            ),  # fmt: skip
        }
        for key in draw(st.sets(st.sampled_from(sorted(obj)))):
            del obj[key]
        lines.append(json.dumps(obj).encode())
    lines += draw(st.lists(st.binary(max_size=30), max_size=2))
    return b"\n".join(draw(st.permutations(lines)))


@st.composite
def generic_json_file(draw: st.DrawFn) -> bytes:
    message = st.fixed_dictionaries(
        {"role": ROLE, "content": CONTENT}, optional={"timestamp": JSON}
    )
    session = st.fixed_dictionaries(
        {"messages": st.one_of(st.lists(message, max_size=5), JSON)},
        optional={"id": JSON, "session_id": JSON, "title": JSON, "project": JSON},
    )
    return json.dumps(draw(st.one_of(session, st.lists(session, max_size=3), JSON))).encode()


@st.composite
def locomo_file(draw: st.DrawFn) -> bytes:
    turn = st.fixed_dictionaries(
        {
            "speaker": st.one_of(st.sampled_from(["A", "B"]), JSON),
            "text": st.one_of(st.text(max_size=40), JSON),
        },  # fmt: skip
        optional={"dia_id": JSON, "blip_caption": JSON, "img_url": JSON},
    )
    conversation: dict[str, Any] = {"speaker_a": "A", "speaker_b": draw(st.one_of(st.just("B"), JSON))}  # fmt: skip
    for n in range(1, draw(st.integers(1, 3)) + 1):
        conversation[f"session_{n}"] = draw(st.one_of(st.lists(turn, max_size=4), JSON))
        conversation[f"session_{n}_date_time"] = draw(st.one_of(st.just("1:56 pm on 8 May, 2023"), JSON))  # fmt: skip
    doc = {"sample_id": draw(JSON), "conversation": conversation}
    return json.dumps(draw(st.sampled_from([doc, [doc], conversation]))).encode()


MARKDOWN = st.lists(
    st.one_of(
        st.sampled_from(
            ["## User", "## Assistant", "**User:**", "**Assistant:**", "---", "```", "# T"]
        ),  # fmt: skip
        st.text(max_size=40),
    ),
    max_size=12,
).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))
HOSTILE_BYTES = st.one_of(
    st.binary(max_size=200),
    st.just(b"[" * 5000 + b"]" * 5000),  # deeper than json's recursion limit
    st.just(b'{"messages": ' + b"[" * 3000 + b"]" * 3000 + b"}"),
    st.just(b"\xef\xbb\xbf\xff\xfe{}"),
)
SHAPED = {
    "claude_code": claude_code_file(),
    "json": generic_json_file(),
    "locomo": locomo_file(),
    "markdown": MARKDOWN,
}


def check_parsed(parsed: ParsedFile, path: Path) -> None:
    assert isinstance(parsed, ParsedFile)
    for issue in parsed.issues:
        assert isinstance(issue, InputIssue) and issue.path == str(path) and issue.reason
    for transcript in parsed.transcripts:
        assert isinstance(transcript, Transcript) and transcript.session_id
        assert [m.index for m in transcript.messages] == list(range(len(transcript.messages)))
        assert all(isinstance(m.text, str) for m in transcript.messages)
        Transcript.from_json(json.loads(json.dumps(transcript.to_json())))  # storable


def parse_every_way(fmt: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"input{SUFFIX[fmt]}"
        path.write_bytes(data)
        check_parsed(PARSERS[fmt](path, data), path)  # forced, whatever the content
        check_parsed(parse_file(path), path)  # detected from name and content


@given(st.sampled_from(sorted(PARSERS)), HOSTILE_BYTES)
@FUZZ
def test_no_parser_raises_on_hostile_bytes(fmt: str, data: bytes) -> None:
    parse_every_way(fmt, data)


@given(st.data())
@FUZZ
def test_no_parser_raises_on_input_shaped_like_its_format(data: st.DataObject) -> None:
    fmt = data.draw(st.sampled_from(sorted(SHAPED)))
    parse_every_way(fmt, data.draw(SHAPED[fmt]))


@given(st.data())
@settings(FUZZ, max_examples=25)
def test_an_import_of_hostile_files_never_raises_and_stores_what_was_parsed(
    data: st.DataObject,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        db = Database(root / "axiom.duckdb")
        migrate(db)
        src = root / "src"
        src.mkdir()
        for n, fmt in enumerate(data.draw(st.lists(st.sampled_from(sorted(SHAPED)), max_size=4))):
            (src / f"f{n}{SUFFIX[fmt]}").write_bytes(data.draw(SHAPED[fmt]))
        report = import_paths(db, [src])
        with db.read() as conn:
            stored = {r[0] for r in conn.execute("SELECT session_id FROM sessions").fetchall()}
        assert stored == set(report.session_ids)
