"""The v0.5-v2.0 benchmark dirs as a layout plugin (suite/layouts/benchdirs/, issue 44): it claims a tree
of them, a division and an organisation, never a v3.0 pooled tree nor what lies below an organisation. Its
check (suite.layouts.benchdirs.check) walks the tree once, hands each benchmark node to the kind that
claims it and adds its own findings: the verdict, the rule ids and the figures of a node are those its kind
gives, and the tree-level findings come from the layout only (no kind asks a layout for them)."""

import argparse
import json
import shutil
from pathlib import Path

from hypothesis import given, settings, strategies as st, HealthCheck

import paths
from check_builders import edit_json, ours_results, submission, write_yaml
from suite import cli
from suite.benchmark import Claim
from suite.errors import ResultError
from suite.kinds import dispatch, registry, tree as kinds_tree
from suite.layouts import todo
from suite.layouts.benchdirs import check as tree_check, facts as tree_facts, layout as benchdirs, tree
from suite.training.check import checker

V3_TREE = paths.DATA / "v3" / "tree"


def _owner(path: Path) -> str:
    return registry.owner_of(path).name


def test_the_tree_a_division_and_an_organisation_are_the_layouts_what_lies_below_its_kinds(tmp_path):
    root = submission(tmp_path / "tree")
    org = root / "closed" / "Org"
    assert [_owner(p) for p in (root, root / "closed", org)] == [benchdirs.NAME] * 3
    assert [_owner(p) for p in (org / "results", org / "results" / "sys1",
                                org / "results" / "sys1" / "unet3d-h100")] == ["training"] * 3
    assert benchdirs.claims(org / "results" / "sys1" / "unet3d-h100" / "run1") == Claim.NONE


def test_a_v3_tree_and_our_results_dir_are_not_the_layouts(tmp_path):
    assert benchdirs.claims(V3_TREE) == Claim.NONE and _owner(V3_TREE) == "mlperf-v3-tree"
    for below in ("closed", "closed/Alluxio"):
        assert benchdirs.claims(V3_TREE / below) == Claim.NONE
    ours = ours_results(tmp_path / "R")
    assert benchdirs.claims(ours) == Claim.NONE and _owner(ours) == "training"
    (tmp_path / "f").write_text("x")
    assert benchdirs.claims(tmp_path / "f") == Claim.NONE


def test_its_tree_is_its_checks_and_its_nodes_kinds_figures(tmp_path):
    """`suite check`: the layout's part (of the kind whose nodes it walks); metrics, report, compare: the
    nodes' kind's (the layout has no figures of its own). A system or a benchmark dir below it, and loose
    benchmark dirs, are checked by the same walk."""
    root = submission(tmp_path / "tree")
    bench = root / "closed" / "Org" / "results" / "sys1" / "unet3d-h100"
    for path in (root, root / "closed" / "Org", bench.parent, bench):
        split = dispatch.parts(path)
        assert [p.kind.name for p in split.parts] == ["training"] and split.single
        split = dispatch.parts(path, argparse.Namespace(format="json", ruleset="auto"))
        assert [(p.kind.name, p.of) for p in split.parts] == [(benchdirs.NAME, "training")] and split.single


def _check(path, capsys) -> tuple[int, dict]:
    code = cli.main(["check", str(path), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_the_verdict_rule_ids_and_figures_are_the_kinds_with_the_layouts_tree_findings(tmp_path, capsys):
    """A tree with a benchmark that breaks a benchmark rule and a tree rule left undone (a TODO in its
    system description): the nodes' findings and figures are the kind's, the tree's the layout's."""
    root = submission(tmp_path / "tree", runs=4)
    edit_json(root / "closed" / "Org" / "systems" / "sys1.json", lambda d: d.update(name="TODO"))
    code, doc = _check(root, capsys)
    direct = checker.check(root)                  # the kind's judgement of the nodes: nothing of the tree's
    assert code == 1 and doc["verdict"] == direct.verdict == "invalid" and direct.findings == []
    ids = {f["rule_id"] for b in doc["benchmarks"] for f in b["findings"]}
    assert ids == {f.rule_id for b in direct.benchmarks for f in b.findings} and "structure-run-count" in ids
    tree_ids = {f["rule_id"] for f in doc["findings"]}
    _, own, _ = tree_facts.tree_findings(tree.discover_tree(root))      # the tree's findings: the layout's
    assert tree_ids == {f.rule_id for f in own} and todo.RULE_TODO in tree_ids
    assert doc["benchmarks"][0]["aggregate"] == json.loads(json.dumps(direct.benchmarks[0].aggregate))


def _tree_with_its_own_findings(root: Path) -> Path:
    """A tree whose layout has findings of its own: an aborted benchmark dir (structure-incomplete), a
    changed file in its code dir (code-unchanged), a TODO in its system description."""
    submission(root)
    org = root / "closed" / "Org"
    aborted = org / "results" / "sys1" / "resnet50-h100" / "run1"
    write_yaml(aborted / "configs" / "overrides.yaml", ["workload=resnet50_h100", "++workload.workflow.train=True"])
    (aborted / "dlp.log").write_text("")
    changed = org / "code" / "dlio_benchmark" / "dlio_benchmark" / "main.py"
    changed.parent.mkdir(parents=True)
    changed.write_text("print('tuned')\n")
    edit_json(org / "systems" / "sys1.json", lambda d: d.update(name="TODO"))
    return root


TREE_IDS = {"structure-incomplete", "code-unchanged", todo.RULE_TODO}


def test_the_layouts_check_holds_its_findings_and_the_kinds_node_results(tmp_path):
    """suite.layouts.benchdirs.check.result: the tree's findings its own, the benchmarks the kind's results
    of the nodes it handed over (the one partitioner's node handover), in the tree's order."""
    root = _tree_with_its_own_findings(tmp_path / "tree")
    args = argparse.Namespace(format="json", ruleset="auto")
    held = tree_check.result(root, argparse.Namespace(**vars(args), for_nodes=kinds_tree.node_handover(args)))
    assert {f.rule_id for f in held.findings} == TREE_IDS
    assert held.incomplete == ["closed/Org/results/sys1/resnet50-h100"]
    kind = checker.check(root)
    assert [(b.benchmark.path, [f.to_dict() for f in b.findings]) for b in held.benchmarks] == \
        [(b.benchmark.path, [f.to_dict() for f in b.findings]) for b in kind.benchmarks]
    assert not TREE_IDS & {f.rule_id for f in kind.all_findings()}
    try:                                          # no handover: the layout judges no node itself
        tree_check.result(root, args)
        raise AssertionError("a layout judged nodes without their kind")
    except ResultError as exc:
        assert "handover" in str(exc)


def test_tree_level_rule_ids_come_from_the_layout_only(tmp_path, capsys):
    """Checking the tree adds the layout's findings; checking a benchmark node alone gives none of them,
    and the node's own findings are the same in both."""
    root = _tree_with_its_own_findings(tmp_path / "tree")
    bench = root / "closed" / "Org" / "results" / "sys1" / "unet3d-h100"
    code, whole = _check(root, capsys)
    assert code == 0 and {f["rule_id"] for f in whole["findings"]} == TREE_IDS
    code, alone = _check(bench, capsys)
    assert code == 0 and alone["findings"] == [] and alone["incomplete"] == []
    assert not TREE_IDS & {f["rule_id"] for b in alone["benchmarks"] for f in b["findings"]}
    (mine,) = [b for b in whole["benchmarks"] if b["path"].endswith("unet3d-h100")]
    assert {f["rule_id"] for f in mine["findings"]} == {f["rule_id"] for f in alone["benchmarks"][0]["findings"]}


def test_no_kind_asks_a_layout_for_its_findings_and_the_layout_names_no_kind():
    """Training's checker (every module of suite/training) imports nothing of the layout's facts; the
    layout's modules import no kind and name none (its models come from the workload files)."""
    import ast

    def imports(path: Path) -> set[str]:
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                out |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                out |= {a.name for a in node.names}
        return out

    suite_dir = paths.REPO / "suite"
    for path in (suite_dir / "training").rglob("*.py"):
        assert "suite.layouts.benchdirs.facts" not in imports(path), path
        assert "tree_findings" not in path.read_text(), path
    kinds = {k.name for k in registry.KINDS}
    for path in (suite_dir / "layouts" / "benchdirs").glob("*.py"):
        assert not {i for i in imports(path) if i.split(".")[1:2] and i.split(".")[1] in kinds}, path
        named = {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)}
        assert not kinds & named, path


def test_registration_order_decides_nothing(tmp_path, capsys):
    """The layouts' and the kinds' order: the same owner, the same check (its own findings and its nodes'
    kinds' results)."""
    root = _tree_with_its_own_findings(tmp_path / "tree")
    before = _check(root, capsys)
    layouts, kinds = list(registry.LAYOUTS), list(registry.KINDS)
    registry.LAYOUTS[:], registry.KINDS[:] = layouts[::-1], kinds[::-1]
    try:
        assert _check(root, capsys) == before and _owner(root) == benchdirs.NAME
    finally:
        registry.LAYOUTS[:], registry.KINDS[:] = layouts, kinds


NAMES = st.sampled_from(["closed", "Closed", "open", "results", "Results", "systems", "code", "run1", "x"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(NAMES, min_size=1, max_size=4), max_size=6))
def test_a_claim_on_any_folders_is_none_or_tree_and_never_raises(tmp_path_factory, tree):
    root = tmp_path_factory.mktemp("any")
    for parts in tree:
        (root.joinpath(*parts)).mkdir(parents=True, exist_ok=True)
    for d in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        assert benchdirs.claims(d) in (Claim.NONE, Claim.TREE)
    shutil.rmtree(root)
