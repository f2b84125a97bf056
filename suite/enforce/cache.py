"""Page-cache drop (`sync; echo 3 > /proc/sys/vm/drop_caches`) with evidence.

`drop_caches()` never raises for an environment that does not permit the drop:
it returns a CacheDrop whose `succeeded` is False and whose `error` names the
file and the reason, and the caller (the runner) decides what that means for
the division. `page_cache_residency(path)` tells how much of a file is in the
page cache (mincore(2) on a read-only mapping), so the effect of a drop can be
shown per file, not only machine-wide.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import mmap
import os
import time
from datetime import UTC, datetime

DROP_CACHES_PATH = "/proc/sys/vm/drop_caches"
MEMINFO_PATH = "/proc/meminfo"
METHOD = "sync; echo 3 > /proc/sys/vm/drop_caches"


@dataclasses.dataclass(frozen=True)
class CacheDrop:
    """What one cache drop did. Sizes in bytes, times in seconds."""

    attempted: bool             # the drop file was opened for writing (or at least tried)
    succeeded: bool             # "3" was written without error
    duration_s: float           # sync + drop, wall clock
    method: str                 # what was done, in shell words
    error: str | None           # one line naming the file and the reason, when not succeeded
    at: str                     # ISO 8601 UTC time the drop started
    sync_duration_s: float = 0.0
    cached_bytes_before: int | None = None   # /proc/meminfo "Cached" before the sync
    cached_bytes_after: int | None = None    # ... and right after the drop

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def meminfo(path: str = MEMINFO_PATH) -> dict[str, str]:
    """/proc/meminfo as {field: "value unit"} ({} when unreadable): the one parser of it."""
    out = {}
    try:
        with open(path, "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return out
    for line in text.splitlines():
        key, _, value = line.partition(":")
        out[key.strip()] = value.strip()
    return out


def meminfo_bytes(field: str, meminfo_path: str = MEMINFO_PATH) -> int | None:
    """One /proc/meminfo field in bytes (the file says kB, meaning KiB); None if absent."""
    parts = meminfo(meminfo_path).get(field, "").split()
    try:
        value = int(parts[0])
    except (ValueError, IndexError):
        return None
    return value * 1024 if parts[1:] == ["kB"] else value


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def drop_caches(path: str = DROP_CACHES_PATH, meminfo: str = MEMINFO_PATH) -> CacheDrop:
    """`sync`, then write "3" to `path`; never raises for "not permitted".

    `path` and `meminfo` are parameters only so the logic can be pointed at other
    files; the runner uses the defaults.
    """
    at = _now_iso()
    before = meminfo_bytes("Cached", meminfo)
    t0 = time.perf_counter()
    os.sync()
    sync_s = time.perf_counter() - t0
    attempted, error = False, None
    try:
        fd = os.open(path, os.O_WRONLY)
    except FileNotFoundError:
        error = f"{path}: not present (not Linux, or /proc not mounted); caches not dropped"
    except OSError as exc:
        attempted = True
        error = f"{path}: cannot open for writing: {exc.strerror} (errno {exc.errno}); " \
                "run as root with a writable /proc/sys, or use --allow-no-cache-drop"
    else:
        attempted = True
        try:
            os.write(fd, b"3")
        except OSError as exc:
            error = f"{path}: write of \"3\" failed: {exc.strerror} (errno {exc.errno}); " \
                    "run as root with a writable /proc/sys, or use --allow-no-cache-drop"
        finally:
            os.close(fd)
    duration = time.perf_counter() - t0
    after = meminfo_bytes("Cached", meminfo)
    return CacheDrop(attempted=attempted, succeeded=attempted and error is None,
                     duration_s=duration, method=METHOD, error=error, at=at,
                     sync_duration_s=sync_s, cached_bytes_before=before,
                     cached_bytes_after=after)


_libc = None


def _libc_fns():
    """libc mmap/munmap/mincore via ctypes (Python's mmap hides a read-only map's address)."""
    global _libc
    if _libc is None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.mmap.restype = ctypes.c_void_p
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.munmap.restype = ctypes.c_int
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.POINTER(ctypes.c_ubyte)]
        libc.mincore.restype = ctypes.c_int
        _libc = libc
    return _libc


def page_cache_residency(path) -> tuple[int, int]:
    """(resident_bytes, size_bytes) of `path` in the page cache, from mincore(2).

    Maps the file read-only and never touches the mapping (mapping alone does
    not fault pages in), so the measurement does not change what it measures.
    """
    libc = _libc_fns()
    page = mmap.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return 0, 0
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            err = ctypes.get_errno()
            raise OSError(err, f"mmap: {os.strerror(err)}", str(path))
        try:
            npages = (size + page - 1) // page
            vec = (ctypes.c_ubyte * npages)()
            if libc.mincore(addr, size, vec) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"mincore: {os.strerror(err)}", str(path))
            resident = sum(v & 1 for v in bytes(vec))
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)
    return min(resident * page, size), size


def cpuinfo() -> dict:
    """The first processor's /proc/cpuinfo block, as DLIO's summary.json carries it."""
    out = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    if out:
                        break
                    continue
                key, _, value = line.partition(":")
                if key.strip() != "processor":
                    out[key.strip()] = value.strip()
    except OSError:
        pass
    return out


PREREAD_CHUNK_BYTES = 8 << 20


def preread(paths: list[str]) -> tuple[int, float]:
    """Read every file once so it sits in the page cache (a page-cache ceiling run's warm-up): (bytes
    read, seconds)."""
    buf = bytearray(PREREAD_CHUNK_BYTES)
    total, t0 = 0, time.monotonic()
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while n := f.readinto(buf):
                total += n
    return total, time.monotonic() - t0
