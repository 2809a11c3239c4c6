"""`axiom.forking.SharedMap` when the child cannot help: a fork that fails, a child that dies
holding the claims lock. The parent then does every item, without waiting for good."""

from __future__ import annotations

import logging
import multiprocessing.context
import os
import time

import pytest

from axiom import forking
from axiom.forking import SharedMap


def _square(n: int) -> int:
    return n * n


class DiesHoldingTheLock(SharedMap[int, int]):
    def _front(self) -> None:  # in the child
        self._ends.get_lock().acquire()
        os._exit(3)


def test_a_child_dying_with_the_claims_lock_leaves_every_item_to_the_parent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(forking, "LOCK_CHECK_S", 0.05)
    shared = DiesHoldingTheLock(_square, list(range(50)))
    shared._child.join(timeout=30)  # it has taken the lock and died
    began = time.monotonic()
    try:
        assert shared.results() == [n * n for n in range(50)]
    finally:
        shared.close()
    assert time.monotonic() - began < 10  # one wait for the lock, not one per item


def test_a_fork_that_fails_leaves_every_item_to_the_parent(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def no_fork(self: multiprocessing.process.BaseProcess) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", no_fork)
    with caplog.at_level(logging.WARNING, logger="axiom.forking"):
        shared = SharedMap(_square, list(range(20)))
    try:
        assert shared.results() == [n * n for n in range(20)]
    finally:
        shared.close()
        shared.close()  # twice: nothing left to stop
    assert any("could not fork" in r.getMessage() for r in caplog.records)
