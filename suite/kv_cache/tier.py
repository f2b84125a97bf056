"""The KV cache's tiers: GPU and CPU memory (capacity and LRU; a transfer is a memory copy of the
entry's bytes) and storage, the tier under test: one file per entry through the storage backend
(suite.storage.backend), written whole and fsync'd, read back whole after its pages are dropped
(posix_fadvise DONTNEED, as the reference does before np.load), deleted on eviction.

The entry bytes come from one pre-generated random buffer per rank (`Pattern`, seeded): a storage
write copies the entry's 1 MiB slice of it into the writing thread's chunk once, then sends that
chunk for each MiB of the entry, each 4 KiB block's first 8 bytes restamped with the entry's hash
and the block's index (no two entries, no two blocks alike), so nothing is generated or copied on
the hot path and the source stays in the CPU's cache, as fio's buffer does
(benchmarks/kvcache_vs_fio.py measures the tier against fio); a memory tier's transfer copies the
entry's bytes (a copy is what it models).

Every operation is timed: `total_s` (what the reference's per-request latency sums), `device_s`
(the system calls alone: write(2) + fsync(2), or the read(2)s; a write's stamping is host time).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass

WRITE_CHUNK = 1 << 20          # one write(2) per 1 MiB (fio --bs=1m in benchmarks/kvcache_vs_fio.py)
READ_CHUNK = 1 << 20           # one read(2) per 1 MiB into a per-thread buffer (fio --bs=1m)
PATTERN_BYTES = 64 << 20
BLOCK = 4096
SUFFIX = ".kv"


def key_hash(key: str, seed: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "little")


class Pattern:
    """The rank's entry bytes: PATTERN_BYTES of seeded noise, sliced and stamped per entry."""

    def __init__(self, seed: int, nbytes: int = PATTERN_BYTES):
        import numpy as np

        self.np = np
        self.bytes = np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)
        self.size = nbytes

    def fill(self, out, h: int, offset: int, n: int):
        """Entry `h`'s bytes [offset, offset+n) into `out` (a numpy uint8 array of WRITE_CHUNK): a
        view of n bytes. n and offset are multiples of BLOCK except at an entry's end."""
        np = self.np
        start = (h + offset) % (self.size - WRITE_CHUNK)
        start -= start % BLOCK
        view = out[:n]
        view[:] = self.bytes[start:start + n]
        whole = n // BLOCK
        if whole:
            stamps = view[:whole * BLOCK].view(np.uint64).reshape(whole, BLOCK // 8)
            stamps[:, 0] = np.arange(offset // BLOCK, offset // BLOCK + whole, dtype=np.uint64) ^ np.uint64(h)
        return view

    def restamp(self, chunk, h: int, offset: int, n: int):
        """`chunk` (a buffer `fill`ed for entry `h`) as the entry's bytes [offset, offset+n): a view of n
        bytes, each 4 KiB block's first 8 bytes restamped with h ^ its block index in the entry (2 KiB
        written per MiB, no copy). An entry's data is its first MiB's noise again each MiB, every 4 KiB
        block unique by its stamp: nothing for dedup or compression to take, and the source of each
        write stays in the CPU's cache as fio's buffer does (not 1 MiB read from the 64 MiB pattern)."""
        np = self.np
        view = chunk[:n]
        whole = n // BLOCK
        if whole:
            stamps = view[:whole * BLOCK].view(np.uint64).reshape(whole, BLOCK // 8)
            first = offset // BLOCK
            np.bitwise_xor(np.arange(first, first + whole, dtype=np.uint64), np.uint64(h), out=stamps[:, 0])
        return view


@dataclass
class Op:
    """One timed operation: kind read|write|evict_write|delete, tier, bytes, total_s (issue to completion:
    the operation's own service time), device_s (its system calls alone), at_s (completion, since the
    trial's start), the entry's key, issue_s (since the trial's start) and queue_s (the wait between the
    operation becoming due and its issue: an allocation slot, the evictions before it, the cache's lock)."""

    kind: str
    tier: str
    nbytes: int
    total_s: float
    device_s: float
    at_s: float
    eviction: bool = False
    key: str = ""
    issue_s: float = 0.0
    queue_s: float = 0.0


class Stopped(Exception):
    """The trial's time ran out in the middle of an operation (it is not counted)."""


class StorageTier:
    """One file per entry under the rank's cache directory."""

    name = "storage"

    def __init__(self, backend, pattern: Pattern, seed: int, stop: threading.Event):
        self.backend, self.pattern, self.seed, self.stop = backend, pattern, seed, stop
        self.local = threading.local()

    def file(self, key: str) -> str:
        return key + SUFFIX

    def write(self, key: str, nbytes: int, chunk) -> tuple[float, float]:
        """(total_s, device_s) of writing the entry whole, fsync'd before close. Stopped: aborted."""
        h, restamp = key_hash(key, self.seed), self.pattern.restamp
        t0 = time.perf_counter()
        self.pattern.fill(chunk, h, 0, min(WRITE_CHUNK, nbytes))       # the entry's noise, once
        host = time.perf_counter() - t0
        writer = self.backend.create(self.file(key), fsync=True, atomic=False)
        try:
            done = 0
            while done < nbytes:
                if self.stop.is_set():
                    raise Stopped()
                n = min(WRITE_CHUNK, nbytes - done)
                th = time.perf_counter()
                view = restamp(chunk, h, done, n)
                host += time.perf_counter() - th
                writer.write(view)
                done += n
            writer.commit()
        except BaseException:
            writer.abort()
            raise
        total = time.perf_counter() - t0
        return total, total - host

    def read(self, key: str, nbytes: int) -> tuple[float, float]:
        """(total_s, device_s) of reading the entry whole after dropping its cached pages.
        FileNotFoundError: evicted meanwhile (a miss)."""
        buf = getattr(self.local, "buf", None)
        if buf is None:
            buf = self.local.buf = bytearray(READ_CHUNK)
        t0 = time.perf_counter()
        with self.backend.open_read(self.file(key), sequential=False) as handle:
            drop_pages(handle)
            read, fd, bufs, got = handle.readinto_at, handle.key, [buf], 0
            while True:
                if self.stop.is_set():
                    raise Stopped()
                n = read(fd, bufs, got)
                if not n:
                    break
                got += n
        total = time.perf_counter() - t0
        if got != nbytes:
            raise OSError(f"{self.backend.locate(self.file(key))}: expected {nbytes} bytes, read {got}")
        return total, total

    def delete(self, key: str) -> float:
        t0 = time.perf_counter()
        self.backend.remove(self.file(key))
        return time.perf_counter() - t0


def clear_entries(backend) -> None:
    """The rank's cache dir without entry files (the reference deletes its *.npy on start)."""
    try:
        entries = backend.list("", recursive=False)
    except FileNotFoundError:
        return
    for e in entries:
        if e.size_bytes >= 0 and e.name.endswith(SUFFIX):
            backend.remove(e.name)


def drop_pages(handle) -> None:
    """posix_fadvise(DONTNEED) on a POSIX handle (its key is the fd): the read comes from the device."""
    fd = getattr(handle, "fd", None)
    if isinstance(fd, int) and fd >= 0 and hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


class MemoryTier:
    """GPU or CPU memory: capacity and LRU are kept; a transfer copies the entry's bytes through a
    chunk buffer (the bytes are not held: the pattern regenerates them), so option 2's 4 GiB per
    rank costs no resident memory on a shared machine."""

    def __init__(self, name: str, pattern: Pattern, seed: int, stop: threading.Event):
        self.name, self.pattern, self.seed, self.stop = name, pattern, seed, stop
        self.local = threading.local()

    def write(self, key: str, nbytes: int, chunk) -> tuple[float, float]:
        return self._copy(key, nbytes, chunk)

    def read(self, key: str, nbytes: int) -> tuple[float, float]:
        import numpy as np

        chunk = getattr(self.local, "chunk", None)
        if chunk is None:
            chunk = self.local.chunk = np.empty(WRITE_CHUNK, dtype=np.uint8)
        return self._copy(key, nbytes, chunk)

    def _copy(self, key: str, nbytes: int, chunk) -> tuple[float, float]:
        h, t0, done = key_hash(key, self.seed), time.perf_counter(), 0
        while done < nbytes:
            if self.stop.is_set():
                raise Stopped()
            n = min(WRITE_CHUNK, nbytes - done)
            self.pattern.fill(chunk, h, done, n)
            done += n
        total = time.perf_counter() - t0
        return total, total

    def delete(self, key: str) -> float:
        return 0.0
