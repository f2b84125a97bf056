"""`suite run` for real: mpiexec with 1 and 2 ranks, a real cache drop, a real cgroup, faults."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from suite.training.data import datagen
from suite.training import workloads

from suite.training import figures as metrics
from suite import files
from tests.conftest import DATA, REPO

DLIO = DATA / "dlio-v1.0"     # a published WEKA v1.0 run's files (copied from shared/fixtures)

UNET = ["dataset.record_length=200000", "dataset.record_length_stdev=50000", "train.epochs=2",
        "train.computation_time=0.005", "checkpoint.model_size=1000000"]
RESNET = ["dataset.num_samples_per_file=20", "dataset.record_length=1000", "dataset.record_length_stdev=0",
          "reader.batch_size=8", "train.epochs=2", "train.computation_time=0.003"]
UNET_ARGS = [a for p in UNET for a in ("--param", p)]
DATA_KEYS = ("dataset.record_length", "dataset.record_length_stdev", "dataset.num_samples_per_file")


def make_data(path: Path, name: str, params: list[str], num_files: int) -> Path:
    keep = [p for p in params if p.split("=")[0] in DATA_KEYS]
    wl = workloads.resolve(name, "h100", workloads.parse_params(keep))
    datagen.generate(wl, path, num_files, processes=1)
    return path


@pytest.fixture(scope="module")
def unet_data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("unet") / "data", "unet3d", UNET, 30)


@pytest.fixture(scope="module")
def resnet_data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("resnet") / "data", "resnet50", RESNET, 12)


def params(ps, tmp_path):
    out = []
    for p in ps:
        out += ["--param", p]
    return out + ["--param", f"checkpoint.checkpoint_folder={tmp_path / 'ckpt'}"]


def load(p):
    return json.loads(Path(p).read_text())


def test_one_rank_unet3d_run_writes_dlio_files_and_evidence(run_cli, unet_data, tmp_path):
    res = tmp_path / "res"
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", unet_data,
                             "--results-dir", res, "--runs", 1, "--division", "open", *params(UNET, tmp_path))
    assert code == 1, err            # open + a dataset below the size rule: complete but not compliant
    assert "[METRIC] Number of Simulated Accelerators: 1" in out
    run = res / "run-1"
    doc = files.load_json(run / "results.json", schema="results")
    assert doc["status"] == "complete" and doc["complete"] is True and doc["miniature"] is False
    assert doc["enforcement"]["cache_drop"]["succeeded"] is True          # we are root: a real drop
    assert doc["enforcement"]["memory_limit"] is None
    assert any("files: expected at least" in r for r in doc["compliance"]["reasons"])
    assert any("outside the open division's allow-list" in r for r in doc["compliance"]["reasons"])
    assert doc["checkpoint"]["bytes_written"] == 1_000_000
    # summary.json has DLIO v1.0's keys, the same set as a published WEKA run
    summary = load(run / "summary.json")
    weka = load(DLIO / "weka-unet3d-h100-run1-summary.json")
    assert set(summary) == set(weka)
    assert set(summary["metric"]) == set(weka["metric"])
    assert summary["num_accelerators"] == 1 and summary["epochs"] == 2 and summary["num_files_train"] == 30
    # the checker's recomputation: AU per epoch from the steps file
    steps = files.load_json(run / "steps" / "rank-0.json", schema="steps")
    assert [e["samples"] for e in steps["epochs"]] == [28, 28]            # 4 steps x batch 7
    for i, e in enumerate(steps["epochs"]):
        au = metrics.epoch_au_from_steps(e["step_start_s"], e["step_end_s"], e["step_compute_s"])
        assert au == pytest.approx(summary["metric"]["train_au_percentage"][i])
        assert e["bytes_read"] > 28 * 100_000            # every byte of 28 files (~200 kB each)
        ct = 0.005
        assert set(e["step_compute_s"]) == {ct}          # counted: the configured compute, as DLIO counts it
        assert len(e["step_sleep_s"]) == 4 and sum(e["step_sleep_s"]) >= 4 * ct   # the sleeps, paid back
    assert doc["metric"]["bytes_read"] == sum(e["bytes_read"] for e in steps["epochs"])
    # per_epoch_stats.json and configs/ shaped as DLIO writes them
    pes = load(run / "per_epoch_stats.json")
    weka_pes = load(DLIO / "weka-unet3d-h100-run1-per_epoch_stats.json")
    assert list(pes) == ["1", "2"] and set(pes["1"]) == set(weka_pes["1"]) == {"start", "block1", "end", "duration"}
    assert set(pes["2"]) == set(weka_pes["5"]) and set(pes["2"]["ckpt1"]) == set(weka_pes["5"]["ckpt1"])
    assert isinstance(pes["1"]["duration"], str) and float(pes["1"]["duration"]) >= 0
    overrides = yaml.safe_load((run / "configs" / "overrides.yaml").read_text())
    weka_overrides = yaml.safe_load((DLIO / "weka-unet3d-h100-run1-overrides.yaml").read_text())
    assert overrides[:3] == weka_overrides[:3]           # workload=unet3d_h100, generate_data=False, train=True
    assert "++workload.train.computation_time=0.005" in overrides
    assert all(o.startswith("++workload.") for o in overrides[1:])
    cfg = yaml.safe_load((run / "configs" / "config.yaml").read_text())
    assert cfg["workload"]["dataset"]["num_files_train"] == 30
    log = (run / "dlio.log").read_text().rstrip().splitlines()
    assert log[-1] == f"[METRIC] train_au_meet_expectation: {summary['metric']['train_au_meet_expectation']}"
    assert load(res / "run_set.json")["overall"]["num_benchmark_runs"] == 1


def test_two_ranks_resnet50_with_memory_cgroup(run_cli, resnet_data, tmp_path):
    res = tmp_path / "res"
    code, out, err = run_cli("run", "--workload", "resnet50", "--accelerators", 2, "--data-dir", resnet_data,
                             "--results-dir", res, "--runs", 2, "--division", "open", "--memory-limit", "512MiB",
                             *params(RESNET, tmp_path))
    assert code == 1, err
    assert "[METRIC] Number of Simulated Accelerators: 2" in out
    for k in (1, 2):
        run = res / f"run-{k}"
        doc = files.load_json(run / "results.json", schema="results")
        assert doc["status"] == "complete"
        mem = doc["enforcement"]["memory_limit"]
        assert mem["requested_bytes"] == 512 * 1024**2
        assert 0 < mem["applied_bytes"] <= 512 * 1024**2
        assert mem["peak_bytes"] > 10 * 1024**2        # python + mpi4py in two ranks
        assert mem["removed"] is True and not Path(mem["path"]).exists()
        assert doc["enforcement"]["host_memory_bytes"] == 512 * 1024**2
        ranks = [files.load_json(run / "steps" / f"rank-{r}.json", schema="steps") for r in (0, 1)]
        summary = load(run / "summary.json")
        for i in range(2):
            au, tput = metrics.epoch_from_ranks([rk["epochs"][i] for rk in ranks])
            assert au == pytest.approx(summary["metric"]["train_au_percentage"][i])
            assert tput == pytest.approx(summary["metric"]["train_throughput_samples_per_second"][i])
        # 240 samples, batch 8 x 2 ranks: 15 steps each, disjoint sample ranges
        assert [len(rk["epochs"][0]["step_compute_s"]) for rk in ranks] == [15, 15]
    report = load(res / "mlperf_storage_report.json")
    weka = load(DLIO / "weka-unet3d-a100-mlperf_storage_report.json")
    assert set(report) == set(weka) and set(report["overall"]) == set(weka["overall"])
    assert set(report["runs"]) == {"run1", "run2"} and set(report["runs"]["run1"]) == set(weka["runs"]["run1"])
    assert report["overall"]["num_benchmark_runs"] == 2 and report["overall"]["train_num_accelerators"] == "2"


@pytest.fixture(scope="module")
def cosmoflow_data(tmp_path_factory):
    """Real closed-division cosmoflow files (2.8 MB each), far fewer than the size rule wants."""
    return make_data(tmp_path_factory.mktemp("cosmo") / "data", "cosmoflow", [], 3)


def test_closed_refuses_a_dataset_below_the_size_rule(run_cli, cosmoflow_data, tmp_path):
    code, out, err = run_cli("run", "--workload", "cosmoflow", "--accelerators", 2, "--data-dir", cosmoflow_data,
                             "--results-dir", tmp_path / "res", "--memory-limit", "1GiB")
    assert code == 2, err
    assert "files: expected at least 1898 for 2 accelerator(s) and 1.0 GiB host memory" in err
    assert err.rstrip().endswith("got 3 (suite datasize says how many; suite datagen writes them)")
    assert not (tmp_path / "res").exists()


@pytest.mark.parametrize("argv,message", [
    (["--param", "train.computation_time=0.1"], "--param train.computation_time: expected one of the closed"),
    (["--param", "reader.prefetch_size=4"], "reader.prefetch_size: expected at most 2"),
    ([], "generation_log.json: record_length_bytes: expected 146600628, got 200000"),
])
def test_closed_division_refusals(run_cli, unet_data, tmp_path, argv, message):
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", unet_data,
                             "--results-dir", tmp_path / "res", *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "res").exists()


def test_wrong_format_on_disk_is_refused(run_cli, resnet_data, tmp_path):
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", resnet_data,
                             "--results-dir", tmp_path / "res", "--division", "open", *params(UNET, tmp_path))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert str(resnet_data) in err


@pytest.mark.parametrize("argv,message", [
    (["--param", "reader.nope=1"], "--param reader.nope: expected one of"),
    (["--param", "reader.read_threads=many"], "--param reader.read_threads: expected integer, got 'many'"),
    (["--data-dir", "/nonexistent/data"], "--data-dir /nonexistent/data: expected a directory"),
    (["--memory-limit", "12"], "--memory-limit"),
    (["--accelerators", "0"], "--accelerators"),
])
def test_bad_input_is_one_line_exit_2(run_cli, tmp_path, argv, message):
    base = ["run", "--workload", "unet3d", "--accelerators", "1", "--division", "open", "--results-dir", tmp_path / "r"]
    if "--data-dir" not in argv:
        base += ["--data-dir", tmp_path]
    code, out, err = run_cli(*base, *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


NOBODY = 65534


def as_nobody(argv, cwd):
    """The CLI as uid 65534, for whom /proc/sys/vm/drop_caches (mode 0200, root) is really not writable.
    The venv's python lives under /root here, so run the system python 3.11 on the venv's packages."""
    import site
    import sysconfig

    python = "/usr/bin/python3"
    if not os.path.exists(python):
        pytest.skip("no system python for uid 65534")
    venv_bin = str(Path(sys.executable).parent)
    paths = [str(REPO), sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    env = dict(os.environ, HOME=str(cwd), PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(paths),
               PATH=venv_bin + os.pathsep + os.environ.get("PATH", ""),
               LD_LIBRARY_PATH=str(Path(sys.executable).parent.parent / "lib"))
    # the session's bytecode prefix (tests/conftest.py) lies in root's 0700 temp dir: uid 65534 would compile
    # every module it imports from source, in each process; without it, it reads the bytecode beside them
    env.pop("PYTHONPYCACHEPREFIX", None)
    kwargs = dict(cwd=cwd, env=env, user=NOBODY, group=NOBODY, extra_groups=[], capture_output=True, text=True)
    key = (python, *paths)
    if key not in _NOBODY_IMPORTS:      # once a process: the same checkout and venv whoever asks
        imports = "import suite.training.run.rank, mpi4py, numpy, yaml, jsonschema, crc32c"
        probe = subprocess.run([python, "-c", imports], timeout=60, **kwargs)
        _NOBODY_IMPORTS[key] = (probe.returncode, probe.stderr)
    code, said = _NOBODY_IMPORTS[key]
    if code != 0:   # e.g. a checkout or venv under a 0700 directory
        pytest.skip(f"uid 65534 cannot import suite from {REPO} / {venv_bin}: "
                    f"{said.strip().splitlines()[-1:]} (needs a world-readable checkout and venv)")
    return subprocess.run([python, "-m", "suite", *map(str, argv)], timeout=120, **kwargs)


_NOBODY_IMPORTS: dict = {}     # as_nobody's probe, by interpreter and import paths: (exit code, stderr)


@pytest.fixture
def world_readable_dir():
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="suite-nobody-"))
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to uid 65534")
def test_cache_drop_not_permitted(world_readable_dir):
    tmp = world_readable_dir
    data = make_data(tmp / "data", "unet3d", UNET, 14)
    for p in [tmp, *tmp.rglob("*")]:
        os.chmod(p, 0o777 if p.is_dir() else 0o644)
    base = ["run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", data, "--runs", 1]
    closed = as_nobody(base + ["--results-dir", tmp / "closed"], tmp)
    assert closed.returncode == 2, closed.stderr
    assert "cache drop: expected permission" in closed.stderr and "drop_caches" in closed.stderr
    assert len(closed.stderr.strip().splitlines()) == 1
    assert not (tmp / "closed").exists()
    opened = as_nobody(base + ["--results-dir", tmp / "open", "--division", "open", *params(UNET, tmp)], tmp)
    assert opened.returncode == 1, opened.stderr
    doc = files.load_json(tmp / "open" / "run-1" / "results.json", schema="results")
    assert doc["status"] == "complete", (tmp / "open" / "run-1" / "mpiexec.log").read_text()[-2000:]
    assert doc["enforcement"]["cache_drop"]["succeeded"] is False
    assert doc["compliance"]["compliant"] is False
    assert any("cache drop" in r for r in doc["compliance"]["reasons"])


# --------------------------------------------------------------------------- faults, for real


def start_cli(argv, cwd):
    return subprocess.Popen([sys.executable, "-m", "suite", *map(str, argv)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, proc, timeout=60.0):
    deadline = time.time() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.time() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


SLOW = ["--param", "train.computation_time=0.05", "--param", "train.epochs=50"]


def test_a_rank_killed_mid_run_fails_the_run(unet_data, tmp_path):
    res = tmp_path / "res"
    proc = start_cli(["run", "--workload", "unet3d", "--accelerators", 2, "--data-dir", unet_data, "--results-dir",
                      res, "--runs", 2, "--division", "open", *params(UNET, tmp_path), *SLOW], REPO)
    pidfile = res / "run-1" / "ranks" / "rank-1.pid"
    wait_for(pidfile, proc)
    wait_for(res / "run-1" / "ranks" / "rank-0.pid", proc)
    time.sleep(0.5)
    pids = {r: int((res / "run-1" / "ranks" / f"rank-{r}.pid").read_text().split()[1]) for r in (0, 1)}
    os.kill(pids[1], signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("suite run: error:") and "rank 1" in line and "SIGKILL" in line, err
    doc = files.load_json(res / "run-1" / "results.json", schema="results")
    assert doc["status"] == "failed" and doc["complete"] is False
    assert not (res / "run-2").exists()
    assert not alive(pids[0])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_run_marks_it_interrupted_and_removes_the_cgroup(unet_data, tmp_path, sig):
    res = tmp_path / "res"
    proc = start_cli(["run", "--workload", "unet3d", "--accelerators", 2, "--data-dir", unet_data, "--results-dir",
                      res, "--runs", 3, "--division", "open", "--memory-limit", "1GiB", *params(UNET, tmp_path),
                      "--param", "train.epochs=2", "--param", "train.computation_time=0.05"], REPO)
    # 10x UNET's step: run 2 lasts long enough for its rank pid files to be seen on a loaded machine
    out = ""
    while "[run 2/3] 2 rank(s)" not in out:       # let run 1 complete, then interrupt run 2
        line = proc.stdout.readline()
        assert line, proc.communicate()
        out += line
    threading.Thread(target=proc.stdout.read, daemon=True).start()   # read on, as a terminal does
    wait_for(res / "run-2" / "ranks" / "rank-1.pid", proc)
    wait_for(res / "run-2" / "ranks" / "rank-0.pid", proc)
    pids = [int((res / "run-2" / "ranks" / f"rank-{r}.pid").read_text().split()[1]) for r in (0, 1)]
    before = (res / "run-1" / "results.json").read_bytes()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert f"interrupted by {sig.name}" in err.strip().splitlines()[-1]
    doc = files.load_json(res / "run-2" / "results.json", schema="results")
    assert doc["status"] == "interrupted" and doc["complete"] is False
    assert doc["enforcement"]["memory_limit"]["removed"] is True
    assert not Path(doc["enforcement"]["memory_limit"]["path"]).exists()
    assert (res / "run-1" / "results.json").read_bytes() == before          # earlier runs untouched
    assert files.load_json(res / "run-1" / "results.json", schema="results")["status"] == "complete"
    assert not (res / "run-3").exists()
    assert not any(alive(p) for p in pids)
    assert not list(res.rglob("*.tmp"))                                      # no half-written JSON


def test_file_truncated_mid_run_is_named(tmp_path):
    data = make_data(tmp_path / "data", "unet3d", UNET, 14)
    res = tmp_path / "res"
    proc = start_cli(["run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", data, "--results-dir", res,
                      "--runs", 1, "--division", "open", *params(UNET, tmp_path), *SLOW], REPO)
    wait_for(res / "run-1" / "ranks" / "rank-0.pid", proc)
    victim = sorted((data / "train").rglob("*.npz"))[3]
    os.truncate(victim, 1000)     # every epoch reads every file: the next epoch meets it
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    line = err.strip().splitlines()[-1]
    assert str(victim) in line and "truncated" in line, err
    assert files.load_json(res / "run-1" / "results.json", schema="results")["status"] == "failed"


def test_miniature_default_generates_once_and_is_labelled(run_cli, tmp_path, monkeypatch):
    """No --data-dir: datasize (memory rule only) -> datagen -> cache drop -> cgroup -> run -> [METRIC].
    cosmoflow with a 32 MiB limit keeps it small (59 real 2.8 MB TFRecord files); the second invocation
    (open, one epoch: what it proves is the reuse) reads them once."""
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--workload", "cosmoflow", "--accelerators", 1, "--memory-limit", "32MiB", "--runs", 1,
            "--param", "reader.read_threads=2"]
    code, out, err = run_cli(*argv, "--results-dir", "r1")
    assert "miniature dataset: generating 59 tfrecord files" in out
    assert "MINIATURE" in out and "[METRIC] Number of Simulated Accelerators: 1" in out
    doc = files.load_json(tmp_path / "r1" / "run-1" / "results.json", schema="results")
    assert doc["miniature"] is True and doc["division"] == "closed" and doc["status"] == "complete"
    assert doc["compliance"]["compliant"] is False
    assert any(r.startswith("miniature:") for r in doc["compliance"]["reasons"])
    assert doc["enforcement"]["cache_drop"]["succeeded"] is True
    budget = doc["enforcement"]["memory_budget"]     # the cache budget sizes the data; the cgroup adds the ranks'
    assert budget["cache_budget_bytes"] == 32 * 1024**2 == doc["enforcement"]["host_memory_bytes"]
    assert doc["enforcement"]["memory_limit"]["applied_bytes"] == budget["cgroup_limit_bytes"] > 32 * 1024**2
    assert doc["enforcement"]["required_files"] == 59
    assert doc["dataset"]["num_files_train"] == 59
    assert code == 1      # a miniature is never compliant
    code, out, err = run_cli(*argv, "--results-dir", "r2", "--division", "open", "--param", "train.epochs=1")
    assert "miniature dataset: reusing" in out and "generating" not in out
    assert files.load_json(tmp_path / "r2" / "run-1" / "results.json", schema="results")["status"] == "complete"


def test_hosts_go_to_mpiexec_and_into_the_result(run_cli, unet_data, tmp_path):
    import socket

    host = socket.gethostname()
    res = tmp_path / "res"
    # the dataset named the DLIO way (dataset.data_folder) instead of --data-dir; O_DIRECT reads
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 2, "--param",
                             f"dataset.data_folder={unet_data}", "--param", "reader.odirect=true",
                             "--results-dir", res, "--runs", 1, "--division", "open", "--hosts", host,
                             *params(UNET, tmp_path))
    assert code == 1, err
    doc = files.load_json(res / "run-1" / "results.json", schema="results")
    assert doc["status"] == "complete" and doc["hosts"] == [host] and doc["num_hosts"] == 1
    assert doc["miniature"] is False and doc["dataset"]["data_dir"] == str(unet_data)
    assert doc["params"]["reader.odirect"] is True and doc["metric"]["bytes_read"] > 0
    assert load(res / "run-1" / "summary.json")["num_hosts"] == 1


def test_bad_hostfile_is_one_line(run_cli, unet_data, tmp_path):
    empty = tmp_path / "hosts"
    empty.write_text("# nothing\n")
    for hostfile, message in ((tmp_path / "missing", "cannot read"), (empty, "expected at least one host")):
        code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", unet_data,
                                 "--division", "open", "--hostfile", hostfile, "--results-dir", tmp_path / "r")
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_rank_oom_killed_in_the_cgroup_is_explained(run_cli, tmp_path):
    """4 reader threads x 48 MB buffers (a buffer is capped at the largest file, so the files are 48 MB)
    cannot fit a 128 MiB cgroup: the kernel OOM-kills the rank."""
    big = ["dataset.record_length=48000000", "dataset.record_length_stdev=0", "train.epochs=1",
           "train.computation_time=0.005", "checkpoint.model_size=1000000"]
    data = make_data(tmp_path / "big", "unet3d", big, 7)
    res = tmp_path / "res"
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", data,
                             "--results-dir", res, "--runs", 1, "--division", "open", "--memory-limit", "128MiB",
                             *params(big, tmp_path), "--param", "reader.transfer_size=67108864")
    assert code == 1
    assert "rank 0" in err and "OOM-killed" in err and "raise --memory-limit" in err
    assert len(err.strip().splitlines()) == 1 and "FAQ" not in out
    doc = files.load_json(res / "run-1" / "results.json", schema="results")
    assert doc["status"] == "failed" and doc["enforcement"]["memory_limit"]["oom_kills"] >= 1
    assert doc["enforcement"]["memory_limit"]["removed"] is True


def test_checkpoint_folder_that_cannot_be_made_fails_in_one_line(run_cli, unet_data, tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("not a directory")
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", unet_data,
                             "--results-dir", tmp_path / "res", "--runs", 1, "--division", "open", *UNET_ARGS,
                             "--param", f"checkpoint.checkpoint_folder={blocker / 'ck'}")
    assert code == 1
    assert "rank-0:" in err and "checkpoint folder: Not a directory" in err and len(err.strip().splitlines()) == 1
    doc = files.load_json(tmp_path / "res" / "run-1" / "results.json", schema="results")
    assert doc["status"] == "failed" and str(blocker / "ck") in doc["error"]


def test_the_miniature_checks_the_memory_cgroup_before_writing_its_dataset(run_cli, tmp_path, monkeypatch):
    """A host without a usable cgroup fails in a second, not after generating the dataset."""
    from suite.enforce import cgroup
    from suite.enforce.detect import CgroupError

    monkeypatch.chdir(tmp_path)
    probed = []

    def no_cgroup(limit_bytes, support=None):
        probed.append(limit_bytes)
        raise CgroupError("memory cgroup: expected a usable cgroup hierarchy, got none (test)")

    monkeypatch.setattr(cgroup, "preflight", no_cgroup)
    monkeypatch.setattr(datagen, "generate", lambda *a, **k: pytest.fail("the dataset was generated first"))
    code, out, err = run_cli("run", "--workload", "cosmoflow", "--accelerators", 1, "--memory-limit", "128MiB",
                             "--runs", 1, "--division", "open", "--no-cache-drop")
    assert code == 2 and len(probed) == 1 and probed[0] > 128 * 1024**2, (out, err)   # budget + the ranks' own
    assert "expected a usable cgroup hierarchy" in err
    assert "generating" not in out and not list(tmp_path.rglob("*.tfrecord"))


def test_a_killed_runs_cgroup_is_removed_when_the_next_run_starts(run_cli, tmp_path):
    """A run killed with SIGKILL leaves suite-run-<pid>-<k> behind; the next `suite run` removes it
    (and kills what is left in it) before anything else, and leaves a live run's alone."""
    from suite.enforce import detect
    from suite.enforce import cgroup as cgmod
    from suite.training.run import launch

    support = detect.detect_cgroup()
    if os.geteuid() != 0 or support.version not in ("v1", "v2"):
        pytest.skip(f"needs root and a writable cgroup hierarchy ({support.reason})")
    backend = cgmod.backend_for(support)
    backend._ensure_parent()
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = Path(backend.path_for(f"{launch.CGROUP_PREFIX}{gone.pid}-1"))
    live = Path(backend.path_for(f"{launch.CGROUP_PREFIX}{os.getpid()}-9"))
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        dead.mkdir()
        live.mkdir()
        Path(dead, "cgroup.procs").write_text(str(sleeper.pid))
        # refused later (no such dataset): the clean-up comes first
        code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--division", "open",
                                 "--no-cache-drop", "--data-dir", tmp_path / "none", "--runs", 1)
        assert code == 2 and "expected a directory with the dataset" in err
        assert f"removed 1 stale memory cgroup(s) of a killed run: {dead}" in out
        assert not dead.exists() and live.is_dir()
        assert sleeper.wait(timeout=10) == -9
    finally:
        sleeper.kill()
        sleeper.wait()
        for d in (dead, live):
            if d.exists():
                d.rmdir()
