"""The training kind's figures for `suite compare` (suite.benchmark.Measured): per benchmark
under a path, AU %, samples/s and MiB/s per run (the runs the rules count: a warm-up run is the
layout's `warmup`, left out as the rules leave it out), per epoch, and each run's first epoch
against its later ones. The numbers are suite.training.aggregate's, the ones `suite metrics` and
`suite report` publish; the system is the run's own evidence (ours) or the tree's
systems/<system>.json (a published result)."""

from __future__ import annotations

import statistics
from pathlib import Path

from suite.benchmark import Measured, Samples
from suite.numbers import CLAIMED, RECOMPUTED, source_label

SYSTEM_LEVELS = 6            # how far above a benchmark a systems/ directory is looked for
MAX_SYSTEM_KEYS = 400        # a description's keys shown (a hostile one could have millions)


def measured(path: Path) -> list[Measured]:
    """Every benchmark under `path` (a run's summary.json, results.json or per_epoch_stats.json
    stands for its directory, as for `suite metrics`)."""
    from suite.layouts.benchdirs import tree as layout
    from suite.training import aggregate

    path = Path(path)
    if path.name in ("summary.json", "results.json", "per_epoch_stats.json") and not path.is_dir():
        path = path.parent
    benches = layout.discover(path)
    if not benches:
        aggregate.summarise(path)            # its one-line error for a path with no results
    return [one(aggregate.benchmark_numbers(b), b) for b in benches]


def one(b: dict, bench) -> Measured:
    runs = [r for r in b["runs"] if r["status"] == "complete" and r["samples_per_second"] is not None]
    notes = [f"{r['name']}: left out ({r['status']})" for r in b["runs"] if r not in runs]
    if bench is not None and bench.warmup is not None:
        notes.append(f"{bench.warmup.name}: the warm-up run, left out as the rules leave it out")
    source = RECOMPUTED if runs and all(r.get("source") == RECOMPUTED for r in runs) else CLAIMED
    figures = (
        _samples("au_percentage", "AU %", runs, "au_mean_percentage", "au_per_epoch", 1.0, source),
        _samples("samples_per_second", "samples/s", runs, "samples_per_second", "samples_per_second_per_epoch", 1.0, source),
        _samples("mib_per_second", "MiB/s", runs, "mib_per_second", "samples_per_second_per_epoch", None, source),
    )
    if source == CLAIMED and runs:
        notes.append("figures claimed: " + ", ".join(r["name"] for r in runs if r.get("source") != RECOMPUTED)
                     + " have no per-rank records to re-derive them from (their summary.json's figures)")
    notes += [f"{r['name']}: summary.json claims " + ", ".join(
        f"{k} {r['claimed'][k]:.6g}" for k in r["claims_differ"]) + f"; compared: re-derived from {r['rederived_from']}: "
        + ", ".join(f"{k} {r[k]:.6g}" for k in r["claims_differ"]) for r in runs if r.get("claims_differ")]
    who = " / ".join(x for x in (b["org"], b["system"]) if x) or Path(b["path"]).name
    return Measured(path=Path(b["path"]), kind="training", label=who, identity=_identity(b, bench, runs),
                    system=_system(b, bench, runs), figures=tuple(f for f in figures if f.per_run),
                    notes=tuple(notes), when=_when(bench))


def _samples(name, label, runs, run_key, epoch_key, scale, source=RECOMPUTED) -> Samples:
    """A figure's values; MiB/s (scale None) is each epoch's samples/s x the run's record length."""
    per_run, per_epoch, first = [], [], []
    for r in runs:
        value = r[run_key]
        if value is None or not value > 0:
            continue
        f = scale if scale is not None else (r["record_length_bytes"] or 0) / 1024 ** 2
        epochs = tuple(x * f for x in r[epoch_key] if x * f > 0)
        if scale is None and not f:
            epochs = ()
        per_run.append(value)
        per_epoch.append(epochs)
        if len(epochs) >= 2:
            later = statistics.fmean(epochs[1:])
            first.append(epochs[0] / later if later else None)
    return Samples(name=name, label=source_label(label, source), higher_is_better=True, per_run=tuple(per_run),
                   per_epoch=tuple(per_epoch), first_to_later=tuple(x for x in first if x is not None), source=source)


def _identity(b: dict, bench, runs) -> dict:
    """What two results must share: workload, accelerator, dataset size (files x samples per file,
    from the runs' effective configs), record size (the runs' record length), ruleset, division."""
    files = set()
    for r in (bench.runs if bench is not None else []):
        ds = (r.config or {}).get("dataset") if isinstance(r.config, dict) else None
        if isinstance(ds, dict) and ds.get("num_files_train") is not None:
            files.add((ds.get("num_files_train"), ds.get("num_samples_per_file")))
    size = None
    if len(files) == 1:
        n, per = next(iter(files))
        size = f"{n} files x {per} samples" if per is not None else f"{n} files"
    elif files:
        size = "mixed: " + ", ".join(sorted(str(f[0]) for f in files)) + " files"
    from suite.storage.workloads import record_size

    record = record_size(r.get("record_length_bytes") for r in runs)
    return {"workload": b["workload"], "accelerator": b["accelerator"], "dataset_size": size,
            "record_size": record, "ruleset": b["ruleset"], "division": b["division"], "scale_factor": None}


def _when(bench) -> str | None:
    if bench is None:
        return None
    for r in bench.runs:
        res = r.results if isinstance(r.results, dict) else {}
        if isinstance(res.get("start"), str):
            return res["start"]
    return None


def _system(b: dict, bench, runs) -> dict:
    """The system: accelerators and hosts from the runs; then the tree's description, or ours."""
    out = {"accelerators": _one_of(r["num_accelerators"] for r in runs),
           "hosts": _one_of(r["num_hosts"] for r in runs),
           "hostnames": ", ".join(sorted({h for r in runs for h in r["hosts"]})) or None}
    doc = _description(bench)
    if doc is not None:
        out.update(flatten(doc, "system."))
    else:
        ev = next((r["evidence"] for r in runs if r.get("evidence")), None) or {}
        for key in ("host", "versions"):
            out.update(flatten(ev.get(key), f"{key}."))
        ds = next(((r.results or {}).get("dataset") for r in (bench.runs if bench else [])
                   if isinstance(r.results, dict)), None)
        if isinstance(ds, dict):
            out.update(flatten({k: ds.get(k) for k in ("format", "generator", "total_bytes")}, "dataset."))
            out.update(flatten(ds.get("storage"), "storage."))
        params = next(((r.results or {}).get("params") for r in (bench.runs if bench else [])
                       if isinstance(r.results, dict)), None)
        if params is not None:
            out["params"] = ", ".join(map(str, params)) if isinstance(params, list) else str(params)
    return dict(list(out.items())[:MAX_SYSTEM_KEYS])


def _one_of(values):
    vals = sorted({v for v in values if v is not None})
    return None if not vals else vals[0] if len(vals) == 1 else ", ".join(map(str, vals))


def _description(bench):
    """The tree's systems/<system>.json above the benchmark (a published result), or None."""
    from suite import files
    from suite.errors import ResultError

    if bench is None or not bench.system:
        return None
    for anc in list(Path(bench.path).parents)[:SYSTEM_LEVELS]:
        d = anc / "systems"
        if not d.is_dir() or d.is_symlink():
            continue
        for f in sorted(d.iterdir()):
            if f.stem.lower() == bench.system.lower() and f.suffix.lower() == ".json" and f.is_file():
                try:
                    return files.load_json(f, error=ResultError, root=anc)
                except (ResultError, RecursionError):
                    return None
    return None


MAX_DEPTH = 12


def flatten(doc, prefix: str, depth: int = 0) -> dict:
    """Nested dicts as dotted keys -> text; lists of dicts numbered (nodes.0.CPU...); below
    MAX_DEPTH levels a value is shown as its (shortened) text."""
    out: dict = {}
    if depth > MAX_DEPTH and isinstance(doc, (dict, list)):
        out[prefix[:-1]] = "(nested too deep to show)"
    elif isinstance(doc, dict):
        for k in doc:
            out.update(flatten(doc[k], f"{prefix}{k}.", depth + 1))
    elif isinstance(doc, list):
        if any(isinstance(x, (dict, list)) for x in doc):
            for i, x in enumerate(doc):
                out.update(flatten(x, f"{prefix}{i}.", depth + 1))
        else:
            out[prefix[:-1]] = ", ".join(map(str, doc))
    elif doc is not None or prefix:
        out[prefix[:-1]] = None if doc is None else str(doc)
    return out
