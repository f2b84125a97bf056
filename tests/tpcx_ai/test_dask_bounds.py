"""--engine dask: every wait on the scheduler is bounded (issue 36, class 10), with real components:
a tiny TCP server that greets as a dask scheduler does (a valid handshake) and then says nothing,
and a real dask scheduler and worker on 127.0.0.1 whose scheduler is stopped (SIGSTOP) mid-run.
Each ends within its bound, in one line naming the scheduler and what the run waited for."""

import importlib.util
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from tests.hostile.test_lies_io import CLAIM, DASK_ENV, TOY, dask_cluster, one_line  # noqa: F401 -- the fixture

if importlib.util.find_spec("distributed") is None:   # found, not imported: collection in each worker stays light
    pytest.skip("distributed (the tpcx-ai extra) is not installed", allow_module_level=True)


class Greeter:
    """A TCP server on 127.0.0.1 that sends a dask handshake (8 bytes total length, 8 bytes frame count,
    8 bytes frame length, msgpack) to each connection, then stalls: reads nothing, answers nothing."""

    def __init__(self):
        import msgpack

        body = msgpack.dumps({"compression": None, "python": tuple(sys.version_info[:3]), "pickle-protocol": 5})
        self.greeting = struct.pack("<QQQ", 16 + len(body), 1, len(body)) + body
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.conns, self.done = [], threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            conn.sendall(self.greeting)

    def close(self):
        self.done.set()
        self.thread.join(timeout=10)
        for c in [*self.conns, self.sock]:
            c.close()


def test_a_scheduler_that_greets_and_stalls_is_one_line_within_the_bound(run_cli, monkeypatch, tmp_path):
    from suite.tpcx_ai import engine_dask

    monkeypatch.setattr(engine_dask, "CONNECT_TIMEOUT_S", 3)
    server = Greeter()
    try:
        t0 = time.monotonic()
        code, _, err = run_cli("run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--use-cases", "1",
                               "--streams", "1", "--engine", "dask", "--scheduler", server.address,
                               "--results-dir", tmp_path / "r")
        took = time.monotonic() - t0
    finally:
        server.close()
    assert server.conns, "the run never reached the server"
    one_line(code, err, "no answer to the client's registration within 3 s")
    assert server.address in err and took < 3 + 15, took
    assert not (tmp_path / "r").exists()


def test_a_scheduler_stopped_mid_run_ends_the_run_within_a_bound(dask_cluster, tmp_path):  # noqa: F811
    address, _ = dask_cluster
    port = address.rsplit(":", 1)[1]
    sched = subprocess.run(["pgrep", "-f", f"dask_scheduler .*--port {port}"], capture_output=True, text=True)
    sched_pid = int(sched.stdout.split()[0])
    res = tmp_path / "r"
    p = subprocess.Popen([sys.executable, str(TOY), str(tmp_path / "toy"), "--fault", "3=sleep", "--dask-call-timeout",
                          "3", "--scale-factor", "0.01", "--use-cases", "3", "--engine", "dask", "--scheduler",
                          address, "--results-dir", str(res), "--data-dir", str(tmp_path / "d"), "--processes", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=DASK_ENV)
    try:
        deadline = time.monotonic() + 180
        for line in p.stdout:                          # until uc03's training (which sleeps) runs on the worker
            if "training: start" in line or time.monotonic() > deadline:
                break
        time.sleep(1.0)
        os.kill(sched_pid, signal.SIGSTOP)             # the scheduler: connections open, nothing answered
        stopped = time.monotonic()
        out, err = p.communicate(timeout=90)
        took = time.monotonic() - stopped
    finally:
        if p.poll() is None:
            p.kill()
        os.kill(sched_pid, signal.SIGCONT)
    assert p.returncode == 1, (out, err)
    one_line(p.returncode, err, f"the dask scheduler at {address} did not answer within 3 s (waiting for", 1)
    assert took < 3 + 30, took
    assert not (res / CLAIM).exists()
    doc = json.loads((res / "tpcxai-result.json").read_text())
    assert doc["status"] == "incomplete" and any("did not answer" in r for r in doc["reasons"])


def test_the_watchdog_bounds_any_call_and_never_waits_on_a_stalled_scheduler_again(monkeypatch):
    """Cluster.call on a call that never returns (an Event nobody sets): Stalled within the bound, then
    every later call refused at once; a call that returns or raises is handed back as it is."""
    from suite.tpcx_ai import engine_dask

    monkeypatch.setattr(engine_dask, "CALL_TIMEOUT_S", 0.5)
    cluster = object.__new__(engine_dask.Cluster)          # no connection: only the watchdog is under test
    cluster.address, cluster.stalled = "tcp://192.0.2.1:8786", None
    assert cluster.call("a sum", sum, [1, 2]) == 3
    with pytest.raises(ZeroDivisionError):
        cluster.call("a division", lambda: 1 / 0)
    never = threading.Event()
    t0 = time.monotonic()
    with pytest.raises(engine_dask.Stalled) as stalled:
        cluster.call("the list of workers", never.wait)
    assert 0.5 <= time.monotonic() - t0 < 5
    assert str(stalled.value) == ("the dask scheduler at tcp://192.0.2.1:8786 did not answer within 0.5 s (waiting "
                                  "for the list of workers): it accepted the connection and stalled; the run stops")
    t0 = time.monotonic()
    with pytest.raises(engine_dask.Stalled):
        cluster.call("a sum", sum, [1])
    assert time.monotonic() - t0 < 0.2
    never.set()
