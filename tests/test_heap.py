"""The collector's batch schedule: on inside the block, as before after it, whatever
happens inside, nested or not."""

from __future__ import annotations

import gc
import threading

import pytest

from axiom.heap import BATCH_THRESHOLDS, batch_work


@pytest.fixture(autouse=True)
def _own_thresholds():
    """Each test starts from thresholds of its own, so a restore is told from a default."""
    before = gc.get_threshold()
    gc.set_threshold(701, 11, 12)
    yield
    gc.set_threshold(*before)


def test_batch_schedule_inside_the_block_and_restored_after() -> None:
    with batch_work():
        assert gc.get_threshold() == BATCH_THRESHOLDS
        assert gc.get_freeze_count() > 0  # what was alive when it started is frozen
    assert gc.get_threshold() == (701, 11, 12)
    assert gc.get_freeze_count() == 0


def test_nested_blocks_restore_once_the_outermost_closes() -> None:
    with batch_work():
        with batch_work():
            pass
        assert gc.get_threshold() == BATCH_THRESHOLDS  # the outer block still runs
    assert gc.get_threshold() == (701, 11, 12)
    assert gc.get_freeze_count() == 0


def test_an_error_inside_restores_the_schedule() -> None:
    with pytest.raises(KeyError), batch_work():
        raise KeyError("boom")
    assert gc.get_threshold() == (701, 11, 12)
    assert gc.get_freeze_count() == 0


def test_as_a_decorator_each_call_is_a_block() -> None:
    @batch_work()
    def inside() -> tuple[int, int, int]:
        return gc.get_threshold()

    assert inside() == BATCH_THRESHOLDS
    assert inside() == BATCH_THRESHOLDS  # a second call works too (a fresh block)
    assert gc.get_threshold() == (701, 11, 12)


def test_blocks_on_two_threads_restore_when_the_last_closes() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with batch_work():
            entered.set()
            release.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    assert entered.wait(5)
    with batch_work():
        pass
    assert gc.get_threshold() == BATCH_THRESHOLDS  # the other thread's block is open
    release.set()
    thread.join(5)
    assert not thread.is_alive()
    assert gc.get_threshold() == (701, 11, 12)
    assert gc.get_freeze_count() == 0


def test_objects_frozen_before_the_block_stay_frozen_after_it() -> None:
    """A server that froze its objects before forking workers keeps them frozen."""
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with batch_work():
            assert gc.get_threshold() == BATCH_THRESHOLDS
        assert gc.get_freeze_count() > frozen // 2  # not unfrozen (a few died since)
        assert gc.get_threshold() == (701, 11, 12)
    finally:
        gc.unfreeze()


def test_the_collector_still_runs_on_its_own_inside() -> None:
    """Less often, not never: a batch's cyclic garbage is still freed as it goes."""

    class Node:
        def __init__(self) -> None:
            self.me = self

    with batch_work():
        young, middle = (gc.get_stats()[n]["collections"] for n in (0, 1))
        for _ in range(BATCH_THRESHOLDS[0] * (BATCH_THRESHOLDS[1] + 3)):
            Node()
        assert gc.get_stats()[0]["collections"] > young
        assert gc.get_stats()[1]["collections"] > middle
