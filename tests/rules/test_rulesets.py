"""suite/rules/rulesets.py: the rulesets are what rules/*/ holds; a new round is a new folder."""

import dataclasses
import shutil

import pytest
from pathlib import Path
import yaml

import paths

from suite import files
from suite.errors import RuleError, SuiteError
from suite.rules import engine as rules
from suite.rules import rulesets
from suite.training import workloads
from suite.training import datasize


def test_the_shipped_rulesets_in_round_order():
    assert rulesets.names() == ("v0.5", "v1.0", "v2.0", "v3.0")   # v3.0: issue 25
    assert rulesets.names("tpcx-ai") == ("tpcx-ai",)
    assert rulesets.default().name == "v3.0"            # issue 25: v3.0 is the default for new runs
    assert rulesets.base().name == "v1.0"               # results without a newer round's hints are v1.0's
    assert rulesets.covering("checkpointing") == ("v2.0", "v3.0")
    assert rulesets.submission_names() == ("v1.0", "v2.0", "v3.0")   # v3.0: issue 26


def test_every_ruleset_file_validates_against_its_schema():
    paths = sorted(rulesets.root().glob(f"*/{rulesets.FILE}"))
    assert [p.parent.name for p in paths] == ["tpcx-ai", "v0.5", "v1.0", "v2.0", "v3.0"]
    for path in paths:
        files.load_yaml(path, schema="ruleset", error=RuleError)


def test_extends_inherits_and_overrides():
    v1, v2, v05 = rulesets.get("v1.0"), rulesets.get("v2.0"), rulesets.get("v0.5")
    assert (v1.datasize.min_steps, v1.datasize.formula, v1.runs.warmup) == (500, "samples", 0)
    assert (v2.datasize.min_steps, v2.datasize.formula, v2.runs.warmup, v2.runs.count) == (500, "files", 1, 5)
    assert (v05.datasize.min_steps, v05.workloads) == (100, ("unet3d", "bert"))
    assert v2.submission.system_schema == "system-v2.0" and v05.submission.system_schema == "system-v1.0"
    assert not v2.default and v2.detection.warmup_run and not v1.detection.any     # neither is inherited
    assert v05.detection.implied_accelerator == {"unet3d": "v100", "bert": "v100"}


def test_the_constants_are_the_rule_files_params():
    assert rules.load("v2.0", "closed", "unet3d").params["runs_required"] == 5
    assert rules.load("v0.5", "closed", "unet3d").params["known_workloads"] == ["unet3d", "bert"]
    assert rules.load("v2.0", "closed", None).params["system_schema"] == "system-v2.0"


def test_unknown_ruleset_is_a_suite_error():
    with pytest.raises(SuiteError, match=r"ruleset: expected one of v0.5, v1.0, v2.0, v3.0, tpcx-ai, got 'v7.0'"):
        rulesets.get("v7.0")


# --------------------------------------------------------------------------- a new round


@pytest.fixture
def new_round(tmp_path, monkeypatch):
    """A copy of the shipped rules/ as the rules root; returns a writer for <ruleset>/<file>."""
    root = tmp_path / "rules"
    shutil.copytree(rulesets.root(), root)
    monkeypatch.setattr(rulesets, "root", lambda: root)
    rules.load.cache_clear()
    rules.load_layers.cache_clear()

    def write(rel, doc):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(yaml.safe_dump(doc, sort_keys=False))
    yield write
    rules.load.cache_clear()
    rules.load_layers.cache_clear()


V99 = {"schema_version": 1, "name": "v9.9", "benchmark": "mlperf-storage", "extends": "v2.0",
       "datasize": {"min_steps": 1000}, "runs": {"count": 6}, "detection": {"warmup_run": True}}


def test_a_new_round_is_a_new_folder_with_extends(new_round):
    new_round("v9.9/ruleset.yaml", V99)
    new_round("v9.9/common.yaml", {"schema_version": 1, "extends": ["v2.0/common.yaml"], "rules": []})
    assert rulesets.names() == ("v0.5", "v1.0", "v2.0", "v3.0", "v9.9")
    r = rulesets.get("v9.9")
    assert (r.datasize.min_steps, r.datasize.formula, r.runs.count, r.runs.warmup) == (1000, "files", 6, 1)
    # read where code uses it: the dataset size, and the rules' run count
    wl = workloads.resolve("resnet50", "h100")
    wl = dataclasses.replace(wl, rulesets=(*wl.rulesets, "v9.9"))
    new, old = datasize.compute(wl, 16, 1, 1, "v9.9"), datasize.compute(wl, 16, 1, 1, "v2.0")
    assert new.steps_rule_samples // wl.num_samples_per_file == 1000 * 16 * wl.batch_size // wl.num_samples_per_file
    assert new.num_files > old.num_files
    rs = rules.load("v9.9", "closed", None)
    assert rs.params["runs_required"] == 6 and "warmup-run" in {x.id for x in rs.rules}
    # and identify takes a warm-up run for the newest round that says so
    from suite.layouts.benchdirs import identify
    run = type("Run", (), {"warmup": True, "summaries": [], "overrides": None, "results": None})()
    assert identify._detected([run]) == ("v9.9", "a warm-up run")


@pytest.mark.parametrize("doc,match", [
    ({**V99, "extends": "v8.0"}, r"v9.9/ruleset.yaml: extends: expected one of .*got 'v8.0'"),
    ({**V99, "name": "v9.8"}, r"v9.9/ruleset.yaml: name: expected the folder's name 'v9.9', got 'v9.8'"),
    ({**V99, "colour": "red"}, r"v9.9/ruleset.yaml: .*colour"),
])
def test_a_bad_ruleset_file_is_a_load_error(new_round, doc, match):
    new_round("v9.9/ruleset.yaml", doc)
    with pytest.raises(RuleError, match=match):
        rulesets.names()


def test_an_extends_cycle_and_a_missing_constant_are_load_errors(new_round):
    new_round("v9.9/ruleset.yaml", {**V99, "extends": "v9.8"})
    new_round("v9.8/ruleset.yaml", {**V99, "name": "v9.8", "extends": "v9.9"})
    with pytest.raises(RuleError, match=r"ruleset.yaml: extends: expected no cycle, got v9.\d -> v9.\d -> v9.\d"):
        rulesets.names()
    new_round("v9.8/ruleset.yaml", {"schema_version": 1, "name": "v9.8", "benchmark": "mlperf-storage"})
    with pytest.raises(RuleError, match=r"v9.8/ruleset.yaml: covers: expected a value .*got none"):
        rulesets.names()


def test_argtype_reads_the_rulesets_when_parsing():
    import argparse

    assert rulesets.argtype("auto")("auto") == "auto" and rulesets.argtype()("v0.5") == "v0.5"
    with pytest.raises(argparse.ArgumentTypeError, match=r"invalid choice: 'v0.5' \(choose from 'v1.0', 'v2.0', 'v3.0'\)"):
        rulesets.argtype(submission=True)("v0.5")


def test_a_new_round_is_a_choice_of_the_cli(new_round, run_cli, tmp_path):
    new_round("v9.9/ruleset.yaml", V99)
    code, _, err = run_cli("check", tmp_path, "--ruleset", "v9.9")
    assert code == 2 and "invalid choice" not in err        # accepted; the empty dir is what is refused


def test_every_workload_names_known_rulesets_of_the_rounds_that_cover_it():
    for name in workloads.names():
        for accel in workloads.accelerators(name):
            for rs in workloads.resolve(name, accel).rulesets:
                r = rulesets.get(rs) if rs in rulesets.names() else None
                assert r and name in (*r.workloads, *r.open_workloads), (name, accel, rs)


def test_open_workloads_are_known_but_not_closed():
    r = rulesets.get("v3.0")
    assert r.open_workloads[:2] == ("flux", "dlrm") and not set(r.open_workloads) & set(r.workloads)
    params = r.params()
    assert {"flux", "dlrm", "unet3d"} <= set(params["known_workloads"])
    assert "flux" not in params["closed_workloads"] and "retinanet" in params["closed_workloads"]
    assert rulesets.get("v2.0").open_workloads == ()


def test_the_run_count_is_written_only_in_the_rounds(tmp_path):
    """--runs' default, the sweep's confirmation, sweep --runs and the closed submission's minimum read
    runs.count from rules/<round>/ruleset.yaml: no module of suite/ keeps a run count of its own."""
    import re

    root = Path(__file__).resolve().parents[2] / "suite"
    kept = [f"{p}:{i}" for p in root.rglob("*.py") for i, line in enumerate(p.read_text().splitlines(), 1)
            if re.search(r"(DEFAULT|CONFIRM|CLOSED_MIN)_RUNS\s*=|choices=\[1, 5\]", line)]
    assert kept == []
    assert {rulesets.run_count(n) for n in rulesets.names() if rulesets.get(n).runs} == {5}
    assert rulesets.run_count() == rulesets.default().runs.count


def test_v3_extends_v2_six_runs_first_a_warmup_fs_separation():
    """MLPerf Storage v3.0: v2.0's constants and rule layers, five measured runs after one warm-up
    that suite run makes (a series of six), data and results apart, timestamped leaves, gaps shorter
    than a run; the default for new runs."""
    from suite.rules import engine

    v2, v3 = rulesets.get("v2.0"), rulesets.get("v3.0")
    assert v3.extends == "v2.0" and v3.covers == ("training", "checkpointing", "kv_cache", "vector_database") and v3.workloads == ("unet3d", "retinanet")
    assert (v3.runs.count, v3.runs.warmup, v3.runs.warmup_in_series, v3.runs.series) == (5, 1, True, 6)
    assert (v2.runs.warmup_in_series, v2.runs.series, v2.fs_separation) == (False, 5, False)
    assert v3.fs_separation is True and v3.datasize == v2.datasize
    assert v3.submission.system_schema == "system-v3.0" and v3.submission.create is True   # issue 26
    assert not v3.detection.any and rulesets.default().name == "v3.0" and v3.default and not rulesets.get("v1.0").default
    assert (v3.leaves, v2.leaves, v3.runs.gap_shorter_than_run, v2.runs.gap_shorter_than_run) == (
        "timestamped", "numbered", True, False)
    assert "v3.0" in rulesets.names() and rulesets.names()[-1] == "v3.0"
    closed = engine.load("v3.0", "closed", "retinanet")
    v2_ids = {r.id for r in engine.load("v2.0", "closed", "unet3d").rules}
    dropped = set(yaml.safe_load((paths.REPO / "rules/v3.0/common.yaml").read_text())["drops"])
    assert dropped and v2_ids - dropped <= {r.id for r in engine.load("v3.0", "closed", "unet3d").rules}
    assert not dropped & {r.id for r in engine.load("v3.0", "closed", "unet3d").rules}   # their clause: the judge's
    assert closed.params["runs_required"] == 5 and closed.params["warmup_runs"] == 1
    assert "reader.odirect" in engine.load("v3.0", "closed", "unet3d").params["workload_closed_params"]


def test_a_run_without_ruleset_takes_v3_where_the_workload_has_it_else_v1():
    """v3.0 is the default for new runs; h100/a100 workloads (no v3.0) keep v1.0, as before."""
    assert datasize.default_ruleset(workloads.resolve("retinanet", "b200")) == "v3.0"
    assert datasize.default_ruleset(workloads.resolve("unet3d", "b200")) == "v3.0"
    assert datasize.default_ruleset(workloads.resolve("unet3d", "h100")) == "v1.0"
    assert datasize.default_ruleset(workloads.resolve("unet3d", "v100")) == "v0.5"
