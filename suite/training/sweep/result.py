"""A sweep's numbers: per accelerator count, what the storage runs and the ceiling runs measured,
read back from each run's results.json; the first epoch against the later ones; where storage
parts from the ceiling (the knee); sweep.json written and loaded against sweep.schema.json.

Pure over files: `point` reads one `suite run` results dir, `knee` and `doc` are arithmetic.
`load` is the one way report/ reads a sweep.
"""

from pathlib import Path

from suite import files
from suite.errors import ResultError
from suite.harness import storagerun
from suite.training import figures as metrics

SWEEP_FILE = storagerun.SWEEP_FILE
SCHEMA = "sweep"
FEW_STEPS = 20             # fewer steps per epoch: AU (first step excluded) hides the wait for the first batch
DEPARTURE = 0.05           # storage below the ceiling by more than this (fraction of the ceiling) marks the knee
CEILING_NOTE = ("ceiling: the dataset pre-read into the page cache, no cache drop (open division, --no-cache-drop): "
                "the workload's demand on this host, not a storage measurement")


def _mean(values):
    values = [v for v in values if v is not None]
    return metrics.mean_pstdev(values)[0] if values else None


def _ratio(a, b):
    return a / b if a is not None and b else None


def run_numbers(doc: dict) -> dict:
    """One run's numbers from its results.json: AU, samples/s, MiB/s (DLIO's "MB/s": samples/s x
    record length / 1024^2, what is published) and MiB/s read (bytes read / epoch time), first vs later epochs."""
    m = doc.get("metric") or {}
    epochs = doc.get("epochs") or []
    first = epochs[0] if epochs else {}
    later = epochs[1:]
    return {
        "steps_per_epoch": first.get("steps"),
        "run_index": doc["run_index"], "status": doc["status"], "compliant": doc["compliance"]["compliant"],
        "au_percentage": m.get(metrics.AU_MEAN), "samples_per_second": m.get(metrics.SAMPLES_MEAN),
        "mib_per_second": m.get(metrics.IO_MEAN), "read_mib_per_second": m.get("throughput_mib_s"),
        "meets_threshold": m.get(metrics.AU_MEETS) == "success",
        "first_epoch_samples_per_second": first.get("throughput_samples_per_second"),
        "first_epoch_mib_per_second": first.get("throughput_mib_per_second"),
        "later_epochs_samples_per_second": _mean([e["throughput_samples_per_second"] for e in later]),
        "later_epochs_mib_per_second": _mean([e["throughput_mib_per_second"] for e in later]),
    }


def run_files(results_dir: Path) -> list[Path]:
    """The runs' results.json of a `suite run` results dir: run-<k>/ (v1.0, v2.0) or the round's own
    leaves, training/<workload>/run/<time>/ (v3.0)."""
    results_dir = Path(results_dir)
    return list(results_dir.glob("run-*/results.json")) or list(results_dir.glob("training/*/run/*/results.json"))


def run_dirs(results_dir: Path) -> list[Path]:
    """The measured runs' dirs in run order, the warm-up run left out."""
    return [p for p, _ in _measured(results_dir)]


def _measured(results_dir: Path) -> list[tuple[Path, dict]]:
    docs = [(p.parent, files.load_json(p, schema="results", error=ResultError)) for p in run_files(results_dir)]
    return sorted(((p, d) for p, d in docs if not d.get("warmup")), key=lambda x: x[1]["run_index"])


def run_docs(results_dir: Path) -> list[dict]:
    """The measured runs' results.json documents, in run order (the warm-up run left out)."""
    return [d for _, d in _measured(results_dir)]


def point(results_dir: Path, sweep_dir: Path) -> dict:
    """A `suite run` results dir as one point of the sweep: means over its complete runs."""
    runs = [run_numbers(doc) for doc in run_docs(results_dir)]
    done = [r for r in runs if r["status"] == "complete"]
    first = _mean([r["first_epoch_samples_per_second"] for r in done])
    later = _mean([r["later_epochs_samples_per_second"] for r in done])
    return {
        "results_dir": str(results_dir.relative_to(sweep_dir)) if results_dir.is_relative_to(sweep_dir)
        else str(results_dir),
        "runs": len(runs), "runs_complete": len(done),
        "steps_per_epoch": min((r["steps_per_epoch"] for r in done if r["steps_per_epoch"] is not None), default=None),
        "au_percentage": _mean([r["au_percentage"] for r in done]),
        "au_per_run": [r["au_percentage"] for r in runs],
        "samples_per_second": _mean([r["samples_per_second"] for r in done]),
        "mib_per_second": _mean([r["mib_per_second"] for r in done]),
        "read_mib_per_second": _mean([r["read_mib_per_second"] for r in done]),
        "meets_threshold": bool(runs) and len(done) == len(runs) and all(r["meets_threshold"] for r in done),
        "compliant": bool(runs) and all(r["compliant"] for r in runs),
        "first_epoch_samples_per_second": first,
        "later_epochs_samples_per_second": later,
        "first_to_later_ratio": _ratio(first, later),
        "first_epoch_mib_per_second": _mean([r["first_epoch_mib_per_second"] for r in done]),
        "later_epochs_mib_per_second": _mean([r["later_epochs_mib_per_second"] for r in done]),
    }


def empty_point(results_dir: Path, sweep_dir: Path) -> dict:
    """A point no run was made for (refused at this N): nothing measured, not meeting the threshold."""
    pt = point(results_dir, sweep_dir) if results_dir.is_dir() else None
    if pt is None:
        keys = ("steps_per_epoch", "au_percentage", "samples_per_second", "mib_per_second", "read_mib_per_second",
                "first_epoch_samples_per_second", "later_epochs_samples_per_second", "first_to_later_ratio",
                "first_epoch_mib_per_second", "later_epochs_mib_per_second")
        pt = {"results_dir": str(results_dir.relative_to(sweep_dir)) if results_dir.is_relative_to(sweep_dir)
              else str(results_dir), "runs": 0, "runs_complete": 0, "au_per_run": [], "meets_threshold": False,
              "compliant": False, **{k: None for k in keys}}
    return pt


def storage_to_ceiling(storage: dict | None, ceiling: dict | None):
    """Storage samples/s as a fraction of the ceiling's at the same N (None without both)."""
    if not storage or not ceiling:
        return None
    return _ratio(storage["samples_per_second"], ceiling["samples_per_second"])


def knee(points: list[dict]) -> dict | None:
    """The smallest N where storage falls below its ceiling by more than 5% or below the AU
    threshold: {accelerators, reason}; None when no point does."""
    for p in sorted(points, key=lambda p: p["accelerators"]):
        s = p.get("storage")
        if not s:
            continue
        ratio = p.get("storage_to_ceiling")
        if not s["meets_threshold"]:
            return {"accelerators": p["accelerators"], "reason": f"AU {s['au_percentage'] or 0:.2f}% below the threshold"}
        if ratio is not None and ratio < 1 - DEPARTURE:
            return {"accelerators": p["accelerators"],
                    "reason": f"storage {100 * (1 - ratio):.1f}% below the page-cache ceiling"}
    return None


def load(path: Path) -> dict:
    """sweep.json (a file, or the sweep dir holding it), checked against sweep.schema.json."""
    path = Path(path)
    if path.is_dir():
        path = path / SWEEP_FILE
    if path.is_symlink():       # results come from other parties: never read through a link
        raise ResultError(f"{path}: expected a regular file, got a symbolic link")
    doc = files.load_json(path, error=ResultError, limit=MAX_SWEEP_BYTES)
    _refuse_oversized(doc, path)        # before the schema: the work of every later step is bounded
    files.validate(doc, SCHEMA, path, ResultError)
    bad = _non_finite(doc)
    if bad:
        raise ResultError(f"{path}: {bad}: expected a finite number, got a NaN or infinity")
    return doc


MAX_POINTS = 256                     # per list (points, probes, confirmations): a sweep runs each one
MAX_SWEEP_BYTES = 4 * 1024 * 1024    # a real sweep.json of 64 points is a few dozen KB


def _refuse_oversized(doc, path) -> None:
    """More points than a sweep could have run: one line naming the field, before any work on them."""
    if not isinstance(doc, dict):
        return
    for key in ("points", "probes", "confirmations"):
        items = doc.get(key)
        if isinstance(items, list) and len(items) > MAX_POINTS:
            raise ResultError(f"{path}: {key}: expected at most {MAX_POINTS} entries, got {len(items)}")


def _non_finite(doc, where="") -> str | None:
    """The first field holding NaN or +-Infinity (json.loads accepts them; a sweep never writes them)."""
    import math

    if isinstance(doc, float):
        return None if math.isfinite(doc) else (where or "(top level)")
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        bad = _non_finite(v, f"{where}.{k}" if where else str(k))
        if bad:
            return bad
    return None


def is_sweep(path: Path) -> bool:
    path = Path(path)
    return (path / SWEEP_FILE).is_file() if path.is_dir() else path.name == SWEEP_FILE


def write(sweep_dir: Path, doc: dict) -> Path:
    out = Path(sweep_dir) / SWEEP_FILE
    files.write_json(out, doc, schema=SCHEMA)
    return out
