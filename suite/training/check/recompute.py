"""Integrity facts of a host: the numbers recomputed from the per-epoch lists, DLIO's
<rank>_output.json files and our steps/rank-<r>.json (suite.training.figures does the arithmetic).
"""

from __future__ import annotations

import math

from suite.layouts.benchdirs import tree as layout
from suite.numbers import as_int, finite_list
from suite.rules.engine import Item
from suite.training import workloads
from suite.training import figures as metrics


def record_length_of(b: layout.Benchmark, host: layout.Host) -> float | None:
    """A host's mean bytes per sample: its config.yaml, else the workload file (None: unknown)."""
    return workloads.record_length(host.config, b.workload, b.accelerator)[0]


def recomputed_facts(b: layout.Benchmark, host: layout.Host, metric, summary, facts: dict, sources: dict) -> None:
    """Integrity: the numbers recomputed from the per-epoch lists, DLIO's rank outputs and our steps."""
    if metric is not None:
        au = finite_list(metric.get(metrics.AU_PER_EPOCH))
        tp = finite_list(metric.get(metrics.SAMPLES))
        if au:
            facts["recomputed.au_mean"], facts["recomputed.au_stdev"] = metrics.mean_pstdev(au)
        if tp:
            m, s = metrics.mean_pstdev(tp)
            facts["recomputed.throughput_mean"], facts["recomputed.throughput_stdev"] = m, s
            rec = record_length_of(b, host)
            if rec:
                facts["recomputed.io_mean"] = metrics.mib_per_second(m, rec)
                facts["recomputed.io_stdev"] = metrics.mib_per_second(s, rec)
    if host.rank_outputs:
        facts["rank_outputs.ranks"] = sorted(host.rank_outputs)
        sources["rank_outputs.ranks"] = (host.path, "<rank>_output.json")
        au_e, tp_e = _rank_output_epochs(host.rank_outputs, summary)
        if au_e is not None:
            facts["recomputed.rank_outputs_au"] = au_e
            facts["recomputed.rank_outputs_throughput"] = tp_e
    if host.rank_steps is not None:
        facts["steps.ranks"] = sorted(host.rank_steps)
        sources["steps.ranks"] = (host.path / "steps", "rank-<r>.json")
        steps_au, steps_tp, problems = _steps_au(host)
        facts["steps.problems"] = problems
        facts["recomputed.steps_au"] = steps_au
        facts["recomputed.steps_throughput"] = steps_tp
    elif host.rank_outputs and isinstance(host.results, dict) and isinstance(host.results.get("engine"), dict):
        # `suite run --engine dlio`: DLIO's <rank>_output.json are the run's per-rank step timings
        facts["steps.ranks"] = sorted(host.rank_outputs)
        sources["steps.ranks"] = (host.path, "<rank>_output.json")


def _rank_output_epochs(ranks: dict[int, dict], summary):
    """Per epoch: mean of the ranks' AU and sum of their samples/s (DLIO <rank>_output.json)."""
    epochs = summary.get("epochs") if isinstance(summary, dict) else None
    if as_int(epochs) is None:
        epochs = min(sum(1 for k in d if str(k).isdigit()) for d in ranks.values())
    au, tp = [], []
    for e in range(1, epochs + 1):
        aus, tps = [], []
        for doc in ranks.values():
            ep = doc.get(str(e))
            a = ep.get("au") if isinstance(ep, dict) else None
            t = ep.get("throughput") if isinstance(ep, dict) else None
            if not (isinstance(a, dict) and isinstance(t, dict) and len(a) == 1 and len(t) == 1):
                return None, None
            av, tv = next(iter(a.values())), next(iter(t.values()))
            if finite_list([av, tv]) is None:
                return None, None
            aus.append(float(av))
            tps.append(float(tv))
        au.append(math.fsum(aus) / len(aus))
        tp.append(math.fsum(tps))
    return au, tp


def _steps_au(host: layout.Host):
    """Per epoch, the AU (mean over ranks) and samples/s (sum over ranks) recomputed from
    steps/rank-<r>.json with the runner's own reduction (metrics.epoch_from_ranks), plus
    well-formedness problems."""
    problems: list[Item] = []
    per_epoch: dict[int, list[dict]] = {}
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted(host.rank_steps.items()):
        path = base / f"rank-{rank}.json"
        if doc.get("rank") != rank:
            problems.append(Item(doc.get("rank"), path, "rank", rank))
        eps = doc.get("epochs")
        if not isinstance(eps, list):
            problems.append(Item(type(eps).__name__, path, "epochs", "a list"))
            continue
        for i, ep in enumerate(eps):
            where = f"epochs[{i}]"
            if not isinstance(ep, dict) or as_int(ep.get("epoch")) is None:
                problems.append(Item(repr(ep)[:60], path, where, "an object with an integer epoch"))
                continue
            lists = [ep.get(k) for k in ("step_start_s", "step_end_s", "step_compute_s")]
            if not all(isinstance(x, list) for x in lists) or any(finite_list(x) is None and x for x in lists) \
                    or len({len(x) for x in lists}) != 1 or as_int(ep.get("samples")) is None:
                problems.append(Item("ragged or non-numeric step lists", path, f"{where}.step_*_s",
                                     "three equal-length lists of numbers and integer samples"))
                continue
            per_epoch.setdefault(ep["epoch"], []).append(ep)
    if problems or not per_epoch:
        return None, None, problems
    n = len(host.rank_steps)
    if any(len(v) != n for v in per_epoch.values()):
        return None, None, problems + [Item("epochs missing for some ranks", base, "epochs",
                                            "every rank has every epoch")]
    pairs = [metrics.epoch_from_ranks(per_epoch[e]) for e in sorted(per_epoch)]
    return [a for a, _ in pairs], [t for _, t in pairs], problems


STEPS_EVIDENCE = "steps/rank-<r>.json"
RANK_OUTPUTS_EVIDENCE = "<rank>_output.json"


def evidence_epochs(host: layout.Host) -> tuple[list[float], list[float], str] | None:
    """A host's per-epoch AU (%) and samples/s re-derived from its per-rank records (our steps/, else
    DLIO's <rank>_output.json), and which records; None where it has none, or they are not well formed
    (the host's figures are then its summary's claims). The one re-derivation `suite check`,
    `metrics`, `report`, `compare` and `history` share (suite.training.aggregate)."""
    if host.rank_steps:
        au, tp, problems = _steps_au(host)
        return (au, tp, STEPS_EVIDENCE) if au and not problems else None
    if host.rank_outputs:
        au, tp = _rank_output_epochs(host.rank_outputs, host.summary)
        return (au, tp, RANK_OUTPUTS_EVIDENCE) if au else None
    return None
