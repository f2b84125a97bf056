"""MLCommons' `mlpstorage` 2.0.0b1 (../shared/oracles) as a test oracle: installed once into a venv of
its own under the user's cache (--no-deps, and the three packages its reportgen imports, from PyPI);
tests that need it skip cleanly where ../shared or the install is absent. Never imported by suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import paths

TARBALL = "mlpstorage-2.0.0b1-caa90c9.tar.gz"
DEPS = ("psutil", "pyarrow", "pyyaml")


def _cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "suite" / "oracles" / TARBALL.removesuffix(".tar.gz")


def mlpstorage() -> Path:
    """The oracle's `mlpstorage` executable, installed on first use (a file lock keeps xdist workers
    from installing it twice); pytest.skip where it cannot be had."""
    import fcntl

    tarball = paths.SHARED / "oracles" / TARBALL
    if not tarball.is_file():
        pytest.skip(f"{tarball} is not present")
    venv = _cache()
    exe = venv / "bin" / "mlpstorage"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.is_file():
            steps = [[sys.executable, "-m", "venv", str(venv)],
                     [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(tarball)],
                     [str(venv / "bin" / "pip"), "install", "-q", *DEPS]]
            for step in steps:
                done = subprocess.run(step, capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    pytest.skip(f"the mlpstorage oracle could not be installed: {done.stderr.strip()[-300:]}")
    return exe


def reportgen(results: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """`mlpstorage reports reportgen` over `results`: its process and the runs it wrote to
    results/results.json (where this version writes, whatever --output-dir says)."""
    out = results.parent / f"{results.name}-reportgen"
    done = subprocess.run([str(mlpstorage()), "reports", "reportgen", "--results-dir", str(results),
                           "--output-dir", str(out)], capture_output=True, text=True, timeout=300, cwd=results.parent)
    written = results / "results.json" if (results / "results.json").is_file() else out / "results.json"
    runs = json.loads(written.read_text()) if written.is_file() else []
    return done, runs
