"""`python -m axiom.hooks.run <event>`: the command Claude Code runs for each hook.

Reads the hook JSON on stdin, hands it over (`axiom.agent.handoff`: POST to the service,
else spool), prints the context block (if any) and exits 0: a memory layer must never break the
agent's session. Stdin that is not a JSON object is refused: the reason on stderr and exit
1, Claude Code's non-blocking error (the session goes on; the user sees why).

Speed: the module imports only `axiom.agent.handoff` (standard library, settings, spool).
Only when the service is down and a SessionStart / UserPromptSubmit wants context from the
store does the `__main__` block below import `axiom.agent.hook` (DuckDB, full text). That
import sits at module level on purpose, not in a function (our own code is never imported
inside a function), and it only runs on that path.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from axiom.agent.handoff import EVENTS, Handoff, hand_over
from axiom.settings import Settings


def main(argv: Sequence[str] | None = None, stdin_text: str | None = None) -> Handoff | None:
    """Hand the payload over and print the service's context; None on a usage error or
    a failure (reported on stderr: the hook still exits 0)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in EVENTS:
        print(f"usage: python -m axiom.hooks.run {{{','.join(EVENTS)}}}", file=sys.stderr)
        return None
    try:
        settings = Settings.from_env()
        text = sys.stdin.read() if stdin_text is None else stdin_text
        handoff = hand_over(args[0], text, settings)
    except Exception as exc:  # noqa: BLE001 - report, never fail the agent's hook
        print(f"axiom hook {args[0]}: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return None
    if handoff.malformed:
        print(f"axiom hook {args[0]}: malformed payload: {handoff.malformed}", file=sys.stderr)
    if handoff.refused:
        print(
            f"axiom hook {args[0]}: the service refused the payload ({handoff.refused})",
            file=sys.stderr,
        )
    if handoff.context:
        print(handoff.context)
    return handoff


MALFORMED_EXIT = 1  # Claude Code: exit 2 blocks the agent; any other non-zero code does not

# DuckDB probes pandas and numpy (optional for it) for every bound query parameter, and
# importing them costs more than the whole hook may take. This short-lived process binds
# only str/int/None/datetime and never needs either, so it marks them absent.
OPTIONAL_HEAVY = ("pandas", "numpy", "pyarrow")


def without_optional_heavy() -> None:
    for name in OPTIONAL_HEAVY:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


if __name__ == "__main__":
    HANDOFF = main()
    if HANDOFF is not None and HANDOFF.wants_local_context:
        # Service down, a context event, a store on disk: the full-text read needs DuckDB.
        without_optional_heavy()
        from axiom.agent.hook import context_for

        LOCAL = context_for(HANDOFF, Settings.from_env())
        if LOCAL:
            print(LOCAL)
    sys.exit(MALFORMED_EXIT if HANDOFF is not None and HANDOFF.malformed else 0)
