"""A real dask.distributed cluster over the namespace hosts of tools/netns-hosts.sh: the scheduler on
the first host, one single-threaded worker on each host, each started in its host's namespaces by
tools/netns-launcher (what ssh would do on a real cluster). Used by tests/tpcx_ai/test_engine_dask.py
and benchmarks/tpcxai_dask.py."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "tools" / "netns-launcher"
PORT = 8786


def host_ip(host: str) -> str:
    out = subprocess.run([str(LAUNCHER), host, "hostname -I"], capture_output=True, text=True, timeout=30, check=True)
    return out.stdout.split()[0]


def _start(host: str, argv: list, log: Path) -> subprocess.Popen:
    cmd = "exec " + " ".join(argv)
    with open(log, "wb") as f:
        return subprocess.Popen([str(LAUNCHER), host, cmd], stdout=f, stderr=subprocess.STDOUT,
                                env=dict(os.environ, PYTHONPATH=str(REPO)), start_new_session=True)


@contextlib.contextmanager
def cluster(hosts: list, logs: Path, memory_limit: str = "3GiB", timeout_s: float = 60.0):
    """Yield the scheduler's address once a worker on every host has joined; stop them all after."""
    from distributed import Client

    logs.mkdir(parents=True, exist_ok=True)
    address = f"tcp://{host_ip(hosts[0])}:{PORT}"
    procs = [_start(hosts[0], [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", host_ip(hosts[0]),
                               "--port", str(PORT), "--no-dashboard"], logs / "scheduler.log")]
    try:
        for h in hosts:
            procs.append(_start(h, [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                    "--nworkers", "1", "--no-dashboard", "--memory-limit", memory_limit,
                                    "--name", h, "--host", host_ip(h)], logs / f"worker-{h}.log"))
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with Client(address, timeout=5) as c:
                    c.wait_for_workers(len(hosts), timeout=max(1.0, deadline - time.monotonic()))
                    break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    raise RuntimeError(f"dask cluster on {hosts} did not come up; logs in {logs}") from None
                time.sleep(0.5)
        yield address
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
