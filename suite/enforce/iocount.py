"""Block I/O counters of one device and of one cgroup, read as evidence of what a run asked of the storage.

device_stat(dev) -> {read_ios, read_merges, read_bytes, device} | None
    /sys/dev/block/<major:minor>/stat (Documentation/block/stat.rst): field 1 read I/Os completed,
    field 2 reads merged, field 3 sectors read (512 bytes each, whatever the device's sector size).
    It counts every process on the host: on a shared disk it is the device's figure, not the run's.

IoCgroup(dev, name) -- a context manager: a cgroup counting the block I/O of the processes that join it.
    v2 (the io controller in the unified hierarchy's cgroup.controllers): io.stat `rbytes=` `rios=`.
    v1 (a writable blkio hierarchy): blkio.throttle.io_service_bytes and io_serviced. The v1 throttle
    layer accounts only devices that carry a rule, so a read_bps_device rule of NO_LIMIT_BPS (2^60 B/s,
    no limit in practice) is set for `dev`; its bios are counted before the scheduler merges them.
    .join_file: the file a child writes its pid to (preexec, as suite.enforce.cgroup does).
    .counter_files: the files whose text read_stats() parses (a child may read them itself).
    .read_stats() -> {read_bytes, read_ios} for `dev`; None where no mechanism is usable.

parse_stats(version, texts, dev) -> {read_bytes, read_ios} from the counter files' texts.
"""

from __future__ import annotations

import os
from pathlib import Path

SECTOR_BYTES = 512
NO_LIMIT_BPS = 1 << 60
V1_ROOT = "/sys/fs/cgroup/blkio"
V2_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")


def stat_path(dev: str) -> str:
    return f"/sys/dev/block/{dev}/stat"


def parse_device_stat(text: str) -> dict | None:
    f = text.split()
    if len(f) < 3 or not all(x.isascii() and x.isdigit() for x in f[:3]):
        return None
    return {"read_ios": int(f[0]), "read_merges": int(f[1]), "read_bytes": SECTOR_BYTES * int(f[2])}


def device_stat(dev: str | None) -> dict | None:
    """The read counters of block device `dev` (major:minor), or None."""
    if not dev or ":" not in dev:
        return None
    try:
        text = Path(stat_path(dev)).read_text()
    except OSError:
        return None
    out = parse_device_stat(text)
    if out is not None:
        try:
            out["device"] = Path(f"/sys/dev/block/{dev}").resolve().name
        except OSError:
            out["device"] = dev
    return out


def delta(a: dict | None, b: dict | None, keys=("read_ios", "read_merges", "read_bytes")) -> dict | None:
    if not a or not b:
        return None
    return {k: b[k] - a[k] for k in keys if k in a and k in b}


def parse_stats(version: str, texts: dict, dev: str) -> dict | None:
    """{read_bytes, read_ios} of `dev` from the cgroup's counter files (their texts, by file name)."""
    if version == "v2":
        for line in texts.get("io.stat", "").splitlines():
            parts = line.split()
            if parts and parts[0] == dev:
                kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
                got = [kv.get(k, "0") for k in ("rbytes", "rios")]
                if all(v.isascii() and v.isdigit() for v in got):
                    return {"read_bytes": int(got[0]), "read_ios": int(got[1])}
        return {"read_bytes": 0, "read_ios": 0}
    out = {}
    for name, key in (("blkio.throttle.io_service_bytes", "read_bytes"), ("blkio.throttle.io_serviced", "read_ios")):
        out[key] = 0
        for line in texts.get(name, "").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == dev and parts[1] == "Read" and parts[2].isascii() and parts[2].isdigit():
                out[key] = int(parts[2])
    return out


def _v2_root() -> str | None:
    for root in V2_ROOTS:
        try:
            if "io" in Path(root, "cgroup.controllers").read_text().split():
                return root
        except OSError:
            continue
    return None


class IoCgroup:
    """A cgroup counting the block I/O of its processes on one device (v2 io.stat or v1 blkio)."""

    def __init__(self, dev: str, name: str):
        self.dev, self.name = dev, name
        self.version: str | None = None
        self.path: str | None = None
        self.error: str | None = None

    def __enter__(self) -> IoCgroup:
        self.create()
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def create(self) -> None:
        """Make the cgroup; where none can be made, `.error` says why and read_stats() gives None."""
        if ":" not in self.dev:
            self.error = f"no block device under the index (got {self.dev!r}): nothing to count"
            return
        v2 = _v2_root()
        try:
            if v2 is not None:
                parent = os.path.join(v2, "suite-io")
                os.makedirs(parent, exist_ok=True)
                with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                    f.write("+io")
                self.version, self.path = "v2", os.path.join(parent, self.name)
                os.mkdir(self.path)
            elif os.path.isdir(V1_ROOT):
                self.version, self.path = "v1", os.path.join(V1_ROOT, "suite-io-" + self.name)
                os.mkdir(self.path)
                with open(os.path.join(self.path, "blkio.throttle.read_bps_device"), "w") as f:
                    f.write(f"{self.dev} {NO_LIMIT_BPS}")
            else:
                self.error = f"{V1_ROOT}: no blkio hierarchy and no cgroup v2 with the io controller"
        except OSError as exc:
            self.error = f"{exc.filename or self.path}: {exc.strerror or exc}"
            self.close()
            self.version = None

    @property
    def join_file(self) -> str | None:
        return os.path.join(self.path, "cgroup.procs") if self.version and self.path else None

    @property
    def counter_names(self) -> tuple:
        if not self.version:
            return ()
        return ("io.stat",) if self.version == "v2" else ("blkio.throttle.io_service_bytes", "blkio.throttle.io_serviced")

    @property
    def counter_files(self) -> dict:
        return {n: os.path.join(self.path, n) for n in self.counter_names} if self.path else {}

    def texts(self) -> dict:
        out = {}
        for name, path in self.counter_files.items():
            try:
                out[name] = Path(path).read_text()
            except OSError:
                out[name] = ""
        return out

    def read_stats(self) -> dict | None:
        return parse_stats(self.version, self.texts(), self.dev) if self.version else None

    def close(self) -> None:
        """Remove the cgroup (its processes have exited; a v1 blkio rmdir needs no emptying of rules)."""
        if self.path and os.path.isdir(self.path):
            try:
                os.rmdir(self.path)
            except OSError as exc:
                self.error = self.error or f"{self.path}: cannot remove ({exc.strerror})"
        self.path = self.path if self.path and os.path.isdir(self.path) else None

    def evidence(self) -> dict:
        return {"version": self.version, "device": self.dev, "error": self.error,
                "files": list(self.counter_names),
                "mechanism": {"v1": f"blkio throttle accounting (read_bps_device {NO_LIMIT_BPS}: no limit)",
                              "v2": "io.stat"}.get(self.version or "", "none")}
