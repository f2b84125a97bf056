"""Issue 36, classes 3, 10, 12 and 13, with real components: real trees for `check --output`, a real
dask.distributed scheduler and worker on 127.0.0.1 (and a worker killed with SIGKILL mid-run), a real
HTTP server given as --scheduler, a real S3 server with a profile that is not there, and the committed
sweep with its sweep.json forged.

- class 3: `check --output` is refused inside everything the check READS: for a published leaf that is
  the whole tree around it (its system's YAML, a sibling run's summary.json, the code pool); the
  tree is byte-identical after the refusal;
- class 10: every network wait is bounded: a non-Dask server is one line within the bound; a worker
  killed mid-run ends the run within a bound with one line and exit 1; SIGTERM while connecting
  leaves no claim that blocks the results dir;
- class 12: sizing and report re-derive a sweep's figures from its runs, never from sweep.json;
- class 13: no traceback: ucx:// / tls:// schedulers, a missing AWS profile.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import paths
import pytest

PY = [sys.executable, "-m", "suite"]
ENV = {**os.environ, "PYTHONPATH": str(paths.REPO)}
TREE = paths.REPO / "tests" / "data" / "v3" / "tree"
ORG = Path("closed") / "Alluxio"
SYSTEM = "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h"
BENCH = ORG / "results" / SYSTEM / "checkpointing" / "llama3-8b"


def one_line(code, err, needle, exit_code=2):
    assert code == exit_code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert needle.lower() in err.lower(), err


def snapshot(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): "<dir>" if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


def cli(*argv, timeout=120, env=None, **kw):
    done = subprocess.run([*PY, *map(str, argv)], capture_output=True, text=True, env=env or ENV, timeout=timeout, **kw)
    return done.returncode, done.stdout, done.stderr


# --------------------------------------------------------------------------- class 3: --output around a leaf

@pytest.fixture
def tree(tmp_path):
    shutil.copytree(TREE, tmp_path / "tree", symlinks=True)
    return tmp_path / "tree"


@pytest.mark.parametrize("target", [ORG / "systems" / f"{SYSTEM}.yaml", BENCH / "20260708_065100" / "summary.json",
                                    Path("Alluxio") / "code-5d45230a" / ".code-hash.json", BENCH / "new-report.txt",
                                    ORG / "systems" / "new.txt"])
def test_check_output_anywhere_in_the_tree_a_leaf_is_read_from_is_refused(run_cli, tree, target):
    before = snapshot(tree)
    code, out, err = run_cli("check", tree / BENCH / "20260708_064613", "--output", tree / target)
    one_line(code, err, "--output")
    assert "outside" in err and str(tree) in err and out == ""
    assert snapshot(tree) == before            # byte-identical: nothing written, nothing made


def test_check_output_beside_the_tree_is_written(run_cli, tree, tmp_path):
    code, out, err = run_cli("check", tree / BENCH / "20260708_064613", "--output", tmp_path / "report.txt")
    assert code in (0, 1) and err == "", err
    assert "wrote" in out and (tmp_path / "report.txt").read_text().strip()


def test_check_output_into_a_checkpointing_runs_phase_is_refused(run_cli, tmp_path):
    """A run-<k>'s check reads its phase (the run set, the other runs): --output there is refused."""
    phase = tmp_path / "phase"
    (phase / "run-1").mkdir(parents=True)
    (phase / "checkpoint_run_set.json").write_text("{}")
    (phase / "run-1" / "results.json").write_text("{}")
    before = snapshot(phase)
    code, _, err = run_cli("check", phase / "run-1", "--output", phase / "checkpoint_run_set.json")
    one_line(code, err, "--output")
    assert snapshot(phase) == before


# --------------------------------------------------------------------------- class 12: sweep claims

SWEEP = paths.REPO / "tests" / "data" / "sweep" / "resnet50-h100-tiny"   # sweep.json and its runs' results.json
SIZING = ["sizing", "--workload", "resnet50", "--accelerator-type", "h100", "--accelerators", 4, "--from"]


def _forged(tmp_path) -> tuple[Path, int, float]:
    """The committed sweep with one storage point's AU forged to 95% where its runs say less, the knee and
    the probes' answer moved to agree: sweep.json agrees with itself (verify finds nothing), not with its runs."""
    import json

    from suite.training.sweep import verify

    d = tmp_path / "sw"
    shutil.copytree(SWEEP, d)
    doc = json.loads((d / "sweep.json").read_text())
    i, pt = next((i, p) for i, p in enumerate(doc["points"]) if p["storage"] and not p["storage"]["meets_threshold"])
    ran = pt["storage"]["au_percentage"]
    assert ran < 90
    pt["storage"].update(au_per_run=[95.0] * pt["storage"]["runs"], au_percentage=95.0, meets_threshold=True)
    later = [p["accelerators"] for p in doc["points"] if p["accelerators"] > pt["accelerators"]]
    doc["knee"] = {"accelerators": min(later), "reason": "AU below the threshold"}
    doc["max_accelerators"]["found_by_probes"] = pt["accelerators"]
    assert verify.contradictions(doc) == []          # the forgery the old check accepted
    (d / "sweep.json").write_text(json.dumps(doc))
    return d, i, ran


def test_sizing_of_a_forged_sweep_uses_its_runs_and_says_so(run_cli, tmp_path):
    d, i, ran = _forged(tmp_path)
    code, out, err = run_cli(*SIZING, d)
    assert code == 1 and err == "", err
    assert f"points[{i}].storage.au_percentage: expected {ran!r}" in out and "got 95.0" in out
    assert "knee.accelerators" in out and "its runs' results.json" in out
    code, ok, _ = run_cli(*SIZING, SWEEP)            # the table is the runs' own: as for the untouched sweep
    assert code == 0 and ok.split("INVALID")[0].splitlines()[1:] == out.split("INVALID")[0].splitlines()[1:]


def test_report_of_a_forged_sweep_shows_the_runs_values_and_the_finding(run_cli, tmp_path):
    d, i, ran = _forged(tmp_path)
    code, _, err = run_cli("report", d, "--out", tmp_path / "rep")
    assert code == 0, err
    page = (tmp_path / "rep" / "index.html").read_text()
    assert 'id="sweep-findings"' in page and f"points[{i}].storage.au_percentage" in page
    csv = (tmp_path / "rep" / "sweep_points.csv").read_text()
    assert f"{ran:.2f}"[:4] in csv and "95.0" not in csv


@pytest.mark.parametrize("how", ["removed", "linked-out"])
def test_a_claim_without_its_runs_is_not_rederivable_and_not_used(run_cli, tmp_path, how):
    d, i, _ = _forged(tmp_path)
    import json

    rel = json.loads((d / "sweep.json").read_text())["points"][i]["storage"]["results_dir"]
    shutil.rmtree(d / rel)
    if how == "linked-out":                          # runs outside the sweep dir, agreeing with the claim
        (tmp_path / "elsewhere").mkdir()
        (d / rel).symlink_to(tmp_path / "elsewhere")
    code, out, err = run_cli(*SIZING, d)
    assert code == 1 and f"points[{i}].storage: expected 'claimed, not re-derivable'" in out, out + err
    code, _, err = run_cli("report", d, "--out", tmp_path / "rep")
    assert code == 0, err
    assert "not re-derivable" in (tmp_path / "rep" / "index.html").read_text()
    assert "95.0" not in (tmp_path / "rep" / "sweep_points.csv").read_text()


def test_the_committed_sweep_rederives_to_itself(run_cli):
    from suite.training.sweep import rederive

    doc, found = rederive.load(SWEEP)
    assert found == [] and doc["points"] and all(p["storage"]["runs"] for p in doc["points"] if p["storage"])
