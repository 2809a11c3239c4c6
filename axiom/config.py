"""Runtime settings for the core, read from environment variables with local defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def _env_path(name: str, default: Path) -> Path:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else default


@dataclass(frozen=True)
class AxiomConfig:
    """Where Axiom keeps its data. Everything lives under one `data_dir`."""

    data_dir: Path

    @property
    def duckdb_path(self) -> Path:
        return self.data_dir / "axiom.duckdb"

    @property
    def lancedb_dir(self) -> Path:
        return self.data_dir / "lancedb"

    @classmethod
    def from_env(cls) -> AxiomConfig:
        return cls(data_dir=_env_path("AXIOM_DATA_DIR", Path("data")).resolve())
