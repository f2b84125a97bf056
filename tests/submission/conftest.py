"""Fixtures of the `suite submission` tests (closed_results, the real small closed `suite run` they share with
tests/test_end_to_end.py, is in tests/conftest.py)."""

import pytest


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory):
    """Two real 1-run open results dirs of two benchmarks (cosmoflow on h100 and on a100), 16 files of
    data each: (base, [h100 run, a100 run]). Seconds, not minutes; no cgroup needed. Made once a session
    for every xdist worker (tests/conftest.py `once`; tests/hostile/test_writes_corpus.py shares it too):
    read it as it is, copy before changing anything."""
    from tests.conftest import once

    return once(tmp_path_factory, "two-runs", make_two_runs)


def make_two_runs(tmp_path_factory):
    import os
    import subprocess
    import sys

    import paths

    env = {**os.environ, "PYTHONPATH": str(paths.REPO)}
    base = tmp_path_factory.mktemp("open-runs")
    out = []
    for accel in ("h100", "a100"):
        data, run = base / f"data-{accel}", base / f"run-{accel}"
        for argv in (["datagen", "--workload", "cosmoflow", "--accelerator-type", accel, "--files", "16",
                      "--data-dir", data, "--processes", "1"],
                     ["run", "--workload", "cosmoflow", "--accelerator-type", accel, "--accelerators", "1",
                      "--data-dir", data, "--results-dir", run, "--division", "open", "--runs", "1"]):
            done = subprocess.run([sys.executable, "-m", "suite", *map(str, argv)], capture_output=True, text=True,
                                  env=env, timeout=300)
            assert done.returncode in (0, 1), done.stderr        # an open run may end OPEN (exit 1)
        assert (run / "run_set.json").is_file()
        out.append(run)
    return base, out
