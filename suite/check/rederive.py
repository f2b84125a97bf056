"""Every figure a storage training result claims, re-derived from the lowest-level evidence present.

The one mechanism `suite check` puts every claim through. Per host, the evidence levels, lowest first:
our per-rank step records (steps/rank-<r>.json), DLIO's <rank>_output.json, the per-epoch lists of
summary.json; per benchmark: the runs, for the run set (run_set.json) and the report. From the
lowest level present the figures are derived once (suite.storage.metrics does the arithmetic) and
every claim above it is compared with them: steps -> epochs -> run (summary.json, results.json) ->
run set / report; per rank -> overall.

A claim is a `Claim` (figure, where, claimed, derived, tolerance). Comparisons already graded by
a rule of their own (`judged_by`: the integrity-* rules on summary.json) are recorded, not graded
twice; every other disagreement is an item of the fact `rederived.mismatches` (rule
rederived-claims-match) with both numbers. What could not be re-derived is said, never skipped
silently. Each host and benchmark yields records in the shape of `suite check`'s `rederived` field:
{figure, from, status: rederived|not-rederivable|mismatch, claimed, derived, path, field}.

The step timeline itself is evidence that can lie: steps.timeline (a step ending before it starts,
steps out of order or overlapping, epochs overlapping, an epoch's times not holding its steps, a
step computing longer than it lasted) and steps.compute_time (the compute the steps record is not
the run's computation_time) are graded too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from suite.check import layout, recompute
from suite.numbers import finite_list, is_number
from suite.rules.engine import Item, Scope
from suite.storage import metrics, workloads

TIME_EPS_S = 1e-6        # timestamps are floats written as JSON: equal times may differ by rounding
MEASURED_OVER, MEASURED_OVER_S = 0.35, 0.001   # older records measured the sleep: a loaded host overshoots (27% seen)
REL = 1e-9               # the integrity rules' tolerance: the same float arithmetic gives the same figure
FIGURES = {metrics.AU_MEAN: "AU", metrics.SAMPLES_MEAN: "throughput", metrics.IO_MEAN: "MB/s",
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

    def agrees(self) -> bool:
        if isinstance(self.derived, list):
            return isinstance(self.claimed, list) and len(self.claimed) == len(self.derived) and all(
                _close(a, b, self.rel) for a, b in zip(self.claimed, self.derived))
        return _close(self.claimed, self.derived, self.rel)

    def record(self, root: Path | None = None) -> dict:
        status = "rederived" if self.agrees() else "mismatch"
        return {"figure": self.figure, "from": self.source, "status": status, "claimed": self.claimed,
                "derived": self.derived, "path": _rel(self.path, root), "field": self.field}


def _close(a, b, rel) -> bool:
    return is_number(a) and is_number(b) and abs(a - b) <= rel * max(abs(a), abs(b))


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
        for key, rule in ((metrics.AU_MEAN, "integrity-au-mean"), (metrics.SAMPLES_MEAN, "integrity-throughput-mean"),
                          (metrics.IO_MEAN, "integrity-io-mean")):
            if derived.get(key) is not None and key in m:
                # the summary's mean against its own list is its own rule; against the steps it is ours
                claims.append(Claim(FIGURES[key], spath, f"metric.{key}", m[key], derived[key], fig.source,
                                    rule if not below_summary else None))
    r = host.results if isinstance(host.results, dict) else None
    if r is not None and fig.level != "none":
        rm = r.get("metric") if isinstance(r.get("metric"), dict) else {}
        for key in (metrics.AU_MEAN, metrics.SAMPLES_MEAN, metrics.IO_MEAN):
            if derived.get(key) is not None and key in rm:
                claims.append(Claim(FIGURES[key], rpath, f"metric.{key}", rm[key], derived[key], fig.source))
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
        out[metrics.AU_MEAN] = metrics.mean_pstdev(fig.au)[0]
    if fig.tp:
        out[metrics.SAMPLES_MEAN] = metrics.mean_pstdev(fig.tp)[0]
        rec = recompute.record_length_of(b, host)
        if rec:
            out[metrics.IO_MEAN] = metrics.mib_per_second(out[metrics.SAMPLES_MEAN], rec)
    return out


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


# --------------------------------------------------------------------------- the step timeline


def timeline(host: layout.Host) -> list[Item]:
    """Steps/epochs that cannot have happened as recorded: one item per defect (per rank)."""
    out: list[Item] = []
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted((host.rank_steps or {}).items()):
        path = base / f"rank-{rank}.json"
        prev_end, prev_no = None, None
        for i, ep in enumerate(doc.get("epochs") if isinstance(doc.get("epochs"), list) else []):
            if not isinstance(ep, dict):
                continue
            st, en, co = (finite_list(ep.get(k)) for k in ("step_start_s", "step_end_s", "step_compute_s"))
            if not (st and en and co) or not (len(st) == len(en) == len(co)):
                continue
            where = f"epochs[{i}]"
            out += _steps_defects(st, en, co, path, where)
            no = ep.get("epoch")
            if prev_no is not None and is_number(no) and no <= prev_no:
                out.append(Item(no, path, f"{where}.epoch", f"an epoch number after {prev_no}", expected_given=True))
            if prev_end is not None and st[0] < prev_end - TIME_EPS_S:
                out.append(Item(st[0], path, f"{where}.step_start_s[0]",
                                f">= {prev_end!r} (the previous epoch's last step end: epochs do not overlap)",
                                expected_given=True))
            for key, ok, want in (("start_s", lambda v: v <= st[0] + TIME_EPS_S, f"<= {st[0]!r} (its first step start)"),
                                  ("end_s", lambda v: v >= en[-1] - TIME_EPS_S, f">= {en[-1]!r} (its last step end)")):
                v = ep.get(key)
                if is_number(v) and not ok(v):
                    out.append(Item(v, path, f"{where}.{key}", want, expected_given=True))
            prev_end, prev_no = en[-1], no if is_number(no) else prev_no
    return out


def _steps_defects(st, en, co, path, where) -> list[Item]:
    out = []
    del co      # compute overlaps the next step's read (prefetch): no bound from one step's bracket
    for j in range(len(st)):
        if en[j] < st[j]:
            out.append(Item(en[j], path, f"{where}.step_end_s[{j}]", f">= {st[j]!r} (the step's start)",
                            expected_given=True))
        if j and st[j] < en[j - 1] - TIME_EPS_S:
            out.append(Item(st[j], path, f"{where}.step_start_s[{j}]",
                            f">= {en[j - 1]!r} (step {j - 1}'s end: steps in order, not overlapping)",
                            expected_given=True))
        if len(out) >= 5:
            break
    return out


EPOCH_BOUND = 1.4     # samples/s x epoch duration / the epoch's samples: 0.999 .. 1.25 in 850 published epochs


def epoch_bound(host: layout.Host) -> list[Item]:
    """Per-epoch samples/s that per_epoch_stats.json's durations cannot hold: an epoch reads the
    dataset once (num_files_train x num_samples_per_file samples), so samples/s x its duration is
    about that many (DLIO's window is a little shorter than the epoch: up to 1.25x seen). The lowest
    level a published DLIO tree has below its per-epoch lists."""
    s = host.summary if isinstance(host.summary, dict) else None
    pe = host.per_epoch if isinstance(host.per_epoch, dict) else None
    m = s.get("metric") if s and isinstance(s.get("metric"), dict) else None
    if not (m and pe and is_number(s.get("num_files_train")) and is_number(s.get("num_samples_per_file", 1))):
        return []
    n = s["num_files_train"] * s.get("num_samples_per_file", 1)
    tps = m.get(metrics.SAMPLES)
    out = []
    for i, tp in enumerate(tps if isinstance(tps, list) else []):
        e = pe.get(str(i + 1))
        try:
            dur = float(str(e.get("duration"))) if isinstance(e, dict) else None
        except ValueError:
            dur = None
        if n > 0 and dur and dur > 0 and is_number(tp) and math.isfinite(dur) and tp * dur > EPOCH_BOUND * n:
            out.append(Item(tp, host.files.get("summary"), f"metric.{metrics.SAMPLES}[{i}]",
                            f"<= {EPOCH_BOUND * n / dur!r} ({n} samples in epoch {i + 1} of {dur} s "
                            f"(per_epoch_stats.json), x{EPOCH_BOUND} for DLIO's timing window)", expected_given=True))
    return out[:10]


def samples(host: layout.Host, batch: int | None) -> list[Item]:
    """Epochs whose claimed samples could not have been read in their steps (each step reads at most
    one batch, every step but the last a full one): samples/s is samples over wall time."""
    if not batch:
        return []
    out = []
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted((host.rank_steps or {}).items()):
        for i, ep in enumerate(doc.get("epochs") if isinstance(doc.get("epochs"), list) else []):
            if not isinstance(ep, dict) or not isinstance(ep.get("step_start_s"), list) or not is_number(ep.get("samples")):
                continue
            n = len(ep["step_start_s"])
            lo, hi = (n - 1) * batch + 1 if n else 0, n * batch
            if not lo <= ep["samples"] <= hi:
                out.append(Item(ep["samples"], base / f"rank-{rank}.json", f"epochs[{i}].samples",
                                f"{lo}..{hi} ({n} steps of batch {batch})", expected_given=True))
    return out[:10]


def batch_size(b: layout.Benchmark, host: layout.Host) -> int | None:
    """reader.batch_size: the run's override, else its config.yaml, else the workload's."""
    from suite.check import identify

    v = identify.overrides_dict(host.overrides).get("reader.batch_size")
    if v is None and isinstance(host.config, dict) and isinstance(host.config.get("reader"), dict):
        v = host.config["reader"].get("batch_size")
    try:
        v = int(str(v)) if v is not None else None
    except ValueError:
        v = None
    if v is None:
        w = workloads.find(b.workload, b.accelerator)
        v = w.batch_size if w else None
    return v if v and v > 0 else None


def computation_time_s(b: layout.Benchmark, host: layout.Host, facts: dict) -> float | None:
    """The run's computation_time per step: its override, else its config.yaml, else the workload's."""
    from suite.check import identify

    ov = identify.overrides_dict(host.overrides)
    v = ov.get("train.computation_time")
    if v is None and isinstance(host.config, dict) and isinstance(host.config.get("train"), dict):
        v = host.config["train"].get("computation_time")
    if v is None and isinstance(host.results, dict) and isinstance(host.results.get("params"), dict):
        v = host.results["params"].get("train.computation_time")
    try:
        v = float(v) if v is not None else None
    except (TypeError, ValueError):
        v = None
    if v is None:
        w = workloads.find(b.workload, b.accelerator)
        v = w.computation_time_s if w else None
    return v if v is not None and math.isfinite(v) else None


def compute_time(host: layout.Host, expected: float | None) -> list[Item]:
    """Steps whose recorded compute is not the run's computation_time (one item per rank and epoch)."""
    if expected is None:
        return []
    out = []
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted((host.rank_steps or {}).items()):
        for i, ep in enumerate(doc.get("epochs") if isinstance(doc.get("epochs"), list) else []):
            co = finite_list(ep.get("step_compute_s")) if isinstance(ep, dict) else None
            if not co:
                continue
            if "step_sleep_s" in ep:      # the configured compute, the measured sleep beside it: exact
                bad = [c for c in co if not _close(c, expected, 1e-6)]
                shown, want = (bad[0] if bad else None), f"{expected!r} s (the run's computation_time; " \
                                                         f"{len(bad)} of {len(co)} steps differ)"
            else:                         # older records: the measured sleep, a little over the configured
                mean = math.fsum(co) / len(co)
                low, high = expected * (1 - 1e-6), expected * (1 + MEASURED_OVER) + MEASURED_OVER_S
                bad = [] if low <= mean <= high and min(co) >= low else [mean]
                shown, want = mean, f"a mean in [{low!r}, {high!r}] s, each step >= {low!r} (the run's " \
                                    f"computation_time {expected!r} s, as measured)"
            if bad:
                out.append(Item(shown, base / f"rank-{rank}.json", f"epochs[{i}].step_compute_s", want,
                                expected_given=True))
    return out


# --------------------------------------------------------------------------- the entry points


def attach_host(b: layout.Benchmark, host: layout.Host, scope: Scope, root: Path | None) -> tuple[list[dict], dict]:
    """Re-derive a host's claims: add the rederived.mismatches, steps.timeline and steps.compute_time
    facts to its scope; returns its records and its derived per-run figures ({key: value})."""
    facts = scope.facts
    fig = host_figures(host, facts)
    claims = host_claims(b, host, fig)
    facts["rederived.mismatches"] = [_item(c) for c in claims if c.judged_by is None and not c.agrees()]
    facts["steps.timeline"] = timeline(host)
    facts["steps.compute_time"] = compute_time(host, computation_time_s(b, host, facts)) if host.rank_steps else []
    facts["steps.samples"] = samples(host, batch_size(b, host)) if host.rank_steps else []
    facts["per_epoch.throughput_bound"] = epoch_bound(host)
    return host_records(claims, fig, host, root), {**_means(b, host, fig), "source": fig.source, "level": fig.level}


def _item(c: Claim) -> Item:
    return Item(c.claimed, c.path, c.field, f"{c.derived!r} (re-derived from {c.source})", expected_given=True)


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
