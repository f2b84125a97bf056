"""host_metrics.json: every host's CPU, memory, disk and network through one run, sampled from /proc
at a fixed interval, in the run's leaf (every kind: the enforced loop samples training,
checkpointing and the DLIO engine; kv_cache, vector_database and tpcx_ai sample their own runs).

    with hostmetrics.Sampler() as s:      # a baseline now, a sample each interval_s and at the end
        ...the run...
    s.write(run_dir)                      # run_dir/host_metrics.json, atomically, schema'd
    rec = hostmetrics.load(run_dir / hostmetrics.FILE)      # hostile input: bounded, finite, one line
    for hm in rec.hosts: ...              # one HostMetrics per host, named by its host

A run across hosts samples every host it uses, each on the host itself (suite.harness.hostsampling:
a Sampler started through the run's launcher, its document read back on its stdout), and writes
one file with one series per host (schema_version 2: scope, hosts[], warnings[]: a host whose
sampler failed is a warning there, not a failed run). Files of schema_version 1 (one host, the
fields of a host at the top level) are still read, as one host.

The interval: 1 s. Our runs are short (a miniature run lasts seconds, a closed one minutes); at
mlpstorage's 10 s a run of 30 s would have three points, too few to see a CPU-bound stretch. A
sample reads four small /proc files (/proc/stat, /proc/meminfo, /proc/diskstats, /proc/net/dev):
about 0.2 ms of one core, 0.02 % at 1 s; the file records what its samples cost (sampler_cpu_s)
and benchmarks/host_metrics_cost.py measures the runner's read rate with and without it.
SUITE_HOST_METRICS_INTERVAL_S sets the interval for a run (0: no sampling, no file; what the cost
benchmark compares against). Beyond MAX_POINTS points (an hour at 1 s) every other point is dropped and the interval doubles:
the counters are cumulative, so nothing is lost but resolution.

Each sample: t_s since the run's start; cpu_{user,system,iowait,steal,idle}_pct of all CPUs over the
span since the previous sample (user includes nice, system includes irq and softirq; the five add up
to 100; steal and idle are absent from files written before issue 46); mem_used_bytes (total -
free - buffers - page cache - reclaimable slab, as free(1)) and page_cache_bytes (Cached) at the
sample; disk_{read,write}_bytes and net_{rx,tx}_bytes cumulative since the start (whole disks, no
partitions or stacked dm/md devices; every interface but lo, of the sampler's network namespace).
"""

from __future__ import annotations

import math
import os
import socket
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from suite import files
from suite.errors import ResultError, SuiteError
from suite.harness import proc

FILE = "host_metrics.json"
SCHEMA = "host-metrics"
INTERVAL_S = 1.0
MAX_POINTS = 3600
MAX_FILE_BYTES = 16 << 20
SECTOR_BYTES = 512
THIS_HOST = "this host"
MAX_FILE_POINTS = 40000      # points of all hosts in one file: ~12 MB of JSON, under MAX_FILE_BYTES
VIRTUAL_DISKS = ("loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd")
COUNTERS = ("disk_read_bytes", "disk_write_bytes", "net_rx_bytes", "net_tx_bytes")


@dataclass(frozen=True)
class Sample:
    t_s: float
    cpu_user_pct: float
    cpu_system_pct: float
    cpu_iowait_pct: float
    mem_used_bytes: int
    page_cache_bytes: int
    disk_read_bytes: int
    disk_write_bytes: int
    net_rx_bytes: int
    net_tx_bytes: int
    cpu_steal_pct: float | None = None     # None: a file written before steal was recorded
    cpu_idle_pct: float | None = None

    @property
    def busy_pct(self) -> float:
        """What the CPUs were not free to give this host's work: user+system+steal (= 100 - idle - iowait;
        a VM's steal is CPU its host took, not CPU left over), user+system where steal was not recorded."""
        return self.cpu_user_pct + self.cpu_system_pct + (self.cpu_steal_pct or 0.0)


CPU_PCTS = ("cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_steal_pct", "cpu_idle_pct")


@dataclass(frozen=True)
class HostMetrics:
    host: str
    scope: str
    interval_s: float
    started_at: str
    duration_s: float
    sampler_cpu_s: float
    disk_devices: tuple
    net_interfaces: tuple
    samples: tuple             # of Sample, t_s increasing

    def rates(self) -> list[dict]:
        """Per sample: t_s and the counters as MiB/s over the span since the previous sample."""
        out, prev_t, prev = [], 0.0, dict.fromkeys(COUNTERS, 0)
        for s in self.samples:
            dt = s.t_s - prev_t
            row = {"t_s": s.t_s}
            for c in COUNTERS:
                v = getattr(s, c)
                row[c.replace("_bytes", "_mib_s")] = (v - prev[c]) / dt / (1 << 20) if dt > 0 else 0.0
                prev[c] = v
            out.append(row)
            prev_t = s.t_s
        return out


@dataclass(frozen=True)
class HostSet:
    """A host_metrics.json: what was sampled (`scope`), one HostMetrics per host (distinct names, in
    the run's host order) and the hosts that could not be sampled (`warnings`, one line each)."""
    scope: str
    hosts: tuple               # of HostMetrics
    warnings: tuple = ()       # of str
    schema_version: int = 2

    def at(self, i: int) -> str:
        """Where host i's series is in the file, as a field prefix: hosts[i]. (schema 1: the top level)."""
        return "" if self.schema_version == 1 else f"hosts[{i}]."


def interval_s() -> float:
    """The sampling interval for this run: SUITE_HOST_METRICS_INTERVAL_S when set (0: off), else 1 s."""
    raw = os.environ.get("SUITE_HOST_METRICS_INTERVAL_S", "")
    try:
        value = float(raw) if raw.strip() else INTERVAL_S
    except ValueError:
        raise SuiteError(f"SUITE_HOST_METRICS_INTERVAL_S: expected seconds (0: off), got {raw!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise SuiteError(f"SUITE_HOST_METRICS_INTERVAL_S: expected seconds >= 0 (0: off), got {raw!r}")
    return value


def whole_disks(names) -> list[str]:
    """The physical whole disks among /proc/diskstats' names: no partition (a name another name
    begins: sda1, nvme0n1p1) and no virtual or stacked device (loop, dm-, md, ...)."""
    names = [n for n in names if not n.startswith(VIRTUAL_DISKS)]
    return sorted(n for n in names if not any(o != n and n.startswith(o) for o in names))


class Sampler(proc.Ticker):
    """This host's counters from __enter__ to __exit__; doc() and write() give host_metrics.json."""

    def __init__(self, interval_s: float = INTERVAL_S, scope: str = THIS_HOST, max_points: int | None = None):
        super().__init__(interval_s)
        self.scope, self.max_points = scope, max_points       # None: MAX_POINTS
        self.points: list[tuple] = []
        self.t0 = self.started_at = None
        self.disks = whole_disks(d["device_name"] for d in proc.diskstats(proc.read("/proc/diskstats")))
        self.interfaces = sorted(n["interface_name"] for n in proc.netdev(proc.read("/proc/net/dev"))
                                 if n["interface_name"] != "lo")

    def take(self) -> None:
        now = time.monotonic()
        if self.t0 is None:
            self.t0, self.started_at = now, datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        mem = proc.keyed_ints(proc.read("/proc/meminfo"), ":")
        disks = {d["device_name"]: d for d in proc.diskstats(proc.read("/proc/diskstats"))}
        nets = {n["interface_name"]: n for n in proc.netdev(proc.read("/proc/net/dev"))}
        self.points.append((     # per device: a device or interface may come and go (namespace hosts' veths)
            now - self.t0, proc.cpu_jiffies(proc.read("/proc/stat")), mem,
            {d: disks[d]["sectors_read"] * SECTOR_BYTES for d in self.disks if d in disks},
            {d: disks[d]["sectors_written"] * SECTOR_BYTES for d in self.disks if d in disks},
            {n: nets[n]["rx_bytes"] for n in self.interfaces if n in nets},
            {n: nets[n]["tx_bytes"] for n in self.interfaces if n in nets}))
        if len(self.points) > (self.max_points or MAX_POINTS):    # keep the baseline and the newest; halve the rest
            self.points = self.points[:1] + self.points[1:-1][1::2] + self.points[-1:]
            self.interval_s *= 2

    def samples(self) -> list[Sample]:
        """Byte counts since the first point, summed from each step's per-device increases (a device
        that vanishes or resets adds nothing), so every count is cumulative and never falls."""
        out, totals = [], [0, 0, 0, 0]
        for prev, cur in zip(self.points, self.points[1:]):
            for i in range(4):
                totals[i] += sum(max(0, v - prev[3 + i][k]) for k, v in cur[3 + i].items() if k in prev[3 + i])
            out.append(_sample(prev, cur, totals))
        return out

    def host_doc(self) -> dict:
        """This host's series: one entry of host_metrics.json's hosts[] (what a host's sampler prints)."""
        samples = self.samples()
        return {"host": socket.gethostname(), "interval_s": self.interval_s, "started_at": self.started_at or "",
                "duration_s": round(self.points[-1][0], 6) if self.points else 0.0,
                "sampler_cpu_s": round(self.cpu_s, 6), "disk_devices": self.disks,
                "net_interfaces": self.interfaces, "samples": [asdict(s) for s in samples]}

    def doc(self) -> dict:
        return document([self.host_doc()], self.scope)

    def write(self, where: Path) -> Path:
        path = Path(where) / FILE
        files.write_json(path, self.doc(), schema=SCHEMA, indent=None)
        return path


def points_per_host(hosts: int) -> int:
    """The points one host's sampler keeps when `hosts` share one file: MAX_POINTS, fewer where the
    hosts' series together would pass MAX_FILE_POINTS (the file must stay loadable: MAX_FILE_BYTES)."""
    return max(8, min(MAX_POINTS, MAX_FILE_POINTS // max(1, hosts)))


def empty_host(host: str, interval_s: float) -> dict:
    """The series of a host that gave none (hosts[] keeps it: the warning beside it says why)."""
    return {"host": host, "interval_s": interval_s, "started_at": "", "duration_s": 0.0, "sampler_cpu_s": 0.0,
            "disk_devices": [], "net_interfaces": [], "samples": []}


def series_problem(doc, where: str) -> str | None:
    """Why one host's series (a sampler's Sampler.host_doc, from another process or host) is not one
    the file's readers load (one line), or None."""
    try:
        load_doc(document([doc], THIS_HOST), where)
    except (ValueError, TypeError, RecursionError, ResultError) as exc:
        return str(exc)[:300]
    return None


def document(hosts: list, scope: str, warnings=()) -> dict:
    """host_metrics.json (schema_version 2) of these hosts' series (Sampler.host_doc each)."""
    return {"schema_version": 2, "scope": scope, "hosts": list(hosts), "warnings": [w[:1000] for w in warnings]}


def _sample(prev: tuple, cur: tuple, totals: list) -> Sample:
    t, cpu, mem = cur[0], cur[1], cur[2]
    d = {k: max(0, cpu[k] - prev[1][k]) for k in proc.CPU_FIELDS}
    total = sum(d.values())

    def pct(*keys) -> float:
        return round(100.0 * sum(d[k] for k in keys) / total, 3) if total else 0.0
    cached = mem.get("Cached", 0) * 1024       # /proc/meminfo counts KiB
    used = (mem.get("MemTotal", 0) - mem.get("MemFree", 0) - mem.get("Buffers", 0) - mem.get("SReclaimable", 0)) * 1024 - cached
    return Sample(t_s=round(t, 6), cpu_user_pct=pct("user", "nice"), cpu_system_pct=pct("system", "irq", "softirq"),
                  cpu_iowait_pct=pct("iowait"), cpu_steal_pct=pct("steal"), cpu_idle_pct=pct("idle"),
                  mem_used_bytes=max(0, used), page_cache_bytes=max(0, cached),
                  disk_read_bytes=totals[0], disk_write_bytes=totals[1], net_rx_bytes=totals[2],
                  net_tx_bytes=totals[3])


def load(path: Path, root=None) -> HostSet:
    """A host_metrics.json (ours or another party's; schema_version 1: one host, or 2: hosts[]):
    bounded, schema'd, host names distinct, every number finite, the percentages within 0..100, t_s
    increasing and the byte counters never decreasing; ResultError (one line naming the file, the
    field, what was expected and what was found) otherwise."""
    return _record(files.load_json(Path(path), schema=SCHEMA, error=ResultError, limit=MAX_FILE_BYTES, root=root), path)


def load_doc(doc: dict, where: str = FILE) -> HostSet:
    """A document already in memory, checked as load() checks a file."""
    files.validate(doc, SCHEMA, where, ResultError)
    return _record(doc, where)


def _record(doc: dict, path) -> HostSet:
    if doc["schema_version"] == 1:          # one host, its fields at the top level
        return HostSet(doc["scope"], (_host(doc, doc["scope"], path, ""),), schema_version=1)
    seen = {}
    for i, h in enumerate(doc["hosts"]):
        if h["host"] in seen:
            raise ResultError(f"{path}: hosts[{i}].host: expected a host not named before, got {h['host']!r} "
                              f"(hosts[{seen[h['host']]}] too)")
        seen[h["host"]] = i
    hosts = tuple(_host(h, doc["scope"], path, f"hosts[{i}].") for i, h in enumerate(doc["hosts"]))
    return HostSet(doc["scope"], hosts, tuple(doc["warnings"]))


def _host(doc: dict, scope: str, path, at: str) -> HostMetrics:
    """One host's series (`at`: where it is in the file, for the error)."""
    prev = None
    for i, s in enumerate(doc["samples"]):
        for k, v in s.items():
            if isinstance(v, float) and not math.isfinite(v):
                raise ResultError(f"{path}: {at}samples[{i}].{k}: expected a finite number, got {v}")
        if prev is not None:
            if s["t_s"] <= prev["t_s"]:
                raise ResultError(f"{path}: {at}samples[{i}].t_s: expected more than {prev['t_s']}, got {s['t_s']}")
            for c in COUNTERS:
                if s[c] < prev[c]:
                    raise ResultError(f"{path}: {at}samples[{i}].{c}: expected a cumulative count of at least "
                                      f"{prev[c]}, got {s[c]}")
        prev = s
    for k in ("interval_s", "duration_s", "sampler_cpu_s"):
        if not math.isfinite(doc[k]):
            raise ResultError(f"{path}: {at}{k}: expected a finite number, got {doc[k]}")
    fields = Sample.__dataclass_fields__
    return HostMetrics(host=doc["host"], scope=scope, interval_s=float(doc["interval_s"]),
                       started_at=doc["started_at"], duration_s=float(doc["duration_s"]),
                       sampler_cpu_s=float(doc["sampler_cpu_s"]), disk_devices=tuple(doc["disk_devices"]),
                       net_interfaces=tuple(doc["net_interfaces"]),
                       samples=tuple(Sample(**{k: s[k] for k in fields if k in s}) for s in doc["samples"]))


def find(run_dir: Path, root=None) -> HostSet | None:
    """The run's host metrics, None where it has none (results written before they were sampled)."""
    path = Path(run_dir) / FILE
    return load(path, root=root) if path.is_file() else None


BUSY_PCT = 95.0      # user+system(+steal) at or above this: the CPUs had nothing left (host-cpu-saturated)
IOWAIT_PCT = 1.0     # mean iowait below this in a busy span: the client did not wait on the storage
MIN_SPAN_S = 10.0    # a busy span this long (10 samples at 1 s; one of mlpstorage's 10-s samples): no burst


def longest_saturated_s(hm: HostMetrics, busy_pct: float = BUSY_PCT) -> float:
    """The longest span (s) with the CPUs busy (Sample.busy_pct) at or above busy_pct (whatever iowait was)."""
    spans = saturated_spans(hm, busy_pct, 0.0)
    return max((sp["end_s"] - sp["start_s"] for sp in spans), default=0.0)


def saturated_spans(hm: HostMetrics, busy_pct: float, min_span_s: float) -> list[dict]:
    """The spans where the CPUs stayed busy (Sample.busy_pct: user+system+steal) at or above busy_pct for
    at least min_span_s: the client's CPU set the pace there. With them that busy the CPUs hardly wait on I/O (iowait is what is
    left), so the storage was waiting on the client, not the client on the storage; each span says
    so with its mean iowait and disk MiB/s beside the run's busiest disk MiB/s."""
    rates = hm.rates()
    disk = [r["disk_read_mib_s"] + r["disk_write_mib_s"] for r in rates]
    net = [r["net_rx_mib_s"] + r["net_tx_mib_s"] for r in rates]
    spans, run, prev_t = [], [], 0.0
    for i, s in enumerate(hm.samples + (None,)):
        if s is not None and s.busy_pct >= busy_pct:
            run.append((i, prev_t))
        else:
            if run and hm.samples[run[-1][0]].t_s - run[0][1] >= min_span_s:
                idx = [j for j, _ in run]
                spans.append({"start_s": round(run[0][1], 3), "end_s": round(hm.samples[idx[-1]].t_s, 3),
                              "busy_mean_pct": round(sum(hm.samples[j].busy_pct for j in idx) / len(idx), 3),
                              "iowait_mean_pct": round(sum(hm.samples[j].cpu_iowait_pct for j in idx) / len(idx), 3),
                              "disk_mean_mib_s": round(sum(disk[j] for j in idx) / len(idx), 3),
                              "disk_peak_mib_s": round(max(disk), 3),
                              "net_mean_mib_s": round(sum(net[j] for j in idx) / len(idx), 3),
                              "net_peak_mib_s": round(max(net), 3), "samples": (idx[0], idx[-1])})
            run = []
        if s is not None:
            prev_t = s.t_s
    return spans


def storage_waited_spans(hm: HostMetrics) -> list[dict]:
    """The spans host-cpu-saturated warns of (suite.check.hostcpu; docs/checker.md): user+system+steal at
    or above BUSY_PCT of all CPUs in every sample for at least MIN_SPAN_S, while the storage waited: the
    span's mean iowait below IOWAIT_PCT. iowait is the time a CPU sat idle with I/O of this host in
    flight: the client waiting on the storage. Near none of it while the CPUs were full means the
    requests were not queued on the storage; the storage waited for the client to ask. (A busy span
    with iowait above that: both were at their limit, no warning.) The span's disk and network MiB/s
    beside the run's peak say how much the storage was asked for then against what it gave."""
    return [sp for sp in saturated_spans(hm, BUSY_PCT, MIN_SPAN_S) if sp["iowait_mean_pct"] < IOWAIT_PCT]


MAX_FOUND = 1000


def below(root: Path) -> list[tuple[str, HostMetrics]]:
    """Every host's series in every host_metrics.json under `root` (links not followed, at most
    MAX_FOUND files), by its directory relative to root, sorted (a run across hosts: one entry per
    host, in the run's host order): what a kind's report page plots when its runs are the directories."""
    root = Path(root)
    found = []
    for path in sorted(root.rglob(FILE)) if root.is_dir() else []:
        if path.is_symlink() or not path.is_file() or any(p.is_symlink() for p in path.relative_to(root).parents
                                                         if str(p) != "."):
            continue
        if len(found) == MAX_FOUND:
            raise ResultError(f"{root}: {FILE}: expected at most {MAX_FOUND} files, got more")
        found.append((str(path.parent.relative_to(root)) or ".", load(path, root=root)))
    return [(name, hm) for name, rec in found for hm in rec.hosts]
