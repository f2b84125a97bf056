"""The rounds' run count is one field: `runs.count` in rules/<round>/ruleset.yaml, inherited through
`extends:`. A private rules/v9.9/ (only a ruleset.yaml that extends v3.0 and says `runs: {count: 3}`) on
$SUITE_RULES_PATH changes every place that counts training runs, with no edit of suite/ or of the
shipped rules/: suite run's series, suite sweep's --runs, the checker's rules (numbered and
timestamped leaves) and a submission's minimum."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from suite.rules import engine, rulesets

REPO = Path(__file__).resolve().parents[2]
PUBLISHED_LEAVES = REPO / "tests" / "data" / "v3" / "training_alluxio"
RUN_COUNT_PARAMS = {"runs_required", "warmup_runs", "runs_series", "training_runs"}


@pytest.fixture
def v99(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "rules"
    (root / "v9.9").mkdir(parents=True)
    (root / "v9.9" / "ruleset.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "v9.9", "benchmark": "mlperf-storage", "extends": "v3.0",
        "description": "a private round for tests: v3.0 with three measured runs", "runs": {"count": 3}}))
    monkeypatch.setenv("SUITE_RULES_PATH", str(root))
    return root


def test_the_one_field_sets_the_count_and_the_rest_of_runs_is_inherited(v99):
    v3, v9 = rulesets.get("v3.0"), rulesets.get("v9.9")
    assert (rulesets.run_count("v3.0"), rulesets.run_count("v9.9")) == (5, 3)
    assert (v9.runs.warmup, v9.runs.warmup_in_series, v9.runs.gap_shorter_than_run) == (
        v3.runs.warmup, v3.runs.warmup_in_series, v3.runs.gap_shorter_than_run) == (1, True, True)
    assert (v3.runs.series, v9.runs.series) == (6, 4)
    closed = engine.load("v9.9", "closed", "unet3d")
    assert (closed.params["runs_required"], closed.params["runs_series"]) == (3, 4)
    leaves = engine.load_layers("v9.9", ("reference-leaves.yaml", "training-leaves.yaml"))
    assert leaves.params["runs_series"] == 4
    assert engine.load_layers("v3.0", ("reference-leaves.yaml", "training-leaves.yaml")).params["runs_series"] == 6


def test_suite_run_makes_the_rounds_series(v99):
    from suite.training.run import prepare

    assert prepare._series(SimpleNamespace(runs=None), "v9.9") == {"runs": 4, "warmup_runs": 1}
    assert prepare._series(SimpleNamespace(runs=None), "v3.0") == {"runs": 6, "warmup_runs": 1}
    assert prepare._series(SimpleNamespace(runs=2), "v9.9") == {"runs": 3, "warmup_runs": 1}


def test_sweep_takes_one_run_or_the_rounds_count(v99, run_cli, tmp_path):
    argv = ("sweep", "--workload", "unet3d", "--accelerator-type", "b200", "--accelerators", "1",
            "--results-dir", tmp_path / "sweep")
    code, out, err = run_cli(*argv, "--ruleset", "v9.9", "--runs", 5)
    assert code == 2 and out == ""
    assert "--runs: expected 1 or 3 (the ruleset's runs.count), got 5" in err
    code, _, err = run_cli(*argv, "--ruleset", "v3.0", "--runs", 3)
    assert code == 2 and "--runs: expected 1 or 5 (the ruleset's runs.count), got 3" in err


def test_the_checker_counts_the_rounds_series(v99, run_cli, tmp_path):
    """The same published leaves checked as v3.0 and as v9.9: the run-count rule expects the round's
    series (six, four) and nothing else differs."""
    tree = tmp_path / "tree"
    shutil.copytree(PUBLISHED_LEAVES, tree)
    found = {}
    for rnd in ("v3.0", "v9.9"):
        code, out, err = run_cli("check", tree, "--ruleset", rnd)
        assert code in (0, 1), err
        found[rnd] = [line.strip() for line in out.splitlines() if "(2.1.17-trainingRunCount)" in line]
    assert len(found["v3.0"]) == 1 and "series.count: expected 6," in found["v3.0"][0]
    assert found["v9.9"] == [found["v3.0"][0].replace("expected 6,", "expected 4,")]


def test_no_rule_file_writes_a_run_count_of_its_own():
    """runs_required, warmup_runs and runs_series come from ruleset.yaml's `runs` only: a rule file
    names them as {param: ...}, never sets them."""
    found = []
    for path in sorted((REPO / "rules").rglob("*.yaml")):
        if path.name == "ruleset.yaml":
            continue
        params = (yaml.safe_load(path.read_text()) or {}).get("params") or {}
        found += [f"{path.relative_to(REPO)}: {k}" for k in params if k in RUN_COUNT_PARAMS]
    assert found == []
