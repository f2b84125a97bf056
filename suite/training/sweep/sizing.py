"""Sizing: the storage bandwidth and dataset N accelerators need, and what a measured sweep says
a storage sustains (accelerators per storage node). Pure arithmetic over a workload, the
dataset-size rules (suite.training.datasize) and a sweep.json; no formatting (report/ does that).

Demand per accelerator at 100% AU = batch x record length / computation time (the accelerator
consumes one batch per step's compute); at the AU threshold T it may wait (1 - T) of the time,
so it needs T x that. The ceiling (the page-cache runs of a sweep) measures the same demand
on this host: its MiB/s / N at the points whose ceiling meets the threshold.
"""

import math

from suite.training import figures as metrics


def demand_mib_s(workload) -> float | None:
    """MiB/s one accelerator consumes at 100% AU (analytic); None without compute time (then
    only the storage limits it: benchmarks run with train.computation_time=0)."""
    if workload.computation_time_s <= 0:
        return None
    return workload.batch_size * workload.record_length_bytes / workload.computation_time_s / metrics.MIB


def ceiling_why_none(doc: dict, threshold: float) -> str:
    """Why a sweep gives no measured ceiling: it ran none, or none met the AU threshold (the demand per
    accelerator is read only where the ceiling kept the accelerators busy), or none has a rate."""
    runs = [p for p in doc["points"] if p.get("ceiling")]
    if not runs:
        return "the sweep has no ceiling runs (suite sweep --ceiling)"
    met = [p for p in runs if p["ceiling"].get("meets_threshold")]
    if not met:
        best = max((p["ceiling"].get("au_percentage") or 0.0 for p in runs), default=0.0)
        return (f"none of its {len(runs)} ceiling run(s) met the {100 * threshold:g}% AU threshold "
                f"(best AU {best:.2f}%): the host itself, not the storage, limits them")
    return f"its {len(met)} ceiling run(s) at the threshold have no MiB/s"


def ceiling_per_accelerator_mib_s(doc: dict) -> float | None:
    """Measured demand per accelerator: the ceiling's MiB/s / N, averaged over the points
    whose ceiling meets the AU threshold (None without such points)."""
    per = [p["ceiling"]["mib_per_second"] / p["accelerators"] for p in doc["points"]
           if p.get("ceiling") and p["ceiling"]["meets_threshold"] and p["ceiling"]["mib_per_second"]]
    return sum(per) / len(per) if per else None


def storage_sustained_mib_s(doc: dict) -> float | None:
    """The most the storage delivered in the sweep (MiB/s as published, any N): what it sustains."""
    got = [p["storage"]["mib_per_second"] for p in doc["points"]
           if p.get("storage") and p["storage"]["mib_per_second"]]
    return max(got) if got else None


def largest_at_threshold(doc: dict) -> int | None:
    """The largest confirmed N, else the largest N whose storage point met the threshold: re-derived from
    the per-run AU of the points and confirmations (suite.training.sweep.verify), never taken from the claim."""
    from suite.training.sweep import verify

    return verify.derived_maximum(doc)


def _floor(x: float) -> int | None:
    """floor(x), None past what is a count (1e308 MiB/s from a hostile sweep.json is infinity here)."""
    return math.floor(x) if math.isfinite(x) else None


def sweep_table(doc: dict, storage_nodes: int = 1) -> dict:
    """The sizing table of a sweep: per-accelerator demand (ceiling and analytic), the storage's
    sustained MiB/s, and accelerators per storage node for `storage_nodes` nodes."""
    analytic = doc["demand_mib_per_second_per_accelerator"]
    threshold = doc["au_threshold_percentage"] / 100.0
    ceiling = ceiling_per_accelerator_mib_s(doc)
    per_acc = ceiling if ceiling is not None else analytic
    sustained = storage_sustained_mib_s(doc)
    per_node = sustained / storage_nodes if sustained is not None else None
    return {
        "analytic_mib_s_per_accelerator": analytic,
        "analytic_at_threshold_mib_s_per_accelerator": None if analytic is None else analytic * threshold,
        "ceiling_mib_s_per_accelerator": ceiling,
        "per_accelerator_from": "ceiling" if ceiling is not None else "analytic",
        "storage_sustained_mib_s": sustained,
        "largest_n_at_threshold": largest_at_threshold(doc),
        "storage_nodes": storage_nodes,
        "storage_mib_s_per_node": per_node,
        # at the full demand (not x the threshold): conservative, as Dell's sizing tables are
        "accelerators_per_storage_node": _floor(per_node / per_acc) if per_node is not None and per_acc else None,
    }


def sizing(workload, accelerators: int, client_hosts: int, host_memory_bytes: int, ruleset: str | None,
           doc: dict | None = None) -> dict:
    """`suite sizing`: bandwidth for N accelerators (analytic, and from a sweep's ceiling when
    given) and the dataset the rules demand for N."""
    from suite.training import datasize

    per = demand_mib_s(workload)
    threshold = workload.au_threshold
    ds = datasize.compute(workload, accelerators, client_hosts, host_memory_bytes, ruleset)
    out = {
        "workload": workload.name, "accelerator": workload.accelerator, "accelerators": accelerators,
        "au_threshold_percentage": 100.0 * threshold,
        "per_accelerator_mib_s": per, "total_mib_s": None if per is None else accelerators * per,
        "total_at_threshold_mib_s": None if per is None else accelerators * per * threshold,
        "ceiling_per_accelerator_mib_s": None, "ceiling_total_mib_s": None, "sweep": None,
        "datasize": ds.to_dict(),
    }
    if doc is not None:
        if (doc["workload"], doc["accelerator"]) != (workload.name, workload.accelerator):
            from suite.errors import SuiteError
            raise SuiteError(f"--from: workload: expected {workload.name} on {workload.accelerator}, got "
                             f"{doc['workload']} on {doc['accelerator']}")
        ceiling = ceiling_per_accelerator_mib_s(doc)
        out["ceiling_per_accelerator_mib_s"] = ceiling
        out["ceiling_total_mib_s"] = None if ceiling is None else accelerators * ceiling
        out["ceiling_why_none"] = None if ceiling is not None else ceiling_why_none(doc, threshold)
        out["sweep"] = sweep_table(doc)
        out["params"] = list(doc["params"])
    return out
