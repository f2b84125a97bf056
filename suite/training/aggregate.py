"""Storage results as the numbers that get published: per run and over runs.

Here, in report/, because it is the aggregation the reports show and it reads result trees
through suite.layouts.benchdirs.tree (storage/ stays below check/). Input: the benchmarks `layout.discover` finds (any published layout, or `suite run` output).
Per run: AU mean/stdev (%), samples/s, MiB/s (DLIO labels it "MB/s": samples/s x record length
/ 1024^2), accelerators and hosts, per-epoch AU and samples/s. Over runs: population mean and
stdev (suite.training.figures), as mlperf_storage_report.json has them. Publication rounding (2 decimals)
is given beside every full value. A run of several host directories (v0.5 multi-host) sums the
hosts' samples/s, MiB/s and accelerators and averages their AU.

All numbers come from the runs' own files; the submitter's mlperf_storage_report.json, when
present, is kept beside them (`claimed`) so the two can be compared, never used instead.
"""

import math

from suite.numbers import CLAIMED, RECOMPUTED, claim_differs, to_float
from suite.training import workloads
from suite.training import figures as metrics
from suite.errors import ResultError

PUBLISH_PLACES = 2
PUBLISHED_KEYS = ("samples_per_second", "samples_per_second_stdev", "mib_per_second", "mib_per_second_stdev",
                  "au_mean_percentage", "au_stdev_percentage")


def published(value):
    return None if value is None else round(value, PUBLISH_PLACES)


def run_numbers(run, bench) -> dict:
    """One run's published numbers from its host summaries (and our results.json when present)."""
    row = _empty_row(run)
    for p in getattr(run, "problems", []):    # files layout could not use (unreadable, outside PATH, ...)
        row["problems"].append(f"{p.path}: {p.field}: expected {p.expected}, got {p.actual}")
    summaries = [s for s in run.summaries if isinstance(s.get("metric"), dict)]
    if not summaries:
        row["status"] = row["status"] if row["status"] != "complete" else "no summary.json metric"
        row["problems"].append(f"{run.path}: summary.json: expected a metric block, got none")
        return row
    parts = [p for p in (_host_part(s, run, row["problems"]) for s in summaries) if p is not None]
    if not parts:
        row["status"] = "unusable summary.json"
        return row
    rl = workloads.record_length(run.config, bench.workload, bench.accelerator)
    row.update(_combine(parts, *rl))
    _rederive(row, run, parts, rl)
    row["epochs"] = len(row["au_per_epoch"]) or None
    row["published"] = {k: published(row[k]) for k in PUBLISHED_KEYS}
    return row


CLAIM_KEYS = ("samples_per_second", "mib_per_second", "au_mean_percentage")


def _rederive(row: dict, run, parts: list[dict], rl) -> None:
    """The run's figures re-derived from every host's per-rank records (suite.training.check.recompute:
    our steps/, DLIO's <rank>_output.json) replace the summaries' claims, which stay beside them
    (`claimed`, and `claims_differ` naming each that is not what the records give); a run whose records
    cannot give them keeps the claims, marked `source: claimed`."""
    from suite.training.check.recompute import evidence_epochs

    row["claimed"] = {k: row[k] for k in CLAIM_KEYS}
    row["source"], row["rederived_from"], row["claims_differ"] = CLAIMED, None, []
    hosts = [h for h in run.hosts if isinstance(h.summary, dict) and isinstance(h.summary.get("metric"), dict)]
    found = [evidence_epochs(h) for h in hosts]
    if len(hosts) != len(parts) or not found or any(f is None for f in found) or rl[0] is None:
        return                                       # (no record length: MiB/s could not be re-derived)
    derived = []
    for part, (au, tp, _) in zip(parts, found):
        au_m, au_s = metrics.mean_pstdev(au)
        tp_m, tp_s = metrics.mean_pstdev(tp)
        derived.append({**part, metrics.AU_MEAN: au_m, metrics.AU_STDEV: au_s, metrics.SAMPLES_MEAN: tp_m,
                        metrics.SAMPLES_STDEV: tp_s, metrics.IO_MEAN: None, metrics.IO_STDEV: None,
                        "au": au, "tput": tp, "meets": None})
    got = _combine(derived, *rl)
    got["au_meets_threshold"] = row["au_meets_threshold"]          # the rule's own judgement is check's
    row.update(got)
    row["source"], row["rederived_from"] = RECOMPUTED, sorted({f[2] for f in found})[0]
    row["claims_differ"] = [k for k in CLAIM_KEYS if claim_differs(row["claimed"][k], row[k])]


def _empty_row(run) -> dict:
    """A run's row before its summaries are read, with what our results.json says about it."""
    results = run.results if isinstance(run.results, dict) else None
    row = {"name": run.name, "path": str(run.path), "status": "complete", "hosts": [], "num_hosts": 0,
           "num_accelerators": None, "epochs": None, "au_mean_percentage": None, "au_stdev_percentage": None,
           "au_meets_threshold": None, "samples_per_second": None, "samples_per_second_stdev": None,
           "mib_per_second": None, "mib_per_second_stdev": None, "record_length_bytes": None,
           "record_length_from": None, "au_per_epoch": [], "samples_per_second_per_epoch": [],
           "miniature": None, "compliant": None, "evidence": None, "problems": [],
           "source": None, "rederived_from": None, "claimed": None, "claims_differ": []}
    if results is not None:
        row["status"] = results.get("status", "unknown")
        row["miniature"] = results.get("miniature")
        compliance = results.get("compliance")
        if isinstance(compliance, dict):
            row["compliant"] = compliance.get("compliant")
        # what `suite run` recorded about the host and the rules it enforced
        row["evidence"] = {k: results[k] for k in ("host", "enforcement", "versions", "compliance", "miniature",
                                                   "object_storage", "reads", "ceiling") if k in results}
    return row


_PART_KEYS = (metrics.AU_MEAN, metrics.AU_STDEV, metrics.SAMPLES_MEAN, metrics.SAMPLES_STDEV,
              metrics.IO_MEAN, metrics.IO_STDEV)


def _host_part(s: dict, run, problems: list) -> dict | None:
    """One host summary's numbers; None (and a problem) when its means are not numbers."""
    m = s["metric"]
    part = {k: to_float(m.get(k)) for k in _PART_KEYS}
    missing = [k for k in (metrics.AU_MEAN, metrics.SAMPLES_MEAN) if part[k] is None]
    if missing:
        problems.append(f"{run.path}: summary.json: metric.{missing[0]}: expected a finite number, "
                        f"got {m.get(missing[0])!r}")
        return None
    part["au"] = [x for x in map(to_float, m.get(metrics.AU_PER_EPOCH) or []) if x is not None]
    part["tput"] = [x for x in map(to_float, m.get(metrics.SAMPLES) or []) if x is not None]
    part["accelerators"] = to_float(s.get("num_accelerators"))
    part["num_hosts"] = to_float(s.get("num_hosts")) or 1
    part["hostname"] = s.get("hostname")
    part["meets"] = m.get(metrics.AU_MEETS)
    return part


def _combine(parts: list[dict], rl: float | None, rl_from: str) -> dict:
    """A run's numbers from its hosts' parts: samples/s and MiB/s summed, AU averaged."""
    samples = math.fsum(p[metrics.SAMPLES_MEAN] for p in parts)
    samples_std = math.sqrt(math.fsum((p[metrics.SAMPLES_STDEV] or 0.0) ** 2 for p in parts))
    if rl is None:
        mib = math.fsum(p[metrics.IO_MEAN] or 0.0 for p in parts)
        mib_std = math.sqrt(math.fsum((p[metrics.IO_STDEV] or 0.0) ** 2 for p in parts))
    else:
        mib, mib_std = metrics.mib_per_second(samples, rl), metrics.mib_per_second(samples_std, rl)
    accel = [p["accelerators"] for p in parts]
    one = len(parts) == 1
    return {
        "hosts": sorted({str(p["hostname"]) for p in parts if p["hostname"]}),
        "num_hosts": int(sum(p["num_hosts"] for p in parts)),
        "num_accelerators": int(sum(accel)) if all(a is not None for a in accel) else None,
        "au_mean_percentage": metrics.mean_pstdev([p[metrics.AU_MEAN] for p in parts])[0],
        "au_stdev_percentage": parts[0][metrics.AU_STDEV] if one else
        metrics.mean_pstdev([p[metrics.AU_STDEV] or 0.0 for p in parts])[0],
        "au_meets_threshold": all(p["meets"] == "success" for p in parts),
        "samples_per_second": samples, "samples_per_second_stdev": samples_std,
        "mib_per_second": mib, "mib_per_second_stdev": mib_std,
        "record_length_bytes": rl, "record_length_from": rl_from,
        "au_per_epoch": parts[0]["au"] if one else _mean_lists([p["au"] for p in parts]),
        "samples_per_second_per_epoch": parts[0]["tput"] if one else _sum_lists([p["tput"] for p in parts]),
    }


def _mean_lists(lists):
    n = min(map(len, lists)) if lists else 0
    return [math.fsum(lst[i] for lst in lists) / len(lists) for i in range(n)]


def _sum_lists(lists):
    n = min(map(len, lists)) if lists else 0
    return [math.fsum(lst[i] for lst in lists) for i in range(n)]


def benchmark_numbers(bench) -> dict:
    """A benchmark's runs and their overall numbers (runs without usable numbers are listed, not counted)."""
    runs = [run_numbers(r, bench) for r in bench.runs]
    used = [r for r in runs if r["samples_per_second"] is not None and r["status"] == "complete"]
    overall = None
    if used:
        ov = metrics.overall([r["samples_per_second"] for r in used], [r["mib_per_second"] for r in used])
        au_mean, au_std = metrics.mean_pstdev([r["au_mean_percentage"] for r in used])
        accel = sorted({r["num_accelerators"] for r in used if r["num_accelerators"] is not None})
        hosts = sorted({r["num_hosts"] for r in used})
        overall = {
            "num_runs": ov[metrics.NUM_RUNS],
            "samples_per_second": ov[metrics.SAMPLES_MEAN],
            "samples_per_second_stdev": ov[metrics.SAMPLES_STDEV],
            "mib_per_second": ov[metrics.REPORT_MB_MEAN],
            "mib_per_second_stdev": ov[metrics.REPORT_MB_STDEV],
            "au_mean_percentage": au_mean, "au_stdev_percentage": au_std,
            "num_accelerators": accel[0] if len(accel) == 1 else accel,
            "num_hosts": hosts[0] if len(hosts) == 1 else hosts,
            "hostnames": sorted({h for r in used for h in r["hosts"]}),
        }
        overall["published"] = {k: published(overall[k]) for k in PUBLISHED_KEYS}
        overall["source"] = RECOMPUTED if all(r["source"] == RECOMPUTED for r in used) else CLAIMED
        overall["claims_differ"] = [r["name"] for r in used if r["claims_differ"]]
    claimed = None
    if isinstance(bench.report, dict) and isinstance(bench.report.get("overall"), dict):
        o = bench.report["overall"]
        claimed = {"samples_per_second": to_float(o.get(metrics.SAMPLES_MEAN)),
                   "mib_per_second": to_float(o.get(metrics.REPORT_MB_MEAN)),
                   "num_runs": to_float(o.get(metrics.NUM_RUNS))}
    return {
        "au_threshold_percentage": workloads.au_threshold_percentage(bench.workload, bench.accelerator),
        "path": str(bench.path), "name": bench.name, "org": bench.org, "system": bench.system,
        "division": bench.division, "ruleset": bench.ruleset, "workload": bench.workload,
        "accelerator": bench.accelerator, "runs": runs, "overall": overall, "claimed": claimed,
        "problems": [p for r in runs for p in r["problems"]],
    }


def summarise(path) -> dict:
    """Every benchmark under `path`, with its runs and overall numbers."""
    from suite.layouts.benchdirs import tree as layout

    benches = layout.discover(path)
    if not benches:
        raise ResultError(f"{path}: expected storage results (summary.json, results.json, ...) or a TPCx-AI "
                          f"data file, got none")
    return {"kind": "storage", "path": str(path), "benchmarks": [benchmark_numbers(b) for b in benches]}


RUN_TABLE_COLUMNS = ("benchmark", "workload", "accelerator", "run", "status", "num_accelerators", "num_hosts",
                     "epochs", "au_mean_percentage", "au_stdev_percentage", "au_meets_threshold",
                     "samples_per_second", "samples_per_second_stdev", "mib_per_second", "mib_per_second_stdev",
                     "record_length_bytes", "hosts", "path", "source", "claimed_samples_per_second",
                     "claimed_mib_per_second", "claimed_au_mean_percentage")


def run_table(summary: dict) -> list[dict]:
    """The per-run table (one row per run of every benchmark), for text, CSV and parquet."""
    rows = []
    for b in summary["benchmarks"]:
        for r in b["runs"]:
            claimed = r.get("claimed") or {}
            row = {"benchmark": b["name"], "workload": b["workload"], "accelerator": b["accelerator"],
                   "run": r["name"], **r, "hosts": ",".join(r["hosts"]),
                   **{f"claimed_{k}": claimed.get(k) for k in CLAIM_KEYS}}
            rows.append({k: row[k] for k in RUN_TABLE_COLUMNS})
    return rows
