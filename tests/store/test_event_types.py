"""Every event type Axiom appends is named once, in axiom.store.event_types, with a
description; no other module spells one as a bare string."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from axiom.entries.queries import list_entries
from axiom.ingest.importer import import_paths
from axiom.pipeline.approval import approve_entry
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.projections import project_all
from axiom.store import event_types
from axiom.store.db import Database
from axiom.store.event_types import ALL_EVENT_TYPES, DESCRIPTIONS

ROOT = Path(__file__).resolve().parents[2]
CODE = ("axiom", "api", "viewer", "config")
SAMPLES = ROOT / "axiom" / "samples" / "claude_code"


def _modules() -> list[tuple[Path, ast.Module]]:
    return [
        (path, ast.parse(path.read_text(encoding="utf-8")))
        for folder in CODE
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "event_types.py"
    ]


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _is_field_name(node: ast.Constant, parent: ast.AST | None) -> bool:
    """A payload field or check code that happens to share an event's name
    (`{"evidence_aligned": ...}`, `p.get("evidence_aligned")`, `code="evidence_aligned"`)."""
    if isinstance(parent, ast.Dict) and node in parent.keys:
        return True
    if isinstance(parent, ast.keyword) and parent.arg == "code":
        return True
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr == "get"
    )


def test_every_constant_is_listed_with_a_description() -> None:
    constants = {
        name: value
        for name, value in vars(event_types).items()
        if name.isupper() and isinstance(value, str)
    }
    assert set(constants.values()) == ALL_EVENT_TYPES
    assert len(constants) == len(ALL_EVENT_TYPES)  # no type named twice
    assert all(DESCRIPTIONS[t].strip() for t in ALL_EVENT_TYPES)


def test_no_module_spells_an_event_type_as_a_bare_string() -> None:
    bare = []
    for path, tree in _modules():
        parents = _parents(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and node.value in ALL_EVENT_TYPES
                and not _is_field_name(node, parents.get(node))
            ):
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert bare == []


def test_no_other_module_defines_an_event_type_constant() -> None:
    defined = []
    for path, tree in _modules():
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and node.value.value in ALL_EVENT_TYPES
            ):
                defined.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert defined == []


def test_every_new_event_names_a_listed_type() -> None:
    """`NewEvent(TYPE, ...)` / `NewEvent(event_type=TYPE, ...)`: TYPE is a name imported
    from axiom.store.event_types, or the parameter of a helper that passes one through."""
    unlisted = []
    for path, tree in _modules():
        imported = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "axiom.store.event_types"
            for alias in node.names
        }
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "NewEvent"):
                continue
            kinds = [kw.value for kw in node.keywords if kw.arg == "event_type"]
            first = kinds[0] if kinds else node.args[0]
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if isinstance(first, ast.Constant):
                unlisted.append(f"{where} bare {first.value!r}")
            elif (
                isinstance(first, ast.Name)
                and first.id.isupper()
                and (first.id not in imported or getattr(event_types, first.id) not in DESCRIPTIONS)
            ):
                unlisted.append(f"{where} {first.id} not from axiom.store.event_types")
    assert unlisted == []


def test_a_pipeline_run_over_the_sample_appends_only_listed_types(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")  # no model to load
    report = import_paths(db, [SAMPLES])
    pipeline = configured_pipeline()
    for session_id in report.session_ids:
        process_session(db, session_id, pipeline)
    with db.read() as conn:
        entry = list_entries(conn, stage="verified", limit=1)[0]
    approve_entry(db, entry.entry_id, "reviewer")
    project_all(db)
    with db.read() as conn:
        seen = {t for (t,) in conn.execute("SELECT DISTINCT event_type FROM events").fetchall()}
    assert {"session_ingested", "memory_extracted", "evidence_aligned", "entry_created"} <= seen
    assert seen <= ALL_EVENT_TYPES, seen - ALL_EVENT_TYPES
