"""What a forgotten session leaves outside its own events: a kept upload holding it, the
outbox jobs of its items, and copies of its task titles in other sessions' events. After
`forget`, none is left, and what was not forgotten stays."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.cli.main import main
from axiom.entries.queries import list_entries
from axiom.graduation.idris import module_relpath
from axiom.ingest.importer import import_paths
from axiom.ingest.uploads import kept_uploads, settle_upload, store_upload
from axiom.outbox.projector import OutboxProjector
from axiom.outbox.writer import OutboxWriter
from axiom.store.db import Database
from axiom.store.projection import run_projector
from axiom.vectors.config import embedding_version_of
from axiom.vectors.lance_store import LanceStore
from tests.cli_support import run_cli
from tests.conflicts.support import Said, run_sessions
from tests.retrieval.conftest import HashEmbedder

GONE = "5ec0e700-1234-4abc-8def-000000000050"
KEPT = "d00dfeed-1234-4abc-8def-000000000044"
TOKEN = "qorvexplintaz"  # only in the forgotten session's unreadable last line


def _line(sid: str, uuid: str, minute: int, content: str, role: str = "user") -> str:
    return json.dumps(
        {
            "type": role,
            "sessionId": sid,
            "uuid": uuid,
            "timestamp": f"2026-11-25T10:{minute:02d}:00Z",
            "cwd": "/home/me/shop",
            "message": {"role": role, "content": content},
        }
    )


def _hits(directory: Path, needle: str) -> list[str]:
    return [
        str(p.relative_to(directory))
        for p in sorted(directory.rglob("*"))
        if p.is_file() and needle.encode() in p.read_bytes()
    ]


def _upload(data_dir: Path, db: Database, name: str, text: str) -> Path:
    path = store_upload(data_dir, name, [text.encode()], 10_000_000)
    report = import_paths(db, [path])
    assert report.issues  # the cut line
    assert not settle_upload(data_dir, path, len(report.issues))
    return path


def test_forget_deletes_the_kept_uploads_holding_the_session(db: Database, data_dir: Path) -> None:
    gone = "\n".join(
        [
            _line(GONE, "z0", 0, "The cache TTL is 300 seconds."),
            _line(GONE, "z1", 1, f"the {TOKEN} password is hunter2!! and more")[:-30],
        ]
    )
    other = "\n".join([_line(KEPT, "p0", 0, "OPS-77 is done."), '{"type": "user", "sess'])
    doomed = _upload(data_dir, db, "secret.jsonl", gone)
    kept = _upload(data_dir, db, "other.jsonl", other)
    assert _hits(data_dir, TOKEN) == [str(doomed.relative_to(data_dir))]

    done = run_cli(data_dir, "forget", "--session", GONE, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["uploads_removed"] == 1
    assert _hits(data_dir, TOKEN) == [] and _hits(data_dir, "TTL is 300") == []
    assert list(kept_uploads(data_dir)) == [kept.parent]
    assert kept.read_text().startswith(_line(KEPT, "p0", 0, "OPS-77 is done."))


FORGOTTEN = [
    _line(GONE, "m0", 0, "I'm fixing the login bug; the deploy is blocked by OPS-77."),
    _line(GONE, "m1", 1, "TODO: fix the login bug. The deploy is blocked by OPS-77.", "assistant"),
]
LATER = [
    _line(KEPT, "p0", 30, "OPS-77 is done."),
    _line(KEPT, "p1", 31, "The deploy is unblocked now."),
]


def _import_and_process(db: Database, tmp_path: Path) -> None:
    for name, lines in (("gone.jsonl", FORGOTTEN), ("later.jsonl", LATER)):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        assert main(["import", "--quiet", str(tmp_path / name)]) == 0
    assert main(["process", "--quiet"]) == 0


def _mentions(db: Database, session_id: str) -> list[dict]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT payload_json FROM events WHERE event_type = 'task_mentioned'"
            " AND session_id = ?",
            [session_id],
        ).fetchall()
    return [json.loads(p) for (p,) in rows]


def _candidate_titles(db: Database, session_id: str) -> list[str]:
    return [c["title"] for p in _mentions(db, session_id) for c in p.get("candidates", [])]


def test_forget_scrubs_task_titles_copied_into_kept_sessions(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    _import_and_process(db, tmp_path)
    assert "Fix the login bug" in _candidate_titles(db, KEPT)  # a copy in the kept session

    done = run_cli(data_dir, "forget", "--session", GONE, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["copies_scrubbed"] >= 1
    assert _hits(data_dir, "login bug") == []
    assert "Fix the login bug" not in _candidate_titles(db, KEPT)
    assert _mentions(db, KEPT)  # the kept session's mentions themselves stay


def _outbox(db: Database, version: str) -> dict[str, int]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT status, count(*) FROM vector_outbox WHERE embedding_version = ?"
            " GROUP BY status",
            [version],
        ).fetchall()
    return dict(rows)


def test_forget_removes_the_outbox_jobs_of_what_it_forgot(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    _import_and_process(db, tmp_path)
    embedder = HashEmbedder()
    store = LanceStore(data_dir / "lancedb", embedding_version_of(embedder), embedder.dim)
    writer = OutboxWriter(db, store, embedder, batch_size=32)
    with db.write() as conn:
        run_projector(conn, OutboxProjector(store.embedding_version))
    assert writer.drain().failed == 0
    version = store.embedding_version
    before = _outbox(db, version)
    assert list(before) == ["done"]
    with db.read() as conn:
        only_there = [
            f"task:{r[0]}"
            for r in conn.execute(
                "SELECT json_extract_string(payload_json, '$.task_id') FROM events"
                " WHERE event_type = 'task_created' AND session_id = ?",
                [GONE],
            ).fetchall()
        ]
    assert only_there and set(only_there) <= set(store.count_by_id())

    done = run_cli(data_dir, "forget", "--session", GONE, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    removed = json.loads(done.stdout)["outbox_jobs_removed"]
    assert removed >= 2  # its messages, entries and the tasks only it created
    after = _outbox(db, version)
    assert list(after) == ["done"] and 0 < after["done"] < before["done"]
    with db.read() as conn:
        left = conn.execute(
            "SELECT count(*) FROM vector_outbox WHERE starts_with(item_id, ?)", [GONE]
        ).fetchone()[0]
    assert left == 0
    assert not any(GONE in row_id for row_id in store.count_by_id())
    assert not set(only_there) & set(store.count_by_id())  # the titles' vectors went too

    reconciled = writer.reconcile()
    assert reconciled.lost_requeued == 0 and reconciled.verified
    drained = writer.drain()
    assert drained.failed == 0 and drained.missing == 0
    assert _outbox(db, version) == after


def _modules(data_dir: Path) -> set[str]:
    return {p.name for p in (data_dir / "idris").rglob("Entry_*") if p.is_file()}


def test_forget_deletes_the_validator_modules_of_the_forgotten_entries(
    db: Database, data_dir: Path
) -> None:
    """`<data dir>/idris/Axiom/Entry_<id>.idr` quotes the session id, spans and hashes."""
    run_sessions(
        db,
        data_dir / "idris",  # where `configured_pipeline` has the validator write
        {"gone": [Said("Deploy keys rotate every 30 days", "fact")], "kept": [Said("Use Go")]},
        modules="always",  # as with AXIOM_IDRIS_MODULES=always (or idris2 on PATH)
    )
    with db.read() as conn:
        ids = {e.session_id: e.entry_id for e in list_entries(conn)}
    kept_module = module_relpath(ids["kept"]).name
    # idris2's build output of a module, when idris2 is installed
    ttc = data_dir / "idris" / "build" / "ttc" / "2023" / module_relpath(ids["gone"])
    ttc.parent.mkdir(parents=True)
    ttc.with_suffix(".ttc").write_bytes(b"gone")
    assert module_relpath(ids["gone"]).name in _modules(data_dir)

    done = run_cli(data_dir, "forget", "--session", "gone", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["validator_modules_removed"] == 2  # the .idr and the .ttc
    assert _modules(data_dir) == {kept_module}
    assert _hits(data_dir / "idris", "gone") == []
