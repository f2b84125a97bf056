"""What a vector_database run records about the storage under the index: how much of the index
files the page cache held before the run (mincore(2) over each file), the block device and file
system they live on (its read counters: suite.enforce.iocount, read by the worker around each phase)."""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from pathlib import Path

PAGE = mmap.PAGESIZE


def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def resident_bytes(path: Path) -> tuple[int, int]:
    """(bytes of `path` in the page cache, file bytes) by mincore(2) over a read-only mapping."""
    size = path.stat().st_size
    if size == 0:
        return 0, 0
    libc = _libc()
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return -1, size
        try:
            pages = (size + PAGE - 1) // PAGE
            vec = (ctypes.c_ubyte * pages)()
            if libc.mincore(ctypes.c_void_p(addr), size, vec) != 0:
                return -1, size
            return sum(1 for b in vec if b & 1) * PAGE, size
        finally:
            libc.munmap(ctypes.c_void_p(addr), size)
    finally:
        os.close(fd)


def page_cache(index_dir: Path) -> dict:
    """The page-cache state of every file under the index dir (bounded: the first 10,000 files)."""
    total = cached = count = 0
    unknown = 0
    for root, _, names in os.walk(index_dir):
        for name in names:
            if count >= 10000:
                break
            p = Path(root) / name
            if p.is_symlink() or not p.is_file():
                continue
            count += 1
            try:
                r, size = resident_bytes(p)
            except OSError:
                unknown += 1
                continue
            total += size
            if r < 0:
                unknown += 1
            else:
                cached += min(r, size)
    return {"files": count, "index_bytes": total, "cached_bytes": cached, "files_unknown": unknown,
            "cached_fraction": round(cached / total, 6) if total else 0.0, "method": "mincore(2) per file"}


def device_of(path: Path) -> dict:
    """The mount (and its block device, when /proc/self/mountinfo names one) that holds `path`."""
    real = os.path.realpath(path)
    best = None
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        parts = line.split()
        if " - " not in line or len(parts) < 5:
            continue
        mnt = parts[4]
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and (best is None or len(mnt) > len(best[0])):
            tail = line.split(" - ", 1)[1].split()
            best = (mnt, parts[2], tail[0] if tail else "?", tail[1] if len(tail) > 1 else "?")
    if best is None:
        return {"path": real}
    return {"path": real, "mountpoint": best[0], "dev": best[1], "fstype": best[2], "source": best[3]}
