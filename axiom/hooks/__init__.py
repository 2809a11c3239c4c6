"""Claude Code integration: install/uninstall/status of hooks and slash commands, and the
fast hook entry point (`python -m axiom.hooks.run <event>`). Import-light on purpose."""
