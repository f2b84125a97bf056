"""A checkpointing run's results: ranks/rank-<r>.json in, results.json (ours), summary.json and
per_epoch_stats.json (DLIO's checkpointing shape) out; checkpoint_run_set.json over the runs.

The metrics (MLPerf Storage v2.0 §2.2.3): per checkpoint, the duration is the maximum over the
ranks and the throughput the minimum over the ranks of size / the rank's duration, i.e. the
checkpoint's bytes / that maximum, in GiB/s (DLIO's "GB" are 2^30 bytes). A run's figure is the
mean over its checkpoints; the published figure the mean over the runs (five).
"""

from __future__ import annotations

import statistics
from datetime import datetime, timezone
from pathlib import Path

from suite import files
from suite.errors import ResultError

GIB = 1 << 30
RESULTS, SUMMARY, EPOCH_STATS, RUN_SET = "results.json", "summary.json", "per_epoch_stats.json", "checkpoint_run_set.json"
PHASES = ("write", "read")


def _stdev(values: list[float]) -> float:
    return statistics.pstdev(values) if len(values) > 1 else 0.0      # DLIO: np.std (population)


def load_ranks(run_dir: Path, processes: int) -> list[dict]:
    docs = []
    for r in range(processes):
        path = run_dir / "ranks" / f"rank-{r}.json"
        if not path.is_file() or path.is_symlink():
            raise ResultError(f"{path}: expected the rank's record (a regular file), got none")
        docs.append(files.load_json(path, schema="checkpoint-rank", error=ResultError))
    return docs


def per_checkpoint(ranks: list[dict]) -> list[dict]:
    """[{phase, index, bytes, duration_s (max over ranks), throughput_gib_s, rank_min/max_gib_s}]."""
    keys = [(c["phase"], c["index"]) for c in ranks[0]["checkpoints"]] if ranks else []
    out = []
    for phase, index in keys:
        recs = [c for r in ranks for c in r["checkpoints"] if (c["phase"], c["index"]) == (phase, index)]
        if len(recs) != len(ranks):
            raise ResultError(f"ranks: checkpoint {phase} {index}: expected a record from each of {len(ranks)} ranks, "
                              f"got {len(recs)}")
        nbytes = sum(c["bytes"] for c in recs)
        duration = max(c["duration_s"] for c in recs)
        own = [c["bytes"] / GIB / c["duration_s"] for c in recs if c["duration_s"] > 0 and c["bytes"]]
        out.append({"phase": phase, "index": index, "bytes": nbytes, "duration_s": duration,
                    "throughput_gib_s": nbytes / GIB / duration if duration > 0 else 0.0,
                    "rank_min_gib_s": min(own, default=0.0), "rank_max_gib_s": max(own, default=0.0)})
    return out


def phase_metric(checkpoints: list[dict], phase: str) -> dict | None:
    c = [x for x in checkpoints if x["phase"] == phase]
    if not c:
        return None
    d, t = [x["duration_s"] for x in c], [x["throughput_gib_s"] for x in c]
    return {"checkpoints": len(c), "duration_mean_s": statistics.fmean(d), "duration_stdev_s": _stdev(d),
            "throughput_mean_gib_s": statistics.fmean(t), "throughput_stdev_gib_s": _stdev(t)}


def per_rank(ranks: list[dict]) -> list[dict]:
    """Each rank's own bandwidth per phase: its bytes over its summed durations."""
    out = []
    for r in ranks:
        row = {"rank": r["rank"], "hostname": r["hostname"],
               "bytes_per_checkpoint": r["checkpoints"][0]["bytes"] if r["checkpoints"] else 0}
        for phase in PHASES:
            c = [x for x in r["checkpoints"] if x["phase"] == phase]
            secs = sum(x["duration_s"] for x in c)
            row[f"{phase}_gib_s"] = sum(x["bytes"] for x in c) / GIB / secs if c and secs > 0 else None
        out.append(row)
    return out


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")


def dlio_summary(doc: dict, checkpoints: list[dict]) -> dict:
    """summary.json as DLIO writes it for checkpointing (save_/load_checkpoint_*, checkpoint_size_GB)."""
    metric: dict = {"checkpoint_size_GB": doc["checkpoint_bytes"] / GIB}
    for phase, prefix in (("write", "save"), ("read", "load")):
        m = phase_metric(checkpoints, phase)
        if m:
            metric.update({f"{prefix}_checkpoint_io_mean_GB_per_second": m["throughput_mean_gib_s"],
                           f"{prefix}_checkpoint_io_stdev_GB_per_second": m["throughput_stdev_gib_s"],
                           f"{prefix}_checkpoint_duration_mean_seconds": m["duration_mean_s"],
                           f"{prefix}_checkpoint_duration_stdev_seconds": m["duration_stdev_s"]})
    hosts = len(doc["hosts"])
    return {"model": doc["workload"].replace("-", "_"), "start": _iso(doc["start_unix_s"]), "end": _iso(doc["end_unix_s"]),
            "num_accelerators": doc["processes"], "num_hosts": hosts, "hostname": doc["hosts"][0],
            "host_memory_GB": [b / GIB for b in host_memory_totals(doc)], "metric": metric, **_dlio_host_keys(doc)}


def host_memory_totals(doc: dict) -> list[int]:
    """Each host's memory as the reference tool's files record it (DLIO's host_memory_GB, mlpstorage's
    system_info: the host's MemTotal, which a memory cgroup does not lower): as each host's probe recorded it
    (enforcement.hosts), this host's where none did. The run's own memory, the cgroup's limit where one was
    applied, is results.json's host_memory_bytes (what our handoff's 3x test takes)."""
    from suite.enforce.cache import meminfo_bytes

    probed = {h.get("host"): h.get("mem_total_bytes") for h in (doc.get("enforcement") or {}).get("hosts") or ()
              if isinstance(h, dict)}
    here = meminfo_bytes("MemTotal") or doc["host_memory_bytes"]
    return [int(probed.get(h) or here) for h in doc["hosts"]]


def _dlio_host_keys(doc: dict) -> dict:
    """The keys DLIO's summary.json has beside the figures (the reference tool's reportgen sums
    host_cpu_count and host_memory_GB): each host's CPUs as its probe recorded them (enforcement.hosts),
    this host's where none did; a checkpoint workload reads no training files (DLIO's zeros)."""
    import os
    import platform

    from suite.enforce.cache import cpuinfo, meminfo

    probed = {h.get("host"): h.get("cpu_count") for h in (doc.get("enforcement") or {}).get("hosts") or ()
              if isinstance(h, dict)}
    cpus = [int(probed.get(h) or os.cpu_count() or 1) for h in doc["hosts"]]
    return {"host_cpu_count": cpus, "host_processor_name": platform.processor() or platform.machine(),
            "host_cpuinfo": cpuinfo(),
            "host_meminfo": meminfo(), "num_files_train": 0, "num_files_eval": 0, "num_samples_per_file": 1,
            "epochs": 0, "data_size_per_host_GB": 0.0, "potential_caching": [1] * len(doc["hosts"])}


def epoch_stats(ranks: list[dict], checkpoints: list[dict]) -> dict:
    """per_epoch_stats.json: {"1": {"save_ckpt<k>" | "load_ckpt<k>": {start, end, duration, throughput}}}."""
    out: dict = {}
    for c in checkpoints:
        recs = [x for r in ranks for x in r["checkpoints"] if (x["phase"], x["index"]) == (c["phase"], c["index"])]
        key = f"{'save' if c['phase'] == 'write' else 'load'}_ckpt{c['index']}"
        out[key] = {"start": _iso(min(x["start_unix_s"] for x in recs)), "end": _iso(max(x["end_unix_s"] for x in recs)),
                    "duration": c["duration_s"], "throughput": c["throughput_gib_s"]}
    starts = [x["start_unix_s"] for r in ranks for x in r["checkpoints"]]
    ends = [x["end_unix_s"] for r in ranks for x in r["checkpoints"]]
    if starts:
        out.update(start=_iso(min(starts)), end=_iso(max(ends)), duration=f"{max(ends) - min(starts):.2f}")
    return {"1": out}


def write_run(run_dir: Path, doc: dict, ranks: list[dict]) -> dict:
    """Complete `doc` (the launcher's facts) with the figures and write the run's three files."""
    checkpoints = per_checkpoint(ranks) if ranks else []
    doc["checkpoints"] = checkpoints
    doc["ranks"] = per_rank(ranks)
    doc["metric"] = {p: m for p in PHASES if (m := phase_metric(checkpoints, p))}
    files.write_json(run_dir / RESULTS, doc, schema="checkpoint-results")
    if checkpoints:
        files.write_json(run_dir / SUMMARY, dlio_summary(doc, checkpoints), schema="checkpoint-summary")
        files.write_json(run_dir / EPOCH_STATS, epoch_stats(ranks, checkpoints), schema="per-epoch-stats")
    return doc


def overall(results: list[dict]) -> dict:
    """The published figures: each phase's per-run means, averaged over the complete runs."""
    out: dict = {}
    done = [r for r in results if r["status"] == "complete"]
    for phase in PHASES:
        for key in ("duration_mean_s", "throughput_mean_gib_s"):
            vals = [r["metric"][phase][key] for r in done if phase in r["metric"]]
            if vals:
                out[f"{phase}_{key}"] = statistics.fmean(vals)
                out[f"{phase}_{key.replace('_mean_', '_stdev_over_runs_')}"] = _stdev(vals)
    return out


def write_run_set(results_dir: Path, head: dict, results: list[dict], runs_requested: int, command: list[str]) -> dict:
    runs = [{"run": r["run"], "status": r["status"],
             **{f"{p}_{k}": r["metric"][p][k] for p in PHASES if p in r["metric"]
                for k in ("duration_mean_s", "throughput_mean_gib_s")}} for r in results]
    doc = {"schema_version": 1, "kind": "checkpointing", **head, "runs_requested": runs_requested, "command": command,
           "runs": runs, "overall": overall(results)}
    files.write_json(results_dir / RUN_SET, doc, schema="checkpoint-run-set")
    return doc
