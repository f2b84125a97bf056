"""Each benchmark kind is a vertical slice, suite/<kind>/, with the same module names; no kind imports
another (what two kinds share sits in a layer below them); the layers below the kinds hold no kind's
logic and import none; every module stays under 500 lines. Imports inside functions count: a deferred
import hides a dependency, it does not remove it."""

import ast
import sys
from pathlib import Path

import paths

SUITE = paths.REPO / "suite"
KINDS = sorted(p.name for p in SUITE.iterdir() if (p / "kind.py").is_file())     # a kind: a folder with kind.py
LAYOUT_PLUGINS = ["published"]     # a layout plugin: a folder with layout.py whose LAYOUT the registry lists
# a layout plugin inside the layouts layer (suite/layouts/<name>/layout.py): its readers are a layer, read by
# the kind that checks its nodes (the v0.5-v2.0 benchmark dirs: training's checker; our own results dirs:
# each node's kind); it imports no kind either
LAYER_LAYOUTS = ["benchdirs", "ours"]
LAYERS = ("harness", "storage", "check", "report", "rules", "enforce", "engines", "compare", "submission", "layouts")
ABOVE = ("kinds", "commands", "history")   # above the kinds: the registry (the one dispatch), the commands, history
TOP_ABOVE = ("cli.py",)                # suite/*.py above the kinds; every other suite/*.py is a layer module
MAX_LINES = 500

# The modules every slice has, by role: one of the names given (a file or a package).
ROLES = {"kind": ("kind.py",), "leaf": ("leaf.py",), "figures": ("figures.py",), "check": ("check.py", "check"),
         "page": ("page.py",), "run": ("run.py", "run")}
# Roles a kind does not have, and why (no empty shim stands in for them).
EXCEPTIONS: dict = {}


def imported(path: Path) -> set[str]:
    """Every suite module or package `path` imports, at module level or inside a function: `from a
    import b` counts as a.b and a; relative imports are resolved against the module's package."""
    module = ".".join(path.relative_to(SUITE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out |= {base} | {f"{base}.{a.name}" for a in node.names}
    return {m for m in out if m == "suite" or m.startswith("suite.")}


def folder_of(module: str) -> str | None:
    """The folder of suite a module name lies in (suite.training.run.launch -> training)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _reached(path: Path, folders) -> list[str]:
    return sorted(f"{path.relative_to(SUITE.parent)} -> {m}" for m in imported(path) if folder_of(m) in folders)


def test_the_scan_sees_imports_inside_functions_and_relative_ones(tmp_path, monkeypatch):
    fake = tmp_path / "suite"
    (fake / "storage").mkdir(parents=True)
    mod = fake / "storage" / "x.py"
    mod.write_text("import os\nfrom . import y\n\ndef f():\n    from suite.training import kind\n"
                   "    import suite.tpcx_ai.page\n")
    monkeypatch.setattr(sys.modules[__name__], "SUITE", fake)
    assert imported(mod) == {"suite.storage", "suite.storage.y", "suite.training", "suite.training.kind",
                             "suite.tpcx_ai.page"}
    assert _reached(mod, {"training", "tpcx_ai"}) == ["suite/storage/x.py -> suite.tpcx_ai.page",
                                                      "suite/storage/x.py -> suite.training",
                                                      "suite/storage/x.py -> suite.training.kind"]


def test_the_kinds_are_the_folders_with_a_kind_py_and_the_registry_holds_each():
    from suite.kinds import registry

    assert len(KINDS) >= 5 and {"training", "checkpointing", "tpcx_ai", "kv_cache", "vector_database"} <= set(KINDS)
    built_in = {kind.run.__module__ for kind in registry.KINDS}
    assert built_in == {f"suite.{k}.kind" for k in KINDS}


def test_the_layouts_are_the_folders_with_a_layout_py_and_no_kind_is_one():
    """A layout plugin (the v3.0 pooled tree: suite/published/layout.py; the v0.5-v2.0 benchmark dirs:
    suite/layouts/benchdirs/layout.py) is registered as a layout (registry.LAYOUTS), never as a kind
    (issue 44: `mlperf-v3-tree` is a layout)."""
    from suite.kinds import registry

    assert all((SUITE / x / "layout.py").is_file() for x in LAYOUT_PLUGINS) and not set(LAYOUT_PLUGINS) & set(KINDS)
    assert all((SUITE / "layouts" / x / "layout.py").is_file() for x in LAYER_LAYOUTS)
    assert {layout.claims.__module__ for layout in registry.LAYOUTS} == \
        {f"suite.{x}.layout" for x in LAYOUT_PLUGINS} | {f"suite.layouts.{x}.layout" for x in LAYER_LAYOUTS}
    assert {"mlperf-v3-tree", "mlperf-benchmark-dirs", "suite-results-dir"} <= {x.name for x in registry.LAYOUTS}
    assert "mlperf-v3-tree" not in {k.name for k in registry.KINDS}


def test_no_layout_plugin_imports_a_kind_and_no_kind_imports_one():
    """A layout hands its nodes to the kinds through the registry (reference_judge, handover)."""
    found = [x for lay in LAYOUT_PLUGINS for path in sorted((SUITE / lay).rglob("*.py"))
             for x in _reached(path, set(KINDS))]
    found += [x for kind in KINDS for path in sorted((SUITE / kind).rglob("*.py"))
              for x in _reached(path, set(LAYOUT_PLUGINS))]
    assert found == []


def test_every_folder_of_suite_is_a_kind_a_layout_a_layer_or_above_them():
    packages = {p.name for p in SUITE.iterdir() if (p / "__init__.py").is_file()}
    assert packages - set(KINDS) - set(LAYOUT_PLUGINS) - set(LAYERS) - set(ABOVE) == set()


def test_no_kind_imports_another():
    found = []
    for kind in KINDS:
        for path in sorted((SUITE / kind).rglob("*.py")):
            found += _reached(path, set(KINDS) - {kind})
    assert found == [], "a kind imports another (move what they share into a layer):\n" + "\n".join(found)


def _layer_modules() -> list[Path]:
    out = [p for layer in LAYERS for p in sorted((SUITE / layer).rglob("*.py"))]
    return out + [p for p in sorted(SUITE.glob("*.py")) if p.name not in TOP_ABOVE]


def test_no_layer_imports_a_kind():
    """harness, storage, check, report, rules, enforce, engines, compare, submission and suite/*.py
    reach a kind only through the registry (suite.kinds.registry and the Kind's fields)."""
    found = [x for path in _layer_modules() for x in _reached(path, set(KINDS))]
    assert found == [], "a layer imports a kind:\n" + "\n".join(found)


def test_every_kind_has_the_slice_modules():
    missing = []
    for kind in KINDS:
        for role, names in ROLES.items():
            there = any((SUITE / kind / n).is_file() or (SUITE / kind / n / "__init__.py").is_file() for n in names)
            if there == ((kind, role) in EXCEPTIONS):
                missing.append(f"suite/{kind}: {role} ({' or '.join(names)}): "
                               + ("there, but listed as an exception" if there else "missing"))
    assert missing == []


def test_every_module_is_under_500_lines():
    long = [f"{p.relative_to(SUITE.parent)}: {n} lines" for p in sorted(SUITE.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) >= MAX_LINES]
    assert long == [], f"modules of {MAX_LINES} lines or more (split them by concern):\n" + "\n".join(long)
