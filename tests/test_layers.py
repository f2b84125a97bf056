"""Arrows point down only: no package of suite imports one that imports it (STYLE 3)."""

import ast
from collections import defaultdict

import paths

SUITE = paths.REPO / "suite"
SUBPACKAGES = {p.name for p in SUITE.iterdir() if (p / "__init__.py").is_file()}


def _package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "suite" or len(parts) < 2 or parts[1] not in SUBPACKAGES:
        return None
    return "storage.run" if parts[1:3] == ["storage", "run"] else parts[1]


def _imports() -> dict[str, dict[str, str]]:
    """package -> {imported package: a file that imports it}."""
    edges: dict[str, dict[str, str]] = defaultdict(dict)
    for path in SUITE.rglob("*.py"):
        src = _package(".".join(path.relative_to(SUITE.parent).with_suffix("").parts))
        if src is None:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("suite"):
                targets = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for dst in {_package(t) for t in targets} - {None, src}:
                if not (src == "storage.run" and dst == "storage"):
                    edges[src].setdefault(dst, str(path.relative_to(SUITE.parent)))
    return edges


def test_no_package_imports_one_that_imports_it():
    edges = _imports()
    cycles = [f"{a} -> {b} ({edges[a][b]}) and {b} -> {a} ({edges[b][a]})"
              for a in edges for b in edges[a] if a in edges.get(b, {}) and a < b]
    assert cycles == []


def test_rules_sits_below_check_and_storage():
    assert not {"check", "storage", "storage.run", "report"} & set(_imports().get("rules", {}))
