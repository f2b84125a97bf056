"""Results the reference tool reads (issue 45): MLCommons' own `mlpstorage reports reportgen` (2.0.0b1,
the test oracle of tests/reference_tool.py) over real `suite run` results of every round and kind it
knows reads them with no error, counts every run, shows our per-run figures, and its verdict agrees with
`suite check` where its checker is real (training; its checkpointing checker is a stub: every run
passes); its outputs left in the results dir change nothing `suite check` says."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from suite import cli
from suite.training.data import datagen
from suite.training import workloads
from tests.ours3_builders import FAST, series
from tests.reference_tool import mlpstorage, reportgen


def _suite(*argv, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suite", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def made(tmp_path_factory, request) -> dict[str, Path]:
    """Real results, copied here (reportgen writes its outputs into them): v2.0 training (2 numbered runs),
    v3.0 training (a warm-up + 5 leaves), made once a session across xdist's workers (`_runs`), v2.0
    checkpointing (a write and a read invocation, 5 runs each: docs/checkpointing.md's two lines, the
    session's `v2_checkpoint_pair`), and v3.0 checkpointing (a write+read pair: the
    session's `voiced` llama3-8b miniature, tests/conftest.py)."""
    from tests.conftest import once

    mlpstorage()                                   # skip the module before any run where the oracle is absent
    here = tmp_path_factory.mktemp("interop")
    out = {k: Path(shutil.copytree(v, here / k, symlinks=True))
           for k, v in once(tmp_path_factory, "reference-tool-runs", _runs).items()}
    pair, ran = request.getfixturevalue("v2_checkpoint_pair")       # the docs' write and read lines, run once
    assert [code for code, _ in ran] == [1, 1], ran                 # each phase alone is half a result
    out["c2"] = Path(shutil.copytree(pair / "ck", here / "c2", symlinks=True))
    ck = request.getfixturevalue("voiced")["checkpointing"]
    if isinstance(ck, BaseException):
        raise ck
    out["c3"] = Path(shutil.copytree(ck[2], here / "c3", symlinks=True))
    return out


def _runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("interop-runs")
    datagen.generate(workloads.resolve("resnet50", "h100"), base / "data", 16, processes=1)
    _suite("run", "--workload", "resnet50", "--accelerator-type", "h100", "--accelerators", "1", "--ruleset", "v2.0",
           "--data-dir", str(base / "data"), "--results-dir", str(base / "t2"), "--division", "open", "--runs", "2",
           *FAST, cwd=base)
    series(base / "t3")
    return {"t2": base / "t2", "t3": base / "t3"}


@pytest.mark.parametrize("which,runs", [("t2", 2), ("t3", 6), ("c2", 10), ("c3", 2)],
                         ids=["training-v2.0", "training-v3.0", "checkpointing-v2.0", "checkpointing-v3.0"])
def test_reportgen_reads_every_run_of_ours(made, which, runs, capsys):
    capsys.readouterr()
    cli.main(["check", str(made[which]), "--format", "json"])
    before = json.loads(capsys.readouterr().out)["verdict"]
    done, found = reportgen(made[which])
    assert done.returncode == 0, done.stderr[-1500:]
    assert "Traceback" not in done.stdout + done.stderr
    assert len(found) == runs, [r.get("run_id") for r in found]
    capsys.readouterr()
    cli.main(["check", str(made[which]), "--format", "json"])
    assert json.loads(capsys.readouterr().out)["verdict"] == before        # its outputs change nothing


def test_reportgens_figures_are_ours_and_its_training_verdict_agrees(made, capsys):
    root = made["t2"]
    _, found = reportgen(root)
    capsys.readouterr()
    cli.main(["metrics", str(root), "--format", "json"])
    ours = {Path(r["path"]).name: r for r in json.loads(capsys.readouterr().out)["benchmarks"][0]["runs"]}
    assert len(found) == len(ours) == 2
    for run in found:
        mine = ours[Path(run["run_id"]).name]
        assert run["metrics"]["train_au_mean_percentage"] == pytest.approx(mine["au_mean_percentage"], rel=1e-9)
        assert run["metrics"]["train_throughput_mean_samples_per_second"] == pytest.approx(
            mine["samples_per_second"], rel=1e-9)
        assert run["model"] == "resnet50" and run["benchmark_type"] == "training"
    done, _ = reportgen(root)
    assert "INVALID" in done.stdout and "Disallowed parameter override: train.epochs" in done.stdout
    capsys.readouterr()
    assert cli.main(["check", str(root), "--format", "json"]) == 1
    ids = json.dumps(json.loads(capsys.readouterr().out))
    assert '"invalid"' in ids and "open-params" in ids and "dataset-size" in ids   # the same two faults, ours
