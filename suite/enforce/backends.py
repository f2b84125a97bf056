"""File-level operations on a memory cgroup, one class per mechanism.

CgroupV1 / CgroupV2 take the hierarchy's root path as a parameter and touch the
filesystem only through plain reads and writes of control files plus the two seams
`_mkdir` / `_rmdir`, so their logic also runs against a directory tree laid out like
cgroupfs (the tests do this for v2, which the development machine lacks). SystemdScope
wraps the command in `systemd-run --scope` and reads systemd's cgroup for figures.
All methods take the cgroup's path (for systemd: its name) and raise OSError only.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess

PARENT = "suite"                      # every cgroup we make lives under <root>/suite/
V1_ROOT = "/sys/fs/cgroup/memory"
V2_ROOT = "/sys/fs/cgroup"
UNLIMITED_V1 = 9223372036854771712    # what v1 reports for "no limit" (LONG_MAX page-aligned)


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

    def swap_applied(self, path: str) -> int | None:
        """memsw is memory+swap in v1: equal to the memory limit means no swap."""
        value = _int_file(os.path.join(path, "memory.memsw.limit_in_bytes"))
        return None if value in (None, UNLIMITED_V1) else value

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

    def swap_applied(self, path: str) -> int | None:
        """memory.swap.max (swap alone in v2): 0 means no swap."""
        return _int_file(os.path.join(path, "memory.swap.max"))

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
                                 capture_output=True, text=True, timeout=10, check=False)
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

    def swap_applied(self, path: str) -> int | None:
        value = self._show(path, "MemorySwapMax")
        return int(value) if value and value.isdigit() else None

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
                       capture_output=True, timeout=10, check=False)
        return pids

    def exists(self, path: str) -> bool:
        state = self._show(path, "ActiveState")
        return state not in (None, "inactive", "failed")

    def remove(self, path: str) -> None:
        subprocess.run([self.systemctl, "stop", self.unit(path)], capture_output=True, timeout=10, check=False)

    def children(self) -> list[str]:
        return []
