"""A round is data: a private rules/v9.9/ (only a ruleset.yaml, `extends: v3.0`) on $SUITE_RULES_PATH
is a round of the real CLI. `suite check`, `suite metrics` and `suite submission init` of training,
checkpointing, kv_cache and vector_database results labelled v9.9 give v3.0's verdicts and figures,
with no edit of suite/ or of the shipped rules/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

DATA = Path(__file__).resolve().parents[1] / "data"
TRAINING = DATA / "v3" / "training_alluxio"
CHECKPOINT = DATA / "checkpoint" / "v3-llama3-8b-miniature"
KV = DATA / "v3" / "kv_cache_FarmGPU"
KV_LEAF = "open/FarmGPU/results/potato8-qlc-np6-open-tnf-70b/kv_cache/llama3.1-70b-instruct/run/20260709_215001"
VDB = DATA / "v3" / "vector_database_TTA"
VDB_DIR = "closed/TTA/results/seahorse-storage/vector_database"
ROUNDS = ("v3.0", "v9.9")


@pytest.fixture(scope="module")
def rules_path(tmp_path_factory) -> Path:
    """rules/v9.9/ruleset.yaml: a name, a description, what it extends; nothing else."""
    root = tmp_path_factory.mktemp("private") / "rules"
    (root / "v9.9").mkdir(parents=True)
    (root / "v9.9" / "ruleset.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "v9.9", "benchmark": "mlperf-storage", "extends": "v3.0",
        "description": "a private round for tests: v3.0's rules under another name"}))
    return root


def suite(rules: Path, *argv) -> tuple[int, str, str]:
    env = {**os.environ, "SUITE_RULES_PATH": str(rules)}
    p = subprocess.run([sys.executable, "-m", "suite", *map(str, argv)], capture_output=True, text=True, env=env,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def labelled(src: Path, dest: Path, rnd: str) -> Path:
    """A copy of `src` whose results name round `rnd` where they name one."""
    shutil.copytree(src, dest, symlinks=True)
    for p in dest.rglob("*.json"):
        text = p.read_text(encoding="utf-8")
        if '"ruleset": "v3.0"' in text:
            p.write_text(text.replace('"ruleset": "v3.0"', f'"ruleset": "{rnd}"'), encoding="utf-8")
    return dest


def same(outs: dict, roots: dict) -> None:
    """Both rounds' (exit code, stdout) equal once each root and round name is replaced (v9.9's rule
    files are v3.0's: `v3.0/common.yaml` in either)."""
    norm = {r: (code, out.replace(str(roots[r]), "ROOT").replace("v3.0/", "ROUND/").replace(r, "ROUND"))
            for r, (code, out) in outs.items()}
    assert norm["v9.9"] == norm["v3.0"]


def both(rules: Path, argv_of) -> dict:
    out = {}
    for r in ROUNDS:
        code, stdout, stderr = suite(rules, *argv_of(r))
        assert code in (0, 1), stderr
        out[r] = (code, stdout)
    return out


def test_the_private_round_is_listed_with_v3_constants(rules_path):
    from suite.rules import rulesets

    found = rulesets.discover()          # this process: the shipped rules only
    assert "v9.9" not in found
    os.environ["SUITE_RULES_PATH"] = str(rules_path)
    try:
        found = rulesets.discover()
        v3, v99 = found["v3.0"], found["v9.9"]
        assert v99.chain == ("v9.9", "v3.0", "v2.0", "v1.0") and not v99.default
        for field in ("covers", "workloads", "runs", "datasize", "submission", "fs_separation", "leaves",
                      "checkpoint_invocation", "tree_rules"):
            assert getattr(v99, field) == getattr(v3, field), field
        assert rulesets.for_kind("kv_cache", "v9.9").name == "v9.9"
    finally:
        del os.environ["SUITE_RULES_PATH"]


def test_training_check_and_metrics(rules_path, tmp_path):
    roots = {r: labelled(TRAINING, tmp_path / r, r) / "rigA_c5n18xl" for r in ROUNDS}
    checks = both(rules_path, lambda r: ("check", roots[r], "--ruleset", r, "--format", "json"))
    same(checks, roots)
    assert json.loads(checks["v9.9"][1])["ruleset"] == "v9.9"      # reference leaves: their kind's check, any place
    # reference leaves name no round: without --ruleset both copies are read as the default round's
    metrics = both(rules_path, lambda r: ("metrics", roots[r]))
    assert metrics["v3.0"][0] == metrics["v9.9"][0] == 0
    assert metrics["v3.0"][1].replace(str(roots["v3.0"]), "ROOT") == metrics["v9.9"][1].replace(str(roots["v9.9"]), "ROOT")


def test_checkpointing_check_and_metrics_take_the_round_the_results_name(rules_path, tmp_path):
    roots = {r: labelled(CHECKPOINT, tmp_path / r, r) / "R" for r in ROUNDS}
    checks = both(rules_path, lambda r: ("check", roots[r]))
    same(checks, roots)
    assert "checkpointing (v9.9)" in checks["v9.9"][1]
    assert checks["v9.9"][0] == 1 and "(4.4.2-checkpointFilesystemCheck)" in checks["v9.9"][1]   # made on one file system
    assert checks["v9.9"][1].rstrip().endswith("verdict: INVALID MINIATURE NOT PUBLISHABLE (not compliant)")
    same(both(rules_path, lambda r: ("metrics", roots[r])), roots)


def _kv_labelled(tmp_path: Path, rnd: str) -> Path:
    leaf = labelled(KV, tmp_path / rnd, rnd) / KV_LEAF
    meta = next(leaf.glob("kv_cache_*_metadata.json"))
    doc = json.loads(meta.read_text())
    meta.write_text(json.dumps({**doc, "suite": {"ruleset": rnd}}))     # the round, where our runs record it
    return leaf


def test_kv_cache_check_and_metrics(rules_path, tmp_path):
    roots = {r: _kv_labelled(tmp_path, r) for r in ROUNDS}
    checks = both(rules_path, lambda r: ("check", roots[r], "--format", "json"))
    same(checks, roots)
    assert json.loads(checks["v9.9"][1])["ruleset"] == "v9.9" and checks["v9.9"][0] == 1
    same(both(rules_path, lambda r: ("check", roots[r], "--ruleset", r)), roots)
    same(both(rules_path, lambda r: ("metrics", roots[r], "--format", "json")), roots)
    code, out, err = suite(rules_path, "check", roots["v9.9"], "--ruleset", "v2.0")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "expected v3.0 or v9.9 (the rounds with kv_cache rules" in err and "got v2.0" in err


def _vdb_labelled(tmp_path: Path, rnd: str) -> Path:
    root = labelled(VDB, tmp_path / rnd, rnd) / VDB_DIR
    for summary in root.rglob("summary.json"):
        leaf = summary.parent
        (leaf / f"vector_database_{leaf.name}_metadata.json").write_text(json.dumps({"ruleset": rnd}))
    return root


def test_vector_database_check_and_metrics(rules_path, tmp_path):
    roots = {r: _vdb_labelled(tmp_path, r) for r in ROUNDS}
    checks = both(rules_path, lambda r: ("check", roots[r], "--format", "json"))
    same(checks, roots)
    doc = json.loads(checks["v9.9"][1])
    assert doc["ruleset"] == "v9.9" and {f["rule_id"] for f in doc["findings"]} == {
        "vdb-run-count", "vdb-ground-truth-recorded", "vdb-recall-claimed-floor"}
    same(both(rules_path, lambda r: ("metrics", roots[r], "--format", "json")), roots)
    code, _, err = suite(rules_path, "check", roots["v9.9"], "--ruleset", "v1.0")
    assert code == 2 and "the rounds with vector_database rules" in err and "got v1.0" in err


def test_published_tree_check_under_the_private_round(rules_path, tmp_path):
    roots = {r: labelled(KV, tmp_path / r, r) for r in ROUNDS}
    checks = both(rules_path, lambda r: ("check", roots[r], "--ruleset", r, "--format", "json"))
    same(checks, roots)
    assert json.loads(checks["v9.9"][1])["ruleset"] == "v9.9"


def test_submission_init_makes_the_pooled_layout(rules_path, tmp_path):
    trees = {}
    for r in ROUNDS:
        code, out, err = suite(rules_path, "submission", "init", tmp_path / r, "--ruleset", r, "--org", "Acme",
                               "--division", "closed", "--system", "sys1", "--data-dir", tmp_path)
        assert code == 0, err
        assert f"({r}, closed)" in " ".join(out.split())     # the 100-column wrap may break a long path's line
        trees[r] = sorted(str(p.relative_to(tmp_path / r)) for p in (tmp_path / r).rglob("*"))
    assert trees["v9.9"] == trees["v3.0"] and "closed/Acme/systems/sys1.yaml" in trees["v9.9"]
    assert "Acme/.mlps-image-pool" in trees["v9.9"]
    marker = next((tmp_path / "v9.9").glob(".suite-submission*"), None) or next(
        p for p in (tmp_path / "v9.9").iterdir() if p.is_file())
    assert json.loads(marker.read_text())["ruleset"] == "v9.9"
