"""The import contract: packages of `axiom/` import only from their own floor or below,
never in a cycle, never inside a function; the core imports nothing from Django or the
adapters; the API does not import the viewer. `make lint` runs this file too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Floors, lowest first. A module may import from its own floor or any floor below.
FLOORS: tuple[tuple[str, ...], ...] = (
    (
        "axiom.settings",
        "axiom.config",
        "axiom.forking",
        "axiom.heap",
        "axiom.store",
        "axiom.vectors",
    ),
    (
        "axiom.ingest",
        "axiom.evidence",
        "axiom.extract",
        "axiom.graduation",
        "axiom.entries",
        "axiom.tasks",
        "axiom.outbox",
        "axiom.builds",
        "axiom.conflicts",
        "axiom.decisions",
    ),
    ("axiom.projections",),
    ("axiom.pipeline", "axiom.retrieval", "axiom.observability", "axiom.forgetting"),
    ("axiom.agent",),
    ("axiom.cli", "axiom.service", "axiom.evaluation", "axiom.mcp", "axiom.hooks"),
)
ADAPTERS = ("api", "viewer", "config")
FORBIDDEN_IN_CORE = ("django", "ninja", "celery", "api", "viewer", "config")


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "axiom" and len(parts) > 1 else parts[0]


def _floor(package: str) -> int:
    for level, names in enumerate(FLOORS):
        if package in names:
            return level
    raise AssertionError(f"{package} is on no floor: add it to FLOORS in {__file__}")


def _modules(top: str) -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted((ROOT / top).rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        found.append((name, ast.parse(path.read_text(encoding="utf-8"))))
    return found


def _imports(tree: ast.Module) -> list[tuple[str, bool]]:
    """(imported module, inside a function?) for every absolute import."""
    out: list[tuple[str, bool]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                out.extend((alias.name, nested) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                out.append((child.module, nested))
            visit(child, inner)

    visit(tree, False)
    return out


def _core_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, tree in _modules("axiom"):
        source = _package(module)
        for target, _ in _imports(tree):
            if target.startswith("axiom.") and _package(target) != source:
                edges.setdefault(source, set()).add(_package(target))
    return edges


def test_every_package_sits_on_a_floor_and_imports_only_downward() -> None:
    wrong = []
    for source, targets in _core_edges().items():
        if source in ("axiom", "axiom.__main__"):
            continue
        for target in targets:
            if _floor(target) > _floor(source):
                wrong.append(
                    f"{source} (floor {_floor(source)}) imports {target} ({_floor(target)})"
                )
    assert wrong == []


def test_no_import_cycle_between_packages() -> None:
    edges = _core_edges()

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = sorted(p for p in edges if reaches(p, p, {p}))
    assert cycles == []


def test_the_core_imports_no_framework_or_adapter() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, tree in _modules("axiom")
        for target, _ in _imports(tree)
        if target.split(".")[0] in FORBIDDEN_IN_CORE
    ]
    assert wrong == []


def test_the_api_does_not_import_the_viewer() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, tree in _modules("api")
        for target, _ in _imports(tree)
        if target.split(".")[0] == "viewer"
    ]
    assert wrong == []


@pytest.mark.parametrize("top", ["axiom", *ADAPTERS])
def test_project_imports_sit_at_the_top_of_modules(top: str) -> None:
    """Only third-party heavy dependencies may be imported lazily (with a comment saying
    so); an import of our own code inside a function hides a cycle."""
    ours = ("axiom", *ADAPTERS)
    wrong = [
        f"{module} imports {target} inside a function"
        for module, tree in _modules(top)
        for target, nested in _imports(tree)
        if nested and target.split(".")[0] in ours
    ]
    assert wrong == []


def test_only_the_event_store_writes_sql_over_the_event_log() -> None:
    """`events` and `event_dedup` are read and written only in `axiom.store.events`: its
    `deferred` appends are seen only through `EventStore`, and the log's SQL has one home."""
    table = re.compile(
        r"\b(?:FROM|JOIN|INTO|UPDATE)\s+(?:events|event_dedup)\b"
    )  # SQL is upper case
    wrong = [
        str(path.relative_to(ROOT))
        for top in ("axiom", *ADAPTERS)
        for path in sorted((ROOT / top).rglob("*.py"))
        if path != ROOT / "axiom" / "store" / "events.py"
        and table.search(path.read_text(encoding="utf-8"))
    ]
    assert wrong == []
