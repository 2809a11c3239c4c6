"""`python -m axiom.hooks.run <event>`: the command Claude Code runs for each hook.

Reads the hook JSON on stdin, hands it to `axiom.agent.hook.run_hook`, prints the context
block (if any) and exits 0 — always: a memory layer must never break the agent's session.
Imports only what the hook path needs (no torch, LanceDB or Django).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from axiom.agent.hook import EVENTS, run_hook


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in EVENTS:
        print(f"usage: python -m axiom.hooks.run {{{','.join(EVENTS)}}}", file=sys.stderr)
        return 0
    try:
        out = run_hook(args[0], sys.stdin.read())
    except Exception as exc:  # noqa: BLE001 - report, never fail the agent's hook
        print(f"axiom hook {args[0]}: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 0
    if out:
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
