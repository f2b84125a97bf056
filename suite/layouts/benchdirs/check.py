"""The v0.5-v2.0 benchmark-dir layout's `suite check`: the tree discovered once (tree), each benchmark
node judged by the kind that claims it (handed over by the one partitioner: `args.for_nodes`,
suite.kinds.tree.node_handover; this layout names no kind), the layout's own findings added (facts:
unusable entries outside any node, aborted benchmark dirs, the code dirs, SHA256SUMS, TODOs), and the
whole said as one: the verdict the worst of all, compliant only where every node is and the tree's own
findings are notes.

The result is one suite.check.result.CheckResult (its `findings` the layout's, its `benchmarks` the
kinds'), shown by suite.report.findings as every check of benchmark nodes is.
"""

from __future__ import annotations

from pathlib import Path

from suite.benchmark import Checked
from suite.check.result import CheckResult, described, rel
from suite.errors import ResultError
from suite.layouts.benchdirs import facts
from suite.layouts.benchdirs.tree import Tree, discover_tree
from suite.rules import findings, rulesets


def check(path: Path, args) -> Checked:
    """`suite check PATH` where PATH is this layout's (args.format text or json; args.exclude_dirs: other
    kinds' folders, checked apart; args.verify_manifest False: SHA256SUMS left out, as `suite submission
    package` asks)."""
    from suite.report import findings as report

    return report.checked(result(path, args), getattr(args, "format", "text"))


def result(path: Path, args) -> CheckResult:
    ruleset = getattr(args, "ruleset", None) or "auto"
    rulesets.refuse_unknown(ruleset)
    tree = discover_tree(path, ruleset, getattr(args, "exclude_dirs", ()) or ())
    if not tree.benchmarks and not tree.incomplete:
        extra = f" ({len(tree.problems)} unusable entries, e.g. {tree.problems[0].path}: " \
                f"{tree.problems[0].actual})" if tree.problems else ""
        raise ResultError(f"{path}: expected run output (summary.json, configs/overrides.yaml, results.json, "
                          f"...) somewhere below, got none{extra}")
    nodes = _judged(tree, args) if tree.benchmarks else []
    tree_rules, own, own_ids = facts.tree_findings(tree, getattr(args, "verify_manifest", True))
    return combined(tree, nodes, own, {**{r.id: described(r) for r in tree_rules.rules}, **own_ids})


def _judged(tree: Tree, args) -> list:
    """The benchmark nodes' results, in the tree's order, each by the kind that claims it."""
    hand = getattr(args, "for_nodes", None)
    if hand is None:
        raise ResultError(f"{tree.root}: (check): expected the partitioner's handover of benchmark nodes to "
                          f"their kinds (suite.kinds.tree), got none")
    judged = {id(r.benchmark): r for r in hand(tree)}
    left = [b for b in tree.benchmarks if id(b) not in judged]
    if left:                                   # never dropped: a node no kind judged is bad input
        raise ResultError(f"{left[0].path}: (benchmark): expected a kind claiming it, got none")
    return [judged[id(b)] for b in tree.benchmarks]


def combined(tree: Tree, nodes: list, own: list, own_ids: dict) -> CheckResult:
    """The nodes' results and the layout's own findings as one: the worst verdict; compliant where every
    node is, the tree's findings are notes, nothing is to fix and no node is a miniature."""
    verdict = findings.worst([r.verdict for r in nodes] + [findings.verdict(own)])
    fix = findings.fix_required(own) or any(r.fix_required for r in nodes)
    compliant = (all(r.compliant for r in nodes) and findings.verdict(own) == "closed" and not fix
                 and not any(r.miniature for r in nodes))
    return CheckResult(tree.root, nodes, own, verdict, compliant, own_ids, fix,
                       [rel(b.path, tree.root) for b in tree.incomplete])
