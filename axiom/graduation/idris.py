"""Emit an Idris 2 module per candidate entry, and check it.

`IdrisModule.emit` writes the entry's facts (id, type, lengths, evidence spans) as Idris
data and every invariant of `axiom.graduation.invariants.INVARIANTS` as a ``So`` proof
obligation discharged by ``Oh``. ``Oh : So True`` only type-checks where the Bool
expression reduces to ``True`` for the data in the module, so ``idris2 --check`` of the
module fails exactly when an invariant does not hold. A ``Verified`` record bundles the
entry proofs with ``All ValidSpan evidence`` (one ``ValidSpan`` per evidence item).

Free text (title, content, quotes) is never written into the module; only identifiers,
enumerations, hashes and integers are, as string literals in which every character
outside a small safe set is a ``\\x..\\&`` escape. Numbers are ``Integer`` (primitive and
cheap to evaluate at type-check time); a missing offset or confidence is ``-1``.

`IdrisChecker.check` runs ``idris2 --check`` on the module, written under
``workdir/Axiom/`` (the path mirrors the module name, as Idris requires), when an
``idris2`` executable is on PATH, otherwise `check_invariants`, the Python form of the same
table. The built-in checker reads no file, so by default it writes none: a new file costs
the system more than checking the entry does, for every candidate of an import
(``modules="always"``, `AXIOM_IDRIS_MODULES`, writes them anyway, for a person to check by
hand). The result says which checker ran, its version and the module written, so the
``idris_checked`` event can record it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from axiom.graduation.candidate import CandidateEntry
from axiom.graduation.invariants import (
    ALIGN_METHODS,
    ALLOWED_ENTRY_TYPES,
    CONTENT_REQUIRED_TYPES,
    ENTRY_INVARIANTS,
    EVIDENCE_INVARIANTS,
    TASK_TITLE_REQUIRED_TYPES,
    VALIDATOR_VERSION,
    EntryFacts,
    SpanFacts,
    check_invariants,
    entry_facts,
    span_facts,
)
from axiom.settings import IDRIS_MODULES

MODULE_NAMESPACE = "Axiom"
DEFAULT_TIMEOUT_S = 120.0
MAX_ERROR_LINES = 40
MAX_ERROR_LINE_CHARS = 500

_PROGRESS_LINE = re.compile(r"\s*\d+/\d+: Building ")  # idris2 progress, not an error
_PLAIN_ENTRY_ID = re.compile(r"ent_([0-9a-f]{16})")
_SAFE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.:/@+=,")


def module_name(entry_id: str) -> str:
    """``Axiom.Entry_<hex>``: a valid Idris module name for any entry id.

    An id of the usual form ``ent_<16 lowercase hex>`` keeps its hex, so the module is easy
    to find; any other id is hashed (``Entry_h<16 hex of sha256>``), which keeps odd
    characters out of module names and file paths. The ``h`` keeps the two forms apart.
    """
    plain = _PLAIN_ENTRY_ID.fullmatch(entry_id)
    if plain:
        return f"{MODULE_NAMESPACE}.Entry_{plain.group(1)}"
    digest = hashlib.sha256(entry_id.encode("utf-8")).hexdigest()[:16]
    return f"{MODULE_NAMESPACE}.Entry_h{digest}"


def module_relpath(entry_id: str) -> Path:
    """Where the module lives relative to the source directory: ``Axiom/Entry_<hex>.idr``."""
    return Path(*module_name(entry_id).split(".")).with_suffix(".idr")


def idris_string(value: str) -> str:
    """An Idris 2 string literal for any Python string.

    Safe ASCII stays as is; every other character (quotes, backslash, braces, control
    characters, non-ASCII) becomes ``\\x<hex>\\&`` (``\\&`` ends the hex digits), so no
    value can close the literal, start an interpolation or break a line.
    """
    body = "".join(ch if ch in _SAFE_CHARS else f"\\x{ord(ch):x}\\&" for ch in value)
    return f'"{body}"'


def idris_integer(value: int) -> str:
    return str(value) if value >= 0 else f"({value})"


def idris_bool(value: bool) -> str:
    return "True" if value else "False"


def idris_string_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(idris_string(v) for v in values) + "]"


def _capitalized(name: str) -> str:
    return name[0].upper() + name[1:]


def _span_literal(facts: SpanFacts) -> str:
    return " ".join(
        [
            "MkEvidenceSpan",
            idris_string(facts.session_id),
            idris_integer(facts.message_index),
            idris_integer(facts.span_start),
            idris_integer(facts.span_end),
            idris_bool(facts.aligned),
            idris_string(facts.method),
            idris_integer(facts.confidence_bp),
            idris_string(facts.quote_hash),
        ]
    )


def _definition(name: str, type_: str, value: str) -> list[str]:
    return ["public export", f"{name} : {type_}", f"{name} = {value}", ""]


class IdrisModule:
    """Renders the Idris 2 module of one candidate. Same candidate, same text."""

    @staticmethod
    def emit(candidate: CandidateEntry) -> str:
        spans = [span_facts(span) for span in candidate.evidence]
        span_names = [f"evidence{position}" for position in range(1, len(spans) + 1)]
        lines = [
            f"-- Generated by axiom.graduation (validator {VALIDATOR_VERSION}). Do not edit.",
            "-- `idris2 --check` succeeds exactly when every invariant below holds for this",
            "-- entry: each `Oh` type-checks only where its Bool expression reduces to True.",
            f"module {module_name(candidate.entry_id)}",
            *_PRELUDE,
        ]
        lines += _entry_lines(entry_facts(candidate), span_names, spans)
        lines += _invariant_lines()
        lines += _proof_lines(span_names)
        return "\n".join(lines)


# What every module declares before its entry: the span record and two list helpers.
_PRELUDE: tuple[str, ...] = (
    "",
    "import Data.So",
    "import Data.List.Quantifiers",
    "",
    "%default total",
    "",
    "-- Offsets are Python str indices, end exclusive; -1 means missing.",
    "-- Confidence is in basis points: 8500 is 0.85.",
    "public export",
    "record EvidenceSpan where",
    "  constructor MkEvidenceSpan",
    "  sessionId : String",
    "  messageIndex : Integer",
    "  spanStart : Integer",
    "  spanEnd : Integer",
    "  aligned : Bool",
    "  method : String",
    "  confidenceBp : Integer",
    "  quoteHash : String",
    "",
    "public export",
    "isOneOf : String -> List String -> Bool",
    "isOneOf x [] = False",
    "isOneOf x (y :: ys) = x == y || isOneOf x ys",
    "",
    "public export",
    "hasItems : List a -> Bool",
    "hasItems [] = False",
    "hasItems (_ :: _) = True",
    "",
)


@functools.cache
def _vocabulary_lines() -> tuple[str, ...]:
    """The vocabularies the invariants check against: the same in every module."""
    lines = _definition("allowedTypes", "List String", idris_string_list(ALLOWED_ENTRY_TYPES))
    lines += _definition(
        "contentRequiredTypes", "List String", idris_string_list(CONTENT_REQUIRED_TYPES)
    )
    lines += _definition(
        "taskTitleRequiredTypes", "List String", idris_string_list(TASK_TITLE_REQUIRED_TYPES)
    )
    lines += _definition("alignMethods", "List String", idris_string_list(ALIGN_METHODS))
    return tuple(lines)


def _entry_lines(facts: EntryFacts, span_names: list[str], spans: list[SpanFacts]) -> list[str]:
    """The vocabularies the invariants check against, then the entry and its spans."""
    lines = [*_vocabulary_lines(), "-- The entry", ""]
    lines += _definition("entryId", "String", idris_string(facts.entry_id))
    lines += _definition("entryType", "String", idris_string(facts.entry_type))
    lines += _definition("titleLength", "Integer", idris_integer(facts.title_length))
    lines += _definition("contentLength", "Integer", idris_integer(facts.content_length))
    lines += _definition("taskTitleLength", "Integer", idris_integer(facts.task_title_length))
    for name, span in zip(span_names, spans, strict=True):
        lines += _definition(name, "EvidenceSpan", _span_literal(span))
    lines += _definition("evidence", "List EvidenceSpan", "[" + ", ".join(span_names) + "]")
    return lines


@functools.cache
def _invariant_lines() -> tuple[str, ...]:
    """Each invariant as a Bool, and the records whose fields demand each one holds: the
    same in every module, so rendered once."""
    lines = [f"-- The invariants (validator {VALIDATOR_VERSION})", ""]
    for invariant in ENTRY_INVARIANTS:
        lines += [f"-- {invariant.code}: {invariant.rule}"]
        lines += _definition(invariant.idris_name, "Bool", invariant.idris)
    for invariant in EVIDENCE_INVARIANTS:
        lines += [
            f"-- {invariant.code}: {invariant.rule}",
            "public export",
            f"{invariant.idris_name} : EvidenceSpan -> Bool",
            f"{invariant.idris_name} s = {invariant.idris}",
            "",
        ]
    lines += ["public export", "record ValidSpan (s : EvidenceSpan) where"]
    lines += ["  constructor MkValidSpan"]
    lines += [
        f"  ok{_capitalized(i.idris_name)} : So ({i.idris_name} s)" for i in EVIDENCE_INVARIANTS
    ]
    lines += ["", "public export", "record Verified where", "  constructor MkVerified"]
    lines += [f"  ok{_capitalized(i.idris_name)} : So {i.idris_name}" for i in ENTRY_INVARIANTS]
    lines += ["  spans : All ValidSpan evidence", ""]
    return tuple(lines)


def _proof_lines(span_names: list[str]) -> list[str]:
    """An `Oh` per invariant and span: the module type-checks only if each reduces to True."""
    lines = ["-- The proofs", ""]
    entry_proofs: list[str] = []
    for invariant in ENTRY_INVARIANTS:
        proof = f"prf{_capitalized(invariant.idris_name)}"
        entry_proofs.append(proof)
        lines += _definition(proof, f"So {invariant.idris_name}", "Oh")
    span_proofs: list[str] = []
    for name in span_names:
        field_proofs: list[str] = []
        for invariant in EVIDENCE_INVARIANTS:
            proof = f"prf{_capitalized(name)}{_capitalized(invariant.idris_name)}"
            field_proofs.append(proof)
            lines += _definition(proof, f"So ({invariant.idris_name} {name})", "Oh")
        span_proof = f"{name}Valid"
        span_proofs.append(span_proof)
        lines += _definition(
            span_proof, f"ValidSpan {name}", "MkValidSpan " + " ".join(field_proofs)
        )
    lines += _definition(
        "verified",
        "Verified",
        "MkVerified " + " ".join(entry_proofs) + " [" + ", ".join(span_proofs) + "]",
    )
    return lines


def write_module(candidate: CandidateEntry, path: Path) -> None:
    """Write the candidate's module to ``path``, making its directory if need be."""
    text = IdrisModule.emit(candidate) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except FileNotFoundError:  # the first module there (or the directory was removed)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class CheckResult:
    """The outcome of validating one candidate.

    ``checker`` is ``idris2`` when the emitted module was type-checked by idris2, else
    ``builtin``; ``checker_version`` is idris2's ``--version`` line or ``builtin-<v>``.
    ``errors`` are the checker's messages (empty when passed). ``module_path`` is the
    ``.idr`` file written, or None when none was (the built-in checker needs no file).
    """

    passed: bool
    checker: Literal["idris2", "builtin"]
    checker_version: str
    errors: tuple[str, ...]
    module_path: str | None
    validator_version: str = VALIDATOR_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "checker": self.checker,
            "checker_version": self.checker_version,
            "errors": list(self.errors),
            "module_path": self.module_path,
            "validator_version": self.validator_version,
        }


class IdrisChecker:
    """Validates candidates: idris2 when available, the built-in checker otherwise.

    ``executable`` is looked up with `shutil.which` once per value of ``PATH`` (default
    ``idris2``): an idris2 installed into a directory already on it is used by the next
    process; pass None to always use the built-in checker. ``timeout_s`` bounds one
    idris2 run; a run that times out counts as failed, with the reason in ``errors``.
    ``modules`` says when the module is written: for idris2 to check (``idris2``), or at
    every check (``always``).
    """

    def __init__(
        self,
        executable: str | None = "idris2",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        modules: str = "idris2",
    ) -> None:
        if modules not in IDRIS_MODULES:
            raise ValueError(f"modules must be one of {IDRIS_MODULES}, got {modules!r}")
        self.executable = executable
        self.timeout_s = timeout_s
        self.modules = modules
        self._versions: dict[str, str] = {}
        self._found: dict[str | None, str | None] = {}  # PATH -> the executable found on it

    def check(self, candidate: CandidateEntry, workdir: Path) -> CheckResult:
        relpath = module_relpath(candidate.entry_id)
        path = Path(workdir) / relpath
        found = self._executable()
        if found is None:
            errors = check_invariants(candidate)
            written = self.modules == "always"
            if written:
                write_module(candidate, path)
            return CheckResult(
                passed=not errors,
                checker="builtin",
                checker_version=f"builtin-{VALIDATOR_VERSION}",
                errors=errors,
                module_path=str(path) if written else None,
            )
        write_module(candidate, path)
        return self._run_idris2(found, Path(workdir), relpath, path)

    def _executable(self) -> str | None:
        if self.executable is None:
            return None
        search = os.environ.get("PATH")
        found = self._found.get(search)
        if found is None and search in self._found:
            return None
        if found is None or not os.access(found, os.X_OK):  # new, or removed since
            found = self._found[search] = shutil.which(self.executable)
        return found

    def _run_idris2(self, executable: str, workdir: Path, relpath: Path, path: Path) -> CheckResult:
        version = self._version(executable)
        try:
            returncode, stdout, stderr = _run_bounded(
                [executable, "--check", relpath.as_posix()], workdir, self.timeout_s
            )
        except subprocess.TimeoutExpired:
            errors: tuple[str, ...] = (f"idris2 --check timed out after {self.timeout_s:g}s",)
            return CheckResult(False, "idris2", version, errors, str(path))
        except OSError as exc:
            errors = (f"idris2 could not be run: {exc}",)
            return CheckResult(False, "idris2", version, errors, str(path))
        output = [
            line.rstrip()[:MAX_ERROR_LINE_CHARS]
            for line in (stdout + "\n" + stderr).splitlines()
            if line.strip() and not _PROGRESS_LINE.match(line)
        ]
        # Exit status decides; an "Error" line also fails, in case an idris2 build exits 0.
        reported_error = any(line.lstrip().startswith("Error") for line in output)
        passed = returncode == 0 and not reported_error
        if passed:
            errors = ()
        elif output:
            errors = tuple(output[:MAX_ERROR_LINES])
        else:
            errors = (f"idris2 --check exited with status {returncode}",)
        return CheckResult(passed, "idris2", version, errors, str(path))

    def _version(self, executable: str) -> str:
        if executable not in self._versions:
            try:
                _, stdout, stderr = _run_bounded(
                    [executable, "--version"], None, min(self.timeout_s, 30.0)
                )
                first = (stdout.strip() or stderr.strip()).splitlines()
                self._versions[executable] = first[0] if first else "unknown"
            except (OSError, subprocess.SubprocessError):
                self._versions[executable] = "unknown"
        return self._versions[executable]


def _run_bounded(args: list[str], cwd: Path | None, timeout_s: float) -> tuple[int, str, str]:
    """Run ``args``; on timeout kill the whole process group it started, then re-raise.

    idris2 is often a launcher script around a Scheme process, so killing only the direct
    child could leave the checker running and holding the output pipes open.
    """
    with subprocess.Popen(
        args,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
        return process.returncode, stdout, stderr
