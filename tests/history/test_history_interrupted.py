"""A run stopped part-way (SIGTERM to a real `suite run`) still records itself, marked so (issue 39:
"a failed or interrupted run too, marked so")."""

import os
import signal
import subprocess
import sys
import time

import pytest

import paths
from suite.history import db
from tests.compare.test_compare import TINY, run_args
from tests.training.run.test_runner import make_data


@pytest.mark.timeout(300)
def test_a_run_stopped_by_sigterm_is_recorded_as_interrupted(tmp_path):
    data = make_data(tmp_path / "data", "resnet50", TINY, 12)
    store, out = tmp_path / "history.sqlite", tmp_path / "R"
    argv = [str(x) for x in run_args(tmp_path, data, out, 5, "--debug-read-delay", "0.05", "--history", store)]
    env = {**os.environ, "PYTHONPATH": str(paths.REPO)}
    p = subprocess.Popen([sys.executable, "-m", "suite", *argv], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "run-1").is_dir() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert p.poll() is None, p.communicate()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    assert p.returncode != 0 and "Traceback" not in err, err
    with db.open_store(str(store)) as s:
        got = s.entries()
    assert [e.status for e in got] == ["interrupted"], [(e.status, e.verdict) for e in got]
    assert got[0].verdict == "interrupted" and got[0].command[:4] == ("suite", "run", "--workload", "resnet50")
