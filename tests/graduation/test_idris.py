"""The emitted Idris module, the built-in checker, and that both say the same thing.

idris2 is not installed on the development machines, so the agreement test below reads
the emitted module with a small evaluator for the Idris subset the emitter uses (string
and integer literals, lists, application, `&&`, `||`, comparisons) and checks that every
`So` obligation in the module reduces to True exactly when the built-in checker accepts
that invariant. A real idris2 run is exercised through a stand-in executable.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from axiom.graduation.candidate import CandidateEntry, EvidenceSpan
from axiom.graduation.idris import (
    CheckResult,
    IdrisChecker,
    IdrisModule,
    idris_string,
    module_name,
    module_relpath,
)
from axiom.graduation.invariants import (
    ENTRY_INVARIANTS,
    EVIDENCE_INVARIANTS,
    INVARIANTS,
    VALIDATOR_VERSION,
    check_invariants,
    confidence_to_bp,
)

ENTRY_ID = "ent_0123456789abcdef"


def span(**changes: object) -> EvidenceSpan:
    fields: dict[str, object] = {
        "session_id": "sess-1",
        "message_index": 3,
        "span_start": 10,
        "span_end": 42,
        "aligned": True,
        "method": "exact",
        "confidence": 1.0,
        "quote_hash": "9f86d081884c7d65",
        "failure_reason": None,
    }
    fields.update(changes)
    return EvidenceSpan(**fields)  # type: ignore[arg-type]


def entry(*evidence: EvidenceSpan, **changes: object) -> CandidateEntry:
    fields: dict[str, object] = {
        "entry_id": ENTRY_ID,
        "entry_type": "fact",
        "title": "DuckDB uses JSON, not JSONB",
        "content": "The schema stores payloads in JSON columns.",
        "session_id": "sess-1",
        "evidence": evidence or (span(),),
        "status": "active",
        "task_title": None,
    }
    fields.update(changes)
    return CandidateEntry(**fields)  # type: ignore[arg-type]


# --- a tiny evaluator for the Idris the emitter writes ----------------------------------

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<int>\d+)|(?P<op>\|\||&&|<=|>=|/=|==|<|>)'
    r"|(?P<punct>[()\[\],-])|(?P<name>[A-Za-z_][A-Za-z0-9_']*))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        assert match, f"cannot read Idris at {text[position:]!r}"
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        position = match.end()
    return out


def _unescape(literal: str) -> str:
    body = literal[1:-1]
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            hexes = re.match(r"x([0-9a-fA-F]+)\\&", body[i + 1 :])
            assert hexes, f"unexpected escape in {literal!r}"
            out.append(chr(int(hexes.group(1), 16)))
            i += 1 + hexes.end()
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


FIELDS = (
    "sessionId",
    "messageIndex",
    "spanStart",
    "spanEnd",
    "aligned",
    "method",
    "confidenceBp",
    "quoteHash",
)


class IdrisSubset:
    """Evaluates the emitted module's Bool definitions and `So` obligations."""

    def __init__(self, source: str) -> None:
        self.constants: dict[str, str] = {}
        self.functions: dict[str, tuple[str, str]] = {}
        self.signatures: dict[str, str] = {}
        for line in source.splitlines():
            if line.startswith(("--", " ", "public export", "record", "import", "%", "module")):
                continue
            if " : " in line:
                name, type_ = line.split(" : ", 1)
                self.signatures[name] = type_
            elif " = " in line:
                lhs, rhs = line.split(" = ", 1)
                parts = lhs.split()
                if parts[0] in ("isOneOf", "hasItems"):
                    continue
                if len(parts) == 1:
                    self.constants[parts[0]] = rhs
                else:
                    self.functions[parts[0]] = (parts[1], rhs)

    def value(self, name: str) -> object:
        return self.eval(self.constants[name], {})

    def eval(self, text: str, env: dict[str, object]) -> object:
        self._toks = _tokens(text)
        self._pos = 0
        self._env = env
        result = self._or()
        assert self._pos == len(self._toks), f"trailing tokens in {text!r}"
        return result

    def _peek(self) -> tuple[str, str] | None:
        return self._toks[self._pos] if self._pos < len(self._toks) else None

    def _take(self) -> tuple[str, str]:
        token = self._toks[self._pos]
        self._pos += 1
        return token

    def _or(self) -> object:
        left = self._and()
        if self._peek() == ("op", "||"):
            self._take()
            right = self._or()
            return bool(left) or bool(right)
        return left

    def _and(self) -> object:
        left = self._cmp()
        if self._peek() == ("op", "&&"):
            self._take()
            right = self._and()
            return bool(left) and bool(right)
        return left

    def _cmp(self) -> object:
        left = self._app()
        token = self._peek()
        if token and token[0] == "op" and token[1] not in ("||", "&&"):
            op = self._take()[1]
            right = self._app()
            return {
                "<=": left <= right,  # type: ignore[operator]
                ">=": left >= right,  # type: ignore[operator]
                "<": left < right,  # type: ignore[operator]
                ">": left > right,  # type: ignore[operator]
                "==": left == right,
                "/=": left != right,
            }[op]
        return left

    def _starts_atom(self) -> bool:
        token = self._peek()
        return token is not None and (token[0] in ("str", "int", "name") or token[1] in ("(", "["))

    def _app(self) -> object:
        head = self._atom()
        args = []
        while self._starts_atom():
            args.append(self._atom())
        if not args:
            return head
        return self._apply(head, args)

    def _apply(self, head: object, args: list[object]) -> object:
        assert isinstance(head, tuple) and head[0] == "fn", f"cannot apply {head!r}"
        name = head[1]
        if name == "not":
            return not args[0]
        if name == "isOneOf":
            return args[0] in args[1]  # type: ignore[operator]
        if name == "hasItems":
            return len(args[0]) > 0  # type: ignore[arg-type]
        if name == "MkEvidenceSpan":
            assert len(args) == len(FIELDS)
            return dict(zip(FIELDS, args, strict=True))
        if name in FIELDS:
            return args[0][name]  # type: ignore[index]
        param, body = self.functions[name]
        saved = (self._toks, self._pos, self._env)
        try:
            return self.eval(body, {param: args[0]})
        finally:
            self._toks, self._pos, self._env = saved

    def _atom(self) -> object:
        kind, text = self._take()
        if kind == "str":
            return _unescape(text)
        if kind == "int":
            return int(text)
        if text == "(":
            if self._peek() == ("punct", "-"):
                self._take()
                number = -int(self._take()[1])
                assert self._take() == ("punct", ")")
                return number
            inner = self._or()
            assert self._take() == ("punct", ")")
            return inner
        if text == "[":
            items = []
            while self._peek() != ("punct", "]"):
                items.append(self._or())
                if self._peek() == ("punct", ","):
                    self._take()
            self._take()
            return items
        if text in ("True", "False"):
            return text == "True"
        if text in self._env:
            return self._env[text]
        if text in self.constants:
            saved = (self._toks, self._pos, self._env)
            try:
                return self.eval(self.constants[text], {})
            finally:
                self._toks, self._pos, self._env = saved
        return ("fn", text)

    def obligation(self, proof: str) -> bool:
        """Evaluates the Bool under `So` in a proof's type signature."""
        type_ = self.signatures[proof]
        assert type_.startswith("So "), type_
        return bool(self.eval(type_[3:], {}))


# --- module names and literals -----------------------------------------------------------


def test_module_name_keeps_the_hex_of_a_plain_entry_id() -> None:
    assert module_name(ENTRY_ID) == "Axiom.Entry_0123456789abcdef"
    assert module_relpath(ENTRY_ID) == Path("Axiom/Entry_0123456789abcdef.idr")


@given(st.text(min_size=1))
def test_module_name_is_a_safe_idris_name_for_any_id(entry_id: str) -> None:
    name = module_name(entry_id)
    assert re.fullmatch(r"Axiom\.Entry_h?[0-9a-f]{16}", name)
    relpath = module_relpath(entry_id)
    assert relpath.parts[0] == "Axiom" and len(relpath.parts) == 2
    assert module_name(entry_id) == name


def test_odd_ids_are_hashed_and_cannot_collide_with_plain_ones() -> None:
    odd = module_name("../../etc/passwd")
    assert odd.startswith("Axiom.Entry_h")
    assert module_name("ENT_0123456789ABCDEF") != module_name(ENTRY_ID)


@given(st.text())
def test_string_literals_escape_everything_that_could_break_out(value: str) -> None:
    literal = idris_string(value)
    body = literal[1:-1]
    assert literal.startswith('"') and literal.endswith('"')
    assert '"' not in body.replace("\\x22\\&", "")
    assert "\\{" not in body and "\n" not in body and "\r" not in body
    assert all(ord(ch) < 128 for ch in literal)
    assert _unescape(literal) == value


# --- the emitted module ------------------------------------------------------------------


def test_emitted_module_states_the_entry_and_its_spans() -> None:
    candidate = entry(
        span(),
        span(
            session_id="sess-2",
            message_index=7,
            span_start=0,
            span_end=5,
            method="fuzzy",
            confidence=0.9,
            quote_hash="abc123",
        ),
    )
    text = IdrisModule.emit(candidate)
    assert "module Axiom.Entry_0123456789abcdef" in text
    assert f'entryId = "{ENTRY_ID}"' in text
    assert 'entryType = "fact"' in text
    assert (
        'evidence1 = MkEvidenceSpan "sess-1" 3 10 42 True "exact" 10000 "9f86d081884c7d65"' in text
    )
    assert 'evidence2 = MkEvidenceSpan "sess-2" 7 0 5 True "fuzzy" 9000 "abc123"' in text
    assert "evidence = [evidence1, evidence2]" in text
    assert "import Data.So" in text
    assert "record Verified where" in text
    assert "  spans : All ValidSpan evidence" in text
    assert "verified : Verified" in text
    assert "[evidence1Valid, evidence2Valid]" in text


def test_emitted_module_is_deterministic() -> None:
    first = IdrisModule.emit(entry(span(), span(message_index=9)))
    again = IdrisModule.emit(entry(span(), span(message_index=9)))
    assert first == again
    assert first != IdrisModule.emit(entry(span(), span(message_index=8)))


def test_missing_spans_are_emitted_as_negative_literals() -> None:
    text = IdrisModule.emit(
        entry(span(aligned=False, method=None, span_start=None, span_end=None, confidence=None))
    )
    assert 'MkEvidenceSpan "sess-1" 3 (-1) (-1) False "" (-1) "9f86d081884c7d65"' in text


def test_free_text_never_reaches_the_module() -> None:
    candidate = entry(title='Title with "quotes" -} and \\{x}', content="secret content 한국어")
    text = IdrisModule.emit(candidate)
    assert "quotes" not in text and "secret content" not in text and "한국어" not in text


def test_every_invariant_is_a_bool_a_record_field_and_a_proof() -> None:
    text = IdrisModule.emit(entry(span(), span()))
    for invariant in ENTRY_INVARIANTS:
        name = invariant.idris_name
        assert f"{name} : Bool" in text
        assert f"{name} = {invariant.idris}" in text
        assert re.search(rf"^  ok\w+ : So {name}$", text, re.M)
        assert re.search(rf"^prf\w+ : So {name}$", text, re.M)
    for invariant in EVIDENCE_INVARIANTS:
        name = invariant.idris_name
        assert f"{name} s = {invariant.idris}" in text
        assert re.search(rf"^  ok\w+ : So \({name} s\)$", text, re.M)
        for item in ("evidence1", "evidence2"):
            assert re.search(rf"^prf\w+ : So \({name} {item}\)$", text, re.M)


def test_verified_value_uses_every_proof_in_field_order() -> None:
    text = IdrisModule.emit(entry(span(), span()))
    entry_proofs = re.findall(r"^(prf\w+) : So \w+$", text, re.M)
    assert len(entry_proofs) == len(ENTRY_INVARIANTS)
    assert re.search(
        r"^verified = MkVerified "
        + " ".join(entry_proofs)
        + r" \[evidence1Valid, evidence2Valid\]$",
        text,
        re.M,
    )
    for item in ("evidence1", "evidence2"):
        proofs = re.findall(rf"^(prf\w+) : So \(\w+ {item}\)$", text, re.M)
        assert len(proofs) == len(EVIDENCE_INVARIANTS)
        assert f"{item}Valid = MkValidSpan " + " ".join(proofs) in text


def test_a_module_without_evidence_still_has_an_empty_list_and_fails_evidence_present() -> None:
    candidate = CandidateEntry(ENTRY_ID, "fact", "t", "c", "s", ())
    text = IdrisModule.emit(candidate)
    assert "evidence = []" in text
    assert "verified = MkVerified" in text and text.rstrip().endswith("[]")
    assert IdrisSubset(text).obligation("prfEvidencePresent") is False


def test_brackets_balance_in_the_emitted_module() -> None:
    text = IdrisModule.emit(entry(span(session_id='x"(]'), span()))
    code = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', code)
    for opening, closing in ("()", "[]", "{}"):
        assert code.count(opening) == code.count(closing)


# --- the invariant table and the built-in checker ----------------------------------------


def test_invariant_codes_and_idris_names_are_unique() -> None:
    codes = [i.code for i in INVARIANTS]
    names = [i.idris_name for i in INVARIANTS]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    reserved = {"evidence", "entryId", "entryType", "verified", "isOneOf", "hasItems"}
    assert not reserved & set(names)


def test_a_valid_entry_passes_the_builtin_checker() -> None:
    assert check_invariants(entry(span(), span(method="normalized", confidence=0.85))) == ()


BREAKS: dict[str, CandidateEntry] = {
    "type_allowed": entry(entry_type="opinion"),
    "title_present": entry(title="   "),
    "title_max_length": entry(title="x" * 201),
    "evidence_present": CandidateEntry(ENTRY_ID, "fact", "t", "c", "s", ()),
    "content_required": entry(entry_type="decision", content=" \n"),
    "task_title_required": entry(entry_type="task_note", task_title=""),
    "evidence_aligned": entry(span(method="guessed")),
    "span_start_nonnegative": entry(span(span_start=-3, span_end=4)),
    "span_ordered": entry(span(span_start=9, span_end=4)),
    "confidence_min": entry(span(confidence=0.8499)),
    "confidence_max": entry(span(confidence=1.5)),
    "quote_hash_present": entry(span(quote_hash="")),
}


def test_every_invariant_has_a_case_that_breaks_only_it() -> None:
    assert set(BREAKS) == {i.code for i in INVARIANTS}


@pytest.mark.parametrize("code", sorted(BREAKS))
def test_builtin_reports_exactly_the_broken_invariant(code: str) -> None:
    errors = check_invariants(BREAKS[code])
    assert len(errors) == 1
    assert re.search(rf"(^|: ){code}: ", errors[0])


@pytest.mark.parametrize("code", sorted(BREAKS))
def test_emitted_module_fails_exactly_the_broken_obligation(code: str) -> None:
    module = IdrisSubset(IdrisModule.emit(BREAKS[code]))
    failing = [
        name for name in module.signatures if name.startswith("prf") and not module.obligation(name)
    ]
    invariant = next(i for i in INVARIANTS if i.code == code)
    suffix = invariant.idris_name[0].upper() + invariant.idris_name[1:]
    assert len(failing) == 1 and failing[0].endswith(suffix)


def test_edge_values_hold() -> None:
    assert check_invariants(entry(title="x" * 200)) == ()
    assert check_invariants(entry(span(span_start=0, span_end=0, confidence=0.85))) == ()
    assert check_invariants(entry(entry_type="task_note", task_title="Ship v1")) == ()
    assert check_invariants(entry(entry_type="error", content="KeyError: 'x'")) == ()


def test_unaligned_evidence_breaks_several_rules_with_readable_messages() -> None:
    broken = span(
        aligned=False,
        method=None,
        span_start=None,
        span_end=None,
        confidence=None,
        failure_reason="not_found",
    )
    errors = check_invariants(entry(span(), broken))
    assert errors[0] == (
        "evidence 2 of 2: evidence_aligned: quote aligned (method exact | normalized | fuzzy) "
        "(got aligned=False, method=None, failure=not_found)"
    )
    assert any("span_start_nonnegative" in e for e in errors)
    assert any("confidence_min" in e and "missing" in e for e in errors)


@pytest.mark.parametrize(
    ("confidence", "bp"),
    [
        (0.85, 8500),
        (0.8499999, 8499),
        (0.95, 9500),
        (1.0, 10000),
        (1, 10000),
        (0.0, 0),
        (None, -1),
        (float("nan"), -1),
        (float("inf"), -1),
    ],
)
def test_confidence_in_basis_points(confidence: float | None, bp: int) -> None:
    assert confidence_to_bp(confidence) == bp


# --- Idris and builtin agree, on generated entries ---------------------------------------

texts = st.one_of(
    st.just(""), st.just("   "), st.text(max_size=8), st.just("z" * 200), st.just("y" * 201)
)
spans = st.builds(
    EvidenceSpan,
    session_id=st.sampled_from(["s1", "s2", 's"3\\{']),
    message_index=st.integers(0, 50),
    span_start=st.one_of(st.none(), st.integers(-2, 60)),
    span_end=st.one_of(st.none(), st.integers(-2, 60)),
    aligned=st.booleans(),
    method=st.sampled_from([None, "exact", "normalized", "fuzzy", "other"]),
    confidence=st.one_of(st.none(), st.floats(-0.5, 1.5), st.sampled_from([0.85, 0.8499999, 1.0])),
    quote_hash=st.sampled_from(["", "abc", "0f"]),
    failure_reason=st.sampled_from([None, "not_found"]),
)
candidates = st.builds(
    CandidateEntry,
    entry_id=st.one_of(st.just(ENTRY_ID), st.text(min_size=1, max_size=10)),
    entry_type=st.sampled_from(
        ["fact", "decision", "insight", "task_note", "reference", "error", "x"]
    ),
    title=texts,
    content=texts,
    session_id=st.just("s1"),
    evidence=st.lists(spans, max_size=3).map(tuple),
    status=st.just("active"),
    task_title=st.one_of(st.none(), texts),
)


@settings(max_examples=150, deadline=None)
@given(candidates)
def test_idris_obligations_agree_with_the_builtin_checker(candidate: CandidateEntry) -> None:
    text = IdrisModule.emit(candidate)
    module = IdrisSubset(text)
    assert module.value("entryId") == candidate.entry_id
    errors = check_invariants(candidate)
    for invariant in ENTRY_INVARIANTS:
        proof = "prf" + invariant.idris_name[0].upper() + invariant.idris_name[1:]
        builtin_ok = not any(e.startswith(f"{invariant.code}: ") for e in errors)
        assert module.obligation(proof) is builtin_ok, invariant.code
    total = len(candidate.evidence)
    for position in range(1, total + 1):
        for invariant in EVIDENCE_INVARIANTS:
            name = invariant.idris_name
            proof = f"prfEvidence{position}{name[0].upper()}{name[1:]}"
            prefix = f"evidence {position} of {total}: {invariant.code}: "
            builtin_ok = not any(e.startswith(prefix) for e in errors)
            assert module.obligation(proof) is builtin_ok, (position, invariant.code)


# --- the checker -------------------------------------------------------------------------


def test_builtin_checker_reports_itself_and_writes_no_module(tmp_path: Path) -> None:
    """It reads no file: writing one per candidate would cost an import more than the check."""
    result = IdrisChecker(executable=None).check(entry(), tmp_path)
    assert result == CheckResult(
        passed=True,
        checker="builtin",
        checker_version=f"builtin-{VALIDATOR_VERSION}",
        errors=(),
        module_path=None,
    )
    assert list(tmp_path.iterdir()) == []


def test_builtin_checker_writes_the_module_when_asked_to_always(tmp_path: Path) -> None:
    candidate = entry(title="")
    result = IdrisChecker(executable=None, modules="always").check(candidate, tmp_path)
    assert result.checker == "builtin" and not result.passed
    assert result.module_path == str(tmp_path / "Axiom" / "Entry_0123456789abcdef.idr")
    written = Path(result.module_path).read_text(encoding="utf-8")
    assert written == IdrisModule.emit(candidate) + "\n"


def test_an_unknown_module_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="modules must be one of"):
        IdrisChecker(modules="sometimes")


def test_builtin_checker_is_used_when_idris2_is_not_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = IdrisChecker().check(entry(title=""), tmp_path)
    assert result.checker == "builtin"
    assert not result.passed
    assert result.errors == check_invariants(entry(title=""))


FAKE_IDRIS2 = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "Idris 2, version 0.7.0"; exit 0; fi
[ "$1" = "--check" ] && [ -f "$2" ] || { echo "Error: no such file $2"; exit 2; }
case "$MODE" in
  sleep) sleep 5 ;;
  silent) exit 3 ;;
  zero-error) echo "Error: While processing right hand side of prfTitlePresent."; exit 0 ;;
esac
if grep -q "^titleLength = 0$" "$2"; then
  echo "1/1: Building Axiom.Entry (x)"
  echo "Error: While processing right hand side of prfTitlePresent. Can't solve constraint"
  echo "between: True and False."
  exit 1
fi
echo "1/1: Building $2"
"""


@pytest.fixture
def fake_idris2(tmp_path: Path) -> str:
    path = tmp_path / "bin" / "idris2"
    path.parent.mkdir()
    path.write_text(FAKE_IDRIS2)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_idris2_is_run_on_the_module_when_present(tmp_path: Path, fake_idris2: str) -> None:
    result = IdrisChecker(executable=fake_idris2).check(entry(), tmp_path / "work")
    assert result.passed and result.checker == "idris2"
    assert result.module_path == str(tmp_path / "work" / "Axiom" / "Entry_0123456789abcdef.idr")
    assert Path(result.module_path).read_text(encoding="utf-8") == IdrisModule.emit(entry()) + "\n"
    assert result.checker_version == "Idris 2, version 0.7.0"
    assert result.errors == ()


def test_idris2_failure_is_reported_with_its_output(tmp_path: Path, fake_idris2: str) -> None:
    result = IdrisChecker(executable=fake_idris2).check(entry(title=""), tmp_path)
    assert not result.passed and result.checker == "idris2"
    assert any("prfTitlePresent" in line for line in result.errors)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("sleep", "idris2 --check timed out after 0.5s"),
        ("silent", "idris2 --check exited with status 3"),
        ("zero-error", "Error: While processing right hand side of prfTitlePresent."),
    ],
)
def test_idris2_trouble_counts_as_failure(
    tmp_path: Path, fake_idris2: str, monkeypatch: pytest.MonkeyPatch, mode: str, expected: str
) -> None:
    monkeypatch.setenv("MODE", mode)
    result = IdrisChecker(executable=fake_idris2, timeout_s=0.5).check(entry(), tmp_path)
    assert not result.passed
    assert result.errors[0] == expected


def test_idris2_found_on_path_by_name(
    tmp_path: Path, fake_idris2: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(fake_idris2))
    result = IdrisChecker().check(entry(), tmp_path)
    assert result.checker == "idris2" and result.passed


def test_idris2_removed_after_it_was_found_leaves_the_builtin_checker(
    tmp_path: Path, fake_idris2: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(fake_idris2))
    checker = IdrisChecker()
    assert checker.check(entry(), tmp_path).checker == "idris2"
    (tmp_path / "elsewhere").mkdir()
    shutil.move(fake_idris2, tmp_path / "elsewhere" / "idris2")
    result = checker.check(entry(), tmp_path)
    assert result.checker == "builtin" and result.passed
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))  # another PATH: looked up again
    assert checker.check(entry(), tmp_path).checker == "idris2"


def test_a_module_directory_removed_between_checks_is_made_again(tmp_path: Path) -> None:
    checker = IdrisChecker(executable=None, modules="always")
    first = Path(checker.check(entry(), tmp_path / "work").module_path or "")
    shutil.rmtree(tmp_path / "work")
    again = Path(checker.check(entry(), tmp_path / "work").module_path or "")
    assert again == first and again.read_text(encoding="utf-8") == IdrisModule.emit(entry()) + "\n"
