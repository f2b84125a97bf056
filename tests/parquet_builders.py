"""Real Parquet series (flux-mini, dlrm-mini on b200, one accelerator): `suite datagen`, then a real
`suite run --ruleset v3.0` (six runs, the first a warm-up, cache drops, mpiexec), made once per session
and workload and copied for each test. flux-mini runs with a storage of a known service time
(--debug-read-delay, 0.1 s a file) so that reading, not decoding, is most of its readers' time here;
`slow` plants a slow decode on top (--debug-decode-delay). Never compliant (debug knobs, a small dataset)."""

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from suite.training.data import datagen
from suite.training import workloads

_MADE: dict[tuple, Path] = {}


def _scratch(prefix: str) -> Path:
    """A temp dir removed when the test session's process ends (a dataset is tens of MB)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, tmp, True)
    return tmp
FILES = {"flux-mini": 16, "dlrm-mini": 4}
EXTRA = {"flux-mini": ("--debug-read-delay", "0.1"), "dlrm-mini": ()}


def data(name: str) -> Path:
    """The workload's miniature dataset, written once per session."""
    key = ("data", name)
    if key not in _MADE:
        tmp = _scratch(f"parquet-{name}-")
        datagen.generate(workloads.resolve(name, "b200"), tmp / "data", FILES[name], processes=2)
        _MADE[key] = tmp / "data"
    return _MADE[key]


def run(name: str, results: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "suite", "run", "--workload", name, "--accelerator-type", "b200",
            "--accelerators", "1", "--ruleset", "v3.0", "--data-dir", str(data(name)), "--results-dir",
            str(results), "--division", "open", *EXTRA[name], *extra]
    return subprocess.run(argv, cwd=results.parent, capture_output=True, text=True, timeout=600)


def series(dst: Path, name: str, slow: bool = False) -> Path:
    """A copy of the session's series of `name` at `dst` (R: run_set.json, training/<name>/run/<ts>/ x 6)."""
    key = (name, slow)
    if key not in _MADE:
        tmp = _scratch(f"parquet-{name}-res-")
        extra = ("--debug-decode-delay", "0.2", "--runs", "1") if slow else ()
        done = run(name, tmp / "res", *extra)
        assert (tmp / "res" / "run_set.json").is_file(), done.stdout[-2000:] + done.stderr[-2000:]
        _MADE[key] = tmp / "res"
    shutil.copytree(_MADE[key], dst)
    return dst


def leaves(root: Path, name: str) -> list[Path]:
    return sorted((root / "training" / name / "run").iterdir())
