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
import threading
from datetime import datetime, timezone
from pathlib import Path

from suite import files

DISK_FIELDS = ("reads_completed", "reads_merged", "sectors_read", "time_reading_ms", "writes_completed",
               "writes_merged", "sectors_written", "time_writing_ms", "ios_in_progress", "time_doing_ios_ms",
               "weighted_time_doing_ios_ms", "discards_completed", "discards_merged", "sectors_discarded",
               "time_discarding_ms", "flush_requests_completed", "time_flushing_ms")
NET_FIELDS = ("rx_bytes", "rx_packets", "rx_errors", "rx_dropped", "rx_fifo", "rx_frame", "rx_compressed",
              "rx_multicast", "tx_bytes", "tx_packets", "tx_errors", "tx_dropped", "tx_fifo", "tx_collisions",
              "tx_carrier", "tx_compressed")
MAX_SAMPLES = 100_000        # a week at 10 s: the sampler stops adding beyond it


def _iso(t: datetime | None = None) -> str:
    return (t or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read(4 << 20)
    except OSError:
        return ""


def diskstats(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        p = line.split()
        if len(p) < 7 or not all(x.isdigit() for x in p[3:]):
            continue
        out.append({"device_name": p[2], **{k: int(v) for k, v in zip(DISK_FIELDS, p[3:])}})
    return out


def netdev(text: str) -> list[dict]:
    out = []
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        vals = rest.split()
        if name.strip() and len(vals) >= 16 and all(v.isdigit() for v in vals[:16]):
            out.append({"interface_name": name.strip(), **{k: int(v) for k, v in zip(NET_FIELDS, vals)}})
    return out


def keyed_ints(text: str, sep: str | None = None) -> dict:
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":") if sep == ":" else line.partition(" ")
        v = v.split()
        if k.strip() and v and v[0].lstrip("-").isdigit():
            out[k.strip()] = int(v[0])
    return out


def loadavg(text: str) -> dict:
    p = text.split()
    if len(p) < 4 or "/" not in p[3]:
        return {}
    running, total = p[3].split("/", 1)
    return {"load_1min": float(p[0]), "load_5min": float(p[1]), "load_15min": float(p[2]),
            "running_processes": int(running), "total_processes": int(total)}


def sample() -> dict:
    """One sample of this host's counters."""
    return {"timestamp": _iso(), "hostname": socket.gethostname(), "diskstats": diskstats(_read("/proc/diskstats")),
            "vmstat": keyed_ints(_read("/proc/vmstat")), "meminfo": keyed_ints(_read("/proc/meminfo"), ":"),
            "loadavg": loadavg(_read("/proc/loadavg")), "netdev": netdev(_read("/proc/net/dev"))}


class Sampler:
    """Samples in a thread from __enter__ to __exit__ (a first and a last sample always)."""

    def __init__(self, interval_s: float = 10.0):
        self.interval_s = float(interval_s)
        self.samples: list[dict] = []
        self.start_time = self.end_time = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="timeseries", daemon=True)

    def __enter__(self) -> "Sampler":
        self.start_time = _iso()
        self.samples.append(sample())
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            if len(self.samples) < MAX_SAMPLES:
                self.samples.append(sample())

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(sample())
        self.end_time = _iso()

    def doc(self) -> dict:
        host = socket.gethostname()
        return {"collection_interval_seconds": self.interval_s, "start_time": self.start_time,
                "end_time": self.end_time, "num_samples": len(self.samples), "samples_by_host": {host: self.samples},
                "collection_method": "local", "hosts_requested": [host], "hosts_collected": [host]}

    def write(self, path: Path) -> None:
        files.write_json(Path(path), self.doc(), indent=None)


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
