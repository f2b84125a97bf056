"""Issue 36, classes 3, 10, 12 and 13, with real components: real trees for `check --output`, a real
dask.distributed scheduler and worker on 127.0.0.1 (and a worker killed with SIGKILL mid-run), a real
HTTP server given as --scheduler, a real S3 server with a profile that is not there, and the committed
sweep with its sweep.json forged.

- class 3: `check --output` is refused inside everything the check READS: for a published leaf that is
  the whole tree around it (its system's YAML, a sibling run's summary.json, the code pool); the
  tree is byte-identical after the refusal;
- class 10: every network wait is bounded: a non-Dask server is one line within the bound; a worker
  killed mid-run ends the run within a bound with one line and exit 1; SIGTERM while connecting
  leaves no claim that blocks the results dir;
- class 12: sizing and report re-derive a sweep's figures from its runs, never from sweep.json;
- class 13: no traceback: ucx:// / tls:// schedulers, a missing AWS profile.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import paths
import pytest

PY = [sys.executable, "-m", "suite"]
ENV = {**os.environ, "PYTHONPATH": str(paths.REPO)}
TREE = paths.REPO / "tests" / "data" / "v3" / "tree"
ORG = Path("closed") / "Alluxio"
SYSTEM = "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h"
BENCH = ORG / "results" / SYSTEM / "checkpointing" / "llama3-8b"


def one_line(code, err, needle, exit_code=2):
    assert code == exit_code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert needle.lower() in err.lower(), err


def snapshot(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): "<dir>" if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


def cli(*argv, timeout=120, env=None, **kw):
    done = subprocess.run([*PY, *map(str, argv)], capture_output=True, text=True, env=env or ENV, timeout=timeout, **kw)
    return done.returncode, done.stdout, done.stderr


# --------------------------------------------------------------------------- class 3: --output around a leaf

@pytest.fixture
def tree(tmp_path):
    shutil.copytree(TREE, tmp_path / "tree", symlinks=True)
    return tmp_path / "tree"


@pytest.mark.parametrize("target", [ORG / "systems" / f"{SYSTEM}.yaml", BENCH / "20260708_065100" / "summary.json",
                                    Path("Alluxio") / "code-c5cbafac" / ".code-hash.json", BENCH / "new-report.txt",
                                    ORG / "systems" / "new.txt"])
def test_check_output_anywhere_in_the_tree_a_leaf_is_read_from_is_refused(run_cli, tree, target):
    before = snapshot(tree)
    code, out, err = run_cli("check", tree / BENCH / "20260708_064613", "--output", tree / target)
    one_line(code, err, "--output")
    assert "outside" in err and str(tree) in err and out == ""
    assert snapshot(tree) == before            # byte-identical: nothing written, nothing made


def test_check_output_beside_the_tree_is_written(run_cli, tree, tmp_path):
    code, out, err = run_cli("check", tree / BENCH / "20260708_064613", "--output", tmp_path / "report.txt")
    assert code in (0, 1) and err == "", err
    assert "wrote" in out and (tmp_path / "report.txt").read_text().strip()


def test_check_output_into_a_checkpointing_runs_phase_is_refused(run_cli, tmp_path):
    """A run-<k>'s check reads its phase (the run set, the other runs): --output there is refused."""
    phase = tmp_path / "phase"
    (phase / "run-1").mkdir(parents=True)
    (phase / "checkpoint_run_set.json").write_text("{}")
    (phase / "run-1" / "results.json").write_text("{}")
    before = snapshot(phase)
    code, _, err = run_cli("check", phase / "run-1", "--output", phase / "checkpoint_run_set.json")
    one_line(code, err, "--output")
    assert snapshot(phase) == before


# --------------------------------------------------------------------------- class 12: sweep claims

SWEEP = paths.REPO / "tests" / "data" / "sweep" / "resnet50-h100-tiny"   # sweep.json and its runs' results.json
SIZING = ["sizing", "--workload", "resnet50", "--accelerator-type", "h100", "--accelerators", 4, "--from"]


def _forged(tmp_path) -> tuple[Path, int, float]:
    """The committed sweep with one storage point's AU forged to 95% where its runs say less, the knee and
    the probes' answer moved to agree: sweep.json agrees with itself (verify finds nothing), not with its runs."""
    import json

    from suite.training.sweep import verify

    d = tmp_path / "sw"
    shutil.copytree(SWEEP, d)
    doc = json.loads((d / "sweep.json").read_text())
    i, pt = next((i, p) for i, p in enumerate(doc["points"]) if p["storage"] and not p["storage"]["meets_threshold"])
    ran = pt["storage"]["au_percentage"]
    assert ran < 90
    pt["storage"].update(au_per_run=[95.0] * pt["storage"]["runs"], au_percentage=95.0, meets_threshold=True)
    later = [p["accelerators"] for p in doc["points"] if p["accelerators"] > pt["accelerators"]]
    doc["knee"] = {"accelerators": min(later), "reason": "AU below the threshold"}
    doc["max_accelerators"]["found_by_probes"] = pt["accelerators"]
    assert verify.contradictions(doc) == []          # the forgery the old check accepted
    (d / "sweep.json").write_text(json.dumps(doc))
    return d, i, ran


def test_sizing_of_a_forged_sweep_uses_its_runs_and_says_so(run_cli, tmp_path):
    d, i, ran = _forged(tmp_path)
    code, out, err = run_cli(*SIZING, d)
    assert code == 1 and err == "", err
    assert f"points[{i}].storage.au_percentage: expected {ran!r}" in out and "got 95.0" in out
    assert "knee.accelerators" in out and "its runs' results.json" in out
    code, ok, _ = run_cli(*SIZING, SWEEP)            # the table is the runs' own: as for the untouched sweep
    assert code == 0 and ok.split("INVALID")[0].splitlines()[1:] == out.split("INVALID")[0].splitlines()[1:]


def test_report_of_a_forged_sweep_shows_the_runs_values_and_the_finding(run_cli, tmp_path):
    d, i, ran = _forged(tmp_path)
    code, _, err = run_cli("report", d, "--out", tmp_path / "rep")
    assert code == 0, err
    page = (tmp_path / "rep" / "index.html").read_text()
    assert 'id="sweep-findings"' in page and f"points[{i}].storage.au_percentage" in page
    csv = (tmp_path / "rep" / "sweep_points.csv").read_text()
    assert f"{ran:.2f}"[:4] in csv and "95.0" not in csv


@pytest.mark.parametrize("how", ["removed", "linked-out"])
def test_a_claim_without_its_runs_is_not_rederivable_and_not_used(run_cli, tmp_path, how):
    d, i, _ = _forged(tmp_path)
    import json

    rel = json.loads((d / "sweep.json").read_text())["points"][i]["storage"]["results_dir"]
    shutil.rmtree(d / rel)
    if how == "linked-out":                          # runs outside the sweep dir, agreeing with the claim
        (tmp_path / "elsewhere").mkdir()
        (d / rel).symlink_to(tmp_path / "elsewhere")
    code, out, err = run_cli(*SIZING, d)
    assert code == 1 and f"points[{i}].storage: expected 'claimed, not re-derivable'" in out, out + err
    code, _, err = run_cli("report", d, "--out", tmp_path / "rep")
    assert code == 0, err
    assert "not re-derivable" in (tmp_path / "rep" / "index.html").read_text()
    assert "95.0" not in (tmp_path / "rep" / "sweep_points.csv").read_text()


def test_the_committed_sweep_rederives_to_itself(run_cli):
    from suite.training.sweep import rederive

    doc, found = rederive.load(SWEEP)
    assert found == [] and doc["points"] and all(p["storage"]["runs"] for p in doc["points"] if p["storage"])


# --------------------------------------------------------------------------- classes 10, 13: the dask engine

TOY = paths.REPO / "tests" / "tpcx_ai" / "tpcx_toy.py"
DASK_ENV = {**ENV, "PYTHONPATH": os.pathsep.join([str(paths.REPO), str(TOY.parent)])}
CLAIM = ".suite-claim"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(argv, log: Path):
    with open(log, "wb") as f:
        return subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=DASK_ENV, start_new_session=True)


def _stop(proc) -> None:
    import signal

    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.fixture
def dask_cluster(tmp_path):
    """A real scheduler and one worker (no nanny: a killed worker stays dead) on 127.0.0.1."""
    distributed = pytest.importorskip("distributed")
    import time

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    sched = _start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                    "--no-dashboard"], tmp_path / "scheduler.log")
    worker = _start([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
                     "--no-dashboard", "--host", "127.0.0.1", "--memory-limit", "2GiB"], tmp_path / "worker.log")
    try:
        deadline = time.monotonic() + 90
        while True:                                   # bounded: 90 s for both to come up
            try:
                with distributed.Client(address, timeout=5) as c:
                    c.wait_for_workers(1, timeout=max(1.0, deadline - time.monotonic()))
                    break
            except (OSError, TimeoutError):
                assert time.monotonic() < deadline and sched.poll() is None and worker.poll() is None
                time.sleep(0.5)
        yield address, worker
    finally:
        _stop(worker)
        _stop(sched)


def test_a_worker_killed_mid_run_ends_the_run_within_a_bound(dask_cluster, tmp_path):
    import json
    import signal
    import time

    from suite.tpcx_ai import engine_dask

    address, worker = dask_cluster
    res = tmp_path / "r"
    p = subprocess.Popen([sys.executable, str(TOY), str(tmp_path / "toy"), "--fault", "3=sleep", "--scale-factor", "0.01",
                          "--use-cases", "2,3", "--engine", "dask", "--scheduler", address, "--results-dir", str(res),
                          "--data-dir", str(tmp_path / "d"), "--processes", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=DASK_ENV)
    try:
        deadline = time.monotonic() + 180
        for line in p.stdout:                          # until uc03's training (which sleeps) runs on the worker
            if "training: uc02 ok" in line or time.monotonic() > deadline:
                break
        time.sleep(1.0)
        os.killpg(worker.pid, signal.SIGKILL)          # the worker and the job it runs: the host gone
        killed = time.monotonic()
        out, err = p.communicate(timeout=engine_dask.WORKERLESS_S + 60)
        took = time.monotonic() - killed
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "no worker" in err, err
    assert took < engine_dask.WORKERLESS_S + 45, took
    assert not (res / CLAIM).exists()                  # the dir is not left claimed
    doc = json.loads((res / "tpcxai-result.json").read_text())
    assert doc["status"] == "incomplete" and any("no worker" in r for r in doc["reasons"])


@pytest.mark.parametrize("address", ["ucx://127.0.0.1:8786", "tls://127.0.0.1:8786", "inproc://here", "127.0.0.1"])
def test_a_scheduler_of_another_protocol_is_one_line_exit_2(run_cli, tmp_path, address):
    pytest.importorskip("distributed")
    code, _, err = run_cli("run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--use-cases", "1", "--streams", "1",
                           "--engine", "dask", "--scheduler", address, "--results-dir", tmp_path / "r")
    one_line(code, err, "--scheduler: expected a reachable dask scheduler address")
    assert address in err and not (tmp_path / "r").exists()


class _Server:
    """A real TCP server on 127.0.0.1 that is not a dask scheduler: an HTTP server (it waits for a request)
    or one that greets with bytes that, read as a dask frame length, are exabytes."""

    def __init__(self, kind: str):
        import socketserver
        import threading
        from http.server import BaseHTTPRequestHandler, HTTPServer

        if kind == "http":
            self.server = HTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
        else:
            class Greet(socketserver.BaseRequestHandler):
                def handle(self):
                    self.request.sendall(b"HTTP/1.0 200 OK\r\n\r\n" * 4)

            self.server = socketserver.TCPServer(("127.0.0.1", 0), Greet)
        self.server.timeout = 1
        self.address = f"tcp://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.mark.parametrize("kind", ["http", "greets"])
def test_a_non_dask_server_as_scheduler_is_one_line_within_the_bound(run_cli, monkeypatch, tmp_path, kind):
    pytest.importorskip("distributed")
    import time

    from suite.tpcx_ai import engine_dask

    monkeypatch.setattr(engine_dask, "CONNECT_TIMEOUT_S", 3)
    server = _Server(kind)
    try:
        t0 = time.monotonic()
        code, _, err = run_cli("run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--use-cases", "1",
                               "--streams", "1", "--engine", "dask", "--scheduler", server.address,
                               "--results-dir", tmp_path / "r")
        took = time.monotonic() - t0
    finally:
        server.close()
    one_line(code, err, "not a dask scheduler")
    assert took < 3 + 10, took
    assert not (tmp_path / "r").exists()


def test_sigterm_while_reaching_the_scheduler_leaves_no_claim(run_cli, tmp_path):
    """SIGTERM while the run waits on a silent server given as --scheduler: the claim is released, the
    dir marked interrupted (its result says so, as the storage kinds' results.json do), and `suite
    check` says interrupted; the dir is not reused, and not blocked as claimed."""
    pytest.importorskip("distributed")
    import json
    import signal
    import time

    server = _Server("http")
    res = tmp_path / "r"
    res.mkdir()                                      # an existing empty dir: claimed, then given back empty
    try:
        p = subprocess.Popen([*PY, "run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--use-cases", "1",
                              "--streams", "1", "--engine", "dask", "--scheduler", server.address, "--results-dir",
                              str(res), "--history", str(tmp_path / "history.sqlite")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        deadline = time.monotonic() + 60
        for line in p.stdout:                        # until the run waits on the server
            if "connecting to the dask scheduler" in line or time.monotonic() > deadline:
                break
        assert (res / CLAIM).exists()
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        server.close()
    assert p.returncode == 130 and err.strip().splitlines() == ["suite run: interrupted"], err
    assert not (res / CLAIM).exists()                # no claim left
    doc = json.loads((res / "tpcxai-result.json").read_text())
    assert doc["status"] == "interrupted" and doc["engine"]["scheduler"] == server.address, doc
    assert any("interrupted" in r and "reaching the dask scheduler" in r for r in doc["reasons"]), doc
    from suite.history import db

    with db.open_store(str(tmp_path / "history.sqlite")) as store:
        assert [e.status for e in store.entries()] == ["interrupted"]
    code, out, _ = run_cli("check", res)              # what comes after the signal: in process
    assert code == 1 and "interrupted" in out, out
    code, _, err = run_cli("run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--use-cases", "1", "--streams", "1",
                       "--engine", "dask", "--scheduler", server.address, "--results-dir", res)
    one_line(code, err, "an earlier run's results are never overwritten")


# --------------------------------------------------------------------------- classes 10, 13: S3

AWS_VARS = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
            "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION")


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """The real local S3 server (tools/s3-server.sh, as tests/storage/s3 start it) and a bucket on it."""
    from tests.storage.s3.conftest import server, start

    folder = tmp_path_factory.mktemp("s3-lies")
    env = start(folder)
    try:
        import boto3

        boto3.session.Session(aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                              aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                              region_name=env.get("AWS_REGION", "us-east-1")).client(
            "s3", endpoint_url=env["AWS_ENDPOINT_URL"]).create_bucket(Bucket="lies")
        yield env
    finally:
        server("stop", folder)


def _aws(env: dict, **over) -> dict:
    out = {k: v for k, v in ENV.items() if k not in AWS_VARS}
    out.update(env, AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull)
    out.update(over)
    return {k: v for k, v in out.items() if v is not None}


S3_CASES = {
    "profile-missing": lambda env: {"AWS_PROFILE": "nope"},
    "secret-wrong": lambda env: {"AWS_SECRET_ACCESS_KEY": "WRONG-" + env["AWS_SECRET_ACCESS_KEY"]},
    "endpoint-unreachable": lambda env: {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{_free_port()}"},
}


@pytest.mark.parametrize("command", ["datagen", "run"])
@pytest.mark.parametrize("case", sorted(S3_CASES))
def test_a_bad_aws_setup_is_one_line_exit_2_with_no_secret(s3, tmp_path, case, command):
    import time

    env = _aws(s3, **S3_CASES[case](s3))
    argv = (["datagen", "--workload", "unet3d", "--files", 4, "--processes", 1] if command == "datagen" else
            ["run", "--workload", "unet3d", "--accelerators", 1, "--runs", 1, "--division", "open",
             "--results-dir", tmp_path / "r"])
    t0 = time.monotonic()
    code, out, err = cli(*argv, "--data-dir", "s3://lies/u3", env=env, timeout=120)
    assert time.monotonic() - t0 < 60
    one_line(code, err, "expected")
    for secret in {s3["AWS_SECRET_ACCESS_KEY"], env.get("AWS_SECRET_ACCESS_KEY")} - {None}:
        assert secret not in err + out
    assert not (tmp_path / "r").exists()


def test_report_out_into_the_tree_around_a_leaf_is_refused(run_cli, tree):
    before = snapshot(tree)
    code, _, err = run_cli("report", tree / BENCH / "20260708_064613", "--out", tree / ORG / "systems" / "report")
    one_line(code, err, "--out")
    assert snapshot(tree) == before
