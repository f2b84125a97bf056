"""suite.harness.mpi: mpiexec's argv from plain values, and one line on a rank that died."""

import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from suite.errors import SuiteError
from suite.harness import mpi


def test_mpiexec_argv_from_plain_values(tmp_path):
    exe = tmp_path / "bin" / "mpiexec"
    assert mpi.mpiexec_argv(2, exe=exe) == [str(exe), "-print-all-exitcodes", "-n", "2"]
    assert mpi.mpiexec_argv(4, hosts=["a", "b"], exe=exe) == [str(exe), "-print-all-exitcodes", "-n", "4", "-hosts", "a,b"]
    assert mpi.mpiexec_argv(4, hostfile="hf", hosts=["a"], exe=exe) == [str(exe), "-print-all-exitcodes", "-n", "4", "-f", "hf"]
    assert mpi.mpiexec_argv(4, host_args=["-launcher", "ssh", "-hosts", "a:2,b:2"], hostfile="hf",
                            exe=exe) == [str(exe), "-print-all-exitcodes", "-n", "4", "-launcher", "ssh", "-hosts", "a:2,b:2"]


def test_the_default_mpiexec_is_the_wheels_beside_python():
    beside = Path(sys.executable).parent / "mpiexec"
    if not beside.exists():
        pytest.skip("no mpich wheel beside this python")
    assert mpi.mpiexec_argv(1)[0] == str(beside)


def test_no_mpiexec_anywhere_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SuiteError, match="^mpiexec: expected the mpich wheel's mpiexec beside python, got none"):
        mpi.mpiexec_argv(1)


def test_python_module_runs_this_interpreter():
    assert mpi.python_module("suite.training.run.rank", Path("/r/plan.json")) == [
        sys.executable, "-m", "suite.training.run.rank", "/r/plan.json"]


def test_rank_failure_names_the_rank_from_its_error_file_or_mpiexecs_report(tmp_path):
    (tmp_path / "ranks").mkdir()
    (tmp_path / "ranks" / "rank-1.pid").write_text("hostA 4242")
    (tmp_path / "mpiexec.log").write_text("= BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
                                          "=   PID 4242 RUNNING AT hostA\n=   EXIT CODE: 9\n")
    assert mpi.rank_failure(tmp_path, 1).startswith("rank 1 (pid 4242 on hostA) died: exit code 9 (SIGKILL)")
    (tmp_path / "errors").mkdir()
    (tmp_path / "errors" / "rank-0.txt").write_text("OSError: disk full\ntraceback...")
    assert mpi.rank_failure(tmp_path, 1) == "rank-0: OSError: disk full"


def test_the_ranks_import_this_suite(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = mpi.rank_environment()
    import suite

    root = str(Path(suite.__file__).resolve().parent.parent)
    assert env["PYTHONPATH"].split(":")[0] == root and "/elsewhere" in env["PYTHONPATH"].split(":")


SLEEPER = """
import os, sys, time
from pathlib import Path
from suite.harness.ranks import finished, started
run_dir, rank = Path(sys.argv[1]), int(os.environ["PMI_RANK"])
started(run_dir, rank)
if rank == int(sys.argv[2]):
    finished(run_dir, rank)
    sys.exit(0)
time.sleep(60)
"""


@pytest.mark.parametrize("victim,sig,done", [(1, signal.SIGKILL, None), (0, signal.SIGSEGV, None),
                                             (2, signal.SIGTERM, 0)])
def test_the_first_rank_to_die_is_named_not_the_one_mpiexec_cleaned_up(tmp_path, victim, sig, done):
    """mpiexec SIGKILLs the other ranks once one dies and names rank 0 in its report: the line names
    the rank that died first and how, also when another rank had finished cleanly before it."""
    if not (Path(sys.executable).parent / "mpiexec").exists():
        pytest.skip("no mpich wheel beside this python")
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    argv = mpi.mpiexec_argv(3) + [sys.executable, str(script), str(tmp_path), str(-1 if done is None else done)]

    def kill_when_started():
        pidfile = tmp_path / "ranks" / f"rank-{victim}.pid"
        for _ in range(600):
            if pidfile.exists() and len(list((tmp_path / "ranks").glob("*.pid"))) == 3:
                break
            time.sleep(0.05)
        time.sleep(0.3)
        os.kill(int(pidfile.read_text().split()[1]), sig)

    threading.Thread(target=kill_when_started, daemon=True).start()
    rc = mpi.launch(argv, tmp_path, None)
    assert rc != 0
    line = mpi.rank_failure(tmp_path, rc)
    assert line.startswith(f"rank {victim} (pid ") and f"died first: killed by {sig.name}" in line, line


def test_a_rank_that_left_cleanly_without_finishing_is_not_blamed(tmp_path):
    """A killed rank's sockets close before its pidfd turns readable, so a peer may leave first
    (exit 0, no .done): the line names the rank that exited otherwise; a finished rank never."""
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for r in range(3):
        (ranks / f"rank-{r}.pid").write_text(f"h {100 + r}\n")
    (ranks / "rank-2.done").write_text("")
    (ranks / "exits.txt").write_text("2 signal 9\n0 exit 0\n1 signal 9\n")
    assert mpi.rank_failure(tmp_path, 1).startswith("rank 1 (pid 101 on h) died first: killed by SIGKILL; see ")
    (ranks / "exits.txt").write_text("0 ?\n1 ?\n")
    (tmp_path / "mpiexec.log").write_text("=   PID 100 RUNNING AT h\n=   EXIT CODE: 9\n"
                                          "[mpiexec@h] Exit codes: [h] 9,11,0\n")
    assert mpi.rank_failure(tmp_path, 1).startswith("rank 0 (pid 100 on h) died first: killed by SIGKILL")
    (tmp_path / "mpiexec.log").write_text("[mpiexec@h] Exit codes: [h] 0,11,0\n")
    assert "rank 1 (pid 101 on h) died first: killed by SIGSEGV" in mpi.rank_failure(tmp_path, 1)


def test_a_killed_runs_shared_memory_segments_are_removed(tmp_path):
    """MPICH leaves /dev/shm/mpich_shm_* behind when its ranks are SIGKILLed: a failed launch removes
    the ones its ranks mapped, and leaves alone one made before it that nobody maps, and one that another
    job left while it ran (not its ranks': another test's killed launch once removed this test's)."""
    if not (Path(sys.executable).parent / "mpiexec").exists():
        pytest.skip("no mpich wheel beside this python")
    script = tmp_path / "mpi_sleeper.py"
    script.write_text("import os, sys, time\nfrom pathlib import Path\nfrom mpi4py import MPI\n"
                      "from suite.harness.ranks import started\n"
                      "started(Path(sys.argv[1]), MPI.COMM_WORLD.Get_rank())\nMPI.COMM_WORLD.Barrier()\n"
                      "time.sleep(60)\n")
    planted = Path("/dev/shm") / f"mpich_shm_planted{os.getpid()}_0"
    planted.write_bytes(b"x")
    meanwhile = Path("/dev/shm") / f"mpich_shm_meanwhile{os.getpid()}_0"
    theirs = set()
    try:
        def kill_when_started():
            pidfile = tmp_path / "ranks" / "rank-1.pid"
            for _ in range(600):
                if pidfile.exists() and (tmp_path / "ranks" / "rank-0.pid").exists():
                    break
                time.sleep(0.05)
            time.sleep(0.5)
            pid = int(pidfile.read_text().split()[1])
            theirs.update(re.findall(r"/dev/shm/(mpich_shm_\S+)", Path(f"/proc/{pid}/maps").read_text()))
            meanwhile.write_bytes(b"x")         # another job's orphan, appeared during the run
            os.kill(pid, signal.SIGKILL)

        threading.Thread(target=kill_when_started, daemon=True).start()
        assert mpi.launch(mpi.mpiexec_argv(2) + [sys.executable, str(script), str(tmp_path)], tmp_path, None) != 0
        assert theirs, "the ranks mapped no MPICH segment: nothing to test"
        assert planted.exists() and meanwhile.exists() and not [n for n in theirs if (Path("/dev/shm") / n).exists()]
    finally:
        planted.unlink()
        meanwhile.unlink(missing_ok=True)


def test_death_watch_puts_a_rank_reaped_before_it_looked_first(tmp_path):
    """A starved watch thread (a busy host) can look only after a killed rank was reaped: that rank died before
    any the watch still sees dying, so it is listed first, its status unknown ("?"), not left out (which named
    the rank mpiexec killed next)."""
    import socket
    import subprocess

    ranks = tmp_path / "ranks"
    ranks.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()                                   # reaped: no pidfd can be opened on it
    alive = subprocess.Popen(["sleep", "30"])
    here = socket.gethostname()
    (ranks / "rank-1.pid").write_text(f"{here} {gone.pid}\n")
    (ranks / "rank-0.pid").write_text(f"{here} {alive.pid}\n")
    watch = mpi.DeathWatch(tmp_path)
    watch.start()
    try:
        deadline = time.monotonic() + 10
        while not watch.exits and time.monotonic() < deadline:
            time.sleep(0.01)
        alive.kill()
        alive.wait()
        while len(watch.exits) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        alive.kill()
        watch.finish(write=True)
    assert (ranks / "exits.txt").read_text().splitlines()[0] == "1 ?"
    assert [r for r, _ in watch.exits] == [1, 0]
