"""checkpointing_<ts>_timeseries.json: the host's counters sampled through a phase (MLPerf Storage v3.0).

    with timeseries.Sampler(interval_s=10.0) as s:
        ...the phase...
    s.write(leaf / f"checkpointing_{ts}_timeseries.json")

The shape is the published one (mlcommons/storage_results_v3.0 checkpointing leaves):
{collection_interval_seconds, start_time, end_time, num_samples, samples_by_host: {host: [{timestamp,
hostname, diskstats: [...], vmstat: {...}, meminfo: {...} (KiB), loadavg: {...}, netdev: [...]}]},
collection_method, hosts_requested, hosts_collected}. One sample when the phase starts, one every
interval, one when it ends. Only this host is sampled (checkpointing runs on one host for now).
"""

from __future__ import annotations

import socket
from datetime import datetime, timezone
from pathlib import Path

from suite import files
from suite.harness.proc import Ticker, diskstats, keyed_ints, loadavg, netdev, read as _read

MAX_SAMPLES = 100_000        # a week at 10 s: the sampler stops adding beyond it


def _iso(t: datetime | None = None) -> str:
    return (t or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")


def sample() -> dict:
    """One sample of this host's counters."""
    return {"timestamp": _iso(), "hostname": socket.gethostname(), "diskstats": diskstats(_read("/proc/diskstats")),
            "vmstat": keyed_ints(_read("/proc/vmstat")), "meminfo": keyed_ints(_read("/proc/meminfo"), ":"),
            "loadavg": loadavg(_read("/proc/loadavg")), "netdev": netdev(_read("/proc/net/dev"))}


class Sampler(Ticker):
    """The published samples from __enter__ to __exit__ (a first and a last sample always), on the
    harness' ticker (suite.harness.proc: the one sampling thread host_metrics.json uses too)."""

    def __init__(self, interval_s: float = 10.0):
        super().__init__(interval_s)
        self.samples: list[dict] = []
        self.start_time = self.end_time = None

    def take(self) -> None:
        if len(self.samples) < MAX_SAMPLES or self._stop.is_set():
            self.samples.append(sample())

    def __enter__(self) -> "Sampler":
        self.start_time = _iso()
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self.end_time = _iso()

    def doc(self) -> dict:
        host = socket.gethostname()
        return {"collection_interval_seconds": self.interval_s, "start_time": self.start_time,
                "end_time": self.end_time, "num_samples": len(self.samples), "samples_by_host": {host: self.samples},
                "collection_method": "local", "hosts_requested": [host], "hosts_collected": [host]}

    def write(self, path: Path) -> None:
        files.write_json(Path(path), self.doc(), schema="checkpoint-timeseries", indent=None)


def summarise(doc: dict) -> dict:
    """What a timeseries shows, from its samples (ours or a published one): per host the samples,
    the span, and the disk sectors and page-cache change between the first and the last sample."""
    out = {}
    for host, samples in (doc.get("samples_by_host") or {}).items():
        if not isinstance(samples, list) or not samples:
            continue
        first, last = samples[0], samples[-1]

        def sectors(s, key):
            disks = s.get("diskstats") if isinstance(s, dict) else None
            return sum(d[key] for d in disks if isinstance(d, dict) and type(d.get(key)) is int) \
                if isinstance(disks, list) else 0
        out[host] = {"samples": len(samples), "first": first.get("timestamp"), "last": last.get("timestamp"),
                     "sectors_written": sectors(last, "sectors_written") - sectors(first, "sectors_written"),
                     "sectors_read": sectors(last, "sectors_read") - sectors(first, "sectors_read"),
                     "cached_kib_first": _cached(first), "cached_kib_last": _cached(last)}
    return out


def _cached(sample: dict):
    m = sample.get("meminfo")
    v = m.get("Cached") if isinstance(m, dict) else None
    return v if type(v) is int else None
