"""The kv_cache figures, one code path for our leaves and published ones.

The reference's (mlpstorage's _aggregate_option_results, the version of the published v3.0 leaves):
per trial, the sum over ranks of summary.cache_stats.tier_storage_read/write_bandwidth_gbps (GiB/s),
summary.avg_throughput_tokens_per_sec and summary.storage_throughput_tokens_per_sec; per option,
the mean over trials; aggregated_p95_latency_ms = the maximum over ranks and trials of
summary.storage_io_latency_ms.p95 (per-request storage latency). A rank with storage_entries 0 is a
CPU-tier rank; a rank directory without its results file is missing (partial failure).

Per rank (the reference's _calculate_stats): avg tokens/s = total_tokens / elapsed_time; storage
tokens/s = total_tokens / total_storage_io_time; the P95 = numpy's linear percentile of
storage_latencies (s) x 1000. `rederive_rank` checks those against the rank's own arrays.

The suite's figures (named apart): device_read_p95_ms / device_write_p95_ms (max over ranks and
trials of the per-operation P95, eviction I/O included; Rules 6.3.4.3's aggregated_device_*), and
read/write GiB per wall second with eviction bytes (means over trials of sums over ranks); the P95
split of every storage request of the option's ranks and trials into device and queueing time
(suite.kv_cache.recorded, from kvcache_requests_<ts>.csv); present only where the ranks carry
suite_figures and records (ours).
"""

from __future__ import annotations

from statistics import fmean

from suite.kv_cache.leaf import Leaf, number
from suite.kv_cache.model import GIB

REFERENCE_KEYS = ("aggregated_read_bandwidth_gbps", "aggregated_write_bandwidth_gbps",
                  "aggregated_avg_throughput_tokens_per_sec", "aggregated_storage_throughput_tokens_per_sec",
                  "aggregated_p95_latency_ms")
REL_TOLERANCE = 1e-6
ELAPSED_SLACK = 0.95     # a rank's elapsed_time below 95% of its trial's --duration did not run the trial
REDERIVED = {"storage_io_latency_ms.p95": "p95_ms", "avg_throughput_tokens_per_sec": "avg_tps",
             "storage_throughput_tokens_per_sec": "storage_tps"}
LATE_FRACTION = 100      # at most 1% of a rank's latency array (at least 1 entry) ends after its summary


def rank_figures(doc: dict, where) -> dict:
    s = ("summary",)
    cs = ("summary", "cache_stats")
    out = {"read_gibps": number(doc, cs + ("tier_storage_read_bandwidth_gbps",), where),
           "write_gibps": number(doc, cs + ("tier_storage_write_bandwidth_gbps",), where),
           "avg_tps": number(doc, s + ("avg_throughput_tokens_per_sec",), where),
           "storage_tps": number(doc, s + ("storage_throughput_tokens_per_sec",), where),
           "p95_ms": number(doc, s + ("storage_io_latency_ms", "p95"), where),
           "storage_entries": number(doc, cs + ("storage_entries",), where)}
    suite = doc.get("suite_figures")
    if isinstance(suite, dict):
        out["device_read_p95_ms"] = number(suite, ("device_read_latency_ms", "p95"), where)
        out["device_write_p95_ms"] = number(suite, ("device_write_latency_ms", "p95"), where)
        out["read_bytes_per_wall_s"] = number(suite, ("storage_read_bytes_per_wall_s",), where)
        out["write_bytes_per_wall_s"] = number(suite, ("storage_write_bytes_per_wall_s",), where)
    return out


def option(leaf: Leaf, o: int, expected_ranks: int | None = None, ran_s: float = 0.0) -> dict:
    """One option's aggregate from its rank files (the reference's keys, then the suite's): each rank's
    P95 and tokens/s as its own arrays and counts re-derive them (rederive_rank; `ran_s`: the option's
    --duration, below which no rank's elapsed time counts), the claimed figure only where they cannot."""
    trials = sorted(t for (oo, t) in leaf.rank_dirs if oo == o)
    sums = {k: [] for k in ("read_gibps", "write_gibps", "avg_tps", "storage_tps")}
    extra = {"read_bytes_per_wall_s": [], "write_bytes_per_wall_s": []}
    p95, dev_r, dev_w, missing, cpu_tier, present = [], [], [], [], [], 0
    for t in trials:
        ranks = leaf.rank_dirs[(o, t)]
        figs = []
        for r in sorted(set(ranks) | set(range(expected_ranks or 0))):
            if (o, t, r) not in leaf.ranks:
                missing.append(f"option_{o}/trial_{t}/rank_{r}")
                continue
            path, doc = leaf.ranks[(o, t, r)]
            f = rank_figures(doc, path)
            for s in rederive_rank(doc, path, ran_s):
                if s["figure"] in REDERIVED and s["status"] == "mismatch":     # else the claimed, to its last digit
                    f[REDERIVED[s["figure"]]] = s["derived"]
            figs.append(f)
            p95.append(f["p95_ms"])
            if f["storage_entries"] == 0:
                cpu_tier.append(f"option_{o}/trial_{t}/rank_{r}")
            if "device_read_p95_ms" in f:
                dev_r.append(f["device_read_p95_ms"])
                dev_w.append(f["device_write_p95_ms"])
        present = max(present, len(figs))
        for k in sums:
            sums[k].append(sum(f[k] for f in figs))
        if figs and all("read_bytes_per_wall_s" in f for f in figs):
            for k in extra:
                extra[k].append(sum(f[k] for f in figs))
    out = {"option": o,
           "aggregated_read_bandwidth_gbps": fmean(sums["read_gibps"]) if trials else 0.0,
           "aggregated_write_bandwidth_gbps": fmean(sums["write_gibps"]) if trials else 0.0,
           "aggregated_avg_throughput_tokens_per_sec": fmean(sums["avg_tps"]) if trials else 0.0,
           "aggregated_storage_throughput_tokens_per_sec": fmean(sums["storage_tps"]) if trials else 0.0,
           "aggregated_p95_latency_ms": max(p95) if p95 else None,
           "rank_count": expected_ranks or present, "trial_count": len(trials),
           "partial_failure": bool(missing), "missing_files": missing, "cpu_tier_ranks": cpu_tier}
    suite = {}
    if dev_r:
        suite["device_read_p95_ms"] = max(dev_r)
        suite["device_write_p95_ms"] = max(dev_w)
    if extra["read_bytes_per_wall_s"]:
        suite["read_gib_per_wall_s"] = fmean(extra["read_bytes_per_wall_s"]) / GIB
        suite["write_gib_per_wall_s"] = fmean(extra["write_bytes_per_wall_s"]) / GIB
    if suite:
        out["suite_figures"] = suite
    return out


def options(leaf: Leaf, expected_ranks: int | None = None, ran_s: dict | None = None) -> dict:
    from suite.kv_cache import recorded

    found = sorted({o for (o, _t) in leaf.rank_dirs})
    out = {str(o): option(leaf, o, expected_ranks, (ran_s or {}).get(o, 0.0)) for o in found}
    for o, split in recorded.option_splits(leaf).items():     # the P95 split, from the per-request records
        if o in out:
            out[o].setdefault("suite_figures", {})["request_split"] = split["overall"]
    return out


def summary(leaf: Leaf, expected_ranks: int, hosts: int, npernode: int, trials: int, run_datetime: str,
            failures: dict | None = None) -> dict:
    """summary.json as mlcommons' tools read it (schema_version "1.0"); `failures`: {option_<O>/trial_<T>:
    why} of the trials that failed (the reference's trial_failures)."""
    opts = options(leaf, expected_ranks)
    return {"schema_version": "1.0", "run_datetime": run_datetime, "npernode": npernode, "host_count": hosts,
            "total_ranks": expected_ranks, "trials_per_option": trials, "options": opts,
            "partial_failure": any(o["partial_failure"] for o in opts.values()) or bool(failures),
            "trial_failures": dict(failures or {})}


def close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOLERANCE * max(1.0, abs(a), abs(b))


def rederive_rank(doc: dict, where, ran_s: float = 0.0) -> list[dict]:
    """The rank's summary figures against its own arrays: [{figure, claimed, derived, status}]. The
    latency array's first `summary.total_requests` entries: a published rank's array may hold more
    (FarmGPU's rank 20: 279 for 278 requests, the last appended after the summary was computed), at most
    1% of it: a total_requests cut further (2 of 399: a P95 from the first two) is a mismatch and the
    P95 is then the whole array's."""
    import numpy as np

    out = []
    lat = doc.get("storage_latencies")
    summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    counted = summary.get("total_requests")
    completed = doc.get("requests_completed")
    if isinstance(counted, (int, float)) and isinstance(completed, (int, float)) and not isinstance(completed, bool):
        out.append(_status("total_requests", float(counted), float(completed)))      # the rank's own count
    if isinstance(lat, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in lat):
        if isinstance(counted, int) and not isinstance(counted, bool):
            late = len(lat) - counted   # the reference appends requests that end after its figures were taken
            plausible = 0 <= late <= max(1, len(lat) // LATE_FRACTION)
            out.append({"figure": "total_requests (latency array)", "claimed": float(counted), "derived": float(len(lat)),
                        "status": "rederived" if plausible else "mismatch"})
            if plausible and late:
                lat = lat[:counted]
        derived = float(np.percentile(np.asarray(lat, dtype=float) * 1000.0, 95)) if lat else 0.0   # no request: 0
        out.append(_status("storage_io_latency_ms.p95", number(doc, ("summary", "storage_io_latency_ms", "p95"), where),
                           derived))
        out.append(_status("total_storage_io_time", number(doc, ("summary", "total_storage_io_time"), where),
                           float(sum(lat))))
    else:                       # a trimmed rank file: its P95 is shown as claimed, never as re-derived
        out.append({"figure": "storage_io_latency_ms.p95", "claimed": number(doc, ("summary", "storage_io_latency_ms", "p95"),
                                                                            where), "derived": None, "status": "not-rederivable"})
    tokens = number(doc, ("summary", "total_tokens"), where)
    elapsed = max(number(doc, ("summary", "elapsed_time"), where), ELAPSED_SLACK * ran_s)   # a trial runs its --duration
    io = number(doc, ("summary", "total_storage_io_time"), where)
    if elapsed > 0:
        out.append(_status("avg_throughput_tokens_per_sec",
                           number(doc, ("summary", "avg_throughput_tokens_per_sec"), where), tokens / elapsed))
    if io > 0:
        out.append(_status("storage_throughput_tokens_per_sec",
                           number(doc, ("summary", "storage_throughput_tokens_per_sec"), where), tokens / io))
    return out


def _status(figure: str, claimed: float, derived: float) -> dict:
    return {"figure": figure, "claimed": claimed, "derived": derived,
            "status": "rederived" if close(claimed, derived) else "mismatch"}


def against_summary(leaf: Leaf, derived: dict) -> list[dict]:
    """The leaf's summary.json figures against the ones derived from its rank files."""
    out = []
    claimed = (leaf.summary or {}).get("options") or {}
    for o, c in claimed.items():
        if isinstance(c, dict) and o not in derived:      # an option without rank files: claimed, not re-derivable
            out += [{"figure": f"options.{o}.{k}", "claimed": c.get(k), "derived": None, "status": "not-rederivable"}
                    for k in REFERENCE_KEYS if k in c]
    for o, d in derived.items():
        c = claimed.get(o)
        if not isinstance(c, dict):
            continue
        for k in REFERENCE_KEYS:
            v = c.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and d.get(k) is not None:
                out.append({"figure": f"options.{o}.{k}", "claimed": float(v), "derived": float(d[k]),
                            "status": "rederived" if close(float(v), float(d[k])) else "mismatch"})
    return out


TABLE_METRICS = (("Throughput (tok/s)", "aggregated_avg_throughput_tokens_per_sec"),
                 ("Read B/W (GiB/s)", "aggregated_read_bandwidth_gbps"),
                 ("Write B/W (GiB/s)", "aggregated_write_bandwidth_gbps"),
                 ("P95 Read Latency (ms)", "aggregated_storage_read_p95_ms"))


def _finite(v):
    import math

    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def table_row(leaf: Leaf) -> dict:
    """The published kv_cache results table's cells of a leaf, as mlpstorage's reportgen takes them
    (PR #826, #836's R5): # Client Nodes = summary.json host_count; per option its aggregated
    tokens/s, read and write GiB/s as summary.json publishes them, and P95 Read Latency (ms) = its
    aggregated_storage_read_p95_ms or, where summary.json predates that key, the largest
    summary.cache_stats.storage_read_p95_ms over the option's rank files (blank where none has it)."""
    s = leaf.summary or {}
    opts = s.get("options") if isinstance(s.get("options"), dict) else {}
    out = {}
    for o in ("1", "2", "3"):
        got = opts.get(o)
        if not isinstance(got, dict):
            continue
        figs = {col: _finite(got.get(key)) for col, key in TABLE_METRICS}
        if "aggregated_storage_read_p95_ms" not in got:
            seen = [_finite(((d.get("summary") or {}).get("cache_stats") or {}).get("storage_read_p95_ms"))
                    for (oo, _t, _r), (_p, d) in leaf.ranks.items() if str(oo) == o and isinstance(d.get("summary"), dict)
                    and isinstance(d["summary"].get("cache_stats"), dict)]
            seen = [v for v in seen if v is not None]
            figs["P95 Read Latency (ms)"] = max(seen) if seen else None
        out[o] = figs
    hosts = s.get("host_count")
    return {"# Client Nodes": hosts if isinstance(hosts, int) and not isinstance(hosts, bool) else None,
            "options": out}
