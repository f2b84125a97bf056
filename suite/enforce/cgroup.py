"""Memory cgroups that hold a run's processes, with the limit read back as evidence.

Three mechanisms, preferred in this order when usable (detection in detect.py, file operations
in backends.py):
  v2       unified hierarchy: memory.max, memory.swap.max=0, memory.peak, memory.events
  v1       /sys/fs/cgroup/memory: memory.limit_in_bytes (+ memory.memsw.limit_in_bytes),
           memory.max_usage_in_bytes, memory.oom_control
  systemd  `systemd-run --scope -p MemoryMax=...` around the command (systemd is PID 1)
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import subprocess
import threading
import time

from suite.enforce.backends import _oserr
from suite.enforce.cache import meminfo_bytes
from suite.enforce.detect import ADVICE, CgroupError, CgroupSupport, backend_for, detect_cgroup
from suite.errors import RunError, expected_got

MIN_LIMIT_BYTES = 1 << 20             # below this not even a shell can exec
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class CgroupCleanupError(RunError):
    """The run's cgroup could not be emptied or removed (exit 1)."""


def check_limit(limit_bytes, memtotal_bytes: int | None = None) -> int:
    """The requested limit as an int, or a one-line CgroupError."""
    if isinstance(limit_bytes, bool) or not isinstance(limit_bytes, int):
        raise CgroupError(expected_got("--memory-limit", "bytes", "an integer",
                                       repr(limit_bytes)))
    if limit_bytes < MIN_LIMIT_BYTES:
        raise CgroupError(expected_got("--memory-limit", "bytes",
                                       f"at least {MIN_LIMIT_BYTES} (1 MiB; below it the "
                                       "kernel rounds to pages and no process can start)",
                                       limit_bytes))
    total = memtotal_bytes if memtotal_bytes is not None else meminfo_bytes("MemTotal")
    if total is not None and limit_bytes > total:
        raise CgroupError(expected_got("--memory-limit", "bytes",
                                       f"at most MemTotal ({total} = "
                                       f"{total / (1 << 30):.2f} GiB)", limit_bytes))
    return limit_bytes


# ----------------------------------------------------------------------------- the context

@contextlib.contextmanager
def _signals_held():
    """Defer SIGINT/SIGTERM for the duration; a signal that arrived meanwhile is
    re-raised right after, through the handler that was in place before.

    Done at the Python-handler level, not with pthread_sigmask: a mask covers only
    the calling thread, and with other threads alive the kernel delivers the signal
    to one of them and Python still runs the handler in the main thread at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    saved = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        saved[signum] = signal.signal(signum, lambda num, _frame: pending.append(num))
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(pending):
            signal.raise_signal(signum)


class MemoryCgroup:
    """A memory cgroup holding processes started with .start(); removed on exit.

        with MemoryCgroup(64 << 20, f"run-{os.getpid()}") as cg:
            proc = cg.start(["mpiexec", "-n", "2", ...])
            proc.wait()
            evidence = cg.evidence()      # still valid after the with-block
    """

    KILL_WAIT_S = 5.0
    RMDIR_RETRY_S = 2.0

    def __init__(self, limit_bytes: int, name: str, support: CgroupSupport | None = None,
                 backend=None, memtotal_bytes: int | None = None):
        if not isinstance(name, str) or not _NAME.match(name):
            raise CgroupError(expected_got("cgroup name", "name",
                                           "letters, digits, '_', '.', '-' (max 100)", repr(name)))
        self.requested_bytes = check_limit(limit_bytes, memtotal_bytes)
        if backend is None:
            support = support if support is not None else detect_cgroup()
            backend = backend_for(support)
        self._init_state(backend, name)

    def _init_state(self, backend, name: str) -> None:
        self.name = name
        self.backend = backend
        self.version = backend.version
        self.path = backend.path_for(name)
        self.applied_bytes: int | None = None
        self.swap_limit_bytes: int | None = None
        self.created = False
        self.removed = False
        self.create_s: float | None = None
        self.remove_s: float | None = None
        self.killed_pids: list[int] = []
        self.cleanup_error: str | None = None
        self._final: dict = {}
        self._procs: list[subprocess.Popen] = []

    @classmethod
    def adopt(cls, name: str, backend) -> MemoryCgroup:
        """An existing cgroup <root>/suite/<name>, to be emptied and removed with close()."""
        cg = cls.__new__(cls)
        cg.requested_bytes = None
        cg._init_state(backend, name)
        cg.created = True
        return cg

    # -- lifecycle
    def __enter__(self) -> MemoryCgroup:
        self.create()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.close()
        if self.cleanup_error and exc_type is None:
            raise CgroupCleanupError(self.cleanup_error)
        return False

    def create(self) -> None:
        """Make the cgroup and set the limit (what __enter__ does); signals held off
        meanwhile so an interrupt cannot fall between mkdir and the bookkeeping."""
        if self.created:
            return
        with _signals_held():
            self._create()

    def _create(self) -> None:
        t0 = time.perf_counter()
        path = self.path
        try:
            self.backend.create(path)
        except FileExistsError:
            raise CgroupError(f"{path}: cgroup already exists (a crashed run? remove it with "
                              "suite.enforce.remove_stale, or pick another name)") from None
        except OSError as exc:
            where = exc.filename or path
            advice = ADVICE
            if exc.errno == errno.EBUSY and str(where).endswith("cgroup.subtree_control"):
                advice = ("this cgroup v2 has processes of its own, so it cannot enable "
                          "controllers for children (v2's no-internal-processes rule); run in "
                          "a delegated cgroup, under systemd-run, or drop --memory-limit")
            raise CgroupError(f"{_oserr(where, 'cannot create memory cgroup', exc)}"
                              f"; {advice}") from None
        self.created = True
        try:
            try:
                self.backend.set_limit(path, self.requested_bytes)
            except OSError as exc:
                raise CgroupError(_oserr(exc.filename or path, f"kernel refused limit "
                                         f"{self.requested_bytes} bytes", exc)
                                  + "; choose another --memory-limit") from None
            self.applied_bytes = self.backend.applied(path)
            self.swap_limit_bytes = self.backend.swap_applied(path)
            if self.version != "systemd":
                self._check_applied()
        except BaseException:
            self.close()
            raise
        self.create_s = time.perf_counter() - t0

    def _check_applied(self) -> None:
        got = self.applied_bytes
        if got is None or abs(got - self.requested_bytes) >= PAGE:
            raise CgroupError(expected_got(self.path, "memory limit read back",
                                           f"{self.requested_bytes} bytes within a page", got))

    def close(self) -> None:
        """Kill what is left in the cgroup, record final figures, remove it. Idempotent.

        SIGINT and SIGTERM are held off (blocked, not lost) meanwhile, so a second Ctrl-C
        cannot leave the cgroup behind; they are delivered when it returns."""
        if not self.created or self.removed:
            return
        with _signals_held():
            self._close()

    def _close(self) -> None:
        t0 = time.perf_counter()
        path, backend = self.path, self.backend
        try:
            self._final = {"peak_bytes": backend.peak(path), "usage_bytes": backend.usage(path),
                           "oom_kills": backend.oom_kills(path)}
            deadline = time.monotonic() + self.KILL_WAIT_S
            while backend.populated(path):
                for pid in backend.kill_all(path):
                    if pid not in self.killed_pids:
                        self.killed_pids.append(pid)
                self._reap()
                if time.monotonic() > deadline:
                    self.cleanup_error = f"{path}: processes {backend.pids(path)} still " \
                                         f"present {self.KILL_WAIT_S:g} s after SIGKILL"
                    return
                time.sleep(0.01)
            self._reap()
            # Figures after the last process is gone (peak/oom can move while it dies).
            for key, fn in (("peak_bytes", backend.peak), ("oom_kills", backend.oom_kills)):
                value = fn(path)
                if value is not None:
                    self._final[key] = value
            deadline = time.monotonic() + self.RMDIR_RETRY_S
            while True:
                try:
                    backend.remove(path)
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    if time.monotonic() < deadline and exc.errno in (errno.EBUSY, errno.EAGAIN):
                        time.sleep(0.02)
                        continue
                    self.cleanup_error = _oserr(path, "cannot remove cgroup", exc)
                    return
                if backend.exists(path):
                    if time.monotonic() < deadline:
                        time.sleep(0.02)
                        continue
                    self.cleanup_error = f"{path}: cgroup still present after removal"
                    return
                break
            self.removed = True
            self.cleanup_error = None
        finally:
            self.remove_s = time.perf_counter() - t0

    def _reap(self) -> None:
        for proc in self._procs:
            if proc.returncode is None:
                try:
                    proc.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    pass

    # -- processes
    def start(self, argv, **popen_kwargs) -> subprocess.Popen:
        """Start argv inside the cgroup: the child joins it before exec, so all its
        descendants (mpiexec and its ranks) are in it too."""
        if not self.created or self.removed:
            raise RuntimeError("MemoryCgroup.start() outside its with-block")
        argv = self.backend.wrap_argv(argv, self.requested_bytes, self.path)
        join = self.backend.join_file(self.path)
        user_preexec = popen_kwargs.pop("preexec_fn", None)
        if join is not None:
            try:                       # permission problems surface here, with a message
                os.close(os.open(join, os.O_WRONLY))
            except OSError as exc:
                raise CgroupError(_oserr(join, "cannot move processes into the cgroup", exc)
                                  + f"; {ADVICE}") from None

            def preexec(join=join, user=user_preexec):
                fd = os.open(join, os.O_WRONLY | os.O_TRUNC)
                try:
                    os.write(fd, str(os.getpid()).encode())
                finally:
                    os.close(fd)
                if user is not None:
                    user()
        else:
            preexec = user_preexec
        try:
            proc = subprocess.Popen(argv, preexec_fn=preexec, **popen_kwargs)
        except subprocess.SubprocessError as exc:
            raise CgroupError(f"{join}: the new process could not join the cgroup "
                              f"({exc}); {ADVICE}") from None
        self._procs.append(proc)
        if self.version == "systemd" and self.applied_bytes is None:
            self._systemd_readback(proc)
        return proc

    def _systemd_readback(self, proc) -> None:
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and proc.poll() is None:
            self.applied_bytes = self.backend.applied(self.path)
            if self.applied_bytes is not None:
                return
            time.sleep(0.05)

    # -- figures
    def _live(self, key: str, fn):
        if self.created and not self.removed:
            value = fn(self.path)
            if value is not None:
                return value
        return self._final.get(key)

    def peak_bytes(self) -> int | None:
        return self._live("peak_bytes", self.backend.peak)

    def usage_bytes(self) -> int | None:
        return self._live("usage_bytes", self.backend.usage)

    def oom_kills(self) -> int | None:
        return self._live("oom_kills", self.backend.oom_kills)

    def pids(self) -> list[int]:
        return self.backend.pids(self.path) if self.created and not self.removed else []

    def evidence(self) -> dict:
        return {"version": self.version, "path": self.path,
                "requested_bytes": self.requested_bytes, "applied_bytes": self.applied_bytes,
                "swap_limit_bytes": self.swap_limit_bytes,
                "peak_bytes": self.peak_bytes(), "oom_kills": self.oom_kills(),
                "removed": self.removed, "create_s": self.create_s, "remove_s": self.remove_s,
                "killed_pids": list(self.killed_pids), "cleanup_error": self.cleanup_error}


_OWNER = re.compile(r"-(\d+)(?:-|$)")


def unique_name(tag: str = "run") -> str:
    """`<tag>-<pid>-<n>`: unique in this process, and remove_stale can tell its owner."""
    global _counter
    _counter += 1
    return f"{tag}-{os.getpid()}-{_counter}"


_counter = 0


def owner_pid(name: str) -> int | None:
    """The pid in a `<tag>-<pid>-<n>` / `<tag>-<pid>` cgroup name (first all-digit field)."""
    m = _OWNER.search(name)
    return int(m.group(1)) if m else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def remove_stale(prefix: str, support: CgroupSupport | None = None, backend=None,
                 force: bool = False) -> list[str]:
    """Kill the processes in, and remove, every <root>/suite/<prefix>* cgroup left by a
    crashed run: one whose name carries an owner pid (see unique_name) that is no longer
    alive, or every match with force=True. A cgroup whose owner still runs is another
    live run's and is left alone. Returns the paths removed; CgroupCleanupError for one
    that stays."""
    if not prefix or "/" in prefix:
        raise CgroupError(expected_got("remove_stale", "prefix", "a non-empty name prefix",
                                       repr(prefix)))
    if backend is None:
        support = support if support is not None else detect_cgroup()
        if support.version not in ("v1", "v2"):
            return []
        backend = backend_for(support)
    removed = []
    for name in backend.children():
        if not name.startswith(prefix):
            continue
        owner = owner_pid(name)
        if not force and (owner is None or _pid_alive(owner)):
            continue
        cg = MemoryCgroup.adopt(name, backend)
        cg.close()
        if cg.cleanup_error:
            raise CgroupCleanupError(cg.cleanup_error)
        removed.append(cg.path)
    return removed


def preflight(limit_bytes: int, support: CgroupSupport | None = None) -> dict:
    """Check before any work that a cgroup with this limit can be made here: creates,
    reads back and removes a probe cgroup. Returns its evidence; CgroupError otherwise."""
    with MemoryCgroup(limit_bytes, unique_name("probe"), support=support) as cg:
        pass
    return cg.evidence()
