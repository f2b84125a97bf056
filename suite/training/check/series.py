"""Facts about a benchmark's runs as a series: run consecutively (no other benchmark's run on the same
system between its first and last), the same number of accelerators on every host, replicable
(each run's samples/s within a few percent of the runs' mean), and num_subfolders_train as the dataset was generated.
"""

from __future__ import annotations

import math

from suite.layouts.benchdirs import identify, tree as layout
from suite.numbers import as_int, is_number
from suite.rules.engine import Item


def run_start(run: layout.Run, ts) -> tuple[float, str] | None:
    times = [(t, h.summary["start"]) for h in run.hosts if isinstance(h.summary, dict)
             if (t := ts(h.summary.get("start"))) is not None]
    return min(times) if times else None


def interleaved(b: layout.Benchmark, tree: layout.Tree, ts) -> list[Item]:
    """Runs of other benchmarks on the same system (same organisation and system name) that start
    between this benchmark's first and last run."""
    mine = [s for r in b.runs if (s := run_start(r, ts))]
    if len(mine) < 2 or b.system is None:
        return []
    lo, hi = min(t for t, _ in mine), max(t for t, _ in mine)
    out = []
    for other in tree.benchmarks:
        if other is b or other.system != b.system or other.org_dir != b.org_dir:
            continue
        for r in other.runs:
            s = run_start(r, ts)
            if s and lo < s[0] < hi:
                out.append(Item(f"{other.path.name}/{r.name} started {s[1]}", b.path, "runs",
                                f"no other benchmark's run between this one's first and last ({len(mine)} runs)"))
    return out


def uneven_accelerators(run: layout.Run) -> list[Item]:
    """Hosts of one run with different accelerator counts (one summary per host), or a rank-0 summary
    whose num_accelerators does not divide by num_hosts."""
    sums = [(h, h.summary) for h in run.hosts if isinstance(h.summary, dict)]
    counts = [(h, as_int(s.get("num_accelerators"))) for h, s in sums]
    counts = [(h, n) for h, n in counts if n is not None and n > 0]
    if len(counts) > 1:
        first = counts[0][1]
        return [Item(n, h.files.get("summary"), "num_accelerators", f"{first} (as on {counts[0][0].name})")
                for h, n in counts[1:] if n != first]
    if len(counts) == 1:
        h, n = counts[0]
        hosts = as_int(h.summary.get("num_hosts"))
        if hosts and hosts > 1 and n % hosts:
            return [Item(f"{n} accelerators on {hosts} hosts", h.files.get("summary"), "num_accelerators",
                         "the same number on every host (a multiple of num_hosts)")]
    return []


def spread_percent(values: list[float]) -> float | None:
    """The largest distance of a run's samples/s from the runs' mean, in percent of the mean
    (None with fewer than 2 runs)."""
    vals = [v for v in values if is_number(v) and math.isfinite(v)]
    if len(vals) < 2:
        return None
    mean = math.fsum(v / len(vals) for v in vals)          # divided first: 5 x 1e308 must not overflow
    if not (mean > 0 and math.isfinite(mean)):
        return None
    spread = max(abs(v - mean) / mean for v in vals) * 100.0
    return spread if math.isfinite(spread) else None


def subfolders(b: layout.Benchmark) -> tuple[int | None, object]:
    """(num_subfolders_train the runs used, where it was read) from overrides, else config.yaml."""
    for run in b.runs:
        for h in run.hosts:
            n = num_subfolders(h.overrides, h.config)
            if n is not None:
                return n, h.files.get("overrides") or h.files.get("config")
    return None, None


def num_subfolders(overrides, config) -> int | None:
    ov = identify.overrides_dict(overrides)
    v = ov.get("dataset.num_subfolders_train")
    if v is None and isinstance(config, dict) and isinstance(config.get("dataset"), dict):
        v = config["dataset"].get("num_subfolders_train")
    try:
        return int(str(v)) if v is not None else None
    except ValueError:
        return None
