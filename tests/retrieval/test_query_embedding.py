"""The query embedder's process setup: e5's OpenMP threads (torch's) wait passively
(spinning threads made one query embedding take seconds on a busy machine) and there is one
of them (the full-text query runs beside the embedding), unless the person running Axiom
chose otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

SHOW = "import os, axiom.retrieval.search; print(os.environ['{}'])"


def wait_policy(env: dict[str, str], variable: str = "OMP_WAIT_POLICY") -> str:
    show = SHOW.format(variable)
    done = subprocess.run(
        [sys.executable, "-c", show], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_searching_processes_wait_passively() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert wait_policy(env) == "PASSIVE"


def test_a_policy_set_by_the_user_is_kept() -> None:
    assert wait_policy({**os.environ, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"


def test_searching_processes_embed_with_one_thread_unless_told() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    assert wait_policy(env, "OMP_NUM_THREADS") == "1"
    assert wait_policy({**env, "OMP_NUM_THREADS": "2"}, "OMP_NUM_THREADS") == "2"


def test_torch_is_not_loaded_before_the_policy_is_set() -> None:
    """OpenMP reads the policy once, when torch loads: searching must not load it early."""
    show = "import sys, axiom.retrieval.search; print('torch' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", show],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "False"
