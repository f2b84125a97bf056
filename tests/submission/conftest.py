"""Fixtures of the `suite submission` tests: one real small closed `suite run` shared by them all."""

import pytest

from suite.enforce import detect

ACCEL = "a100"                 # see closed_results


@pytest.fixture(scope="session")
def closed_results(tmp_path_factory):
    """A real closed cosmoflow run (tests/test_end_to_end.py's recipe): 5 runs that pass `suite check`.
    On a100 (a closed accelerator of v1.0): its 5.51 ms step leaves the reads 57% more time than h100's
    3.5 ms, so another job on the 2 cores does not push the AU under the 70% threshold."""
    from suite import cli

    if detect.detect_cgroup().version is None:
        pytest.skip("no memory cgroup on this machine")
    root = tmp_path_factory.mktemp("submission-run")
    data = root / "data"
    assert cli.main(["datagen", "--workload", "cosmoflow", "--accelerator-type", ACCEL, "--accelerators", "1",
                     "--host-memory", "256MiB",
                     "--data-dir", str(data), "--processes", "2"]) == 0
    # a shared 2-core machine can push one attempt's AU under cosmoflow's threshold (exit 1): once more
    for attempt in (1, 2):
        results = root / f"results-{attempt}"
        code = cli.main(["run", "--workload", "cosmoflow", "--accelerator-type", ACCEL, "--accelerators", "1",
                         "--data-dir", str(data),
                         "--results-dir", str(results), "--memory-limit", "256MiB"])
        if code == 0:
            return results
    pytest.fail(f"two closed cosmoflow runs were not compliant (exit {code}): see {results}")


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory):
    """Two real 1-run open results dirs of two benchmarks (cosmoflow on h100 and on a100), 16 files of
    data each: (base, [h100 run, a100 run]). Seconds, not minutes; no cgroup needed."""
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
