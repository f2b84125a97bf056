"""Real `suite run` results of every round and kind the published trees show, made once per session
(each a miniature: seconds to a minute; across pytest-xdist's workers too: tests/conftest.py `once`) for the
leaf-file comparisons of tests/test_leaf_kinds.py. Read them as they are; copy before changing anything:

    made("v1.0", f)         # (f: the tmp_path_factory) R/: run-1/ (summary.json, per_epoch_stats.json, configs/),
                            # mlperf_storage_report.json
    made("v0.5", f)         # the same, v0.5 (unet3d on v100)
    made("training", f)     # R/training/unet3d/{datasize,datagen,run}/<ts>/ (v3.0, the embedded miniature)

The kv_cache, checkpointing and vector_database leaves those tests read are the session's `voiced` and
`tiny_diskann` runs (tests/conftest.py), not runs of their own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.ours3_builders import FAST

SMALL = ["--param", "dataset.record_length=1048576", "--param", "dataset.record_length_stdev=0"]
_MADE: dict[str, Path | None] = {}


def _suite(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suite", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def _numbered(tmp: Path, ruleset: str, accelerator: str) -> tuple[Path, subprocess.CompletedProcess]:
    _suite(tmp, "datagen", "--workload", "unet3d", "--accelerator-type", accelerator, "--files", "8", "--data-dir",
           str(tmp / "data"), *SMALL)
    return tmp / "R", _suite(tmp, "run", "--workload", "unet3d", "--accelerator-type", accelerator, "--accelerators",
                             "1", "--ruleset", ruleset, "--data-dir", str(tmp / "data"), "--results-dir", str(tmp / "R"),
                             "--division", "open", "--runs", "1", *SMALL, *FAST)


def _training(tmp: Path) -> tuple[Path, subprocess.CompletedProcess]:
    # 1 MiB records (SMALL) and a 48 MiB memory limit: the embedded miniature is 240 files, 240 MiB, where
    # the default's 28 files of unet3d's records were 4 GiB, written and read twice
    return tmp / "R", _suite(tmp, "run", "--workload", "unet3d", "--accelerator-type", "b200", "--accelerators", "1",
                             "--ruleset", "v3.0", "--results-dir", str(tmp / "R"), "--division", "open", "--runs", "1",
                             "--memory-limit", "48MiB", *SMALL, *FAST)


BUILDERS = {"v0.5": lambda tmp: _numbered(tmp, "v0.5", "v100"), "v1.0": lambda tmp: _numbered(tmp, "v1.0", "h100"),
            "training": _training}


def made(which: str, tmp_path_factory) -> Path | None:
    """The session's results of `which` (a key of BUILDERS), made on first use by whichever worker asks
    first (the others wait for it and read the same folder); None where its engine is not installed here."""
    from tests.conftest import once

    if which not in _MADE:
        _MADE[which] = once(tmp_path_factory, f"leaves-{which}", lambda factory: _build(which, factory))
    return _MADE[which]


def _build(which: str, tmp_path_factory) -> Path | None:
    tmp = tmp_path_factory.mktemp(f"leaves-{which}")
    root, done = BUILDERS[which](tmp)
    assert root is None or any(root.rglob("summary.json")), (done.stderr or "")[-2000:]
    return root
