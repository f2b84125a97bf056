"""A run sampled on every host it uses: host_metrics.json (suite.harness.hostmetrics) in its leaf.

    with hostsampling.sampling(where, cluster):     # cluster: suite.harness.hosts.Cluster, or None
        ...the run...                                # host_metrics.json written in where() however it ended

One host (cluster None): a Sampler thread in this process. Across hosts: on every host of the run,
through the launcher its ranks are started with (`LAUNCHER -x HOST "python -m
suite.harness.hostsampling --interval-s S"`: ssh, or tools/netns-launcher on the namespace rig),
a sampler process that takes its baseline, says so on its stdout (a "ready" line), samples until
its stdin ends and then prints its host's series as one JSON line. Its stdin is a pipe from this
process, so it ends when the run ends, also when the run fails or is interrupted, and also when
this process is killed (the pipe closes with it; ssh passes the end on). The run never waits on a
sampler for long: the start waits at most READY_TIMEOUT_S for every host's baseline, the end at
most STOP_TIMEOUT_S for every host's series before the launcher is killed. Each host keeps
hostmetrics.points_per_host(hosts) points (thinned as one host's are past MAX_POINTS), so the file
of a long run on many hosts stays within what the loader reads. A host whose sampler
could not be started, failed, or printed no valid series is one line in the file's `warnings`
(and on the run's output) and a series without samples (the report's table shows it, 0 samples),
not a failed run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from suite import files, terminal
from suite.harness import hostmetrics

MODULE = "suite.harness.hostsampling"
READY_TIMEOUT_S = 30.0        # an ssh connection and a python start on a busy host
STOP_TIMEOUT_S = 15.0         # the last sample and one line of JSON
MAX_OUTPUT_BYTES = hostmetrics.MAX_FILE_BYTES
READY = "ready"


def scope(hosts: int) -> str:
    return f"every host of the run ({hosts}), each sampled on the host itself through the launcher"


@contextlib.contextmanager
def sampling(where, cluster=None, fleet=None):
    """The run in the block sampled (on this host, or on every host of `cluster`); host_metrics.json
    written in `where()` (a callable: the run's directory may only be known afterwards; None: not
    written) however the block ended. `fleet(interval_s)`: the sampling of a run whose hosts are
    reached some other way (a dask cluster's workers: suite.tpcx_ai.dask_hosts), in place of both;
    like Fleet, a context manager with write(where)."""
    interval = hostmetrics.interval_s()
    if not interval:
        yield None
        return
    if fleet is not None:
        sampler = fleet(interval)
    elif cluster is None:
        sampler = hostmetrics.Sampler(interval)
    else:
        sampler = Fleet(cluster.launcher, [h.name for h in cluster.hosts], interval)
    try:
        with sampler:
            yield sampler
    finally:
        path = where()
        if path is not None and Path(path).is_dir():
            sampler.write(Path(path))


class Remote:
    """One host's sampler process, reached through the launcher; its stdout read in a thread."""

    def __init__(self, launcher, host: str, interval_s: float, max_points: int):
        self.host, self.exe = host, launcher.exe
        self.ready = threading.Event()
        self.lines: list[bytes] = []
        self.error: str | None = None
        argv = launcher.argv(host, [sys.executable, "-m", MODULE, "--interval-s", repr(interval_s),
                                    "--max-points", str(max_points)])
        try:       # its own session: a Ctrl-C at the terminal reaches the run, which ends the sampler itself
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         start_new_session=True)
        except OSError as exc:
            self.proc, self.error = None, f"launcher {self.exe}: cannot start: {exc.strerror}"
            self.ready.set()
            return
        self.stderr = b""
        self.threads = [threading.Thread(target=self._read, daemon=True),
                        threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self.threads:
            t.start()

    def _read(self) -> None:
        """The sampler's lines (bounded: a line or an output past MAX_OUTPUT_BYTES is an error)."""
        total = 0
        while True:
            line = self.proc.stdout.readline(MAX_OUTPUT_BYTES + 1)
            total += len(line)
            if not line or total > MAX_OUTPUT_BYTES:
                break
            if line.strip() == READY.encode():
                self.ready.set()
            elif line.strip():
                self.lines.append(line)
        if total > MAX_OUTPUT_BYTES:
            self.error = f"expected at most {MAX_OUTPUT_BYTES:,} bytes of output, got more"
        self.ready.set()

    def _read_stderr(self) -> None:
        """The tail of its stderr (what says why a sampler or its launcher failed)."""
        while chunk := self.proc.stderr.read1(65536):
            self.stderr = (self.stderr + chunk)[-2000:]

    def end(self) -> None:
        """Close its stdin: the sampler takes its last sample and prints its series."""
        if self.proc is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def wait(self, deadline: float) -> None:
        """Its exit by `deadline` (monotonic), else the launcher killed (its whole session)."""
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.error = self.error or f"expected its series within {STOP_TIMEOUT_S:g} s of the run's end, got none"
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for t in self.threads:
            t.join(timeout=5.0)

    def series(self) -> tuple[dict | None, str | None]:
        """(its host's series, None) or (None, why not: one line)."""
        if self.error is None and self.lines:
            try:
                doc = json.loads(self.lines[-1])
            except (ValueError, RecursionError) as exc:
                return None, f"host {self.host}: its sampler's series through {self.exe}: {str(exc)[:300]}"
            bad = hostmetrics.series_problem(doc, f"host {self.host}'s sampler")
            return (doc, None) if bad is None else (None, f"host {self.host}: its sampler's series through "
                                                          f"{self.exe}: {bad}")
        why = self.error
        if why is None:
            err = self.stderr.decode("utf-8", "replace").strip().splitlines()
            why = f"exit {self.proc.returncode}, no series" + (f": {err[-1][:300]}" if err else "")
        return None, f"host {self.host}: not sampled through {self.exe}: {why}"


class Gathered:
    """What a sampling of several hosts writes: `docs` (one series per host, Sampler.host_doc each) and
    `warnings` (why a host has none), under the scope `scope_text()` says."""

    docs: list
    warnings: list

    def scope_text(self) -> str:
        raise NotImplementedError

    def add(self, host: str, doc: dict | None, why: str | None, interval_s: float) -> None:
        """Host `host`'s series (`doc`), or, where it gave none, an empty one and `why` as a warning
        (on the run's output too): the host is in the file all the same."""
        if doc is not None:
            self.docs.append(dict(doc, host=host))
        else:
            self.docs.append(hostmetrics.empty_host(host, interval_s))
            self.warn(why)

    def warn(self, why: str) -> None:
        self.warnings.append(why)
        terminal.say(f"warning: host metrics: {why}")

    def doc(self) -> dict:
        return hostmetrics.document(self.docs, self.scope_text(), self.warnings)

    def write(self, where: Path) -> Path:
        path = Path(where) / hostmetrics.FILE
        files.write_json(path, self.doc(), schema=hostmetrics.SCHEMA, indent=None)
        return path


class Fleet(Gathered):
    """Every host's sampler from __enter__ to __exit__; write() gives host_metrics.json (one series
    per host, in the run's host order: empty, with a warning, for a host that gave none)."""

    def __init__(self, launcher, hosts: list[str], interval_s: float):
        self.launcher, self.hosts, self.interval_s = launcher, list(hosts), interval_s
        self.remotes: list[Remote] = []
        self.docs: list[dict] = []
        self.warnings: list[str] = []

    def __enter__(self):
        keep = hostmetrics.points_per_host(len(self.hosts))        # the hosts' series together stay loadable
        self.remotes = [Remote(self.launcher, h, self.interval_s, keep) for h in self.hosts]
        deadline = time.monotonic() + READY_TIMEOUT_S
        try:
            for r in self.remotes:          # each baseline taken before the run starts (bounded)
                r.ready.wait(max(0.0, deadline - time.monotonic()))
        except BaseException:               # interrupted before the run began: every sampler ended all the same
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for r in self.remotes:
            r.end()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for r in self.remotes:
            r.wait(deadline)
        self.docs, self.warnings = [], []
        for r in self.remotes:      # each named as the run names it (--hosts): distinct
            self.add(r.host, *r.series(), self.interval_s)

    def scope_text(self) -> str:
        return scope(len(self.hosts))


def main(argv=None) -> int:
    """On a host of the run: sample until stdin ends, then print this host's series (one JSON line)."""
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=main.__doc__)
    parser.add_argument("--interval-s", type=float, default=hostmetrics.INTERVAL_S)
    parser.add_argument("--max-points", type=int, default=hostmetrics.MAX_POINTS,
                        help="beyond this, every other point is dropped and the interval doubles")
    args = parser.parse_args(argv)
    if not args.interval_s > 0:
        parser.error(f"--interval-s: expected seconds > 0, got {args.interval_s}")
    if args.max_points < 2:
        parser.error(f"--max-points: expected at least 2, got {args.max_points}")
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the run ends us, by closing our stdin
    try:
        with hostmetrics.Sampler(args.interval_s, max_points=args.max_points) as sampler:
            print(READY, flush=True)
            while sys.stdin.buffer.read(65536):
                pass
        print(json.dumps(sampler.host_doc(), sort_keys=True), flush=True)
    except (OSError, ValueError) as exc:
        if not isinstance(exc, BrokenPipeError):       # /proc unreadable: one line, the run warns of it
            print(f"{MODULE}: {exc}", file=sys.stderr)
            return 1           # the run is gone: nobody to tell
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
