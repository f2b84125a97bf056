"""A published v3.0 checkpointing leaf's figures tied to the model's size, to the leaf's own timed section
and to each other (issue 46, class 1):

- `bandwidth`: the claimed GiB/s (summary.json metric, or what <r>_per_epoch_stats.json re-derives) is the
  checkpoint's bytes (the model's layout, suite.checkpointing.reference.ckptsize) over its mean duration, within
  `checkpoint_bandwidth_rel_tolerance` (DLIO's mean of per-checkpoint GiB/s exceeds size / mean duration by
  about the durations' squared coefficient of variation: 0.27 % on the published Alluxio write), or above it
  by no more than the leaf's own GiB/s stdev x duration stdev allow (an exact bound: a miniature's
  millisecond checkpoints vary by half their mean, 17 % above size / mean duration);
- `timing`: the checkpoints (their count from the metadata, their mean duration) and the configured pause
  between them (parameters.checkpoint.time_between_checkpoints) fit inside the leaf's timed section
  (summary.json start .. end, `checkpoint_timing_slack_s` allowed) and account for at least
  `checkpoint_timed_fraction_min` of it, less the same slack (the set-up inside the section: a miniature's
  whole section is a second or two, most of it the ranks' start): a duration cut to a tenth leaves the
  section nine-tenths idle (the published write: 276 s of its 278 s; the read 234 s of 238 s). Rank 0's records, where present, lie
  inside that section;
- `memory`: the hosts' memory as the leaf records it three times (summary.json host_memory_GB, its
  host_meminfo MemTotal, the metadata's system_info *_memory_bytes; equal to the byte on the published
  leaves) agrees within MEMORY_REL_TOLERANCE, and the page cache (Cached) is no larger than the memory.
  4.3.1 decides from that memory whether the cache must be cleared between write and read (3x the
  checkpoint), and EVID-01 whether a read could have come from it: records that contradict each other
  make both decisions unfounded.

Each returns Items (op: empty rules); a figure the leaf does not record is not tied (nothing to tie).
"""

from __future__ import annotations

import math
from pathlib import Path

from suite import files
from suite.errors import ResultError
from suite.checkpointing.reference import ckptsize as ckptsize
from suite.rules.ops import Item

GIB = 1 << 30
MEMORY_REL_TOLERANCE = 1e-3
SPREAD_REL = 1e-6              # float rounding over the spread's bound (DLIO prints its figures in full)
PREFIX = {"write": ("save",), "read": ("load",), "combined": ("save", "load")}


def _num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _param(x, name: str):
    ckpt = ((x.meta.params or {}) if x.meta else {}).get("checkpoint")
    return _num(ckpt.get(name)) if isinstance(ckpt, dict) else None


def _count(x, prefix: str):
    """The leaf's checkpoints of one kind: the metadata's count, else rank 0's records of them."""
    m = x.meta
    n = None if m is None else m.num_checkpoints_write if prefix == "save" else m.num_checkpoints_read
    if n is None:
        n = sum(1 for k in _records(x) if k.startswith(f"{prefix}_ckpt")) or None
    return n


def _records(x) -> dict:
    """Rank 0's per-checkpoint records (0_per_epoch_stats.json epoch "1"); {} where absent or unreadable
    (4.3.6's re-derivation reports an unreadable record). Our own leaves keep theirs under run-1/."""
    p = x.path / "0_per_epoch_stats.json"
    if not p.is_file() or (x.path / "run-1").is_dir():
        return {}
    try:
        doc = files.load_json(p, error=ResultError, root=x.path)
    except ResultError:
        return {}
    epoch = doc.get("1") if isinstance(doc, dict) else None
    return {k: c for k, c in epoch.items() if k.startswith(ckptsize.CKPT_PREFIXES) and isinstance(c, dict)} \
        if isinstance(epoch, dict) else {}


def bandwidth(leaves: list, phases: dict, metrics: dict, size_gib: float | None, tolerance: float) -> list:
    """Each leaf's claimed GiB/s against the model's checkpoint over the leaf's mean duration."""
    if size_gib is None:
        return []
    out = []
    for x in leaves:
        m = metrics.get(x.ts) or {}
        for p in PREFIX.get(phases.get(x.ts), ()):
            rate, took = _num(m.get(f"{p}_checkpoint_io_mean_GB_per_second")), _num(m.get(f"{p}_checkpoint_duration_mean_seconds"))
            if rate is None or took is None or took <= 0:
                continue
            want = size_gib / took
            spread = _spread(m, p)
            high = max(want * (1 + tolerance), (size_gib + spread) / took * (1 + SPREAD_REL))
            if rate < want * (1 - tolerance) or rate > high:
                beyond = "" if high <= want * (1 + tolerance) else \
                    f", or up to {high:.4f} GiB/s (the durations' spread: GiB/s stdev x duration stdev {spread:.4g} GiB)"
                out.append(Item(f"{rate:.4f}", x.path / "summary.json", f"metric.{p}_checkpoint_io_mean_GB_per_second",
                                f"{want:.4f} GiB/s (the model's {size_gib:.2f} GiB over {p}_checkpoint_duration_mean_seconds "
                                f"{took:.4f} s), within {tolerance:.0%}{beyond}"))
    return out


def _spread(metric: dict, p: str) -> float:
    """The most DLIO's mean of per-checkpoint GiB/s (size / d_k) may exceed size / mean(d): mean(rate) x mean(d)
    - size = -cov(rate, d), at most stdev(rate) x stdev(d) (Cauchy-Schwarz), from the leaf's own two stdevs; 0
    where it records none. Exact, whatever the durations' spread (a miniature's millisecond checkpoints vary
    by half their mean; the published write's by 5 %)."""
    a, b = (_num(metric.get(f"{p}_checkpoint_{k}")) for k in ("io_stdev_GB_per_second", "duration_stdev_seconds"))
    return a * b if a is not None and b is not None and a >= 0 and b >= 0 else 0.0


def timing(leaves: list, phases: dict, metrics: dict, slack_s: float, fraction_min: float) -> list:
    """Each leaf's checkpoints and pauses against its own timed section; rank 0's records inside it."""
    out = []
    for x in leaves:
        s, m = x.summary, metrics.get(x.ts) or {}
        if s is None:
            continue
        span, parts, busy, n_all = s.duration_s, [], 0.0, 0
        for p in PREFIX.get(phases.get(x.ts), ()):
            n, took = _count(x, p), _num(m.get(f"{p}_checkpoint_duration_mean_seconds"))
            if not n or took is None:
                continue
            busy += n * took
            n_all += n
            parts.append(f"{n} x {took:.3f} s ({p})")
        if not parts:
            continue
        pause = _param(x, "time_between_checkpoints") or 0.0
        busy += max(n_all - 1, 0) * pause
        shown = f"{' + '.join(parts)} + {max(n_all - 1, 0)} pauses of {pause:g} s = {busy:.1f} s"
        if busy > span + slack_s or busy < fraction_min * span - slack_s:
            out.append(Item(shown, x.path / "summary.json", "start .. end (metric durations)",
                            f"the checkpoints and their pauses filling the timed section of {span:.1f} s: at most "
                            f"it (+{slack_s:g} s), at least {fraction_min:.0%} of it (-{slack_s:g} s)"))
        out += _records_inside(x, slack_s)
    return out


def _records_inside(x, slack_s: float) -> list:
    """Rank 0's per-checkpoint records (0_per_epoch_stats.json) inside summary.json's start .. end."""
    from datetime import datetime

    p = x.path / "0_per_epoch_stats.json"
    out = []
    lo, hi = x.summary.start.timestamp() - slack_s, x.summary.end.timestamp() + slack_s
    for key, c in _records(x).items():
        try:
            a, b = (datetime.fromisoformat(str(c.get(k))[:40]).timestamp() for k in ("start", "end"))
        except ValueError:
            continue
        if a < lo or b > hi:
            out.append(Item(f"{c.get('start')} .. {c.get('end')}", p, f"1.{key}.start, end",
                            f"inside the leaf's timed section {x.summary.start.isoformat()} .. "
                            f"{x.summary.end.isoformat()} (summary.json)"))
    return out


def memory(leaves: list) -> list:
    """The hosts' memory recorded three ways agreeing; the page cache no larger than the memory."""
    out = []
    for x in leaves:
        s = x.summary
        if s is None or not s.host_memory_gib:
            continue
        hosts = [h * GIB for h in s.host_memory_gib]
        where = x.path / "summary.json"
        if s.num_hosts and len(hosts) != s.num_hosts:
            out.append(Item(f"{len(hosts)} hosts", where, "host_memory_GB", f"one figure per host ({s.num_hosts})"))
        total = s.meminfo_total_bytes
        if total is not None and not any(_close(total, h) for h in hosts):
            out.append(Item(f"{total / GIB:.3f} GiB", where, "host_meminfo.MemTotal",
                            f"one of host_memory_GB {', '.join(f'{h / GIB:.3f}' for h in hosts)} GiB"))
        if total is not None and s.meminfo_cached_bytes is not None and s.meminfo_cached_bytes > total:
            out.append(Item(f"{s.meminfo_cached_bytes / GIB:.3f} GiB", where, "host_meminfo.Cached",
                            f"at most MemTotal {total / GIB:.3f} GiB"))
        rec = x.meta.memory_bytes if x.meta is not None else None
        if rec is not None:
            want = (sum(hosts), min(hosts), max(hosts))
            for name, got, w in zip(("total", "min", "max"), rec, want):
                if got is not None and not _close(got, w):
                    out.append(Item(f"{got / GIB:.3f} GiB", Path(x.meta.path), f"system_info.{name}_memory_bytes",
                                    f"{w / GIB:.3f} GiB (summary.json host_memory_GB)"))
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= MEMORY_REL_TOLERANCE * max(abs(a), abs(b))
