"""`hooks install/uninstall` edit only Axiom's part of a Claude Code settings file."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from axiom.hooks.install import (
    COMMAND_MARKER,
    EVENT_COMMANDS,
    install,
    installed_events,
    load,
    uninstall,
)
from axiom.settings import DEFAULT_PORT
from tests.agent.support import SAMPLE, child_env, run_axiom, run_shell

FOREIGN = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier -w"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 3}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def _settings(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(FOREIGN, indent=4), encoding="utf-8")
    return path


def test_install_registers_every_event_and_keeps_foreign_settings(tmp_path: Path) -> None:
    path = _settings(tmp_path)
    install(path, tmp_path / "data")
    data = load(path)
    assert set(installed_events(data)) == set(EVENT_COMMANDS)
    assert {k: v for k, v in data.items() if k != "hooks"} == {
        k: v for k, v in FOREIGN.items() if k != "hooks"
    }
    assert data["hooks"]["Notification"] == FOREIGN["hooks"]["Notification"]
    assert data["hooks"]["PostToolUse"][0] == FOREIGN["hooks"]["PostToolUse"][0]
    assert data["hooks"]["Stop"][0] == FOREIGN["hooks"]["Stop"][0]
    for event in EVENT_COMMANDS:
        ours = installed_events(data)[event]
        assert len(ours) == 1 and "-m axiom.hooks.run" in ours[0]


def test_install_twice_changes_nothing(tmp_path: Path) -> None:
    path = _settings(tmp_path)
    install(path, tmp_path / "data")
    first = path.read_bytes()
    change = install(path, tmp_path / "data")
    assert not change.changed
    assert path.read_bytes() == first


def test_uninstall_restores_the_foreign_settings_exactly(tmp_path: Path) -> None:
    path = _settings(tmp_path)
    install(path, tmp_path / "data")
    uninstall(path)
    assert load(path) == FOREIGN
    assert not (path.parent / "commands" / "memory-search.md").exists()


def test_install_writes_slash_commands_and_spares_a_foreign_one(tmp_path: Path) -> None:
    path = _settings(tmp_path)
    commands = path.parent / "commands"
    commands.mkdir()
    (commands / "memory-stats.md").write_text("mine\n", encoding="utf-8")
    install(path, tmp_path / "data")
    search = (commands / "memory-search.md").read_text(encoding="utf-8")
    assert COMMAND_MARKER in search and "-m axiom search" in search
    assert (commands / "memory-forget.md").exists()
    assert (commands / "memory-stats.md").read_text(encoding="utf-8") == "mine\n"
    uninstall(path)
    assert (commands / "memory-stats.md").read_text(encoding="utf-8") == "mine\n"
    assert not (commands / "memory-forget.md").exists()


def test_install_creates_a_missing_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "settings.json"
    install(path, tmp_path / "data")
    assert set(installed_events(load(path))) == set(EVENT_COMMANDS)
    uninstall(path)
    assert load(path) == {}


class _Recorder(BaseHTTPRequestHandler):
    """A stand-in service: records each hook POST and accepts it."""

    received: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append({"path": self.path, **json.loads(body)})
        answer = json.dumps({"accepted": True, "context": ""}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


def test_a_port_other_than_the_default_is_written_into_every_command(tmp_path: Path) -> None:
    """Claude Code runs hooks without the installing shell's AXIOM_PORT: the commands carry
    it, so a hook reaches the service on its port (a real HTTP server here)."""
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        path = _settings(tmp_path)
        install(path, tmp_path / "data", port=port)
        commands = installed_events(load(path))
        assert all(f"AXIOM_PORT={port}" in c for (c,) in commands.values())
        slash = (path.parent / "commands" / "memory-search.md").read_text(encoding="utf-8")
        assert f"AXIOM_PORT={port}" in slash
        env = {k: v for k, v in child_env().items() if k != "AXIOM_PORT"}
        done = run_shell(commands["Stop"][0], json.dumps({"hook_event_name": "Stop"}), env)
        assert done.returncode == 0, done.stderr
        assert [(r["path"], r["event"]) for r in _Recorder.received] == [("/api/v1/hooks", "Stop")]
    finally:
        server.shutdown()
    default = _settings(tmp_path / "again")
    install(default, tmp_path / "data", port=DEFAULT_PORT)
    assert not any("AXIOM_PORT" in c for (c,) in installed_events(load(default)).values())


def test_the_memory_forget_command_forgets_the_memory_it_is_given(tmp_path: Path) -> None:
    """`/memory-forget ent_…` and `/memory-forget mem:…` (its description's two forms), run
    as Claude Code runs a command's `!` line, forget that memory. It once ran `axiom forget
    ent_…`, which the CLI refuses (no --entry) and which, without --yes, only previews."""
    data = tmp_path / "data"
    env = child_env(AXIOM_DATA_DIR=str(data), AXIOM_EMBEDDER="none")
    assert run_axiom("import", "--quiet", str(SAMPLE), env=env).returncode == 0
    entries = [
        json.loads(line) for line in run_axiom("entries", "--json", env=env).stdout.splitlines()
    ]
    by_id, by_citation = entries[0]["entry_id"], entries[1]
    citation = run_axiom("entry", "--json", by_citation["entry_id"], env=env).stdout
    mem = json.loads(citation)["citations"][0]
    path = _settings(tmp_path)
    install(path, data)
    text = (path.parent / "commands" / "memory-forget.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("!`")).strip("!`")
    for argument, entry_id in ((by_id, by_id), (mem, by_citation["entry_id"])):
        done = run_shell(line.replace("$ARGUMENTS", argument), "", env)
        assert done.returncode == 0, done.stderr
        assert "forgot 0 session(s), 1 entry(ies)" in done.stdout
        assert run_axiom("entry", entry_id, env=env).returncode == 1  # gone


def test_only_a_person_can_run_the_memory_forget_command(tmp_path: Path) -> None:
    """Claude Code lets the model call a command that has a description; forgetting with
    --yes must come from the person, so that command opts out. The others stay callable."""
    path = _settings(tmp_path)
    install(path, tmp_path / "data")
    commands = path.parent / "commands"
    heads = {
        p.name: p.read_text(encoding="utf-8").split("\n---\n")[0] for p in commands.glob("*.md")
    }
    assert "disable-model-invocation: true" in heads["memory-forget.md"]
    assert "disable-model-invocation" not in heads["memory-search.md"] + heads["memory-stats.md"]
