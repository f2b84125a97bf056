"""The one partitioner (issue 44): a path's owner is the layout or kind whose claim on it is the most
specific (suite.benchmark.Claim, suite.kinds.registry.owner_of), never the order they were registered
in; two equal claims are a one-line error, exit 2; the v3.0 pooled tree is a layout, not a kind."""

import json
import os
import shutil
from pathlib import Path

import pytest

import paths
from check_builders import ours_results
from suite.benchmark import Checked, Claim, Kind
from suite.errors import ExitCode, ResultError
from suite.kinds import dispatch, registry, tree

V3 = paths.DATA / "v3"
TREE = V3 / "tree"
KV = V3 / "kv_cache_FarmGPU"
VDB = V3 / "vector_database_TTA"
PAIR = paths.DATA / "checkpoint" / "llama3-8b-miniature"
TPCX = paths.DATA / "tpcxai-sf0.01" / "tpcxai-result.json"
UNET3D = "closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"
KV_LEAF = ("open/FarmGPU/results/potato8-qlc-np6-open-tnf-70b/kv_cache/llama3.1-70b-instruct/run/"
           "20260709_215001")


@pytest.fixture
def mixed(tmp_path) -> Path:
    """A published pooled tree (training, checkpointing) with a kv_cache leaf copied into one of its
    systems, beside our own training runs, a checkpointing pair and a TPCx-AI run."""
    root = tmp_path / "mixed"
    shutil.copytree(TREE, root / "tree", symlinks=True)
    system = root / "tree" / "closed" / "Alluxio" / "results" / "aws_c5n18xlarge_i3en24xlarge_8c_10s_8a"
    shutil.copytree(KV / KV_LEAF, system / "kv_cache" / "llama3.1-70b-instruct" / "run" / "20260709_215001")
    ours_results(root / "ours" / "unet3d")
    shutil.copytree(PAIR, root / "pair")
    (root / "tpcx").mkdir()
    shutil.copy(TPCX, root / "tpcx" / "tpcxai-result.json")
    return root


def _partition(root: Path) -> dict:
    """Every owner the registry names under `root`, what the walk finds, the parts metrics and report
    are called on, and the parts `suite check` counts, as plain data."""
    owners = {}
    for d, dirs, _ in os.walk(root):
        dirs.sort()
        owners[os.path.relpath(d, root)] = registry.for_result(Path(d)).name
    found = registry.results_under(root)
    parts = {}
    for sub in (root, root / "tree", root / "tree" / "closed" / "Alluxio"):
        got = dispatch.parts(sub)
        parts[str(sub)] = [(p.kind.name, str(p.path)) for p in got.parts]
    import argparse

    checked = tree.check(root, argparse.Namespace(format="json", ruleset=None, output=None))
    doc = json.loads(checked.out)
    return {"owners": owners, "found": {k: [str(d) for d in v] for k, v in found.by_kind.items() if v},
            "parts": parts, "check": [(r["kind"], r["path"], r["verdict"]) for r in doc["results"]],
            "verdict": doc["verdict"]}


def test_the_partition_does_not_depend_on_the_order_of_registration(mixed, monkeypatch):
    before = _partition(mixed)
    assert before["owners"]["tree"] == "mlperf-v3-tree" and before["owners"]["ours"] == "training"
    assert before["owners"][os.path.join("tree", UNET3D)] == "mlperf-v3-tree"     # the layout's, not training's
    kv_leaf = os.path.join("tree", "closed", "Alluxio", "results", "aws_c5n18xlarge_i3en24xlarge_8c_10s_8a",
                           "kv_cache", "llama3.1-70b-instruct", "run", "20260709_215001")
    assert before["owners"][kv_leaf] == "kv_cache"                # a kind's own files outrank the layout
    assert {k for k, _, _ in before["check"]} >= {"mlperf-v3-tree", "training", "checkpointing", "tpcx-ai"}
    monkeypatch.setattr(registry, "KINDS", list(reversed(registry.KINDS)))
    monkeypatch.setattr(registry, "LAYOUTS", list(reversed(registry.LAYOUTS)))
    assert _partition(mixed) == before


def test_a_tree_division_and_organisation_are_the_layouts_whatever_lies_below():
    """A vector-DB-only published tree: its vector_database folders are that kind's, the tree, the
    division and the organisation the layout's (its systems/ and code pool are checked)."""
    assert registry.claim(registry.owner("vector_database"), VDB / "closed") == Claim.OWN
    for p in (VDB, VDB / "closed", VDB / "closed" / "TTA"):
        assert registry.for_result(p).name == "mlperf-v3-tree"
    leaf = next((VDB / "closed" / "TTA" / "results").glob("*/vector_database"))
    assert registry.for_result(leaf).name == "vector_database"


def test_the_pooled_tree_is_a_layout_not_a_kind():
    assert registry.is_layout(registry.owner("mlperf-v3-tree"))
    assert "mlperf-v3-tree" not in {k.name for k in registry.KINDS}
    assert all(k.takes in ("tree", "result") for k in registry.KINDS)


def _rival(name: str) -> Kind:
    """A kind that claims a kv_cache leaf as its own too (a marker file of its own beside it)."""
    def check(path, args):
        return Checked("rival\n", "verdict: CLOSED", ExitCode.OK, "closed")

    return Kind(name=name, run=lambda args: 0,
                recognises=lambda path: Claim.OWN if (Path(path) / "rival.marker").is_file() else Claim.NONE,
                check=check, metrics=lambda path, form: 0, report_page=lambda path, args: None)


@pytest.mark.parametrize("first", [True, False])
def test_two_equal_claims_are_a_one_line_error_exit_2(tmp_path, run_cli, first):
    leaf = tmp_path / "leaf"
    shutil.copytree(KV / KV_LEAF, leaf)
    (leaf / "rival.marker").write_text("")
    if first:                                     # registered first or last: the same refusal
        registry.KINDS.insert(0, _rival("rival"))
    else:
        registry.register(_rival("rival"))
    try:
        with pytest.raises(ResultError, match="kv_cache and rival claim it alike"):
            registry.for_result(leaf)
        for command in ("check", "metrics"):
            code, out, err = run_cli(command, leaf)
            assert code == ExitCode.BAD_INPUT, (command, out, err)
            assert err.strip().count("\n") == 0 and "kv_cache and rival claim it alike" in err
    finally:
        registry.unregister("rival")
    assert registry.for_result(leaf).name == "kv_cache"


def test_a_layout_registered_from_outside_is_asked_too(tmp_path, run_cli):
    """A throwaway layout claiming its own tree (a marker file at its top) owns it, whatever kinds'
    results lie below; its check is what `suite check` says of the tree."""
    from suite.layouts.layout import Layout

    def claims(path):
        path = Path(path)
        return Claim.TREE if path.is_dir() and (path / "toy-layout.marker").is_file() else Claim.NONE

    def check(path, args):
        assert callable(args.for_result)              # the layout hands what it does not read to its kind
        handed = args.for_result(Path(path) / "leaf")
        return Checked(f"toy layout: leaf {handed['kind']} {handed['verdict']}\n", "verdict: OPEN",
                       ExitCode.FAILED, "open")

    root = tmp_path / "toy"
    shutil.copytree(KV / KV_LEAF, root / "leaf")
    (root / "toy-layout.marker").write_text("")
    registry.register_layout(Layout(name="toy-layout", claims=claims, check=check,
                                    metrics=lambda path, form: 0, report_page=lambda path, args: None))
    try:
        with pytest.raises(ValueError):
            registry.register_layout(registry.owner("toy-layout"))
        assert registry.for_result(root).name == "toy-layout"
        assert registry.for_result(root / "leaf").name == "kv_cache"
        code, out, err = run_cli("check", root)
        assert code == ExitCode.FAILED and out.startswith("toy layout: leaf kv_cache invalid"), (out, err)
    finally:
        registry.unregister_layout("toy-layout")
    assert registry.for_result(root).name != "toy-layout"
