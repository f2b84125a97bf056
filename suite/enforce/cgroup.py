"""Memory cgroups that hold a run's processes, with the limit read back as evidence.

Three mechanisms, preferred in this order when usable:
  v2       unified hierarchy: memory.max, memory.swap.max=0, memory.peak, memory.events
  v1       /sys/fs/cgroup/memory: memory.limit_in_bytes (+ memory.memsw.limit_in_bytes),
           memory.max_usage_in_bytes, memory.oom_control
  systemd  `systemd-run --scope -p MemoryMax=...` around the command (systemd is PID 1)

The file-level operations live in CgroupV1 / CgroupV2, which take the hierarchy's root
path as a parameter and touch the filesystem only through plain reads and writes plus
the two seams `_mkdir` / `_rmdir`, so their logic can be run against a directory tree
laid out like cgroupfs (tests do this for v2, which this machine lacks).
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import shutil
import signal
import subprocess
import time

from suite.errors import RunError, SuiteError, expected_got
from suite.enforce.cache import meminfo_bytes

PARENT = "suite"                      # every cgroup we make lives under <root>/suite/
V1_ROOT = "/sys/fs/cgroup/memory"
V2_ROOT = "/sys/fs/cgroup"
MIN_LIMIT_BYTES = 1 << 20             # below this not even a shell can exec
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
UNLIMITED_V1 = 9223372036854771712    # what v1 reports for "no limit" (LONG_MAX page-aligned)
ADVICE = "run as root on a host with a writable memory cgroup, or drop --memory-limit"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class CgroupError(SuiteError):
    """No memory cgroup can be made, or the limit is unusable (exit 2)."""


class CgroupCleanupError(RunError):
    """The run's cgroup could not be emptied or removed (exit 1)."""


@dataclasses.dataclass(frozen=True)
class CgroupSupport:
    version: str | None    # "v2" | "v1" | "systemd" | None
    root: str | None       # hierarchy root (v1/v2); None for systemd and None
    reason: str            # why this one was chosen, or why none is usable

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _oserr(path, what: str, exc: OSError) -> str:
    return f"{path}: {what}: {exc.strerror or exc} (errno {exc.errno})"


def _read(path) -> str:
    with open(path, "rb") as f:       # bytes: no codec lookup (works after dropping root)
        return f.read().decode()


def _write(path, text: str) -> None:
    """Write to an existing control file, as `echo x > file` does but never O_CREAT:
    a missing file is an error (e.g. memory.max without the memory controller)."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _keyed(path, key: str) -> int | None:
    """The value of `key N` in a flat-keyed file (memory.events, memory.oom_control)."""
    try:
        for line in _read(path).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key:
                return int(parts[1])
    except (OSError, ValueError):
        return None
    return None


def _int_file(path) -> int | None:
    try:
        text = _read(path).strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _pids(path) -> list[int]:
    try:
        return [int(x) for x in _read(os.path.join(path, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return []


class CgroupV1:
    """cgroup v1 memory controller rooted at `root` (normally /sys/fs/cgroup/memory)."""

    version = "v1"

    def __init__(self, root: str = V1_ROOT):
        self.root = str(root)
        self.parent = os.path.join(self.root, PARENT)

    def _mkdir(self, path) -> None:
        os.mkdir(path)

    def _rmdir(self, path) -> None:
        os.rmdir(path)

    def path_for(self, name: str) -> str:
        return os.path.join(self.parent, name)

    def _ensure_parent(self) -> None:
        try:
            self._mkdir(self.parent)
        except FileExistsError:
            pass

    def create(self, path: str) -> None:
        self._ensure_parent()
        self._mkdir(path)

    def set_limit(self, path: str, limit: int) -> None:
        _write(os.path.join(path, "memory.limit_in_bytes"), str(limit))
        memsw = os.path.join(path, "memory.memsw.limit_in_bytes")
        if os.path.exists(memsw):            # swap accounting on: no escape into swap
            _write(memsw, str(limit))

    def applied(self, path: str) -> int | None:
        value = _int_file(os.path.join(path, "memory.limit_in_bytes"))
        return None if value == UNLIMITED_V1 else value

    def peak(self, path: str) -> int | None:
        return _int_file(os.path.join(path, "memory.max_usage_in_bytes"))

    def usage(self, path: str) -> int | None:
        return _int_file(os.path.join(path, "memory.usage_in_bytes"))

    def oom_kills(self, path: str) -> int | None:
        return _keyed(os.path.join(path, "memory.oom_control"), "oom_kill")

    def join_file(self, path: str) -> str | None:
        return os.path.join(path, "cgroup.procs")

    def wrap_argv(self, argv, limit: int, path: str) -> list:
        return list(argv)

    def pids(self, path: str) -> list[int]:
        return _pids(path)

    def populated(self, path: str) -> bool:
        return bool(_pids(path))

    def kill_all(self, path: str) -> list[int]:
        pids = _pids(path)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return pids

    def exists(self, path: str) -> bool:
        return os.path.isdir(path)

    def remove(self, path: str) -> None:
        self._rmdir(path)

    def children(self) -> list[str]:
        try:
            return sorted(e.name for e in os.scandir(self.parent) if e.is_dir())
        except OSError:
            return []


class CgroupV2(CgroupV1):
    """cgroup v2 (unified) rooted at `root`; the memory controller is enabled on the way down."""

    version = "v2"

    def __init__(self, root: str = V2_ROOT):
        super().__init__(root)

    def _enable_memory(self, directory: str) -> None:
        control = os.path.join(directory, "cgroup.subtree_control")
        enabled = {t.lstrip("+") for t in _read(control).split()}
        if "memory" not in enabled:
            _write(control, "+memory")

    def create(self, path: str) -> None:
        self._enable_memory(self.root)
        self._ensure_parent()
        self._enable_memory(self.parent)
        self._mkdir(path)
        if not os.path.exists(os.path.join(path, "memory.max")):
            raise FileNotFoundError(errno.ENOENT, "memory controller not enabled here "
                                    "(no memory.max after mkdir)", path)

    def set_limit(self, path: str, limit: int) -> None:
        _write(os.path.join(path, "memory.max"), str(limit))
        swap = os.path.join(path, "memory.swap.max")
        if os.path.exists(swap):
            _write(swap, "0")

    def applied(self, path: str) -> int | None:
        return _int_file(os.path.join(path, "memory.max"))

    def peak(self, path: str) -> int | None:
        return _int_file(os.path.join(path, "memory.peak"))      # kernel >= 5.19

    def usage(self, path: str) -> int | None:
        return _int_file(os.path.join(path, "memory.current"))

    def oom_kills(self, path: str) -> int | None:
        return _keyed(os.path.join(path, "memory.events"), "oom_kill")

    def populated(self, path: str) -> bool:
        value = _keyed(os.path.join(path, "cgroup.events"), "populated")
        return bool(_pids(path)) if value is None else value != 0

    def kill_all(self, path: str) -> list[int]:
        pids = _pids(path)
        kill = os.path.join(path, "cgroup.kill")                  # kernel >= 5.14
        if pids and os.path.exists(kill):
            _write(kill, "1")
            return pids
        return super().kill_all(path)


class SystemdScope:
    """`systemd-run --scope` around the command; systemd owns the cgroup.

    The limit and usage are read from the scope's cgroup (v2 files) while the scope
    lives; systemd removes the scope when its last process exits.
    """

    version = "systemd"
    root = None

    def __init__(self, cgroupfs: str = V2_ROOT, systemctl: str = "systemctl"):
        self.cgroupfs = cgroupfs
        self.systemctl = systemctl

    @staticmethod
    def unit(path: str) -> str:
        return f"suite-{os.path.basename(path)}.scope"

    def path_for(self, name: str) -> str:
        return name

    def create(self, path: str) -> None:
        pass

    def set_limit(self, path: str, limit: int) -> None:
        pass

    def wrap_argv(self, argv, limit: int, path: str) -> list:
        return ["systemd-run", "--scope", "--quiet", "--collect", f"--unit={self.unit(path)}",
                "-p", f"MemoryMax={limit}", "-p", "MemorySwapMax=0", "--"] + list(argv)

    def _show(self, path: str, prop: str) -> str | None:
        try:
            out = subprocess.run([self.systemctl, "show", "-p", prop, "--value", self.unit(path)],
                                 capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        value = out.stdout.strip()
        return value if out.returncode == 0 and value and value != "[not set]" else None

    def _cgdir(self, path: str) -> str | None:
        group = self._show(path, "ControlGroup")
        return os.path.join(self.cgroupfs, group.lstrip("/")) if group else None

    def _file(self, path: str, name: str):
        d = self._cgdir(path)
        return os.path.join(d, name) if d else None

    def applied(self, path: str) -> int | None:
        value = self._show(path, "MemoryMax")
        return int(value) if value and value.isdigit() else None

    def peak(self, path: str) -> int | None:
        f = self._file(path, "memory.peak")
        return _int_file(f) if f else None

    def usage(self, path: str) -> int | None:
        f = self._file(path, "memory.current")
        return _int_file(f) if f else None

    def oom_kills(self, path: str) -> int | None:
        f = self._file(path, "memory.events")
        return _keyed(f, "oom_kill") if f else None

    def join_file(self, path: str) -> str | None:
        return None

    def pids(self, path: str) -> list[int]:
        d = self._cgdir(path)
        return _pids(d) if d else []

    def populated(self, path: str) -> bool:
        return bool(self.pids(path))

    def kill_all(self, path: str) -> list[int]:
        pids = self.pids(path)
        subprocess.run([self.systemctl, "kill", "--signal=SIGKILL", self.unit(path)],
                       capture_output=True, timeout=10)
        return pids

    def exists(self, path: str) -> bool:
        state = self._show(path, "ActiveState")
        return state not in (None, "inactive", "failed")

    def remove(self, path: str) -> None:
        subprocess.run([self.systemctl, "stop", self.unit(path)], capture_output=True, timeout=10)

    def children(self) -> list[str]:
        return []


# ----------------------------------------------------------------------------- detection

def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mounts(mounts_path: str) -> list[tuple[str, str, set[str]]]:
    """(fstype, mountpoint, options) from a /proc/self/mounts-format file."""
    out = []
    try:
        text = _read(mounts_path)
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.append((parts[2], _unescape(parts[1]), set(parts[3].split(","))))
    return out


def _v2_problem(root: str) -> str | None:
    try:
        controllers = _read(os.path.join(root, "cgroup.controllers")).split()
    except OSError as exc:
        return _oserr(os.path.join(root, "cgroup.controllers"), "unreadable", exc)
    if "memory" not in controllers:
        return f"{root}: cgroup v2 without the memory controller " \
               f"(cgroup.controllers: {' '.join(controllers) or 'empty'})"
    control = os.path.join(root, "cgroup.subtree_control")
    if not os.access(control, os.W_OK) or not os.access(root, os.W_OK):
        return f"{root}: cgroup v2 not writable (cgroup.subtree_control)"
    return None


def _v1_problem(root: str) -> str | None:
    if not os.path.exists(os.path.join(root, "memory.limit_in_bytes")):
        return f"{root}: no memory.limit_in_bytes (not a v1 memory hierarchy)"
    parent = os.path.join(root, PARENT)
    where = parent if os.path.isdir(parent) else root
    if not os.access(where, os.W_OK):
        return f"{where}: cgroup v1 memory hierarchy not writable"
    return None


def _systemd_problem(proc1_comm: str) -> str | None:
    try:
        comm = _read(proc1_comm).strip()
    except OSError:
        comm = "?"
    if comm != "systemd":
        return f"systemd is not PID 1 ({proc1_comm}: {comm})"
    if shutil.which("systemd-run") is None:
        return "systemd-run not on PATH"
    if os.geteuid() != 0:
        return "systemd-run --scope needs root (or a user manager with delegation)"
    return None


def detect_cgroup(mounts: str = "/proc/self/mounts",
                  proc1_comm: str = "/proc/1/comm") -> CgroupSupport:
    """Which memory-cgroup mechanism this process can use: v2, then v1, then systemd."""
    entries = _mounts(mounts)
    problems = []
    for fstype, mountpoint, _ in entries:
        if fstype == "cgroup2":
            problem = _v2_problem(mountpoint)
            if problem is None:
                return CgroupSupport("v2", mountpoint, f"{mountpoint}: cgroup v2 with the "
                                     "memory controller, writable")
            problems.append(problem)
    for fstype, mountpoint, options in entries:
        if fstype == "cgroup" and "memory" in options:
            problem = _v1_problem(mountpoint)
            if problem is None:
                return CgroupSupport("v1", mountpoint, f"{mountpoint}: cgroup v1 memory "
                                     "hierarchy, writable")
            problems.append(problem)
    if not entries or not any(f in ("cgroup", "cgroup2") for f, _, _ in entries):
        problems.append(f"{mounts}: no cgroup filesystem mounted")
    problem = _systemd_problem(proc1_comm)
    if problem is None:
        return CgroupSupport("systemd", None, "systemd is PID 1: systemd-run --scope "
                             "-p MemoryMax=")
    problems.append(problem)
    return CgroupSupport(None, None, "; ".join(problems))


def backend_for(support: CgroupSupport):
    if support.version == "v2":
        return CgroupV2(support.root)
    if support.version == "v1":
        return CgroupV1(support.root)
    if support.version == "systemd":
        return SystemdScope()
    raise CgroupError(f"no usable memory cgroup: {support.reason}; {ADVICE}")


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
        self.created = False
        self.removed = False
        self.create_s: float | None = None
        self.remove_s: float | None = None
        self.killed_pids: list[int] = []
        self.cleanup_error: str | None = None
        self._final: dict = {}
        self._procs: list[subprocess.Popen] = []

    @classmethod
    def adopt(cls, name: str, backend) -> "MemoryCgroup":
        """An existing cgroup <root>/suite/<name>, to be emptied and removed with close()."""
        cg = cls.__new__(cls)
        cg.requested_bytes = None
        cg._init_state(backend, name)
        cg.created = True
        return cg

    # -- lifecycle
    def __enter__(self) -> "MemoryCgroup":
        self.create()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.close()
        if self.cleanup_error and exc_type is None:
            raise CgroupCleanupError(self.cleanup_error)
        return False

    def create(self) -> None:
        if self.created:
            return
        t0 = time.perf_counter()
        path = self.path
        try:
            self.backend.create(path)
        except FileExistsError:
            raise CgroupError(f"{path}: cgroup already exists (a crashed run? remove it with "
                              "suite.enforce.remove_stale, or pick another name)") from None
        except OSError as exc:
            raise CgroupError(f"{_oserr(exc.filename or path, 'cannot create memory cgroup', exc)}"
                              f"; {ADVICE}") from None
        self.created = True
        try:
            try:
                self.backend.set_limit(path, self.requested_bytes)
            except OSError as exc:
                raise CgroupError(_oserr(exc.filename or path, f"kernel refused limit "
                                         f"{self.requested_bytes} bytes", exc)
                                  + "; choose another --memory-limit") from None
            self.applied_bytes = self.backend.applied(path)
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
        """Kill what is left in the cgroup, record final figures, remove it. Idempotent."""
        if not self.created or self.removed:
            return
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
                "peak_bytes": self.peak_bytes(), "oom_kills": self.oom_kills(),
                "removed": self.removed, "create_s": self.create_s, "remove_s": self.remove_s,
                "killed_pids": list(self.killed_pids), "cleanup_error": self.cleanup_error}


def remove_stale(prefix: str, support: CgroupSupport | None = None, backend=None) -> list[str]:
    """Kill the processes in, and remove, every <root>/suite/<prefix>* cgroup (left by a
    crashed run). Returns the paths removed; raises CgroupCleanupError for one that stays."""
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
        cg = MemoryCgroup.adopt(name, backend)
        cg.close()
        if cg.cleanup_error:
            raise CgroupCleanupError(cg.cleanup_error)
        removed.append(cg.path)
    return removed
