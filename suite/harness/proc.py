"""This host's counters from /proc, parsed (Linux; an unreadable file reads as empty): what both
samplers read (suite.harness.hostmetrics' host_metrics.json and the checkpointing kind's published
timeseries), and the thread that samples at a fixed interval for both.

    class Mine(proc.Ticker):
        def take(self): ...          # one sample, on the ticker's thread
    with Mine(interval_s=1.0) as t:  # a sample at __enter__, one each interval, one at __exit__
        ...

The ticker measures its own cost (`cpu_s`: the sampling thread's CPU time, first and last samples
included), so a run can say what its sampling cost.
"""

from __future__ import annotations

import threading
import time

DISK_FIELDS = ("reads_completed", "reads_merged", "sectors_read", "time_reading_ms", "writes_completed",
               "writes_merged", "sectors_written", "time_writing_ms", "ios_in_progress", "time_doing_ios_ms",
               "weighted_time_doing_ios_ms", "discards_completed", "discards_merged", "sectors_discarded",
               "time_discarding_ms", "flush_requests_completed", "time_flushing_ms")
NET_FIELDS = ("rx_bytes", "rx_packets", "rx_errors", "rx_dropped", "rx_fifo", "rx_frame", "rx_compressed",
              "rx_multicast", "tx_bytes", "tx_packets", "tx_errors", "tx_dropped", "tx_fifo", "tx_collisions",
              "tx_carrier", "tx_compressed")
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
MAX_PROC_BYTES = 4 << 20


def read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read(MAX_PROC_BYTES)
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


def cpu_jiffies(text: str) -> dict:
    """/proc/stat's aggregate `cpu` line: clock ticks per state since boot (absent states 0)."""
    for line in text.splitlines():
        p = line.split()
        if p and p[0] == "cpu":
            vals = [int(v) for v in p[1:len(CPU_FIELDS) + 1] if v.isdigit()]
            return dict(zip(CPU_FIELDS, vals + [0] * (len(CPU_FIELDS) - len(vals))))
    return dict.fromkeys(CPU_FIELDS, 0)


class Ticker:
    """Calls `take()` in a daemon thread from __enter__ to __exit__: once at __enter__ (on the caller's
    thread), every interval_s, once at __exit__. `cpu_s` is the CPU time the samples took."""

    def __init__(self, interval_s: float):
        if not interval_s > 0:
            raise ValueError(f"interval_s: expected > 0, got {interval_s}")
        self.interval_s = float(interval_s)
        self.cpu_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=type(self).__name__, daemon=True)

    def take(self) -> None:
        raise NotImplementedError

    def _timed(self) -> None:
        t0 = time.thread_time()
        self.take()
        self.cpu_s += time.thread_time() - t0

    def __enter__(self):
        self._timed()
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._timed()

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._timed()
