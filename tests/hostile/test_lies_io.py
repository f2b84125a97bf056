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
