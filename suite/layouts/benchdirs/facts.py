"""What the v0.5-v2.0 benchmark-dir layout checks itself: the tree scope's facts (unusable entries and
links met by the walk, the benchmark count, aborted benchmark dirs, the code dirs against the reference
release) and the tree-level findings (the round's `tree` rules, SHA256SUMS, TODOs left by `suite
submission init`). The benchmark nodes' own facts and rules are their kind's.

Facts (declared in rules/facts.yaml): problems.unreadable, problems.links, problems.dir_links,
benchmarks.count, incomplete, code.changed, code.changed_open.
"""

from __future__ import annotations

from pathlib import Path

from suite.layouts import manifest, todo
from suite.layouts.benchdirs import code as code_facts
from suite.layouts.benchdirs.tree import Tree
from suite.layouts.walker import problem_facts
from suite.rules import engine as rules
from suite.rules.engine import Item, Scope
from suite.rules.evaluate import evaluate
from suite.rules.findings import Finding


def tree_scope(tree: Tree, ruleset: str) -> Scope:
    facts = problem_facts(tree.problems)
    facts["benchmarks.count"] = len(tree.benchmarks)
    changed = code_facts.changed(tree.code_dirs, ruleset, tree.root)
    facts["code.changed"], facts["code.changed_open"] = changed["closed"], changed["open"]
    facts["incomplete"] = [Item("no summary.json and no mlperf_storage_report.json", b.path, "(directory)",
                                "a result (an aborted run left in the tree is not one)") for b in tree.incomplete]
    return Scope("tree", tree.root, facts)


def tree_ruleset(tree: Tree) -> str:
    """The round the tree's own rules are taken from: its first benchmark node's (the nodes' leaves say
    it, or --ruleset; never the folders)."""
    return (tree.benchmarks or tree.incomplete)[0].ruleset


def tree_findings(tree: Tree, verify_manifest: bool = True) -> tuple[rules.RuleSet, list[Finding], dict[str, str]]:
    """The layout's own check of the tree: (the tree rules it was held to, its findings, the rule ids of
    SHA256SUMS and the TODO check with their one-line descriptions). verify_manifest=False: SHA256SUMS left
    out (suite submission package, about to write a new one)."""
    ruleset = tree_ruleset(tree)
    tree_rules = rules.load(ruleset, None, None)
    root: Path = tree.root
    found = evaluate(tree_rules, "tree", tree_scope(tree, ruleset), root)
    found += (manifest.verify(root) if verify_manifest else []) + todo.todo_findings(root)
    return tree_rules, found, {**manifest.RULES, **todo.RULES}
