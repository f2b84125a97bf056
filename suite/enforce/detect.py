"""Which memory-cgroup mechanism this host offers: v2, v1 or `systemd-run --scope`, in that
order of preference, or none (with every reason); and the backend that drives the chosen one.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil

from suite.enforce.backends import PARENT, CgroupV1, CgroupV2, SystemdScope, _oserr, _read
from suite.errors import SuiteError

ADVICE = "run as root on a host with a writable memory cgroup, or drop --memory-limit"


class CgroupError(SuiteError):
    """No memory cgroup can be made, or the limit is unusable (exit 2)."""


@dataclasses.dataclass(frozen=True)
class CgroupSupport:
    version: str | None    # "v2" | "v1" | "systemd" | None
    root: str | None       # hierarchy root (v1/v2); None for systemd and None
    reason: str            # why this one was chosen, or why none is usable

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


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
