"""A run's results: the ranks' step files turned into results.json, summary.json,
per_epoch_stats.json, the end of dlio.log, and the run set's run_set.json and
mlperf_storage_report.json. The math is suite.storage.metrics; the DLIO shapes are suite.storage.dlio_output.
"""

import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.storage.records import RankSteps


def say(*parts) -> None:
    print(*parts, flush=True)


def collect(prep, k: int, run_dir: Path, start: float, end: float, status: str, error,
            drop, memory_evidence) -> dict:
    from suite import __version__
    from suite.storage import metrics
    from suite.storage.dlio_output import per_epoch_stats, summary, timestamp

    wl, opts = prep.workload, prep.opts
    n = opts.accelerators
    ranks = []
    for r in range(n):
        p = run_dir / "steps" / f"rank-{r}.json"
        if p.exists():
            ranks.append(RankSteps.from_dict(files.load_json(p, schema="steps")))
    if status == "complete" and len(ranks) != n:
        status, error = "failed", f"steps: expected {n} rank files, got {len(ranks)}"
    epochs, metric, checkpoint = [], None, None
    if status == "complete":
        run_start = ranks[0].run_start_unix_s
        for i, e0 in enumerate(ranks[0].epochs):
            per_rank = [rs.epochs[i] for rs in ranks]
            au, tput = metrics.epoch_from_ranks(per_rank)
            nbytes = sum(e.bytes_read for e in per_rank)
            t0 = min(e.start_s for e in per_rank)
            t1 = max(e.end_s for e in per_rank)
            epochs.append({
                "epoch": e0.epoch, "start_s": t0, "end_s": t1, "duration_s": t1 - t0,
                "steps": e0.steps, "samples": sum(e.samples for e in per_rank), "bytes_read": nbytes,
                "au_percentage": au, "throughput_samples_per_second": tput,
                "throughput_mib_per_second": metrics.mib_per_second(tput, wl.record_length_bytes),
                "read_mib_per_second": nbytes / metrics.MIB / (t1 - t0) if t1 > t0 else 0.0,
            })
        metric = metrics.run_metric([e["au_percentage"] for e in epochs],
                                    [e["throughput_samples_per_second"] for e in epochs],
                                    wl.record_length_bytes, wl.au_threshold)
        checkpoint = ranks[0].checkpoint
        start = run_start
    bytes_read = sum(e["bytes_read"] for e in epochs)
    reasons = list(prep.reasons)
    if not drop.succeeded:
        reasons.append(f"cache drop before the run failed: {drop.error}")
    if status != "complete":
        reasons.append(f"run {status}: {error}")
    if metric and metric["train_au_meet_expectation"] != "success":
        reasons.append(f"AU {metric['train_au_mean_percentage']:.2f}% below the threshold "
                       f"{100 * wl.au_threshold:.0f}%")
    if memory_evidence and memory_evidence.get("oom_kills"):
        reasons.append(f"memory cgroup: {memory_evidence['oom_kills']} OOM kill(s)")
    hostname = socket.gethostname()
    doc = {
        "schema_version": 1,
        "suite_version": __version__,
        "status": status,
        "complete": status == "complete",
        "error": error,
        "miniature": prep.miniature,
        "workload": wl.name,
        "dlio_workload": wl.dlio_name,
        "accelerator": wl.accelerator,
        "num_accelerators": n,
        "hosts": prep.hosts,
        "num_hosts": len(prep.hosts),
        "ruleset": prep.ruleset,
        "division": opts.division,
        "run_index": k,
        "start": timestamp(start),
        "end": timestamp(end),
        "duration_s": end - start,
        "params": prep.params,
        "dataset": {"data_dir": str(prep.data_dir), "num_files_train": len(prep.files),
                    "num_samples_per_file": wl.num_samples_per_file, "format": prep.format,
                    "total_bytes": prep.total_bytes},
        "metric": None if metric is None else dict(
            metric, bytes_read=bytes_read,
            throughput_mib_s=(bytes_read / metrics.MIB / sum(e["duration_s"] for e in epochs)) if epochs else 0.0),
        "epochs": epochs,
        "checkpoint": checkpoint,
        "enforcement": {
            "cache_drop": drop.to_dict(),
            "memory_limit": memory_evidence,
            "host_memory_bytes": prep.host_memory_bytes,
            "required_files": prep.required_files,
            "datasize": prep.required.to_dict(),
        },
        "compliance": {"compliant": not reasons, "reasons": reasons},
        "host": {"hostname": hostname, "cpu_count": os.cpu_count(), "mem_total_bytes": _mem_total(),
                 "kernel": os.uname().release},
        "versions": {"suite": __version__, "python": sys.version.split()[0], "mpi": _mpi_version()},
    }
    if status == "complete":
        from suite.storage.dlio_output import data_size_hint
        files.write_json(run_dir / "summary.json", summary(
            start_unix_s=start, end_unix_s=end, num_accelerators=n, num_hosts=len(prep.hosts),
            hostname=hostname, metric=metric, num_files_train=len(prep.files),
            num_samples_per_file=wl.num_samples_per_file, host_memory_bytes=prep.host_memory_bytes,
            host_cpu_count=os.cpu_count(), epochs=len(epochs),
            data_size_per_host_bytes=data_size_hint(len(prep.files), wl, len(prep.hosts))))
        ep_objs = [_EpochTimes(e["epoch"], e["start_s"], e["end_s"]) for e in epochs]
        files.write_json(run_dir / "per_epoch_stats.json", per_epoch_stats(ep_objs, checkpoint, start))
        block = metrics.metric_block(n, metric)
        with open(run_dir / "dlio.log", "a", encoding="utf-8") as f:
            f.write(f"{timestamp(end)} Saved outputs in {run_dir}\n")
            f.write("Averaged metric over all epochs\n" + block + "\n")
        say(block)
    files.write_json(run_dir / "results.json", doc, schema="results")
    return doc


@dataclass
class _EpochTimes:
    epoch: int
    start_s: float
    end_s: float


def _mem_total() -> int:
    from suite.storage.dlio_output import mem_total_bytes
    return mem_total_bytes()


def _mpi_version() -> str:
    try:
        from importlib.metadata import version
        return f"mpich {version('mpich')}, mpi4py {version('mpi4py')}"
    except Exception:  # noqa: BLE001 - informational only
        return "unknown"


def write_run_set(prep, results: list) -> None:
    """R/run_set.json (the runs and their overall numbers) and R/mlperf_storage_report.json."""
    from suite.storage import metrics

    done = [r for r in results if r["status"] == "complete"]
    overall = None
    if done:
        overall = metrics.overall([r["metric"]["train_throughput_mean_samples_per_second"] for r in done],
                                  [r["metric"]["train_io_mean_MB_per_second"] for r in done])
        overall["train_au_mean_percentage"] = metrics.mean_pstdev(
            [r["metric"]["train_au_mean_percentage"] for r in done])[0]
    doc = {
        "schema_version": 1, "workload": prep.workload.name, "accelerator": prep.workload.accelerator,
        "num_accelerators": prep.opts.accelerators, "num_hosts": len(prep.hosts), "ruleset": prep.ruleset,
        "division": prep.opts.division, "miniature": prep.miniature, "runs_requested": prep.opts.runs or 5,
        "runs": [{"run_index": r["run_index"], "status": r["status"],
                  "compliant": r["compliance"]["compliant"], "path": f"run-{r['run_index']}/results.json"}
                 for r in results],
        "complete": len(done) == (prep.opts.runs or 5),
        "overall": overall,
    }
    files.write_json(prep.results_dir / "run_set.json", doc)
    if done:
        # the shape of MLPerf Storage v1.0's report.py output (mlperf_storage_report.json)
        common = {"model": prep.workload.name, "accelerator": prep.workload.accelerator,
                  "train_num_accelerators": str(prep.opts.accelerators),
                  "num_files_train": len(prep.files), "num_samples_per_file": prep.workload.num_samples_per_file}
        report = {
            "overall": {**{k: v for k, v in common.items()}, "num_benchmark_runs": len(done),
                        **{k: v for k, v in overall.items() if k != "num_benchmark_runs"
                           and k != "train_au_mean_percentage"}},
            "runs": {f"run{r['run_index']}": {
                "train_throughput_samples_per_second": r["metric"]["train_throughput_mean_samples_per_second"],
                "train_throughput_MB_per_second": r["metric"]["train_io_mean_MB_per_second"], **common}
                for r in done},
        }
        files.write_json(prep.results_dir / "mlperf_storage_report.json", report)
