"""suite/kinds/registry.py results_under and suite/kinds/tree.py: every result under a path, by its kind."""

import json
import shutil

import paths
from check_builders import ours_results
from suite.kinds import registry

PAIR = paths.DATA / "checkpoint" / "llama3-8b-miniature"
TPCX = paths.DATA / "tpcxai-sf0.01" / "tpcxai-result.json"


def test_results_under_asks_each_kind_and_never_below_a_claimed_dir(tmp_path):
    ours_results(tmp_path / "s" / "unet3d")
    shutil.copytree(PAIR, tmp_path / "c")
    (tmp_path / "t").mkdir()
    shutil.copy(TPCX, tmp_path / "t" / "tpcxai-result.json")
    (tmp_path / "code").mkdir()                                    # submitted code: never a result
    shutil.copy(TPCX, tmp_path / "code" / "tpcxai-result.json")
    found = registry.results_under(tmp_path)
    root = tmp_path.resolve()
    assert found.by_kind["checkpointing"] == [root / "c" / "R", root / "c" / "W"]
    assert found.by_kind["tpcx-ai"] == [root / "t"]
    assert found.by_kind["training"] == [root / "s" / "unet3d" / f"run-{k}" for k in range(1, 6)]
    assert found.unclassified == []


def test_a_result_naming_a_kind_no_kind_claims_is_unclassified(tmp_path):
    ours_results(tmp_path / "s" / "unet3d")
    shutil.copytree(PAIR / "W" / "run-1", tmp_path / "lost")       # a checkpointing run without its phase
    found = registry.results_under(tmp_path)
    assert [f.name for f, _ in found.unclassified] == ["results.json"]
    assert "checkpoint_run_set.json" in found.unclassified[0][1]


def test_a_single_kind_tree_is_checked_by_its_kind_as_before(run_cli, tmp_path):
    ours_results(tmp_path / "unet3d")
    code, out, err = run_cli("check", tmp_path, "--format", "json")
    assert code == 0 and "benchmarks" in json.loads(out) and json.loads(out).get("kind") != "tree"
    code, out, err = run_cli("check", PAIR / "W" / "run-2", "--format", "json")   # one run: its phase, alone
    doc = json.loads(out)
    assert code == 1 and doc.get("kind") != "tree" and len(doc["benchmarks"]) == 1
    assert [f["rule_id"] for f in doc["findings"]] == ["checkpoint-write-and-read"]
