"""How many cores the writer embeds on: one per idle core for `axiom outbox drain` (the user
waits for it), one core less under `axiom up`'s worker, `AXIOM_EMBED_THREADS` over both; torch
e5 runs that many batches side by side, one torch thread each, other embedders that many
torch threads."""

from __future__ import annotations

import os

import pytest
import torch

from axiom.cli.main import main
from axiom.ingest.importer import ingest_transcripts
from axiom.outbox import service
from axiom.outbox.service import (
    apply_embed_threads,
    configured_embed_threads,
    configured_writer,
    idle_cores,
    usable_cores,
)
from axiom.projections import project_all
from axiom.store.db import Database
from axiom.vectors.config import shared_embedder
from axiom.vectors.embedder import BatchParallelEmbedder
from tests.outbox.support import by_status, session

CORES = os.cpu_count() or 2


def busy(monkeypatch: pytest.MonkeyPatch, cores: float) -> None:
    """This machine's load moves with whatever else runs on it: the tests fix the reading."""
    monkeypatch.setattr(service, "busy_cores", lambda: cores)


@pytest.mark.parametrize("load", [0.0, 0.4, 0.9, 1.5, 9.5])
def test_a_foreground_drain_takes_the_idle_cores_the_worker_leaves_one(
    monkeypatch: pytest.MonkeyPatch, load: float
) -> None:
    monkeypatch.delenv("AXIOM_EMBED_THREADS", raising=False)
    busy(monkeypatch, load)

    assert configured_embed_threads(foreground=True) == idle_cores(CORES, load)
    assert configured_embed_threads() == max(1, CORES - 1)


@pytest.mark.parametrize(
    ("cores", "load", "idle"),
    [
        (2, 0.0, 2),
        (2, 0.4, 2),
        (2, 0.6, 1),
        (2, 1.0, 1),
        (2, 1.9, 1),
        (2, 9.5, 1),
        (8, 2.5, 5),
        (1, 0.0, 1),
    ],
)
def test_idle_cores_leave_out_the_busy_ones(cores: int, load: float, idle: int) -> None:
    assert idle_cores(cores, load) == idle


def test_the_setting_overrides_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AXIOM_EMBED_THREADS", "3")

    assert configured_embed_threads(foreground=True) == 3
    assert configured_embed_threads() == 3


def test_cli_drain_embeds_with_one_thread_per_idle_core(
    db: Database, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AXIOM_EMBED_THREADS", raising=False)
    ingest_transcripts(db, [session("s1", "one", "two")])
    torch.set_num_threads(1)
    busy(monkeypatch, 0.0)  # a quiet machine: every core idle

    assert main(["outbox", "drain", "--json"]) == 0

    assert by_status(db) == {"done": 2}
    assert torch.get_num_threads() == CORES
    capsys.readouterr()


def test_worker_writer_leaves_a_core(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AXIOM_EMBED_THREADS", raising=False)
    torch.set_num_threads(CORES)

    configured_writer(db)

    assert torch.get_num_threads() == max(1, CORES - 1)


def test_threads_count_the_cores_this_process_may_use() -> None:
    """In a container the host's core count is not what the process gets."""
    assert usable_cores() == len(os.sched_getaffinity(0))


def test_torch_e5_runs_its_batches_side_by_side_one_torch_thread_each(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's cores become e5 batches run at once, not intra-op threads that wait for
    each other at every op (that the vectors stay the same: tests/vectors/test_e5_torch.py)."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    monkeypatch.setenv("AXIOM_EMBED_THREADS", "2")
    ingest_transcripts(db, [session("s1", *(f"turn {i} about the deploy" for i in range(40)))])
    project_all(db)  # queues the jobs of the e5 version
    torch.set_num_threads(2)
    writer = configured_writer(db, batch_size=64)
    embedder = writer.embedder
    assert isinstance(embedder, BatchParallelEmbedder)
    try:
        assert embedder.workers == 2
        assert torch.get_num_threads() == 1
        report = writer.drain()
        assert report.done == 40 and not report.failed
    finally:
        embedder.workers = 1  # the embedder is shared by the test session


def test_an_embedder_without_workers_gets_intra_op_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AXIOM_EMBED_THREADS", "2")
    apply_embed_threads(2, shared_embedder("minilm"))
    assert torch.get_num_threads() == 2
    assert not isinstance(shared_embedder("minilm"), BatchParallelEmbedder)
