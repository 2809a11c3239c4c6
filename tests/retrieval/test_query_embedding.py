"""The query embedder's process setup: e5's OpenMP threads (torch's) wait passively
(spinning threads made one query embedding take seconds on a busy machine), unless the
person running Axiom chose otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

SHOW = "import os, axiom.retrieval.search; print(os.environ['OMP_WAIT_POLICY'])"


def wait_policy(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SHOW], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_searching_processes_wait_passively() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert wait_policy(env) == "PASSIVE"


def test_a_policy_set_by_the_user_is_kept() -> None:
    assert wait_policy({**os.environ, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"


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
