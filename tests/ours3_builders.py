"""Our own v3.0 series, made once per session by a real `suite run --ruleset v3.0` (retinanet on b200,
one accelerator, a 24-file miniature: real mpiexec, a few seconds) and copied for each test, which
then breaks one thing. A miniature: never compliant, which the rule cases allow for."""

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
        tmp = Path(tempfile.mkdtemp(prefix="ours3-"))
        datagen.generate(workloads.resolve("retinanet", "b200"), tmp / "data", 24, processes=1)
        done = subprocess.run([sys.executable, "-m", "suite", "run", "--workload", "retinanet", "--accelerator-type",
                               "b200", "--accelerators", "1", "--ruleset", "v3.0", "--data-dir", str(tmp / "data"),
                               "--results-dir", str(tmp / "res"), "--division", "open", *FAST],
                              cwd=tmp, capture_output=True, text=True, timeout=600)
        assert (tmp / "res" / "run_set.json").is_file(), done.stderr[-2000:]
        _MADE["res"] = tmp / "res"
    shutil.copytree(_MADE["res"], dst)
    return dst


def leaves(root: Path) -> list[Path]:
    return sorted((root / "training" / "retinanet" / "run").iterdir())
