"""How many of a LoCoMo conversation's gold observations become memories (`eval extraction`).

LoCoMo files carry, per session, `session_N_observation`: `{speaker: [[text, evidence]...]}`,
the facts of the session as annotators wrote them, each naming the dialog turn(s) it comes
from ("D1:3", sometimes several). The product path is measured: each conversation is
imported into a fresh data dir and every session processed by the pipeline with the given
extractor (the offline rules by default; vectors off, no embedding needed); the entries
table is then read back and each entry's aligned evidence mapped to the dia_id of the turn
it quotes.

* recall: share of observations whose evidence turn some entry quotes;
* precision: share of entries quoting at least one observation's evidence turn;
* content recall / precision: the same pairing, but an observation only counts as found
  when an entry quoting one of its turns also shares at least `CONTENT_SHARE` of the
  observation's content words (in its title, content, subject, value or quote), and an
  entry only counts as right when it does so for some observation;
* the same per entry type (recall per type: observations some entry of that type finds);
* misses: the observations no entry quotes, with their text and turn (`--verbose`).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from axiom.config import AxiomConfig
from axiom.conflicts.detector import STOP_WORDS
from axiom.entries.queries import EntryRow, list_entries
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths
from axiom.ingest.locomo import conversation_of
from axiom.ingest.session_queries import list_messages
from axiom.pipeline.process import Extractor, Pipeline, process_session
from axiom.store.db import Database
from axiom.store.migrate import migrate

CONTENT_SHARE = 0.3
_OBSERVATION_KEY = re.compile(r"^session_(\d+)_observation$")
_DIA_ID = re.compile(r"D\s*(\d+)\s*:\s*(\d+)")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class ExtractionEvalError(RuntimeError):
    """A file that cannot be evaluated (unreadable, not LoCoMo, without observations)."""


@dataclass(frozen=True)
class Observation:
    session: int
    speaker: str
    text: str
    dia_ids: tuple[str, ...]


@dataclass
class Counts:
    """Found/total pairs for recall and precision, strict (turn) and by content."""

    observations: int = 0
    found: int = 0
    found_content: int = 0
    entries: int = 0
    right: int = 0
    right_content: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "observations": self.observations,
            "entries": self.entries,
            "recall": _share(self.found, self.observations),
            "precision": _share(self.right, self.entries),
            "content_recall": _share(self.found_content, self.observations),
            "content_precision": _share(self.right_content, self.entries),
        }


@dataclass
class ExtractionReport:
    files: list[str] = field(default_factory=list)
    overall: Counts = field(default_factory=Counts)
    by_type: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    misses: list[Observation] = field(default_factory=list)
    wrong: list[tuple[str, str, str]] = field(default_factory=list)  # (type, title, dia_id)

    def to_json(self, verbose: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "files": self.files,
            "overall": self.overall.to_json(),
            "by_type": {t: c.to_json() for t, c in sorted(self.by_type.items())},
        }
        if verbose:
            data["misses"] = [
                {"dia_ids": list(o.dia_ids), "speaker": o.speaker, "text": o.text}
                for o in self.misses
            ]
            data["unmatched_entries"] = [
                {"type": t, "title": title, "dia_id": d} for t, title, d in self.wrong
            ]
        return data

    def render(self, verbose: bool = False) -> str:
        o = self.overall.to_json()
        lines = [
            f"{len(self.files)} file(s), {o['observations']} observations, {o['entries']} entries",
            f"recall {o['recall']:.3f}  precision {o['precision']:.3f}"
            f"  (content: recall {o['content_recall']:.3f}"
            f"  precision {o['content_precision']:.3f})",
        ]
        for name, counts in sorted(self.by_type.items()):
            c = counts.to_json()
            lines.append(
                f"  {name:<10} {c['entries']:>5} entries  precision {c['precision']:.3f}"
                f"  recall {c['recall']:.3f}"
            )
        if verbose:
            lines.append(f"misses ({len(self.misses)}):")
            lines += [f"  {','.join(m.dia_ids)}  {m.speaker}: {m.text}" for m in self.misses]
            lines.append(f"entries quoting no observation's turn ({len(self.wrong)}):")
            lines += [f"  {d}  [{t}] {title}" for t, title, d in self.wrong]
        return "\n".join(lines)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def content_words(text: str) -> set[str]:
    """Lower-cased words of three or more letters (Korean: two), stop words removed."""
    words = {w.casefold() for w in _WORD.findall(text)}
    return {w for w in words if w not in STOP_WORDS and (len(w) >= 3 or not w.isascii())}


def _dia_ids(raw: Any) -> tuple[str, ...]:
    items = raw if isinstance(raw, list) else [raw]
    return tuple(f"D{int(s)}:{int(t)}" for item in items for s, t in _DIA_ID.findall(str(item)))


def observations_of(conversation: dict[str, Any]) -> list[Observation]:
    """Every observation of a LoCoMo conversation that names at least one evidence turn."""
    out: list[Observation] = []
    for key, value in conversation.items():
        match = _OBSERVATION_KEY.match(key)
        if not match or not isinstance(value, dict):
            continue
        for speaker, items in value.items():
            for item in items if isinstance(items, list) else []:
                if isinstance(item, list | tuple) and len(item) >= 2:
                    dia_ids = _dia_ids(item[1])
                    if dia_ids:
                        out.append(Observation(int(match.group(1)), speaker, str(item[0]), dia_ids))
    return sorted(out, key=lambda o: (o.session, o.dia_ids))


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        raw = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ExtractionEvalError(f"{path}: cannot read LoCoMo JSON: {exc}") from exc
    items = raw if isinstance(raw, list) else [raw]
    conversations = [conversation_of(item) for item in items]
    if not items or any(c is None for c in conversations):
        raise ExtractionEvalError(f"{path}: not a LoCoMo conversation")
    return [c for c in conversations if c is not None]


@dataclass(frozen=True)
class QuotedEntry:
    """An entry with the dia_ids of the turns its evidence quotes and its words."""

    entry: EntryRow
    dia_ids: frozenset[str]
    words: set[str]


def extract_conversation(
    conversation: dict[str, Any], workdir: Path, extractor: Extractor | None = None
) -> list[QuotedEntry]:
    """Import one conversation into a fresh data dir under `workdir`, process every
    session, and return its entries with the turns they quote."""
    source = workdir / "conversation.json"
    source.write_text(json.dumps(conversation), encoding="utf-8")
    db = Database(AxiomConfig(data_dir=workdir / "data").duckdb_path)
    migrate(db)
    report = import_paths(db, [source], fmt="locomo")
    pipeline = Pipeline(extractor=extractor or RuleExtractor(), workdir=workdir / "idris")
    for sid in report.session_ids:
        process_session(db, sid, pipeline)
    with db.read() as conn:
        dia = {
            (sid, m.index): str(m.meta.get("dia_id", ""))
            for sid in report.session_ids
            for m in list_messages(conn, sid)
        }
        entries = list_entries(conn)
    out = []
    for entry in entries:
        quoted = {
            _canonical(dia.get((ev.get("session_id"), ev.get("message_index")), ""))
            for ev in entry.evidence
        }
        text = " ".join(
            [entry.title, entry.content, entry.subject or "", entry.value or ""]
            + [str(ev.get("quote") or "") for ev in entry.evidence]
        )
        out.append(QuotedEntry(entry, frozenset(quoted - {""}), content_words(text)))
    return out


def _canonical(dia_id: str) -> str:
    ids = _dia_ids(dia_id)
    return ids[0] if ids else ""


def score(
    observations: Sequence[Observation], entries: Sequence[QuotedEntry], report: ExtractionReport
) -> None:
    """Add one conversation's observations and entries to `report`. Per type, recall is
    the share of all observations that an entry of that type finds."""
    by_turn: dict[str, list[QuotedEntry]] = defaultdict(list)
    for q in entries:
        for dia_id in q.dia_ids:
            by_turn[dia_id].append(q)
    kinds = {q.entry.entry_type for q in entries} | set(report.by_type)
    right: set[str] = set()
    right_content: set[str] = set()
    for obs in observations:
        quoting = [q for d in obs.dia_ids for q in by_turn.get(d, [])]
        words = content_words(obs.text)
        agreeing = [q for q in quoting if _agrees(words, q.words)]
        _count(report.overall, quoting, agreeing)
        for kind in kinds:
            _count(
                report.by_type[kind],
                [q for q in quoting if q.entry.entry_type == kind],
                [q for q in agreeing if q.entry.entry_type == kind],
            )
        right.update(q.entry.entry_id for q in quoting)
        right_content.update(q.entry.entry_id for q in agreeing)
        if not quoting:
            report.misses.append(obs)
    for q in entries:
        eid, kind = q.entry.entry_id, q.entry.entry_type
        for counts in (report.overall, report.by_type[kind]):
            counts.entries += 1
            counts.right += eid in right
            counts.right_content += eid in right_content
        if eid not in right:
            report.wrong.append((kind, q.entry.title, ",".join(sorted(q.dia_ids))))


def _count(counts: Counts, quoting: list[QuotedEntry], agreeing: list[QuotedEntry]) -> None:
    counts.observations += 1
    counts.found += bool(quoting)
    counts.found_content += bool(agreeing)


def _agrees(observation_words: set[str], entry_words: set[str]) -> bool:
    if not observation_words:
        return False
    return len(observation_words & entry_words) / len(observation_words) >= CONTENT_SHARE


def evaluate_files(
    paths: Iterable[Path],
    extractor: Extractor | None = None,
    on_conversation: Callable[[str, int], None] | None = None,
) -> ExtractionReport:
    """Recall and precision of extraction against the observations of every conversation
    in `paths` (see the module docstring)."""
    report = ExtractionReport()
    for path in paths:
        report.files.append(str(path))
        for number, conversation in enumerate(_load(path)):
            observations = observations_of(conversation)
            if not observations:
                raise ExtractionEvalError(f"{path}: no session_N_observation with evidence")
            with tempfile.TemporaryDirectory(prefix="axiom-eval-extract-") as tmp:
                entries = extract_conversation(conversation, Path(tmp), extractor)
            score(observations, entries, report)
            if on_conversation:
                on_conversation(f"{path}[{number}]", len(entries))
    return report
