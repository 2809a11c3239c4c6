"""Register Axiom's hooks and slash commands in a Claude Code settings file, and take them out.

Claude Code reads `hooks` from its settings (`~/.claude/settings.json`):

    {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "...", "timeout": 5}]}],
               "PostToolUse": [{"matcher": "*", "hooks": [...]}]}}

`install` adds one matcher group per event (SessionStart, UserPromptSubmit, PostToolUse,
Stop, SessionEnd) running `python -m axiom.hooks.run <event>`, with the interpreter and
the data directory of the installing shell written into the command. Axiom's hooks are
recognised by `MARKER` in their command, so installing twice changes nothing and
`uninstall` removes only them: every other setting, group and hook keeps its value (the
file is rewritten as indented JSON; key order is kept). Groups and event lists left empty
by removing Axiom's hooks are dropped.

Slash commands are Markdown files in the `commands/` folder next to the settings file;
Axiom's carry `COMMAND_MARKER` and only those are removed.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from axiom.settings import DEFAULT_PORT

EVENT_COMMANDS: dict[str, str] = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "PostToolUse": "post-tool-use",
    "Stop": "stop",
    "SessionEnd": "session-end",
}
MATCHER_EVENTS = frozenset({"PostToolUse"})
MARKER = "-m axiom.hooks.run "
HOOK_TIMEOUT = 5  # seconds Claude Code allows a hook (ours finish in well under one)
COMMAND_MARKER = "<!-- installed by axiom hooks install -->"


class SettingsFileError(ValueError):
    """The settings file is not a JSON object Axiom can edit safely."""


def default_settings_path() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "settings.json"


def environment(data_dir: Path, port: int | None = None) -> str:
    """The variables a hook needs to find this installation: Claude Code runs hooks with
    its own environment, not the installing shell's. The port only when it is not the
    default; never the token (the hook reads it from the data directory)."""
    words = [f"AXIOM_DATA_DIR={shlex.quote(str(data_dir))}"]
    if port is not None and port != DEFAULT_PORT:
        words.append(f"AXIOM_PORT={int(port)}")
    return " ".join(words)


def hook_command(
    event_name: str, data_dir: Path, python: str = sys.executable, port: int | None = None
) -> str:
    name = EVENT_COMMANDS[event_name]
    return f"{environment(data_dir, port)} {shlex.quote(python)} {MARKER}{name}"


def is_axiom_hook(hook: Any) -> bool:
    return isinstance(hook, dict) and MARKER in str(hook.get("command", ""))


def load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise SettingsFileError(f"{path} is not valid JSON ({exc}); fix it first") from exc
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise SettingsFileError(f"{path}: expected a JSON object with an object `hooks`")
    return data


def save(path: Path, data: dict[str, Any]) -> None:
    """Atomic rewrite: a crash leaves the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    os.replace(tmp, path)


def without_axiom(groups: list[Any]) -> list[Any]:
    """The event's matcher groups with Axiom's hooks taken out (emptied groups dropped)."""
    kept = []
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list) or not any(is_axiom_hook(h) for h in hooks):
            kept.append(group)
            continue
        rest = [h for h in hooks if not is_axiom_hook(h)]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept


def with_axiom(
    data: dict[str, Any], data_dir: Path, python: str, port: int | None = None
) -> dict[str, Any]:
    hooks = dict(data.get("hooks", {}))
    for event in EVENT_COMMANDS:
        group: dict[str, Any] = {"matcher": "*"} if event in MATCHER_EVENTS else {}
        command = {"type": "command", "command": hook_command(event, data_dir, python, port)}
        group["hooks"] = [{**command, "timeout": HOOK_TIMEOUT}]
        hooks[event] = [*without_axiom(list(hooks.get(event, []))), group]
    return {**data, "hooks": hooks}


def strip_axiom(data: dict[str, Any]) -> dict[str, Any]:
    if "hooks" not in data:
        return data
    hooks = {}
    for event, groups in data["hooks"].items():
        kept = without_axiom(groups) if isinstance(groups, list) else groups
        if kept or not isinstance(groups, list) or groups == []:
            hooks[event] = kept
    out = {**data, "hooks": hooks}
    if not hooks and data["hooks"]:
        del out["hooks"]
    return out


def installed_events(data: dict[str, Any]) -> dict[str, list[str]]:
    """event -> Axiom hook commands registered for it."""
    found: dict[str, list[str]] = {}
    for event, groups in data.get("hooks", {}).items():
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_axiom_hook(hook):
                    found.setdefault(event, []).append(hook["command"])
    return found


# --- slash commands ---------------------------------------------------------------------------


def slash_commands(data_dir: Path, python: str, port: int | None = None) -> dict[str, str]:
    """file name -> content of each Axiom slash command."""
    cli = f"{environment(data_dir, port)} {shlex.quote(python)} -m axiom"
    specs = {
        "memory-search": (
            "Search Axiom's memory of past sessions",
            "<what to look for>",
            f'{cli} search "$ARGUMENTS"',
            "Answer from these hits and cite the `mem:` ids you rely on.",
        ),
        "memory-forget": (
            "Forget a memory in Axiom (entry id or mem: citation)",
            "<entry id or mem:citation>",
            f'{cli} forget --entry "$ARGUMENTS" --yes',  # the person named it: no second ask
            "Report what Axiom forgot.",
        ),
        "memory-stats": (
            "What Axiom holds: sessions, messages, entries, outbox",
            "",
            f"{cli} stats",
            "Summarise these numbers in two lines.",
        ),
    }
    out = {}
    for name, (description, hint, command, ask) in specs.items():
        head = f"---\ndescription: {description}\nallowed-tools: Bash({command.split(' $')[0]}:*)\n"
        if hint:
            head += f"argument-hint: {hint}\n"
        if name in PERSON_ONLY:
            head += "disable-model-invocation: true\n"
        out[f"{name}.md"] = f"{head}---\n{COMMAND_MARKER}\n!`{command}`\n\n{ask}\n"
    return out


# Commands only a person may run: Claude Code lets the model call any command with a
# description, and forgetting with `--yes` must not follow from text the model was shown.
PERSON_ONLY = frozenset({"memory-forget"})


def commands_dir(settings_path: Path) -> Path:
    return settings_path.parent / "commands"


# --- the three verbs --------------------------------------------------------------------------


@dataclass
class Change:
    settings_path: Path
    changed: bool
    commands: list[Path] = field(default_factory=list)


def install(
    settings_path: Path, data_dir: Path, python: str = sys.executable, port: int | None = None
) -> Change:
    """Register every hook and write the slash commands (idempotent); `port`: the web's,
    written into the commands when it is not the default."""
    data = load(settings_path)
    updated = with_axiom(data, data_dir, python, port)
    changed = updated != data or not settings_path.exists()
    if changed:
        save(settings_path, updated)
    folder = commands_dir(settings_path)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in slash_commands(data_dir, python, port).items():
        target = folder / name
        if target.exists() and COMMAND_MARKER not in target.read_text(encoding="utf-8"):
            continue  # somebody else's command of the same name: leave it
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            changed = True
        written.append(target)
    return Change(settings_path, changed, written)


def uninstall(settings_path: Path) -> Change:
    """Remove Axiom's hooks and slash commands; nothing else."""
    changed = False
    if settings_path.exists():
        data = load(settings_path)
        stripped = strip_axiom(data)
        if stripped != data:
            save(settings_path, stripped)
            changed = True
    removed = []
    folder = commands_dir(settings_path)
    for name in slash_commands(Path("."), sys.executable):
        target = folder / name
        if target.exists() and COMMAND_MARKER in target.read_text(encoding="utf-8"):
            target.unlink()
            removed.append(target)
            changed = True
    return Change(settings_path, changed, removed)
