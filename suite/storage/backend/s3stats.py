"""What an object-storage run asked of the server: request counts by kind, retries, bytes, latencies.

One `Requests` per process (the S3 backend's); a rank or a datagen worker hands its `snapshot()` to
whoever writes the result, which `merge`s them. Latencies are kept per kind (seconds, one float per
request: 8 bytes, so a million requests cost 8 MB); the record holds their percentiles, not the list.
"""

from __future__ import annotations

import threading
import time

KINDS = ("GET", "PUT", "LIST", "HEAD", "DELETE", "MPU")   # MPU: create/complete/abort of a multipart upload
PERCENTILES = (50, 90, 99)


class Requests:
    """Thread-safe counters: `timed(kind)` around one request; `retry(kind)` for each retry."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.counts = {k: 0 for k in KINDS}
        self.retries = {k: 0 for k in KINDS}
        self.errors = {k: 0 for k in KINDS}
        self.latency_s: dict[str, list[float]] = {k: [] for k in KINDS}
        self.bytes_read = 0
        self.bytes_written = 0

    def record(self, kind: str, seconds: float, nbytes_read: int = 0, nbytes_written: int = 0,
               failed: bool = False) -> None:
        with self._lock:
            self.counts[kind] += 1
            self.latency_s[kind].append(seconds)
            self.bytes_read += nbytes_read
            self.bytes_written += nbytes_written
            if failed:
                self.errors[kind] += 1

    def retry(self, kind: str) -> None:
        with self._lock:
            self.retries[kind] += 1

    def add_read(self, nbytes: int) -> None:
        with self._lock:
            self.bytes_read += nbytes

    def snapshot(self) -> dict:
        """A plain-data copy (picklable, JSON-able) that `merge` adds up."""
        with self._lock:
            return {"counts": dict(self.counts), "retries": dict(self.retries), "errors": dict(self.errors),
                    "latency_s": {k: list(v) for k, v in self.latency_s.items()},
                    "bytes_read": self.bytes_read, "bytes_written": self.bytes_written}

    def take(self) -> dict:
        """snapshot() and reset(): what happened since the last take."""
        with self._lock:
            snap = {"counts": self.counts, "retries": self.retries, "errors": self.errors,
                    "latency_s": self.latency_s, "bytes_read": self.bytes_read, "bytes_written": self.bytes_written}
            self.reset()
        return snap


REQUESTS = Requests()                   # this process's object-storage requests (every S3 backend in it)


def empty() -> dict:
    return Requests().snapshot()


def merge(snaps: list[dict]) -> dict:
    """The sum of several snapshots (ranks, worker processes)."""
    out = empty()
    for snap in snaps:
        if not snap:
            continue
        for key in ("counts", "retries", "errors"):
            for kind, n in snap[key].items():
                out[key][kind] = out[key].get(kind, 0) + n
        for kind, values in snap["latency_s"].items():
            out["latency_s"].setdefault(kind, []).extend(values)
        out["bytes_read"] += snap["bytes_read"]
        out["bytes_written"] += snap["bytes_written"]
    return out


def percentile(sorted_values: list[float], p: float) -> float:
    """The nearest-rank percentile of sorted values (0.0 for none)."""
    if not sorted_values:
        return 0.0
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


def summary(snap: dict) -> dict:
    """What a result records: counts, retries and errors by kind, bytes, latency percentiles in ms."""
    latency = {}
    for kind, values in snap["latency_s"].items():
        if values:
            ordered = sorted(values)
            latency[kind] = {**{f"p{p}_ms": round(percentile(ordered, p) * 1e3, 3) for p in PERCENTILES},
                             "max_ms": round(ordered[-1] * 1e3, 3)}
    return {"requests": {k: v for k, v in snap["counts"].items() if v},
            "retries": {k: v for k, v in snap["retries"].items() if v},
            "retries_total": sum(snap["retries"].values()),
            "errors": {k: v for k, v in snap["errors"].items() if v},
            "bytes_read": snap["bytes_read"], "bytes_written": snap["bytes_written"], "latency": latency}


class Timer:
    """`with Timer() as t: ...; t.seconds`."""

    __slots__ = ("start", "seconds")

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
