"""The published v3.0 trees' figures for `suite compare` and `suite history` (suite.benchmark.Measured):
each training and checkpointing benchmark of the tree under PATH, as the kind it is ("training",
"checkpointing"), so a published result compares with ours of the same identity.

- training: one result per benchmark; per measured run leaf (the warm-up, the earliest, left out as
  Rules 3.3.8 and suite.training.reference.facts leave it out) its AU %, samples/s and MiB/s from its
  summary.json `metric` (the per-run figures the published row averages), per epoch its lists.
- checkpointing: one result per phase (write, read; a combined leaf counts for both); per leaf its
  GiB/s and seconds per checkpoint re-derived from its per-checkpoint records (`0_per_epoch_stats.json`:
  the mean of the checkpoints, as DLIO's summary states it), else its summary.json `metric`.
"""

from __future__ import annotations

from pathlib import Path

from suite import files
from suite.benchmark import Measured, Samples
from suite.errors import ResultError, SuiteError
from suite.numbers import is_number
from suite.layouts import pooled_facts
from suite.layouts import pooled as v3tree

TRAINING = (("au_percentage", "AU %", "train_au_mean_percentage", "train_au_percentage", 1.0),
            ("samples_per_second", "samples/s", "train_throughput_mean_samples_per_second",
             "train_throughput_samples_per_second", 1.0),
            ("mib_per_second", "MiB/s", "train_io_mean_MB_per_second", "train_io_MB_per_second", 1.0))
PHASES = {"write": ("save", "save_checkpoint"), "read": ("load", "load_checkpoint")}
EPOCH_FILES = ("0_per_epoch_stats.json", "per_epoch_stats.json")


def measured(path: Path) -> list[Measured]:
    from suite.published import check as v3check

    tree = v3tree.load(Path(path))
    try:
        ruleset = v3check.round_of()
    except SuiteError:
        ruleset = None
    out: list[Measured] = []
    for org in tree.orgs:
        for system in org.systems:
            for b in system.benchmarks:
                if _ours(b):
                    continue                # our own run's leaves: their kind's figures (suite.kinds.dispatch)
                if isinstance(b, v3tree.Training):
                    out.append(training(b, org, system, ruleset))
                elif isinstance(b, v3tree.Checkpointing):
                    out += checkpointing(b, org, system, ruleset, tree.root)
    return out


def _ours(b) -> bool:
    """Leaves written by our `suite run` (their run set and per-run results.json beside the published
    files): the training and checkpointing kinds read those, from their ranks' records."""
    leaves = b.runs if isinstance(b, v3tree.Training) else getattr(b, "leaves", [])
    return any(any(n.endswith("run_set.json") for n in x.names) or (x.path / "run-1" / "results.json").is_file()
               for x in leaves)


def _system(org, system, b, hosts, accelerators) -> dict:
    """The system as the published row names it (its description's columns), with the runs' hosts."""
    row = pooled_facts.row(system, org, "", "", b.path)
    keys = ("org", "system", "availability", "sut_type", "deployment", "storage_location", "access_protocol",
            "usable_capacity_tib", "provisioned_power_w", "rack_units")
    out = {k: None if row[k] is None else str(row[k]) for k in keys}
    out.update(hosts=_one(hosts), accelerators=_one(accelerators))
    return out


def _one(values) -> str | None:
    vals = sorted({str(v) for v in values if v is not None})
    return ", ".join(vals) or None


def training(t: v3tree.Training, org, system, ruleset) -> Measured:
    runs = [r for r in t.runs if r.summary is not None]
    counted = runs[1:]                              # the warm-up (the earliest run) left out
    meta = next((x.meta for x in t.runs if x.meta is not None), None)
    figs = []
    for name, label, key, epochs, _ in TRAINING:
        per_run = [r.summary.metric.get(key) for r in counted]
        if not counted or not all(is_number(v) and v > 0 for v in per_run):
            continue
        per_epoch = tuple(tuple(x for x in (r.summary.metric.get(epochs) or []) if is_number(x) and x > 0)
                          for r in counted)
        figs.append(Samples(name=name, label=label, higher_is_better=True, per_run=tuple(per_run),
                            per_epoch=per_epoch, first_to_later=_first(per_epoch)))
    notes = [f"{runs[0].ts}: the warm-up run, left out as the rules leave it out"] if runs else []
    files_n = {r.summary.num_files_train for r in counted if r.summary.num_files_train is not None}
    identity = {"workload": meta.model if meta and meta.model else t.model,
                "accelerator": meta.accelerator if meta else None,
                "dataset_size": _dataset(files_n, counted, t), "record_size": _record(meta, t),
                "ruleset": ruleset, "division": org.division, "scale_factor": None}
    return Measured(path=t.path, kind="training", label=f"{org.name} / {system.name}", identity=identity,
                    system=_system(org, system, t, [r.summary.num_hosts for r in counted],
                                   [r.summary.num_accelerators for r in counted]),
                    figures=tuple(figs), notes=tuple(notes),
                    when=counted[0].summary.start.isoformat() if counted else None)


def _record(meta, t) -> str | None:
    """Its record size as suite.training.compared names ours: the workload's (a published leaf holds no
    config of its dataset's records), so a published result and ours of one workload agree."""
    from suite.storage import workloads

    name = meta.model if meta and meta.model else t.model
    length = workloads.setting(name, meta.accelerator if meta else None, "dataset", "record_length")
    return workloads.record_size([length])


def _dataset(files_n: set, runs, t) -> str | None:
    """As suite.training.compared names it: "<files> files x <samples> samples" (summary.json's)."""
    if len(files_n) != 1:
        return None if not files_n else "mixed: " + ", ".join(sorted(map(str, files_n))) + " files"
    per = None
    try:
        doc = files.load_json(runs[0].path / "summary.json", error=ResultError, root=t.path)
        per = doc.get("num_samples_per_file") if isinstance(doc, dict) else None
    except (ResultError, RecursionError):
        pass
    n = next(iter(files_n))
    return f"{n} files x {per} samples" if isinstance(per, int) and not isinstance(per, bool) else f"{n} files"


def _first(per_epoch) -> tuple:
    out = []
    for e in per_epoch:
        if len(e) >= 2 and sum(e[1:]) > 0:
            out.append(e[0] / (sum(e[1:]) / len(e[1:])))
    return tuple(out)


def checkpointing(c: v3tree.Checkpointing, org, system, ruleset, root: Path) -> list[Measured]:
    """One result per phase the benchmark's leaves hold."""
    phases = {x.ts: pooled_facts.checkpoint_phase(x) for x in c.leaves}      # write | read | combined | none
    meta = next((x.meta for x in c.leaves if x.meta is not None), None)
    procs = max((x.meta.num_processes for x in c.leaves if x.meta and x.meta.num_processes is not None),
                default=max((x.summary.num_accelerators for x in c.leaves if x.summary is not None
                             and x.summary.num_accelerators is not None), default=None))   # DLIO: its processes
    subset = any(x.meta.subset for x in c.leaves if x.meta is not None)
    out = []
    for which, (prefix, key) in PHASES.items():
        leaves = [x for x in c.leaves if phases[x.ts] in (which, "combined") and x.summary is not None]
        if not leaves:
            continue
        rows = [_leaf_phase(x, prefix, key, root) for x in leaves]
        notes = [f"{x.ts}: {n}" for x, (_, _, n) in zip(leaves, rows) if n]
        figs = tuple(Samples(name=f"{which}_{name}", label=f"{which} {label}", higher_is_better=hib,
                             per_run=tuple(sum(e) / len(e) for e in per_epoch), per_epoch=tuple(per_epoch),
                             first_to_later=_first(per_epoch))
                     for name, label, hib, per_epoch in (
                         ("gib_s", "GiB/s", True, [r[0] for r in rows if r[0]]),
                         ("duration_s", "s per checkpoint", False, [r[1] for r in rows if r[1]])) if per_epoch)
        one = leaves[0].path if len(leaves) == 1 and phases[leaves[0].ts] == which else c.path
        out.append(Measured(                   # a phase's own leaf: the history hashes each phase apart
            path=one, kind="checkpointing", label=f"{org.name} / {system.name} {which}",
            identity={"workload": meta.model if meta and meta.model else c.model, "phase": which,
                      "mode": "subset" if subset else "default", "miniature": False, "processes": procs,
                      "ruleset": ruleset, "division": org.division},
            system=_system(org, system, c, [x.summary.num_hosts for x in leaves], [procs]),
            figures=figs, notes=tuple(notes), when=leaves[0].summary.start.isoformat()))
    return out


def _leaf_phase(leaf, prefix: str, key: str, root: Path) -> tuple[tuple, tuple, str | None]:
    """(GiB/s per checkpoint, seconds per checkpoint, a note where the summary's figures stand in)."""
    for name in EPOCH_FILES:
        p = leaf.path / name
        if name not in leaf.names or name in leaf.pruned:
            continue
        try:
            doc = files.load_json(p, error=ResultError, root=root)
        except (ResultError, RecursionError) as exc:
            return _summary(leaf, key) + (f"its summary's figures ({str(exc)[:120]})",)
        epoch = doc.get("1") if isinstance(doc, dict) and isinstance(doc.get("1"), dict) else {}
        cks = [v for k, v in sorted(epoch.items(), key=lambda kv: _index(kv[0]))
               if k.startswith(f"{prefix}_ckpt") and isinstance(v, dict)]
        gib = tuple(v["throughput"] for v in cks if is_number(v.get("throughput")) and v["throughput"] > 0)
        secs = tuple(v["duration"] for v in cks if is_number(v.get("duration")) and v["duration"] > 0)
        if gib and len(gib) == len(cks):
            return gib, secs, None
    return _summary(leaf, key) + (None,)


def _index(name: str) -> int:
    digits = "".join(ch for ch in name if ch.isdigit())
    return int(digits) if digits else 0


def _summary(leaf, key: str) -> tuple[tuple, tuple]:
    m = leaf.summary.metric
    gib, secs = m.get(f"{key}_io_mean_GB_per_second"), m.get(f"{key}_duration_mean_seconds")
    return ((gib,) if is_number(gib) and gib > 0 else (), (secs,) if is_number(secs) and secs > 0 else ())
