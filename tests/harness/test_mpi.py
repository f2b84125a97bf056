"""suite.harness.mpi: mpiexec's argv from plain values, and one line on a rank that died."""

import sys
from pathlib import Path

import pytest

from suite.errors import SuiteError
from suite.harness import mpi


def test_mpiexec_argv_from_plain_values(tmp_path):
    exe = tmp_path / "bin" / "mpiexec"
    assert mpi.mpiexec_argv(2, exe=exe) == [str(exe), "-n", "2"]
    assert mpi.mpiexec_argv(4, hosts=["a", "b"], exe=exe) == [str(exe), "-n", "4", "-hosts", "a,b"]
    assert mpi.mpiexec_argv(4, hostfile="hf", hosts=["a"], exe=exe) == [str(exe), "-n", "4", "-f", "hf"]
    assert mpi.mpiexec_argv(4, host_args=["-launcher", "ssh", "-hosts", "a:2,b:2"], hostfile="hf",
                            exe=exe) == [str(exe), "-n", "4", "-launcher", "ssh", "-hosts", "a:2,b:2"]


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
    assert mpi.python_module("suite.storage.run.rank", Path("/r/plan.json")) == [
        sys.executable, "-m", "suite.storage.run.rank", "/r/plan.json"]


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
