"""Every figure a storage training result claims, re-derived from the lowest-level evidence present.

The one mechanism `suite check` puts every claim through. Per host, the evidence levels, lowest first:
our per-rank step records (steps/rank-<r>.json), DLIO's <rank>_output.json, the per-epoch lists of
summary.json; per benchmark: the runs, for the run set (run_set.json) and the report. From the
lowest level present the figures are derived once (suite.training.figures does the arithmetic) and
every claim above it is compared with them: steps -> epochs -> run (summary.json, results.json) ->
run set / report; per rank -> overall.

A claim is a `Claim` (figure, where, claimed, derived, tolerance). Comparisons already graded by
a rule of their own (`judged_by`: the integrity-* rules on summary.json) are recorded, not graded
twice; every other disagreement is an item of the fact `rederived.mismatches` (rule
rederived-claims-match) with both numbers. What could not be re-derived is said, never skipped
silently. Each host and benchmark yields records in the shape of `suite check`'s `rederived` field:
{figure, from, status: rederived|not-rederivable|mismatch, claimed, derived, path, field}.

The step records themselves are evidence that can lie: suite.training.check.timeline grades them
(steps.timeline, steps.compute_time, steps.samples; per_epoch.throughput_bound for published trees),
and attach_host adds those facts beside rederived.mismatches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from suite.layouts.benchdirs import tree as layout

from suite.training.check import recompute

from suite.training.check import timeline as steps_evidence
from suite.numbers import finite_list, is_number
from suite.rules.engine import Item, Scope
from suite.training import figures as metrics

REL = 1e-9               # the integrity rules' tolerance: the same float arithmetic gives the same figure
FIGURES = {metrics.AU_MEAN: "AU", metrics.SAMPLES_MEAN: "throughput", metrics.IO_MEAN: "MB/s",
           metrics.AU_STDEV: "AU stdev", metrics.SAMPLES_STDEV: "throughput stdev", metrics.IO_STDEV: "MB/s stdev",
           metrics.AU_PER_EPOCH: "AU per epoch", metrics.SAMPLES: "throughput per epoch"}


@dataclass
class Claim:
    figure: str
    path: object
    field: str
    claimed: object
    derived: object
    source: str
    judged_by: str | None = None     # a rule that grades this comparison itself
    rel: float = REL
    abs_: float = 0.0

    def agrees(self) -> bool:
        if isinstance(self.derived, list):
            return isinstance(self.claimed, list) and len(self.claimed) == len(self.derived) and all(
                _close(a, b, self.rel, self.abs_) for a, b in zip(self.claimed, self.derived))
        return _close(self.claimed, self.derived, self.rel, self.abs_)

    def record(self, root: Path | None = None) -> dict:
        status = "rederived" if self.agrees() else "mismatch"
        return {"figure": self.figure, "from": self.source, "status": status, "claimed": self.claimed,
                "derived": self.derived, "path": _rel(self.path, root), "field": self.field}


def _close(a, b, rel, abs_=0.0) -> bool:
    return is_number(a) and is_number(b) and abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def not_rederivable(figure: str, why: str, path=None, field: str = "", claimed=None) -> dict:
    return {"figure": figure, "from": why, "status": "not-rederivable", "claimed": claimed, "derived": None,
            "path": path, "field": field}


# --------------------------------------------------------------------------- per host


@dataclass
class HostFigures:
    """What a host's evidence gives: per-epoch AU and samples/s, and from what."""
    au: list[float] | None
    tp: list[float] | None
    source: str
    level: str                       # steps | rank_outputs | summary | none
    bytes_read: int | None = None


def host_figures(host: layout.Host, facts: dict) -> HostFigures:
    """The lowest level present that yields per-epoch figures (recompute.py made the numbers)."""
    if host.rank_steps:
        n = len(host.rank_steps)
        au, tp = facts.get("recomputed.steps_au"), facts.get("recomputed.steps_throughput")
        return HostFigures(au, tp, f"{n} rank(s)' steps (steps/rank-<r>.json)", "steps", _steps_bytes(host))
    if host.rank_outputs and facts.get("recomputed.rank_outputs_au") is not None:
        return HostFigures(facts["recomputed.rank_outputs_au"], facts["recomputed.rank_outputs_throughput"],
                           f"{len(host.rank_outputs)} rank(s)' DLIO <rank>_output.json", "rank_outputs")
    m = (host.summary or {}).get("metric") if isinstance(host.summary, dict) else None
    if isinstance(m, dict):
        au, tp = finite_list(m.get(metrics.AU_PER_EPOCH)), finite_list(m.get(metrics.SAMPLES))
        if au or tp:
            return HostFigures(au or None, tp or None, "summary.json's per-epoch lists", "summary")
    return HostFigures(None, None, "nothing below the claims", "none")


def _steps_bytes(host: layout.Host) -> int | None:
    total = 0
    for doc in host.rank_steps.values():
        for ep in doc.get("epochs") or []:
            if not (isinstance(ep, dict) and is_number(ep.get("bytes_read"))):
                return None
            total += ep["bytes_read"]
    return total


def host_claims(b: layout.Benchmark, host: layout.Host, fig: HostFigures) -> list[Claim]:
    """Every figure summary.json and results.json claim, against what `fig` derives."""
    claims: list[Claim] = []
    spath, rpath = host.files.get("summary"), host.files.get("results")
    derived = _means(b, host, fig)
    below_summary = fig.level in ("steps", "rank_outputs")
    judge = {"steps": "integrity-steps-", "rank_outputs": "integrity-rank-"}.get(fig.level, "")
    m = (host.summary or {}).get("metric") if isinstance(host.summary, dict) else None
    if isinstance(m, dict):
        if below_summary:
            for key, d, suffix in ((metrics.AU_PER_EPOCH, fig.au, "au"), (metrics.SAMPLES, fig.tp, "throughput")):
                if d is not None and key in m:
                    claims.append(Claim(FIGURES[key], spath, f"metric.{key}", m[key], d, fig.source,
                                        judge + suffix))
        for key, rule in STATS:
            if derived.get(key) is not None and key in m:
                # the summary's mean against its own list is its own rule; against the steps it is ours
                claims.append(Claim(FIGURES[key], spath, f"metric.{key}", m[key], derived[key], fig.source,
                                    rule if not below_summary else None, abs_=_abs(key)))
    r = host.results if isinstance(host.results, dict) else None
    if r is not None and fig.level != "none":
        rm = r.get("metric") if isinstance(r.get("metric"), dict) else {}
        for key, _ in STATS:
            if derived.get(key) is not None and key in rm:
                claims.append(Claim(FIGURES[key], rpath, f"metric.{key}", rm[key], derived[key], fig.source,
                                    abs_=_abs(key)))
        for key, d in ((metrics.AU_PER_EPOCH, fig.au), (metrics.SAMPLES, fig.tp)):
            if d is not None and key in rm:
                claims.append(Claim(FIGURES[key], rpath, f"metric.{key}", rm[key], d, fig.source))
        eps = r.get("epochs") if isinstance(r.get("epochs"), list) else []
        for name, d in (("au_percentage", fig.au), ("throughput_samples_per_second", fig.tp)):
            vals = [e.get(name) for e in eps if isinstance(e, dict)]
            if d is not None and vals:
                claims.append(Claim(FIGURES[metrics.AU_PER_EPOCH if name == "au_percentage" else metrics.SAMPLES],
                                    rpath, f"epochs[].{name}", vals, d, fig.source))
        for name, d in (("duration_s", _steps_epochs(host, "duration")), ("samples", _steps_epochs(host, "samples"))):
            vals = [e.get(name) for e in eps if isinstance(e, dict)]
            if d is not None and vals:
                claims.append(Claim(f"epoch {name}", rpath, f"epochs[].{name}", vals, d, fig.source,
                                    rel=1e-9 if name == "duration_s" else 0.0))
        if fig.bytes_read is not None and "bytes_read" in rm:
            claims.append(Claim("bytes read", rpath, "metric.bytes_read", rm["bytes_read"], fig.bytes_read,
                                fig.source, rel=0.0))
    return claims


def _steps_epochs(host: layout.Host, what: str) -> list | None:
    """Per epoch over the ranks' steps: its wall time (latest end - earliest start) or its samples."""
    if not host.rank_steps:
        return None
    per: dict[int, list] = {}
    for doc in host.rank_steps.values():
        for i, ep in enumerate(doc.get("epochs") if isinstance(doc.get("epochs"), list) else []):
            if not isinstance(ep, dict):
                return None
            per.setdefault(i, []).append(ep)
    out = []
    for i in sorted(per):
        eps = per[i]
        if what == "samples":
            if not all(is_number(e.get("samples")) for e in eps):
                return None
            out.append(sum(e["samples"] for e in eps))
        else:
            if not all(is_number(e.get("start_s")) and is_number(e.get("end_s")) for e in eps):
                return None
            out.append(max(e["end_s"] for e in eps) - min(e["start_s"] for e in eps))
    return out or None


def _means(b: layout.Benchmark, host: layout.Host, fig: HostFigures) -> dict:
    out: dict = {}
    if fig.au:
        out[metrics.AU_MEAN], out[metrics.AU_STDEV] = metrics.mean_pstdev(fig.au)
    if fig.tp:
        out[metrics.SAMPLES_MEAN], out[metrics.SAMPLES_STDEV] = metrics.mean_pstdev(fig.tp)
        rec = recompute.record_length_of(b, host)
        if rec:
            out[metrics.IO_MEAN] = metrics.mib_per_second(out[metrics.SAMPLES_MEAN], rec)
            out[metrics.IO_STDEV] = metrics.mib_per_second(out[metrics.SAMPLES_STDEV], rec)
    return out


STATS = ((metrics.AU_MEAN, "integrity-au-mean"), (metrics.AU_STDEV, "integrity-au-stdev"),
         (metrics.SAMPLES_MEAN, "integrity-throughput-mean"), (metrics.SAMPLES_STDEV, "integrity-throughput-stdev"),
         (metrics.IO_MEAN, "integrity-io-mean"), (metrics.IO_STDEV, "integrity-io-stdev"))


def _abs(key: str) -> float:
    return 1e-9 if "stdev" in key else 0.0      # a stdev of ~0 compares absolutely (as the integrity rules)


def host_records(claims: list[Claim], fig: HostFigures, host: layout.Host, root: Path | None) -> list[dict]:
    recs = [c.record(root) for c in claims]
    if fig.level == "none":
        recs.append(not_rederivable("AU, throughput", "no steps, rank outputs or per-epoch lists",
                                    _rel(host.files.get("summary") or host.path, root)))
    elif fig.level == "summary":
        recs.append(not_rederivable("AU, throughput per epoch", "no per-step or per-rank records (steps/rank-<r>.json, "
                                    "<rank>_output.json): the per-epoch lists are the lowest level",
                                    _rel(host.files.get("summary") or host.path, root)))
    elif fig.au is None:
        recs.append(not_rederivable("AU, throughput", f"{fig.source} unusable (see steps findings)",
                                    _rel(host.path, root)))
    return recs


# --------------------------------------------------------------------------- the entry points


def attach_host(b: layout.Benchmark, host: layout.Host, scope: Scope, root: Path | None) -> tuple[list[dict], dict]:
    """Re-derive a host's claims: add the rederived.mismatches, steps.timeline and steps.compute_time
    facts to its scope; returns its records and its derived per-run figures ({key: value})."""
    facts = scope.facts
    fig = host_figures(host, facts)
    claims = host_claims(b, host, fig)
    facts["rederived.mismatches"] = [_item(c) for c in claims if c.judged_by is None and not c.agrees()]
    ev = steps_evidence
    facts["steps.timeline"] = ev.timeline(host)
    facts["steps.compute_time"] = ev.compute_time(host, ev.computation_time_s(b, host)) if host.rank_steps else []
    facts["steps.samples"] = ev.samples(host, ev.batch_size(b, host)) if host.rank_steps else []
    split = ev.decode_share(host) if host.rank_steps else None      # Parquet: is the AU the storage's?
    facts["steps.decode_share_percent"] = None if split is None else round(split[0], 2)
    if split is not None:
        scope.sources["steps.decode_share_percent"] = split[1]
    # calibrated on published DLIO trees; ours have steps, the stronger evidence (a sum of the ranks'
    # rates over a short multi-host epoch is not bounded by the epoch's rounded duration)
    published = not host.rank_steps and host.results is None       # not ours (nor ours on the DLIO engine)
    facts["per_epoch.throughput_bound"] = ev.epoch_bound(host) if published else []
    return host_records(claims, fig, host, root), {**_means(b, host, fig), "source": fig.source, "level": fig.level}


def _item(c: Claim) -> Item:
    """A disagreement as a finding: expected the re-derived value, got the claimed one (both numbers;
    of a list, its first differing element, or its length)."""
    note = f"re-derived from {c.source}"
    if isinstance(c.derived, list):
        if not isinstance(c.claimed, list) or len(c.claimed) != len(c.derived):
            n = len(c.claimed) if isinstance(c.claimed, list) else type(c.claimed).__name__
            return Item(n, c.path, f"{c.field} (length)", len(c.derived), note=note, expected_given=True)
        i = next(i for i, (a, b) in enumerate(zip(c.claimed, c.derived)) if not _close(a, b, c.rel, c.abs_))
        field = c.field.replace("[]", f"[{i}]", 1) if "[]" in c.field else f"{c.field}[{i}]"
        return Item(c.claimed[i], c.path, field, c.derived[i], note=note, expected_given=True)
    return Item(c.claimed, c.path, c.field, c.derived, note=note, expected_given=True)


def _rel(path, root) -> str | None:
    if path is None:
        return None
    try:
        return str(Path(path).relative_to(root)) if root else str(path)
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- per benchmark (the run set)


RUN_SET = "run_set.json"


def run_figures(host_figs: list[dict]) -> dict:
    """A run's figures from its hosts' (as DLIO and the report tool reduce them: samples/s and MB/s
    summed over hosts, AU averaged); {} when a host's evidence gave none."""
    if not host_figs or any(metrics.SAMPLES_MEAN not in h for h in host_figs):
        return {}
    out = {metrics.SAMPLES_MEAN: math.fsum(h[metrics.SAMPLES_MEAN] for h in host_figs)}
    if all(metrics.IO_MEAN in h for h in host_figs):
        out[metrics.IO_MEAN] = math.fsum(h[metrics.IO_MEAN] for h in host_figs)
    if all(metrics.AU_MEAN in h for h in host_figs):
        out[metrics.AU_MEAN] = math.fsum(h[metrics.AU_MEAN] for h in host_figs) / len(host_figs)
    out["source"] = host_figs[0]["source"]
    return out


def attach_benchmark(b: layout.Benchmark, scope: Scope, runs: list[dict], root: Path | None) -> list[dict]:
    """The run set's overall numbers (run_set.json; mlperf_storage_report.json is graded by
    integrity-report-matches-runs, recorded here) against the runs' re-derived figures."""
    from suite import files
    from suite.errors import SuiteError

    claims: list[Claim] = []
    recs: list[dict] = []
    usable = [r for r in runs if r]
    n = len(runs)
    derived: dict = {}
    if usable and len(usable) == n:
        tp = [r[metrics.SAMPLES_MEAN] for r in usable]
        derived = {metrics.SAMPLES_MEAN: metrics.mean_pstdev(tp)[0]}
        if all(metrics.IO_MEAN in r for r in usable):
            derived[metrics.REPORT_MB_MEAN] = metrics.mean_pstdev([r[metrics.IO_MEAN] for r in usable])[0]
        if all(metrics.AU_MEAN in r for r in usable):
            derived[metrics.AU_MEAN] = metrics.mean_pstdev([r[metrics.AU_MEAN] for r in usable])[0]
    source = f"{n} run(s), each from {usable[0]['source']}" if usable else f"{n} run(s)"
    path = b.path / RUN_SET
    if path.is_file():
        try:
            doc = files.load_json(path, schema="run-set")
        except SuiteError as exc:
            doc = None
            recs.append(not_rederivable("run set", f"unreadable: {exc}", _rel(path, root)))
        overall = (doc or {}).get("overall") if isinstance((doc or {}).get("overall"), dict) else {}
        if doc is not None and metrics.NUM_RUNS in overall:
            claims.append(Claim("runs", path, f"overall.{metrics.NUM_RUNS}", overall[metrics.NUM_RUNS], n,
                                "the run directories", rel=0.0))
        for key, fig in ((metrics.SAMPLES_MEAN, "throughput"), (metrics.REPORT_MB_MEAN, "MB/s"), (metrics.AU_MEAN, "AU")):
            if key in overall and derived.get(key) is not None:
                claims.append(Claim(f"overall {fig}", path, f"overall.{key}", overall[key], derived[key], source))
    rep = b.report.get("overall") if isinstance(b.report, dict) and isinstance(b.report.get("overall"), dict) else {}
    for key, fig in ((metrics.SAMPLES_MEAN, "throughput"), (metrics.REPORT_MB_MEAN, "MB/s")):
        if key in rep and derived.get(key) is not None:
            claims.append(Claim(f"overall {fig}", b.report_path, f"overall.{key}", rep[key], derived[key], source,
                                "integrity-report-matches-runs"))
    if runs and not derived:
        recs.append(not_rederivable("overall throughput", "a run's figures could not be re-derived",
                                    _rel(b.path, root)))
    scope.facts["rederived.mismatches"] = [_item(c) for c in claims if c.judged_by is None and not c.agrees()]
    return [c.record(root) for c in claims] + recs
