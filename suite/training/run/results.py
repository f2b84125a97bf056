"""A run's results: the ranks' step files turned into results.json, summary.json,
per_epoch_stats.json, the end of dlio.log, and the run set's run_set.json and
mlperf_storage_report.json. The math is suite.training.figures; the DLIO shapes are
suite.training.run.dlio_output; every JSON file is validated against its schema as it is written.
"""

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.training import figures as metrics
from suite.training.run.records import RankSteps

FIRST_DLIO = "dlio-0.5"     # ruleset.yaml reference_tool: the first round's DLIO and report.py


def say(*parts) -> None:
    print(*parts, flush=True)


def collect(prep, k: int, run_dir: Path, start: float, end: float, status: str, error,
            drop, memory_evidence) -> dict:
    """Run k's results.json (returned), and for a complete run its DLIO files."""
    ranks = load_ranks(run_dir, prep.opts.accelerators)
    if status == "complete" and len(ranks) != prep.opts.accelerators:
        status, error = "failed", f"steps: expected {prep.opts.accelerators} rank files, got {len(ranks)}"
    epochs, metric, checkpoint = [], None, None
    if status == "complete":
        epochs = epoch_results(ranks, prep.workload.record_length_bytes)
        metric = metrics.run_metric([e["au_percentage"] for e in epochs],
                                    [e["throughput_samples_per_second"] for e in epochs],
                                    prep.workload.record_length_bytes, prep.workload.au_threshold)
        checkpoint = ranks[0].checkpoint
        start = ranks[0].run_start_unix_s
    reasons = compliance_reasons(prep, status, error, drop, metric, memory_evidence)
    enforcement = {"cache_drop": drop.to_dict(), "memory_limit": memory_evidence}
    if getattr(prep, "memory_budget", None) is not None:     # the miniature's cgroup in parts, with the ranks' peaks
        from suite.training.run import budget
        enforcement["memory_budget"] = budget.measured(prep.memory_budget, [r.peak_rss_bytes for r in ranks],
                                                       [r.storage_read_bytes for r in ranks])
    if prep.cluster:        # per host: placement, memory for the rules, its drop, its cgroup
        enforcement["hosts"] = prep.cluster.evidence(drop, memory_evidence)
        from suite.harness.hosts import check_ranks_hosts
        misplaced = check_ranks_hosts(run_dir, prep.cluster)
        if misplaced:
            reasons.append(f"placement: {misplaced}")
    doc = results_doc(prep, k, (start, end), status, error, epochs, metric, checkpoint, reasons,
                      {**enforcement, **fs_separation(prep, run_dir)})
    if prep.workload.format == "parquet":       # is its AU the storage's? (suite.training.run.storagebound)
        from suite.training.run import storagebound
        doc["reads"], doc["ceiling"] = storagebound.reads(ranks), getattr(prep, "ceiling", None)
    from suite.storage import objectstore
    if objectstore.is_object(prep):
        doc["object_storage"] = objectstore.evidence(prep, run_dir, drop)
    if status == "complete":
        write_dlio_files(prep, run_dir, (start, end), metric, epochs, checkpoint)
    files.write_json(run_dir / "results.json", doc, schema="results")
    write_metadata(prep, run_dir, doc)
    return doc


def write_metadata(prep, run_dir: Path, doc: dict) -> None:
    """A v3.0 leaf's training_<ts>_metadata.json (the executed command, the parameters, the runtime)."""
    from suite.training import leaf

    if getattr(prep, "leaves", None) is None:
        return
    stamped = leaf.timestamped(prep.ruleset)
    if stamped or leaf.reference_tool(prep) == "mlpstorage":      # numbered runs: named by their start
        from suite.harness import leafstamp

        leaf.write_metadata(prep, "run", Path(run_dir), {
            "runtime": doc["duration_s"], "invocation_start_time": doc["start"], "run_index": doc["run_index"],
            "warmup": doc["warmup"], "status": doc["status"], "executed_command": _executed(prep, run_dir, doc)},
            stamp=None if stamped else leafstamp.stamp(_unix(doc["start"])))


def _unix(stamp: str) -> float:
    """DLIO's UTC timestamp (suite.training.run.dlio_output.timestamp) as Unix seconds."""
    import datetime as dt

    from suite.training.run.dlio_output import TIME_FORMAT

    return dt.datetime.strptime(stamp, TIME_FORMAT).replace(tzinfo=dt.timezone.utc).timestamp()


def _executed(prep, run_dir: Path, doc: dict) -> str:
    """The command the run executed: DLIO's (its engine record), else mpiexec and our ranks."""
    import shlex

    argv = (doc.get("engine") or {}).get("argv") or getattr(prep, "commands", {}).get(doc["run_index"]) or []
    return shlex.join(str(a) for a in argv)


def load_ranks(run_dir: Path, n: int) -> list[RankSteps]:
    """The ranks' steps/rank-<r>.json that exist, in rank order."""
    ranks = []
    for r in range(n):
        p = run_dir / "steps" / f"rank-{r}.json"
        if p.exists():
            ranks.append(RankSteps.from_dict(files.load_json(p, schema="steps")))
    return ranks


def epoch_results(ranks: list[RankSteps], record_length_bytes: float) -> list[dict]:
    """Per epoch, over all ranks: the times, samples, bytes, AU and throughput results.json carries."""
    epochs = []
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
            "throughput_mib_per_second": metrics.mib_per_second(tput, record_length_bytes),
            "read_mib_per_second": nbytes / metrics.MIB / (t1 - t0) if t1 > t0 else 0.0,
        })
    return epochs


def compliance_reasons(prep, status: str, error, drop, metric, memory_evidence) -> list[str]:
    """Why this run is not compliant (empty: it is)."""
    reasons = list(prep.reasons)
    if not drop.succeeded:
        reasons.append(f"cache drop before the run failed: {drop.error}")
    if getattr(drop, "gap_problem", None):
        reasons.append(drop.gap_problem)
    if status != "complete":
        reasons.append(f"run {status}: {error}")
    if metric and metric[metrics.AU_MEETS] != "success":
        reasons.append(f"AU {metric[metrics.AU_MEAN]:.2f}% below the threshold "
                       f"{100 * prep.workload.au_threshold:.0f}%")
    if memory_evidence and memory_evidence.get("oom_kills"):
        reasons.append(f"memory cgroup: {memory_evidence['oom_kills']} OOM kill(s)")
    if memory_evidence and memory_evidence.get("cleanup_error"):
        reasons.append(f"memory cgroup: {memory_evidence['cleanup_error']}")
    return reasons


def results_doc(prep, k: int, times: tuple, status: str, error, epochs: list, metric, checkpoint,
                reasons: list, enforcement: dict) -> dict:
    """results.json (suite/training/schemas/results.schema.json)."""
    from suite import __version__
    from suite.harness import hostfacts
    from suite.training.run.dlio_output import timestamp

    wl, opts = prep.workload, prep.opts
    start, end = times
    bytes_read = sum(e["bytes_read"] for e in epochs)
    return {
        "schema_version": 1, "suite_version": __version__, "status": status,
        "complete": status == "complete", "error": error, "miniature": prep.miniature,
        "workload": wl.name, "dlio_workload": wl.dlio_name, "accelerator": wl.accelerator,
        "num_accelerators": opts.accelerators, "hosts": prep.hosts, "num_hosts": len(prep.hosts),
        "ruleset": prep.ruleset, "division": opts.division, "run_index": k, "warmup": is_warmup(prep, k),
        "start": timestamp(start), "end": timestamp(end), "duration_s": end - start, "params": prep.params,
        "dataset": {"data_dir": str(prep.data_dir), "num_files_train": len(prep.files),
                    "num_samples_per_file": wl.num_samples_per_file, "format": prep.format,
                    "total_bytes": prep.total_bytes, **getattr(prep, "dataset_evidence", {})},
        "metric": None if metric is None else dict(
            metric, bytes_read=bytes_read,
            throughput_mib_s=(bytes_read / metrics.MIB / sum(e["duration_s"] for e in epochs)) if epochs else 0.0),
        "epochs": epochs,
        "checkpoint": checkpoint,
        "enforcement": {**enforcement, "host_memory_bytes": prep.host_memory_bytes,
                        "required_files": prep.required_files, "datasize": prep.required.to_dict()},
        "compliance": {"compliant": not reasons, "reasons": reasons},
        "host": hostfacts.host(),                    # as every kind records it (suite.harness.hostfacts)
        "versions": {**hostfacts.versions(), "mpi": _mpi_version()},
    }


def write_dlio_files(prep, run_dir: Path, times: tuple, metric: dict, epochs: list, checkpoint) -> None:
    """A complete run's summary.json, per_epoch_stats.json and the [METRIC] block (dlio.log, stdout)."""
    from suite.training.run.dlio_output import data_size_hint, per_epoch_stats, summary, timestamp

    wl, n = prep.workload, prep.opts.accelerators
    start, end = times
    # across hosts, DLIO's per-host lists in rank order (host_memory_GB, host_cpu_count) and rank 0's hostname
    hosts = prep.cluster.hosts if prep.cluster else None
    from suite.training import leaf

    model = {"model": wl.name} if leaf.reference_tool(prep) == FIRST_DLIO else {}   # its DLIO put the model first
    files.write_json(run_dir / "summary.json", model | summary(
        start_unix_s=start, end_unix_s=end, num_accelerators=n, num_hosts=len(prep.hosts),
        hostname=hosts[0].hostname if hosts else socket.gethostname(), metric=metric,
        num_files_train=len(prep.files), num_samples_per_file=wl.num_samples_per_file,
        host_memory_bytes=[h.memory_bytes for h in hosts] if hosts else prep.host_memory_bytes,
        host_cpu_count=[h.cpu_count for h in hosts] if hosts else os.cpu_count(), epochs=len(epochs),
        data_size_per_host_bytes=data_size_hint(len(prep.files), wl, len(prep.hosts))), schema="dlio-summary")
    ep_objs = [_EpochTimes(e["epoch"], e["start_s"], e["end_s"]) for e in epochs]
    from suite.training import leaf
    files.write_json(run_dir / leaf.per_epoch_name(prep), per_epoch_stats(ep_objs, checkpoint, start),
                     schema="per-epoch-stats")
    block = metrics.metric_block(n, metric)
    with open(run_dir / "dlio.log", "a", encoding="utf-8") as f:
        f.write(f"{timestamp(end)} Saved outputs in {run_dir}\n")
        f.write("Averaged metric over all epochs\n" + block + "\n")
    say(block)


@dataclass
class _EpochTimes:
    epoch: int
    start_s: float
    end_s: float


def _mpi_version() -> str:
    try:
        from importlib.metadata import version
        return f"mpich {version('mpich')}, mpi4py {version('mpi4py')}"
    except Exception:  # noqa: BLE001 - informational only
        return "unknown"


def _results_path(prep, k: int) -> str:
    """run-<k>/results.json; across hosts run-<k>/<rank-0 host>/results.json (DLIO's multi-host shape)."""
    from suite.training import leaf

    where = leaf.relative(prep, k) if hasattr(prep, "leaves") else f"run-{k}"
    return f"{where}/{prep.cluster.hosts[0].hostname}/results.json" if prep.cluster else f"{where}/results.json"


def fs_separation(prep, run_dir: Path) -> dict:
    """Where the ruleset asks for data and results apart (v3.0): fs_separation.json probed again for
    this run, beside its results; what results.json's enforcement says of it ({} otherwise). Both
    engines' results go through here."""
    if getattr(prep, "fs_separation", None) is None:
        return {}
    from suite.storage import separation

    doc = separation.probe(prep.workload, prep.data, prep.results_dir)
    separation.write(run_dir, doc)
    return {"fs_separation": {"file": separation.FILE, "separate": doc["separate"]}}


def is_warmup(prep, k: int) -> bool:
    """Run k is one of the series' warm-ups (v3.0: the first), left out of the figures."""
    return k <= getattr(prep, "warmup_runs", 0)


def measured(prep, results: list) -> list:
    """The complete runs the figures are made of: the warm-ups left out."""
    return [r for r in results if r["status"] == "complete" and not is_warmup(prep, r["run_index"])]


def write_run_set(prep, results: list) -> None:
    """R/run_set.json (the runs and their overall numbers, warm-ups left out) and R/mlperf_storage_report.json."""
    done = measured(prep, results)
    overall = None
    if done:
        overall = metrics.overall([r["metric"][metrics.SAMPLES_MEAN] for r in done],
                                  [r["metric"][metrics.IO_MEAN] for r in done])
        overall[metrics.AU_MEAN] = metrics.mean_pstdev([r["metric"][metrics.AU_MEAN] for r in done])[0]
    doc = {
        "schema_version": 1, "workload": prep.workload.name, "accelerator": prep.workload.accelerator,
        "num_accelerators": prep.opts.accelerators, "num_hosts": len(prep.hosts), "ruleset": prep.ruleset,
        "division": prep.opts.division, "miniature": prep.miniature, "runs_requested": prep.runs,
        "warmup_runs": getattr(prep, "warmup_runs", 0),
        "runs": [{"run_index": r["run_index"], "status": r["status"], "warmup": is_warmup(prep, r["run_index"]),
                  "compliant": r["compliance"]["compliant"], "path": _results_path(prep, r["run_index"])}
                 for r in results],
        "complete": len(done) == prep.runs - getattr(prep, "warmup_runs", 0),
        "overall": overall,
    }
    if getattr(prep, "ceiling", None) is not None:
        doc["ceiling"] = prep.ceiling
    files.write_json(prep.results_dir / "run_set.json", doc, schema="run-set")
    if done:
        info = {"model": prep.workload.name, "accelerator": prep.workload.accelerator,
                metrics.NUM_ACCELERATORS: str(prep.opts.accelerators),
                "num_files_train": len(prep.files), "num_samples_per_file": prep.workload.num_samples_per_file}
        from suite.training import leaf

        if leaf.reference_tool(prep) == FIRST_DLIO:
            info["num_client_hosts"] = len(prep.hosts)            # its report.py: the hosts of the run
        report = metrics.storage_report(info, {f"run{r['run_index']}": (r["metric"][metrics.SAMPLES_MEAN],
                                                                       r["metric"][metrics.IO_MEAN]) for r in done})
        files.write_json(prep.results_dir / "mlperf_storage_report.json", report, schema="storage-report")
