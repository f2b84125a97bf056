import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session", autouse=True)
def history_store(tmp_path_factory):
    """Every `suite run` a test makes records itself in the history: into a store of this session
    (SUITE_HISTORY, which subprocesses inherit), never the user's $XDG_DATA_HOME."""
    path = tmp_path_factory.mktemp("history") / "history.sqlite"
    old = os.environ.get("SUITE_HISTORY")
    os.environ["SUITE_HISTORY"] = str(path)
    yield path
    if old is None:
        os.environ.pop("SUITE_HISTORY", None)
    else:
        os.environ["SUITE_HISTORY"] = old


def once(tmp_path_factory, name: str, make):
    """make(tmp_path_factory) once for the whole test session, across pytest-xdist's workers too: the first
    worker to ask makes it under an flock in the workers' common temp dir and pickles the value there; the
    others wait on the lock and read it (xdist's loadgroup cannot put tests of several files on one worker
    with this pytest). A value the maker skipped or failed with is made again by whoever asks next."""
    import fcntl
    import pickle

    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return make(tmp_path_factory)
    common = tmp_path_factory.getbasetemp().parent
    done = common / f"{name}.pickle"
    with open(common / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file():
            return pickle.loads(done.read_bytes())
        value = make(tmp_path_factory)
        done.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session")
def voiced(tmp_path_factory):
    """One real small `suite run` per kind, then its check and report (tests/test_one_voice.py's RUNS), made
    once a session: test_one_voice asks them for the one voice, tests/harness/test_cpu_saturation.py copies
    their leaves to plant host metrics in. Tests copy before they change anything."""
    from tests.test_one_voice import made

    return once(tmp_path_factory, "voiced", made)


ACCEL = "a100"                 # see closed_results


@pytest.fixture(scope="session")
def closed_results(tmp_path_factory):
    return once(tmp_path_factory, "closed-results", _closed_results)


def _closed_results(tmp_path_factory):
    """A real closed cosmoflow run: 5 runs that pass `suite check`, shared by tests/test_end_to_end.py,
    tests/submission and docs/submission.md's example (made once for all xdist workers: `once`).
    Its two commands are that example's first two lines as the page has them (tests/docs_hooks.py:
    closed_flow), so the docs example's datagen and run are these, run once.
    On a100 (a closed accelerator of v1.0): its 5.51 ms step leaves the reads 57% more time than h100's
    3.5 ms, so another job on the 2 cores does not push the AU under the 70% threshold."""
    from suite import cli
    from suite.enforce import detect
    from tests.docs_hooks import closed_flow

    if detect.detect_cgroup().version is None:
        pytest.skip("no memory cgroup on this machine")
    root = tmp_path_factory.mktemp("closed-run")
    data = root / "data"
    datagen = closed_flow(data, root / "unused", ACCEL)[0]
    assert cli.main([*datagen, "--processes", "2"]) == 0
    # a shared 2-core machine can push one attempt's AU under cosmoflow's threshold (exit 1): once more
    for attempt in (1, 2):
        results = root / f"results-{attempt}"
        code = cli.main(closed_flow(data, results, ACCEL)[1])
        if code == 0:
            return results
    pytest.fail(f"two closed cosmoflow runs were not compliant (exit {code}): see {results}")


@pytest.fixture
def fixtures_dir():
    """../shared/fixtures (real published results); the test skips when it is absent."""
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is not present")
    return FIXTURES


@pytest.fixture
def run_cli(capsys):
    """Call cli.main([...]) and return (exit_code, stdout, stderr)."""
    from suite import cli

    def call(*argv):
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return call


def mpiexec() -> str:
    """The mpiexec of the mpich wheel installed beside this Python."""
    exe = Path(sys.executable).parent / "mpiexec"
    return str(exe) if exe.exists() else (shutil.which("mpiexec") or "mpiexec")
