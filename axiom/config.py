"""Where Axiom keeps its data: the paths under one data directory (`AXIOM_DATA_DIR`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from axiom.settings import Settings


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

    @property
    def idris_dir(self) -> Path:
        """The validator's modules, one per candidate it checks with idris2 (or with
        `AXIOM_IDRIS_MODULES=always`): `axiom.graduation.idris`."""
        return self.data_dir / "idris"

    @property
    def spool_dir(self) -> Path:
        """Hook payloads waiting for the next `up`, `import` or `process` (`axiom.agent`)."""
        return self.data_dir / "spool"

    @property
    def forget_pending_dir(self) -> Path:
        """Markers of `forget` runs committed but not finished (`axiom.forgetting`)."""
        return self.data_dir / "forget-pending"

    @classmethod
    def from_settings(cls, settings: Settings) -> AxiomConfig:
        return cls(data_dir=settings.data_dir)

    @classmethod
    def from_env(cls) -> AxiomConfig:
        """The data paths of `Settings.from_env()` (raises `SettingsError` on a bad value)."""
        return cls.from_settings(Settings.from_env())
