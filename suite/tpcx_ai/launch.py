"""Starting, timing and stopping job processes (each use-case stage runs in its own process).

Two launchers, the same job code (suite.tpcx_ai.job.main) in a fresh process either way:
- "exec": `python -m suite.tpcx_ai.job ...` (the default; a job's time includes interpreter
  start-up and imports, as the kit's subprocess times do);
- "fork": forked from a forkserver that has imported pandas and pyarrow once (fast; tests).
A job's stderr goes to a file; its last line is the job's one-line error.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

LAUNCHERS = ("exec", "fork")


@dataclass
class Outcome:
    start_s: float       # perf_counter seconds since the run's epoch, rounded to ms
    end_s: float
    returncode: int
    error: str | None    # one line; None when the job succeeded
    cpu_s: float | None = None  # the job's user + system CPU seconds (exec launcher; its own children too)

    @property
    def ok(self) -> bool:
        return self.returncode == 0


# multiprocessing's forkserver children are not thread-safe to start or reap: Process.start()
# polls every earlier child, and a poll reads the exit status from the child's sentinel pipe, so
# two threads polling one child both see it readable, one reads the status and the other reads
# EOF and records exit 255. Every start, join and is_alive on a fork child holds this lock;
# waiting for a child to end (a select on its sentinel, no read) does not.
_FORK_LOCK = threading.Lock()


def _fork_entry(argv, errfile):
    fd = os.open(errfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from suite.tpcx_ai import job

    sys.exit(job.main(argv))


def _suite_root() -> str:
    import suite

    return str(Path(suite.__file__).resolve().parent.parent)


class Launcher:
    """Starts job processes, remembers the running ones, and stops them all on request."""

    def __init__(self, kind: str = "exec", epoch: float | None = None):
        if kind not in LAUNCHERS:
            raise ValueError(f"launcher: expected one of {LAUNCHERS}, got {kind!r}")
        self.kind = kind
        self.epoch = time.perf_counter() if epoch is None else epoch
        self.stopping = threading.Event()
        self._running: dict[int, object] = {}
        self._lock = threading.Lock()
        self._ctx = None
        if kind == "fork":
            import multiprocessing

            self._ctx = multiprocessing.get_context("forkserver")
            self._ctx.set_forkserver_preload(["suite.tpcx_ai.job", "suite.tpcx_ai.load", "suite.tpcx_ai.usecase",
                                             "suite.files", "yaml", "jsonschema", "pandas", "pyarrow.parquet"])

    def now(self) -> float:
        return time.perf_counter() - self.epoch

    def _start(self, argv, errfile: Path):
        if self.kind == "exec":
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([_suite_root(), *filter(None, [env.get("PYTHONPATH")])])
            with open(errfile, "wb") as err:
                return subprocess.Popen([sys.executable, "-m", "suite.tpcx_ai.job", *argv], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=err, env=env)
        proc = self._ctx.Process(target=_fork_entry, args=(list(argv), str(errfile)), daemon=False)
        with _FORK_LOCK:
            proc.start()
        return proc

    @staticmethod
    def _wait(proc) -> int:
        return Launcher._wait_cpu(proc)[0]

    @staticmethod
    def _wait_cpu(proc) -> tuple[int, float | None]:
        """(exit status, CPU seconds or None): an exec job is reaped with wait4 for its rusage
        (a run under load reads its idle time from the CPU it took)."""
        if isinstance(proc, subprocess.Popen):
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            except ChildProcessError:        # reaped already (a stop's poll)
                return proc.wait(), None
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, round(usage.ru_utime + usage.ru_stime, 3)
        from multiprocessing.connection import wait

        wait([proc.sentinel])
        with _FORK_LOCK:
            proc.join()
            return proc.exitcode, None

    def run(self, argv, errfile: Path, label: str) -> Outcome:
        """Run one job to its end; its start and end on the run's clock."""
        errfile.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        proc = self._start(argv, errfile)
        with self._lock:
            self._running[proc.pid] = proc
        try:
            rc, cpu_s = self._wait_cpu(proc)
        except BaseException:          # Ctrl-C while waiting: the job is stopped, not orphaned
            self.stopping.set()
            _stop([proc])
            raise
        finally:
            with self._lock:
                self._running.pop(proc.pid, None)
        end = time.perf_counter()
        error = None if rc == 0 else _error_line(errfile, rc, label)
        return Outcome(round(start - self.epoch, 3), round(end - self.epoch, 3), rc, error, cpu_s)

    def stop_all(self, grace_s: float = 5.0) -> None:
        """SIGINT to every running job (they remove their temporary files), then SIGKILL."""
        self.stopping.set()
        with self._lock:
            procs = list(self._running.values())
        _stop(procs, grace_s)


def _stop(procs, grace_s: float = 5.0) -> None:
    for p in procs:
        try:
            os.kill(p.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    for p in procs:
        while _alive(p) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _alive(p):
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        Launcher._wait(p)          # reap it


def _alive(proc) -> bool:
    if isinstance(proc, subprocess.Popen):
        return proc.poll() is None
    with _FORK_LOCK:
        return proc.is_alive()


def _error_line(errfile: Path, rc: int, label: str) -> str:
    if rc < 0:
        name = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else str(-rc)
        why = " (out of memory? the kernel's OOM killer sends SIGKILL)" if -rc == signal.SIGKILL else ""
        return f"{label}: killed by {name}{why}"
    try:
        lines = [ln for ln in errfile.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        lines = []
    last = lines[-1].strip() if lines else f"exit status {rc}, no message"
    return last if last.startswith(label.split(" ")[0]) else f"{label}: {last}"[:400]
