"""Facts read from this host for a system description: CPU, memory, kernel, OS, data-dir mount, NICs.

Every reader takes `proc`/`sys`/`etc` roots (tests point them at a fake tree) and returns None for
what it cannot read; the caller marks those fields TODO. Nothing here raises on a missing file.
"""

from __future__ import annotations

import os
import platform
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path

from suite.storage.backend.posix import mountinfo_entries

MAX_READ = 4 * 1024 * 1024  # /proc/cpuinfo of a 512-core host is ~1 MiB


@dataclass
class Nic:
    name: str
    speed_gbps: float | None   # /sys/class/net/<nic>/speed is Mb/s; -1 or unreadable on virtual NICs
    state: str | None


@dataclass
class Mount:
    mount_point: str
    fs_type: str
    source: str
    options: list[str]
    size_gib: float | None


@dataclass
class HostFacts:
    hostname: str
    cpu_model: str | None = None
    sockets: int | None = None
    cores_per_socket: int | None = None
    threads: int | None = None
    memory_mib: int | None = None
    kernel: str | None = None
    os_release: str | None = None
    data_mount: Mount | None = None
    nics: list[Nic] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return None


def cpu(proc: Path = Path("/proc")) -> tuple[str | None, int | None, int | None, int | None]:
    """(model name, sockets, cores per socket, logical CPUs) from /proc/cpuinfo."""
    text = _read(proc / "cpuinfo")
    if text is None:
        return None, None, None, None
    model, sockets, cores, threads = None, set(), None, 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            threads += 1
        elif key == "model name" and model is None:
            model = value or None
        elif key == "physical id":
            sockets.add(value)
        elif key == "cpu cores" and cores is None and value.isdigit():
            cores = int(value)
    return model, (len(sockets) or None) if threads else None, cores, threads or None


def memory_mib(proc: Path = Path("/proc")) -> int | None:
    text = _read(proc / "meminfo") or ""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) // 1024
    return None


def os_release(etc: Path = Path("/etc")) -> str | None:
    text = _read(etc / "os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"') or None
    return None


def mount_of(path: Path, proc: Path = Path("/proc")) -> Mount | None:
    """The mount holding `path` (the longest mount point above it) from /proc/self/mountinfo."""
    text = _read(proc / "self" / "mountinfo")
    if text is None:
        return None
    target = os.path.realpath(path)
    best = None
    for _, point, fs_type, source, opts in mountinfo_entries(text):
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[0])):
            best = (point, fs_type, source, sorted(set(opts)))
    if best is None:
        return None
    try:
        st = os.statvfs(best[0])
        size = round(st.f_blocks * st.f_frsize / 1024**3, 1)
    except OSError:
        size = None
    return Mount(mount_point=best[0], fs_type=best[1], source=best[2], options=best[3], size_gib=size)


def nics(sys_net: Path = Path("/sys/class/net")) -> list[Nic]:
    """Every NIC but loopback, with its link speed in Gb/s where the kernel reports one."""
    try:
        names = sorted(os.listdir(sys_net))
    except OSError:
        return []
    out = []
    for name in names:
        if name == "lo":
            continue
        raw = (_read(sys_net / name / "speed") or "").strip()
        speed = int(raw) / 1000 if raw.lstrip("-").isdigit() and int(raw) > 0 else None
        state = (_read(sys_net / name / "operstate") or "").strip() or None
        out.append(Nic(name=name, speed_gbps=speed, state=state))
    return out


def read(data_dir: Path | None, proc: Path = Path("/proc"), etc: Path = Path("/etc"),
         sys_net: Path = Path("/sys/class/net")) -> HostFacts:
    model, sockets, cores, threads = cpu(proc)
    return HostFacts(
        hostname=socket.gethostname() or "localhost", cpu_model=model, sockets=sockets, cores_per_socket=cores,
        threads=threads, memory_mib=memory_mib(proc), kernel=platform.release() or None,
        os_release=os_release(etc), data_mount=mount_of(data_dir, proc) if data_dir else None,
        nics=nics(sys_net))
