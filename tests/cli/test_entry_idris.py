"""`axiom entry ID --idris`: the Idris 2 module of a stored entry, on demand. The built-in
checker writes no module by default (`AXIOM_IDRIS_MODULES`), so this is how a person gets
one to check with idris2: the same text the validator writes when asked to always."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.graduation.idris import module_name, module_relpath
from tests.cli_support import run_cli

ALWAYS = {"AXIOM_IDRIS_MODULES": "always"}  # the validator writes every module it checks


def test_an_entrys_module_is_the_one_the_validator_writes(
    tmp_path: Path, sample_session: Path
) -> None:
    data = tmp_path / "data"
    imported = run_cli(data, "import", "--quiet", str(sample_session), env=ALWAYS)
    assert imported.returncode == 0, imported.stderr
    listed = run_cli(data, "entries", "--json", "--stage", "verified")
    entry_ids = [json.loads(line)["entry_id"] for line in listed.stdout.splitlines()]
    assert entry_ids, listed.stderr
    for entry_id in entry_ids:
        shown = run_cli(data, "entry", entry_id, "--idris")
        assert shown.returncode == 0, shown.stderr
        written = (data / "idris" / module_relpath(entry_id)).read_text(encoding="utf-8")
        assert shown.stdout == written
        assert f"\nmodule {module_name(entry_id)}\n" in shown.stdout


def test_the_listed_entries_modules_are_written_where_idris2_finds_them(
    tmp_path: Path, sample_session: Path
) -> None:
    data, out = tmp_path / "data", tmp_path / "check"
    imported = run_cli(data, "import", "--quiet", str(sample_session), env=ALWAYS)
    assert imported.returncode == 0, imported.stderr
    listed = run_cli(data, "entries", "--json")
    entry_ids = [json.loads(line)["entry_id"] for line in listed.stdout.splitlines()]
    written = run_cli(data, "entries", "--idris-dir", str(out))
    assert written.returncode == 0, written.stderr
    assert written.stderr.strip() == f"{len(entry_ids)} modules written under {out}"
    assert sorted(p.relative_to(out) for p in out.rglob("*.idr")) == sorted(
        module_relpath(e) for e in entry_ids
    )
    for module in (data / "idris").rglob("*.idr"):  # what the validator checked, the same
        assert (out / module.relative_to(data / "idris")).read_bytes() == module.read_bytes()
    (tmp_path / "file").write_text("")
    blocked = run_cli(data, "entries", "--idris-dir", str(tmp_path / "file"))
    assert blocked.returncode == 1 and "Traceback" not in blocked.stderr
    assert blocked.stderr.startswith(
        f"error: cannot write the modules under {tmp_path / 'file'} (0 modules written of"
    )
    empty = run_cli(data, "entries", "--idris-dir", "")
    assert empty.returncode == 2 and "--idris-dir: needs a folder" in empty.stderr
    both = run_cli(data, "entries", "--json", "--idris-dir", str(out))
    assert both.returncode == 2 and "not allowed with" in both.stderr
    none = run_cli(data, "entries", "--stage", "raw", "--type", "none", "--idris-dir", str(out))
    assert none.returncode == 0 and none.stderr.strip() == "no entry listed: no module written"


def test_an_unknown_entry_has_no_module(tmp_path: Path, sample_session: Path) -> None:
    data = tmp_path / "data"
    assert run_cli(data, "import", "--quiet", "--no-process", str(sample_session)).returncode == 0
    shown = run_cli(data, "entry", "ent_0000000000000000", "--idris")
    assert shown.returncode == 1 and shown.stdout == ""
    assert shown.stderr.strip() == "error: no entry 'ent_0000000000000000'"
    both = run_cli(data, "entry", "ent_0000000000000000", "--idris", "--json")
    assert both.returncode == 2 and "not allowed with" in both.stderr
