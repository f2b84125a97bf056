"""The handoff between a checkpoint write and its read under MLPerf Storage v3.0 (Rules.md 4.3.1, 4.7.1).

    h = handoff.Handoff(folder, files, bytes_per_client, clients, memory_limit)
    drop = h.clear(backend)          # the read's cache clear, with its evidence (the read starts next)
    doc = h.record(write_end_unix_s, read_start_unix_s)

4.3.1 (checkpointDataSizeRatio): when the checkpoint data written per client is under 3x the client's
memory, the client's file-system cache must be cleared between the write and the read. `suite run`
clears it before every read (the rule's requirement or not: it is what v2.0 did and is never weaker);
the record says whether the rule required it and why (the bytes per client, the memory, their ratio),
what was cleared and how (the storage backend's clear_cache: on POSIX `sync; echo 3 >
/proc/sys/vm/drop_caches`), /proc/meminfo before and after, and how many bytes of the checkpoint
files were in the page cache before and after (mincore).

4.7.1 (checkpointCacheFlushValidation): the read must start within 30 s of the write's end. The gap
is measured as the read run's start (its summary.json `start`, after the clear) minus the write
run's end (the write's summary.json `end`): later than the rules' own measure (the read
invocation's process start), so never more lenient. A read that starts later is recorded as
breaking the rule (`within_window: false`); `suite check` holds the pair to 4.7.1-checkpointCacheFlushValidation
(the checkpointing judge: the gap from the two leaves' own summary.json times).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

RATIO_MIN = 3.0              # 4.3.1: checkpoint data per client over client memory, below which a clear is required
WINDOW_S = 30.0              # 4.7.1: the read starts within this many seconds of the write's end
MEMINFO_KEYS = ("MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "Dirty", "Writeback")


def meminfo_kib() -> dict:
    """The /proc/meminfo fields the evidence keeps, in KiB as the kernel gives them."""
    from suite.enforce.cache import meminfo

    raw = meminfo()
    out = {}
    for k in MEMINFO_KEYS:
        v = str(raw.get(k, "")).split()
        out[k] = int(v[0]) if v and v[0].isdigit() else None
    return out


def resident(paths: list[Path]) -> int:
    """Bytes of `paths` in the page cache now (mincore); files that are gone count 0."""
    from suite.enforce.cache import page_cache_residency

    total = 0
    for p in paths:
        try:
            total += page_cache_residency(p)[0]
        except OSError:
            pass
    return total


def client_memory_bytes(limit: int | None) -> int:
    """The memory a client has for its page cache: MemTotal, or the memory cgroup's limit when lower."""
    total = (meminfo_kib().get("MemTotal") or 0) * 1024
    return min(total, limit) if limit else total


@dataclass
class Handoff:
    """What a write leaves for its read: the files, the bytes each client wrote, the clients' memory."""

    files: list[Path]                 # the checkpoint files the read will read
    bytes_per_client: int             # the write phase's bytes over the client hosts
    memory_bytes: int                 # one client's memory (client_memory_bytes; across hosts the smallest)
    evidence: dict = field(default_factory=dict)
    scope: str | None = None          # across hosts: whose page cache the residency figures measured (this host's)

    @property
    def ratio(self) -> float:
        return self.bytes_per_client / self.memory_bytes if self.memory_bytes else float("inf")

    @property
    def required(self) -> bool:
        return self.ratio < RATIO_MIN

    def reason(self) -> str:
        rel = "under" if self.required else "at least"
        return (f"checkpoint data per client {self.bytes_per_client:,} bytes is {rel} {RATIO_MIN:g}x the client's "
                f"memory {self.memory_bytes:,} bytes (ratio {self.ratio:.4f}): a cache clear between write and read "
                + ("is required (4.3.1)" if self.required else "is not required (4.3.1); suite clears it anyway"))

    def clear(self, clear_cache):
        """The read's cache clear (the storage backend's clear_cache), with the evidence around it;
        returns the clear's own record (what the harness keeps as the run's cache_drop)."""
        before_mem, before_res, t0 = meminfo_kib(), resident(self.files), time.time()
        drop = clear_cache()
        after_res, after_mem = resident(self.files), meminfo_kib()
        d = drop.to_dict()
        self.evidence = {"required": self.required, "reason": self.reason(), "performed": bool(d.get("attempted")),
                         "succeeded": bool(d.get("succeeded")), "method": d.get("method"), "error": d.get("error"),
                         "started_unix_s": t0, "duration_s": d.get("duration_s"),
                         "what": f"the page cache of this client (the checkpoint files: {len(self.files)})" if self.files
                         else "the page cache of this client (the checkpoint is objects: none of it cached as files)",
                         **({"resident_bytes_scope": self.scope} if self.scope else {}),
                         "meminfo_before_kib": before_mem, "meminfo_after_kib": after_mem,
                         "resident_bytes_before": before_res, "resident_bytes_after": after_res}
        return drop

    def record(self, write_end_unix_s: float, read_start_unix_s: float) -> dict:
        """handoff in the read run's results.json: the 3x rule and the measured gap."""
        gap = read_start_unix_s - write_end_unix_s
        return {"rule_ratio_min": RATIO_MIN, "checkpoint_bytes_per_client": self.bytes_per_client,
                "client_memory_bytes": self.memory_bytes, "ratio": self.ratio, "clear_required": self.required,
                "cache_clear": self.evidence or {"required": self.required, "reason": self.reason(), "performed": False},
                "write_end_unix_s": write_end_unix_s, "read_start_unix_s": read_start_unix_s,
                "gap_s": gap, "window_s": WINDOW_S, "within_window": 0 <= gap <= WINDOW_S,
                "clock_skew": gap < 0}
