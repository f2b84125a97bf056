"""Our own v3.0 series, made once per test run (across pytest-xdist's workers too) by a real `suite run
--ruleset v3.0` (retinanet on b200, one accelerator, a 24-file miniature: real mpiexec, a few seconds)
and copied for each test, which then breaks one thing. A miniature: never compliant, which the rule cases allow for."""

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from suite.training.data import datagen
from suite.training import workloads

_MADE: dict[str, Path] = {}
FAST = ["--param", "train.epochs=1", "--param", "train.computation_time=0.001", "--param", "reader.read_threads=2"]


def series(dst: Path) -> Path:
    """A copy of the session's v3.0 series at `dst` (R: run_set.json, training/retinanet/run/<ts>/ x 6)."""
    if "res" not in _MADE:
        _MADE["res"] = _made_once()
    shutil.copytree(_MADE["res"], dst)
    return dst


def _made_once() -> Path:
    """The series, made once for the whole test run: pytest-xdist's workers of one run share
    PYTEST_XDIST_TESTRUNUID, so the first to come makes it under an flock in the temp dir and the others
    wait and read it; one process alone makes its own, as before."""
    uid = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if uid is None or not uid.isalnum():
        return _make(Path(tempfile.mkdtemp(prefix="ours3-")))
    shared = os.environ.get("SUITE_TEST_SHARED_TMP")     # the workers' common temp dir (tests/conftest.py)
    tmp = Path(shared or tempfile.gettempdir()) / f"ours3-{uid}"
    tmp.mkdir(exist_ok=True)
    with open(tmp / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (tmp / "made").is_file():
            for part in ("data", "res"):                  # what a worker that failed part-way left
                shutil.rmtree(tmp / part, ignore_errors=True)
            _make(tmp)
            (tmp / "made").touch()
    return tmp / "res"


def _make(tmp: Path) -> Path:
    datagen.generate(workloads.resolve("retinanet", "b200"), tmp / "data", 24, processes=1)
    done = subprocess.run([sys.executable, "-m", "suite", "run", "--workload", "retinanet", "--accelerator-type",
                           "b200", "--accelerators", "1", "--ruleset", "v3.0", "--data-dir", str(tmp / "data"),
                           "--results-dir", str(tmp / "res"), "--division", "open", *FAST],
                          cwd=tmp, capture_output=True, text=True, timeout=600)
    assert (tmp / "res" / "run_set.json").is_file(), done.stderr[-2000:]
    return tmp / "res"


def leaves(root: Path) -> list[Path]:
    return sorted((root / "training" / "retinanet" / "run").iterdir())
