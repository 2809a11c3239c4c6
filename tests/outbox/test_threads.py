"""How many torch threads the writer embeds with: one per core for `axiom outbox drain` (the
user waits for it), one core less under `axiom up`'s worker, `AXIOM_EMBED_THREADS` over both."""

from __future__ import annotations

import os

import pytest
import torch

from axiom.cli.main import main
from axiom.ingest.importer import ingest_transcripts
from axiom.outbox.service import configured_embed_threads, configured_writer
from axiom.store.db import Database
from tests.outbox.support import by_status, session

CORES = os.cpu_count() or 2


def test_foreground_drain_uses_every_core_the_worker_leaves_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AXIOM_EMBED_THREADS", raising=False)

    assert configured_embed_threads(foreground=True) == CORES
    assert configured_embed_threads() == max(1, CORES - 1)


def test_the_setting_overrides_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AXIOM_EMBED_THREADS", "3")

    assert configured_embed_threads(foreground=True) == 3
    assert configured_embed_threads() == 3


def test_cli_drain_embeds_with_one_thread_per_core(
    db: Database, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AXIOM_EMBED_THREADS", raising=False)
    ingest_transcripts(db, [session("s1", "one", "two")])
    torch.set_num_threads(1)

    assert main(["outbox", "drain", "--json"]) == 0

    assert by_status(db) == {"done": 2}
    assert torch.get_num_threads() == CORES
    capsys.readouterr()


def test_worker_writer_leaves_a_core(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AXIOM_EMBED_THREADS", raising=False)
    torch.set_num_threads(CORES)

    configured_writer(db)

    assert torch.get_num_threads() == max(1, CORES - 1)
