"""The facts of one v3.0 training result in the reference tool's leaves (rules/v3.0/training-leaves.yaml
names them; declared in suite/training/facts.yaml) and its row of published figures (Rules.md 3.3.8).
"""

from __future__ import annotations

from suite.harness import leafstamp
from suite.layouts import pooled as v3tree
from suite.layouts import pooled_facts
from suite.layouts import solution
from suite.rules.ops import Item
from suite.training.reference import derive as v3derive
from suite.training.reference import throughput as v3throughput
from statistics import fmean
from suite.numbers import CLAIMED, is_number

GIB_PER_MIB = 1 / 1024


def _order(runs: list) -> list:
    """Run directories that are no timestamp, or whose runs started out of their lexical order."""
    out = [Item(r.ts, r.path, "(directory name)", "YYYYMMDD_HHMMSS") for r in runs if not leafstamp.is_stamp(r.ts)]
    timed = [r for r in runs if r.summary is not None]
    for a, b in zip(timed, timed[1:]):
        if b.summary.start < a.summary.start:
            out.append(Item(b.summary.start.isoformat(), b.path / "summary.json", "start",
                            f"after {a.ts}'s start ({a.summary.start.isoformat()}): the lexically earlier run "
                            "ran first, the warm-up being the earliest"))
    return out


def training(t: v3tree.Training, org, system, params: dict, round_name: str = ""):
    """(benchmark facts, [(leaf, phase, measured, leaf facts)], row). Every figure a rule reads is
    re-derived from the evidence (suite.training.reference.derive); what cannot be is a fact of its own."""
    runs = t.runs
    meta = pooled_facts.meta_of(runs)
    model = (meta.model if meta and meta.model else t.model)
    datasize_meta = pooled_facts.meta_of(list(reversed(t.datasize)))
    ds_files = datasize_meta.num_files_train if datasize_meta else None
    au_min = (params.get("au_min_pct") or {}).get(model)
    leaf_facts = []
    for i, r in enumerate(runs):
        f = {}
        s = r.summary
        if s is not None:
            f["leaf.duration_s"] = s.duration_s
            floor = params.get("run_gap_floor_s")
            f["leaf.gap_allowed_s"] = max(s.duration_s, float(floor) if is_number(floor) else 0.0)
            nxt = runs[i + 1].summary if i + 1 < len(runs) else None
            if nxt is not None:
                f["leaf.gap_to_next_s"] = (nxt.start - s.end).total_seconds()
            f["leaf.num_files_train"] = s.num_files_train
            own = r.meta or meta
            f["leaf.dataset_short"] = v3derive.dataset_short(s, own.params if own else None, round_name)
            f.update(_throughput(s, own.params if own else None, params))
            if i > 0:
                derived, f["leaf.au_problems"] = v3derive.au(s)
                if derived is not None:
                    f["leaf.au_mean_pct"] = derived
        if ds_files is not None:
            f["leaf.datasize_files"] = ds_files
        if au_min is not None:
            f["leaf.au_min_pct"] = float(au_min)
        leaf_facts.append((r, "run", i > 0, f))
    leaf_facts += [(x, "datasize", False, {}) for x in t.datasize] + [(x, "datagen", False, {}) for x in t.datagen]
    facts = {"result.benchmark": "training", "result.division": org.division, "series.count": len(runs),
             "series.order": _order(runs), "series.datasize_present": bool(t.datasize),
             "series.num_files_train": [Item(r.summary.num_files_train, r.path / "summary.json", "num_files_train")
                                         for r in runs if r.summary is not None]}
    facts.update(_phases(t, ds_files))
    facts.update(v3derive.runs_problems(runs))
    with_meta = [r for r in runs if r.meta is not None]
    facts["series.closed_values"] = [i for r in with_meta for i in v3derive.closed_values(r.meta, r.meta.params)] \
        if with_meta else v3derive.closed_values(None, None)
    firsts = [r.summary for r in runs if r.summary is not None]
    if firsts and all(s.num_hosts == 1 for s in firsts) and firsts[0].num_accelerators is not None:
        facts["series.single_host_accelerators"] = firsts[0].num_accelerators
    measured = [r.summary.metric for r in runs[1:] if r.summary is not None]
    out = pooled_facts.row(system, org, "training", model, t.path)
    out.update(figures(measured))
    out["figures"] = CLAIMED              # the summaries' figures, as the round's tables publish them (its checks re-derive)
    out.update({"accelerator": meta.accelerator if meta else None,
                "accelerators": firsts[-1].num_accelerators if firsts else None,
                "client_hosts": firsts[-1].num_hosts if firsts else None, "runs_found": len(runs),
                "code_image": pooled_facts.code_image(runs + t.datasize + t.datagen)})
    return facts, leaf_facts, out


def _throughput(s, dlio: dict | None, params: dict) -> dict:
    """3.3.8: the run's samples/s, MiB/s and AU tied to each other and to its accelerators' 100 %-AU rate
    (suite.training.reference.throughput; the tolerances are the round's params)."""
    def tol(name):
        v = params.get(name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0
    return {"leaf.throughput_bound": v3throughput.bound(s, dlio, tol("throughput_bound_tolerance")),
            "leaf.throughput_bytes": v3throughput.bytes_agree(s, dlio, tol("throughput_io_rel_tolerance")),
            "leaf.throughput_au": v3throughput.au_agree(s, dlio, tol("throughput_au_tolerance_pct"))}


def _phases(t: v3tree.Training, ds_files) -> dict:
    """2.1.11 the workload folder, 2.1.13 the datagen leaves, 3.2.1 what datagen generated against what
    datasize sized, 3.3.6 runs whose accelerators do not divide evenly over their hosts."""
    out = {"series.workload": t.model, "series.datagen_count": len(t.datagen),
           "series.uneven_accelerators": [
               Item(f"{s.num_accelerators} accelerators on {s.num_hosts} hosts", r.path / "summary.json",
                    "num_accelerators", "a multiple of num_hosts (the same accelerators on every host)")
               for r in t.runs for s in [r.summary]
               if s is not None and s.num_hosts and s.num_accelerators is not None and s.num_accelerators % s.num_hosts]}
    gen = pooled_facts.meta_of(list(reversed(t.datagen)))
    if gen is not None and gen.num_files_train is not None:
        out["series.datagen_files"] = gen.num_files_train
    if ds_files is not None:
        out["series.datasize_files"] = ds_files
    return out


def figures(metrics: list[dict]) -> dict:
    """The published training figures from the measured runs' summary `metric` blocks."""
    io = [m.get("train_io_mean_MB_per_second") for m in metrics]
    mib = solution.mean(io)
    return {
        "runs": len(metrics),
        "read_gib_s": None if mib is None else mib * GIB_PER_MIB,
        "read_mib_s": mib,
        "samples_per_s": solution.mean([m.get("train_throughput_mean_samples_per_second") for m in metrics]),
        "au_pct": solution.mean([_au(m) for m in metrics]),
    }


def _au(metric: dict):
    """A run's AU mean re-derived from its per-epoch AU (DLIO's train_au_percentage); the recorded
    mean only where no per-epoch figures are (the checker's 3.3.2-trainingAuRederived says so)."""
    epochs = metric.get("train_au_percentage")
    if isinstance(epochs, list) and epochs and all(is_number(v) for v in epochs):
        return fmean(epochs)
    return metric.get("train_au_mean_percentage")
