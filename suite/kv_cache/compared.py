"""The kv_cache kind's figures for `suite compare` and `suite history` (suite.benchmark.Measured): one
result per option of a leaf (ours or published), per trial its tokens/s, storage tokens/s, storage
read and write GiB/s (sums over the ranks, as the reference aggregates) and P95 storage latency (the
largest over the ranks; lower is better). From the rank files, never summary.json: a rank's tokens/s
and P95 re-derived from its own totals and latency array where it has them
(suite.kv_cache.figures.rederive_rank), else its own summary's."""

from __future__ import annotations

from pathlib import Path

from suite.benchmark import Measured, Samples
from suite.numbers import CLAIMED, RECOMPUTED, source_label
from suite.harness import hostfacts
from suite.kv_cache import check as kvcheck
from suite.kv_cache import evidence, figures
from suite.kv_cache import leaf as kvleaf

REDERIVED = {"avg_throughput_tokens_per_sec": "avg_tps", "storage_throughput_tokens_per_sec": "storage_tps",
             "storage_io_latency_ms.p95": "p95_ms"}
FIGURES = (("tokens_per_second", "tokens/s", "avg_tps", True),
           ("storage_tokens_per_second", "storage tokens/s", "storage_tps", True),
           ("read_gib_s", "storage read GiB/s", "read_gibps", True),
           ("write_gib_s", "storage write GiB/s", "write_gibps", True),
           ("p95_latency_ms", "P95 latency ms", "p95_ms", False))


def rank(doc: dict, where) -> dict:
    """One rank's figures: its own summary's, with what its totals and arrays re-derive put in."""
    out = figures.rank_figures(doc, where)
    lat = doc.get("storage_latencies")
    if isinstance(lat, list) and not lat:
        out["p95_ms"] = None                  # no request timed: no P95, whatever the summary says
    again = set()
    for s in figures.rederive_rank(doc, where):
        if s["figure"] in REDERIVED and s["derived"] is not None:
            out[REDERIVED[s["figure"]]] = s["derived"]
            again.add(REDERIVED[s["figure"]])
    out["claimed"] = {k for k in REDERIVED.values() if k not in again}    # the rank summary's own figure (a trimmed rank file)
    return out


def trials(lf: kvleaf.Leaf, o: int) -> tuple[dict[str, list[float]], list[str]]:
    """Per figure one value per trial with every rank file present; the trials left out, and why."""
    per: dict[str, list[float]] = {key: [] for _, _, key, _ in FIGURES}
    per["claimed"] = []                       # the figures some rank could not re-derive (suite.numbers: claimed)
    notes = []
    failed = {tt: i for oo, tt, i in evidence.trial_failures(lf) if oo in (None, o)}
    for t in sorted(t for (oo, t) in lf.rank_dirs if oo == o):
        ranks = lf.rank_dirs[(o, t)]
        why = failed.get(t, failed.get(None))
        if why is not None:                   # a failed trial is no sample (issue 36, class 11)
            notes.append(f"option_{o}/trial_{t}: left out (failed: {why.field}: {str(why.value)[:80]})")
            continue
        found = [rank(lf.ranks[(o, t, r)][1], lf.ranks[(o, t, r)][0]) for r in ranks if (o, t, r) in lf.ranks]
        if not found or len(found) < len(ranks):
            notes.append(f"option_{o}/trial_{t}: left out ({len(found)} of {len(ranks)} rank files)")
            continue
        for _, _, key, higher in FIGURES:
            vals = [f[key] for f in found if f[key] is not None]
            if vals:
                per[key].append(sum(vals) if higher else max(vals))
        per["claimed"] += sorted({k for f in found for k in f["claimed"]} - set(per["claimed"]))
    return per, notes


def measured(path: Path) -> list[Measured]:
    """One result per option_<O>/ of the leaf (its path: the history hashes each option's own files)."""
    lf = kvleaf.load(path)
    meta = lf.metadata or {}
    model = meta.get("model") if isinstance(meta.get("model"), str) else None
    division, ruleset = kvcheck.division(lf), kvcheck.round_of(lf)
    summary = lf.summary or {}
    system = {"ranks": _text(kvcheck.expected_ranks(lf)), "hosts": _text(summary.get("host_count")),
              "npernode": _text(summary.get("npernode")), **hostfacts.system(meta.get("suite"))}
    when = meta.get("invocation_start_time")
    out = []
    for o in sorted({o for (o, _t) in lf.rank_dirs}):
        per, notes = trials(lf, o)
        figs = tuple(Samples(name=n, label=source_label(label, src), higher_is_better=higher, per_run=tuple(per[key]),
                             source=src)
                     for n, label, key, higher in FIGURES if per[key]
                     for src in [CLAIMED if key in per["claimed"] else RECOMPUTED])
        out.append(Measured(path=lf.path / f"option_{o}", kind="kv_cache", label=f"{model or lf.path.name} option {o}",
                            identity={"workload": model, "option": o, "ruleset": ruleset, "division": division},
                            system=system, figures=figs, notes=tuple(notes),
                            when=when if isinstance(when, str) else None))
    return out


def _text(v) -> str | None:
    return None if v is None or isinstance(v, (dict, list)) else str(v)[:80]
