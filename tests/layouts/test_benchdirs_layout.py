"""The v0.5-v2.0 benchmark dirs as a layout plugin (suite/layouts/benchdirs/layout.py, issue 44 item 1):
it claims a tree of them, a division and an organisation, never a v3.0 pooled tree nor what lies below an
organisation; its benchmark nodes are checked by the kind that claims them, so the verdict, the rule ids
and the figures are those the kind gives the same folders (its own tree findings included)."""

import argparse
import json
import shutil
from pathlib import Path

from hypothesis import given, settings, strategies as st, HealthCheck

import paths
from check_builders import edit_json, ours_results, submission
from suite import cli
from suite.benchmark import Claim
from suite.kinds import dispatch, registry
from suite.layouts import todo
from suite.layouts.benchdirs import facts as tree_facts, layout as benchdirs, tree
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


def test_its_tree_is_parted_among_the_kinds_of_its_nodes(tmp_path):
    root = submission(tmp_path / "tree")
    for path in (root, root / "closed" / "Org"):
        for args in (None, argparse.Namespace(format="json", ruleset="auto")):
            split = dispatch.parts(path, args)
            assert [p.kind.name for p in split.parts] == ["training"] and split.single


def _check(path, capsys) -> tuple[int, dict]:
    code = cli.main(["check", str(path), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_the_verdict_rule_ids_and_figures_are_the_kinds_with_the_layouts_tree_findings(tmp_path, capsys):
    """A tree with a benchmark that breaks a benchmark rule and a tree rule left undone (a TODO in its
    system description): the layout's check is the kind's, finding for finding."""
    root = submission(tmp_path / "tree", runs=4)
    edit_json(root / "closed" / "Org" / "systems" / "sys1.json", lambda d: d.update(name="TODO"))
    code, doc = _check(root, capsys)
    direct = checker.check(root)
    assert code == 1 and doc["verdict"] == direct.verdict == "invalid"
    ids = {f["rule_id"] for b in doc["benchmarks"] for f in b["findings"]}
    assert ids == {f.rule_id for b in direct.benchmarks for f in b.findings} and "structure-run-count" in ids
    tree_ids = {f["rule_id"] for f in doc["findings"]}
    _, own, _ = tree_facts.tree_findings(tree.discover_tree(root))      # the tree's findings: the layout's
    assert tree_ids == {f.rule_id for f in own} and todo.RULE_TODO in tree_ids
    assert doc["benchmarks"][0]["aggregate"] == json.loads(json.dumps(direct.benchmarks[0].aggregate))


def test_registration_order_decides_nothing(tmp_path, capsys):
    root = submission(tmp_path / "tree")
    before = _check(root, capsys)
    layouts = list(registry.LAYOUTS)
    registry.LAYOUTS[:] = layouts[::-1]
    try:
        assert _check(root, capsys) == before and _owner(root) == benchdirs.NAME
    finally:
        registry.LAYOUTS[:] = layouts


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
