"""Fixtures of the `suite submission` tests: one real small closed `suite run` shared by them all."""

import pytest

from suite.enforce import detect


@pytest.fixture(scope="session")
def closed_results(tmp_path_factory):
    """A real closed cosmoflow run (tests/test_end_to_end.py's recipe): 5 runs that pass `suite check`."""
    from suite import cli

    if detect.detect_cgroup().version is None:
        pytest.skip("no memory cgroup on this machine")
    root = tmp_path_factory.mktemp("submission-run")
    data = root / "data"
    assert cli.main(["datagen", "--workload", "cosmoflow", "--accelerators", "1", "--host-memory", "256MiB",
                     "--data-dir", str(data), "--processes", "2"]) == 0
    # a shared 2-core machine can push one attempt's AU under cosmoflow's threshold (exit 1): once more
    for attempt in (1, 2):
        results = root / f"results-{attempt}"
        code = cli.main(["run", "--workload", "cosmoflow", "--accelerators", "1", "--data-dir", str(data),
                         "--results-dir", str(results), "--memory-limit", "256MiB"])
        if code == 0:
            return results
    pytest.fail(f"two closed cosmoflow runs were not compliant (exit {code}): see {results}")
