"""No round is written in code: no string constant in suite/**/*.py outside docstrings is a round's
name ("v3.0") or embeds one ("rules/v3.0/tree", "ruleset v3.0"). What differs by round is a field of
rules/<round>/ruleset.yaml (suite/rules/rulesets.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import suite

ROUND = re.compile(r"^v\d+\.\d+$")
EMBEDDED = re.compile(r"(?<![\w.])v\d+\.\d+(?![\w.]*\d)")     # "v3.0" in text, not a version "1.2.3" or "md5-tree-v2"
PACKAGE = Path(suite.__file__).resolve().parent


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def rounds_in(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
            and (ROUND.match(n.value) or EMBEDDED.search(n.value))]


def test_the_scan_finds_a_round_and_leaves_docstrings_and_versions_alone():
    src = '"""v3.0 here is prose."""\nA = "v3.0"\nB = f"rules/v9.9/tree {x}"\nC = "1.2.3"\nD = "md5-tree-v2"\n'
    assert rounds_in(src) == [(2, "v3.0"), (3, "rules/v9.9/tree ")]


def test_no_round_is_a_string_constant_in_suite():
    found = [f"{p.relative_to(PACKAGE.parent)}:{line}: {text[:80]!r}"
             for p in sorted(PACKAGE.rglob("*.py")) for line, text in rounds_in(p.read_text(encoding="utf-8"))]
    assert found == []
