"""Drain the spool: import the transcripts spooled hook payloads name, then drop them.

Called by `up`, `import` and `process` before their own work, and by the worker's
`axiom.import_spooled_hooks` (queued by the service for each hook it hands over, and by
beat every minute), which keeps the payloads until their sessions went through the
pipeline (`delete=False`, then `forget_payloads`). A payload whose transcript
is gone or unreadable, or lies outside `AXIOM_IMPORT_ROOTS` (the rule the service applies
to the same payload), is moved to `spool/failed/` with the reason (never silently lost);
the store dedupes, so draining a payload twice stores its session once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from axiom.agent import spool
from axiom.ingest.import_roots import PathOutsideImportRoots, confine_to_import_roots
from axiom.ingest.importer import ImportReport, import_paths
from axiom.store.db import Database


@dataclass
class DrainReport:
    payloads: int = 0
    transcripts: int = 0
    session_ids: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    # One line per failed transcript: how many payloads went to spool/failed/, and why.
    failures: list[str] = field(default_factory=list)
    imported_files: list[Path] = field(default_factory=list)  # payloads stored, not deleted

    def summary(self) -> str:
        head = (
            f"spool: {self.payloads} payload(s), {self.transcripts} transcript(s),"
            f" {len(self.session_ids)} new session(s), {len(self.failed)} failed"
        )
        return "\n".join([head, *self.failures])


def transcript_of(record: dict) -> Path | None:
    raw = record.get("payload", {}).get("transcript_path")
    return Path(raw).expanduser() if isinstance(raw, str) and raw else None


def drain(db: Database, data_dir: Path, delete: bool = True) -> DrainReport:
    """Import every spooled payload's transcript once, then delete the payload files (or,
    with `delete=False`, list them in `imported_files` for `forget_payloads` once the
    caller's work on their sessions is done)."""
    files = spool.pending(data_dir)
    report = DrainReport(payloads=len(files))
    by_transcript: dict[Path, list[Path]] = {}
    for path in files:
        record = spool.read(path)
        transcript = transcript_of(record) if record else None
        if transcript is None:
            # A payload without a transcript (a prompt) carries nothing to store.
            path.unlink(missing_ok=True)
            continue
        by_transcript.setdefault(transcript, []).append(path)
    for transcript, payload_files in by_transcript.items():
        try:
            transcript = confine_to_import_roots(transcript)
        except PathOutsideImportRoots as exc:
            _fail(data_dir, payload_files, str(exc), report)
            continue
        if not transcript.is_file():
            _fail(data_dir, payload_files, f"transcript not found: {transcript}", report)
            continue
        result: ImportReport = import_paths(db, [transcript])
        if not result.imported_anything:
            _fail(data_dir, payload_files, "; ".join(map(str, result.issues))[:500], report)
            continue
        report.transcripts += 1
        report.session_ids.extend(result.session_ids)
        report.imported_files.extend(payload_files)
    if delete:
        forget_payloads(report)
    return report


def forget_payloads(report: DrainReport) -> None:
    """Delete the payload files whose transcripts `report` imported."""
    for path in report.imported_files:
        path.unlink(missing_ok=True)


def _fail(data_dir: Path, files: list[Path], reason: str, report: DrainReport) -> None:
    failed = spool.spool_dir(data_dir) / "failed"
    failed.mkdir(parents=True, exist_ok=True)
    moved = 0
    for path in files:
        record = spool.read(path)
        if record is None:  # a concurrent drain failed it first and kept the record
            continue
        record["failure"] = reason
        (failed / path.name).write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        path.unlink(missing_ok=True)
        report.failed.append(path.name)
        moved += 1
    if moved:
        report.failures.append(f"spool: {moved} payload(s) moved to {failed}/: {reason}")
