"""Arrows point down only (STYLE 3): no package of suite imports one that imports it, no module
imports one that imports it (imports inside functions count), and no __init__.py holds logic."""

import ast
from collections import defaultdict
from pathlib import Path

import paths

SUITE = paths.REPO / "suite"
SUBPACKAGES = {p.name for p in SUITE.iterdir() if (p / "__init__.py").is_file()}


def _package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "suite" or len(parts) < 2 or parts[1] not in SUBPACKAGES:
        return None
    return parts[1]


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


# ------------------------------------------------------------------ modules (STYLE 3, issue 23 item 5)

def _modules() -> dict[str, Path]:
    """Every module of suite: dotted name -> file (a package is its __init__.py, named as the package)."""
    out = {}
    for path in SUITE.rglob("*.py"):
        name = ".".join(path.relative_to(SUITE.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _module_imports() -> dict[str, dict[str, int]]:
    """module -> {module of suite it imports: the line of one such import (module level first)}.

    Every import counts, at module level or inside a function (a deferred import hides a cycle, it
    does not remove it). `from a.b import c` is an import of a.b.c when that is a module, else of
    a.b; relative imports are resolved. Importing a.b.c also runs a/__init__.py and a/b/__init__.py;
    those edges are left out here because test_no_init_holds_logic keeps every __init__ empty.
    Modules named by a string at run time (importlib.import_module in tpcxai/registry.py, the table
    groups and use cases) are not imports and are not seen.
    """
    mods = _modules()
    edges: dict[str, dict[str, int]] = {m: {} for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in mods:       # `import suite.x.y` where y is a name in x
                    target = target.rpartition(".")[0]
                if target.startswith("suite") and target != mod:
                    edges[mod].setdefault(target, node.lineno)
    return edges


def _cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def test_cycle_finder_finds_a_hidden_cycle_and_ignores_a_chain():
    edges = {"a": {"b": 1}, "b": {"c": 3}, "c": {"a": 9}, "d": {"a": 2}, "e": {}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_module_imports_one_that_imports_it():
    """No import cycle between modules, counting imports inside functions: each cycle found is
    listed with the imports that make it (module:line -> module)."""
    edges, files = _module_imports(), _modules()
    report = []
    for component in _cycles(edges):
        inside = set(component)
        arrows = [f"{files[a].relative_to(SUITE.parent)}:{line} -> {b}"
                  for a in component for b, line in sorted(edges[a].items()) if b in inside]
        report.append(" <-> ".join(component) + ": " + "; ".join(arrows))
    assert report == [], "import cycles:\n" + "\n".join(report)


# ------------------------------------------------------------------ no logic in __init__.py

# What a package's __init__.py may hold: its docstring (what the package is for, its modules), and
# nothing else. suite/__init__.py also holds `__version__ = "<literal>"`: setup.cfg reads it
# (`version = attr: suite.__version__`, statically) and submissions record it; it is data, not logic.
ALLOWED_BESIDE_DOCSTRING = {"suite": {"__version__"}}


def _init_logic(package: str, path) -> list[str]:
    """What an __init__.py holds besides its docstring (and the allowed assignments): 'line: kind' each."""
    body = ast.parse(path.read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    allowed = ALLOWED_BESIDE_DOCSTRING.get(package, set())
    out = []
    for node in body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in allowed and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            continue
        what = type(node).__name__
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            what += f" {node.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            what += " " + ", ".join(ast.unparse(t) for t in targets)
        out.append(f"{node.lineno}: {what}")
    return out


def test_init_checker_allows_a_docstring_and_the_version_only(tmp_path):
    init = tmp_path / "__init__.py"
    init.write_text('"""Doc."""\n\n__version__ = "1.0"\n')
    assert _init_logic("suite", init) == []
    assert _init_logic("suite.check", init) == ["3: Assign __version__"]
    init.write_text('"""Doc."""\nfrom suite.training.check.checker import check\nRULESETS = ("v1.0",)\ndef f():\n    pass\n')
    assert _init_logic("suite.check", init) == ["2: ImportFrom", "3: Assign RULESETS", "4: FunctionDef f"]


def test_no_init_holds_logic():
    """Every suite/**/__init__.py is its docstring only (suite/__init__.py: and __version__)."""
    found = []
    for path in sorted(SUITE.rglob("__init__.py")):
        package = ".".join(path.parent.relative_to(SUITE.parent).parts)
        found += [f"{path.relative_to(SUITE.parent)}:{item}" for item in _init_logic(package, path)]
    assert found == [], "logic in __init__.py:\n" + "\n".join(found)
