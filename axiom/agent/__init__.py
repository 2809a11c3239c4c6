"""Where the agent works: Claude Code hook handling, the spool, context injection.

Kept import-light: `axiom.hooks.run` loads `axiom.agent.handoff` on every hook call and must
finish in well under a second, so nothing here imports torch, LanceDB or Django at the top.
"""
