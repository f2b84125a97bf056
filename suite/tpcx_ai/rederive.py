"""Every figure of a TPCx-AI run result re-derived from its lowest-level evidence, and every
cross-check that evidence allows: jobs -> phases -> use-case results -> generation and load
sizes -> scale factor, and the result's own verdict against its own records.

    r = rederive.rederive(doc)
    r.problems["jobs.overlaps"]   # [Item]: one per fault, each naming its field, both numbers
    r.statements                  # [{figure, from, status, claimed, derived}] (what was re-derived)

Pure: a document in, problem items and statements out. The rules (rules/tpcx-ai/result.yaml)
grade the problems; suite/tpcx_ai/check.py puts them in its scope.

- jobs.overlaps: the jobs of a lane run one after another (a lane: the load, each power phase,
  scoring, each throughput stream); two jobs of one lane overlapping is a finding.
- jobs.placement: each job inside its phase, its duration_s its end - start; phases one after
  another, their duration_s their end - start, and made of their jobs (a load, power or throughput
  phase mostly idle: its jobs shortened after the fact); a stream's record enclosing its jobs.
- figures.problems: each metric component, AIUCpm (rounded, unrounded, published) and each
  per-use-case time of use_case_results recomputed from the jobs.
- sizes.problems: generation rows = the loads' rows (in all and per split); each table's rows
  what the generator's sizing gives at the stated scale factor (suite.tpcx_ai.spec.TableGroup.rows).
- verdict.problems: `valid: false`, a recorded failed threshold or failed job, a `valid: true`
  its own records contradict.
"""

import math
import sys
from dataclasses import dataclass, field

from suite.errors import SuiteError
from suite.rules.ops import Item
from suite.tpcx_ai import figures as metric
from suite.tpcx_ai.leaf import KIT_MODE   # what suite run measures in

TOLERANCE_S = 0.0005          # times are rounded to milliseconds
DURATION_TOLERANCE_S = 0.0015  # a duration rounded from unrounded ends, beside its rounded ends
LANES = ("load", "training", "serving_1", "serving_2", "scoring")
COMPONENTS = ("tld_s", "tptt_s", "tpst1_s", "tpst2_s", "tpst_s", "ttt_s", "throughput_elapsed_s")
SUITE_GROUPS = ("suite.tpcx_ai.tables.retail", "suite.tpcx_ai.tables.text", "suite.tpcx_ai.tables.signals")
FACTS = ("jobs.overlaps", "jobs.placement", "figures.problems", "sizes.problems", "verdict.problems")


@dataclass
class Rederivation:
    problems: dict = field(default_factory=lambda: {name: [] for name in FACTS})
    statements: list = field(default_factory=list)

    def state(self, figure, source, status, claimed=None, derived=None) -> None:
        self.statements.append({"figure": figure, "from": source, "status": status,
                                "claimed": claimed, "derived": derived})


def problem(field_, expected, actual, note="") -> Item:
    """One fault: a problem item the rule (op empty) reports with both numbers."""
    return Item(actual, None, field_, expected, note=note, expected_given=True)


_p = problem


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _agree(claimed, derived, rel: float = 1e-9, tol: float = TOLERANCE_S) -> bool:
    return _num(claimed) and _num(derived) and abs(claimed - derived) <= max(tol, rel * abs(derived))


def _list(doc, key) -> list:
    value = doc.get(key)
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _dict(doc, key) -> dict:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def rederive(doc: dict) -> Rederivation:
    r = Rederivation()
    jobs = [(i, j) for i, j in enumerate(_list(doc, "jobs")) if _num(j.get("start_s")) and _num(j.get("end_s"))]
    overlaps(jobs, r)
    _placement(doc, jobs, r)
    _figures(doc, r)
    _use_case_results(doc, jobs, r)
    _sizes(doc, r)
    _verdict(doc, r)
    return r


# --------------------------------------------------------------------------- jobs and phases


def lane(job: dict):
    """The sequence a job runs in: its phase, or (throughput, its stream)."""
    return ("throughput", job.get("stream")) if job.get("phase") == "throughput" else job.get("phase")


def _lane_name(key) -> str:
    return f"throughput stream {key[1]}" if isinstance(key, tuple) else str(key)


def overlaps(jobs, r: Rederivation) -> None:
    """[(index, job dict)] -> r.problems["jobs.overlaps"]: two jobs of one lane at once."""
    lanes = {}
    for i, j in jobs:
        if not (_num(j.get("start_s")) and _num(j.get("end_s"))):
            continue
        lanes.setdefault(repr(lane(j)), []).append((i, j))
    for members in lanes.values():
        members.sort(key=lambda ij: (ij[1]["start_s"], ij[1]["end_s"]))
        prev_i, prev = members[0]
        for i, j in members[1:]:
            if j["start_s"] < prev["end_s"] - TOLERANCE_S:
                r.problems["jobs.overlaps"].append(_p(
                    f"jobs[{i}].start_s", f"at or after {prev['end_s']} (the end of jobs[{prev_i}])", j["start_s"],
                    f"{_lane_name(lane(j))} runs its jobs one after another"))
            if j["end_s"] > prev["end_s"]:
                prev_i, prev = i, j


def _placement(doc, jobs, r: Rederivation) -> None:
    phases = {p.get("name"): p for p in _list(doc, "phases")}
    out = r.problems["jobs.placement"]
    for i, j in jobs:
        d = j.get("duration_s")
        if d is not None and not _agree(d, metric.round_ms(j["end_s"] - j["start_s"]), 0, DURATION_TOLERANCE_S):
            out.append(_p(f"jobs[{i}].duration_s", metric.round_ms(j["end_s"] - j["start_s"]), d, "its end_s - start_s"))
        p = phases.get(j.get("phase"))
        if p and _num(p.get("start_s")) and _num(p.get("end_s")):
            if j["start_s"] < p["start_s"] - TOLERANCE_S or j["end_s"] > p["end_s"] + TOLERANCE_S:
                out.append(_p(f"jobs[{i}]", f"within phase {j['phase']} [{p['start_s']}, {p['end_s']}]",
                              f"[{j['start_s']}, {j['end_s']}]"))
    ordered = [p for p in _list(doc, "phases") if _num(p.get("start_s")) and _num(p.get("end_s"))]
    for k, p in enumerate(ordered):
        if _num(p.get("duration_s")) and not _agree(p["duration_s"], metric.round_ms(p["end_s"] - p["start_s"]), 0,
                                                    DURATION_TOLERANCE_S):
            out.append(_p(f"phases[{k}].duration_s", metric.round_ms(p["end_s"] - p["start_s"]), p["duration_s"],
                          "its end_s - start_s"))
        if k and p["start_s"] < ordered[k - 1]["end_s"] - TOLERANCE_S:
            out.append(_p(f"phases[{k}].start_s", f"at or after {ordered[k - 1]['end_s']} (the end of phase "
                          f"{ordered[k - 1].get('name')})", p["start_s"], "phases run one after another"))
    _filled(ordered, jobs, out)
    for k, s in enumerate(_list(doc, "stream_runs")):
        mine = [j for _, j in jobs if j.get("phase") == "throughput" and j.get("stream") == s.get("stream")]
        if mine and _num(s.get("start_s")) and _num(s.get("end_s")):
            first, last = min(j["start_s"] for j in mine), max(j["end_s"] for j in mine)
            if s["start_s"] > first + TOLERANCE_S or s["end_s"] < last - TOLERANCE_S:
                out.append(_p(f"stream_runs[{k}]", f"enclosing its jobs [{first}, {last}]",
                              f"[{s['start_s']}, {s['end_s']}]"))


FILLED = ("load", "training", "serving_1", "serving_2", "throughput")
IDLE_PER_JOB_S, IDLE_FRACTION = 0.02, 0.05  # what a phase may hold beyond its jobs (bookkeeping between them)


def _filled(phases, jobs, out) -> None:
    """A phase of jobs run back to back (throughput: its streams side by side) is made of its jobs:
    a phase mostly idle says its jobs were shortened (or the phase lengthened) after the fact."""
    for k, p in enumerate(phases):
        mine = [j for _, j in jobs if j.get("phase") == p.get("name")]
        if p.get("name") not in FILLED or not mine:
            continue
        if p["name"] == "throughput":
            busy = max(j["end_s"] for j in mine) - min(j["start_s"] for j in mine)
            what = "the span of its streams' jobs"
        else:
            busy = math.fsum(j["end_s"] - j["start_s"] for j in mine)
            what = f"the summed durations of its {len(mine)} jobs, run one after another"
        length = p["end_s"] - p["start_s"]
        if length - busy > IDLE_PER_JOB_S * len(mine) + IDLE_FRACTION * length:
            out.append(_p(f"phases[{k}].duration_s", f"about {metric.round_ms(busy)} ({what})",
                          metric.round_ms(length), f"{metric.round_ms(length - busy)} s of phase {p['name']} idle"))


# --------------------------------------------------------------------------- figures


def metric_jobs(doc) -> list:
    return [metric.Job(j["phase"], j["start_s"], j["end_s"], j.get("use_case"), j.get("stream"))
            for j in _list(doc, "jobs") if j.get("status") == "ok" and j.get("phase") in metric.PHASES]


def derived_metric(doc) -> dict:
    """The metric's figures recomputed from the jobs at the stated scale factor; raises when none."""
    jobs = metric_jobs(doc)
    kit = doc.get("kit_version", "1.0.3")
    inputs = metric.Inputs.from_jobs(jobs, kit, doc.get("scale_factor"), doc.get("streams"))
    res = metric.compute(inputs, where="jobs")
    out = {k: getattr(res, k) for k in (*COMPONENTS, "aiucpm", "aiucpm_unrounded", "aiucpm_published",
                                        "scale_factor", "streams")}
    out["load_time_v102_s"] = metric.load_time_s(jobs, "1.0.2")
    out["throughput_elapsed_v102_s"] = metric.throughput_time_s(jobs, "1.0.2")
    return out


def _figures(doc, r: Rederivation) -> None:
    if doc.get("kit_version") != KIT_MODE:   # kit 1.0.2's sums are shorter than 1.0.3's spans
        r.problems["figures.problems"].append(_p("kit_version", KIT_MODE, doc.get("kit_version"),
                                                 "the kit mode suite run measures in"))
    claimed = _dict(doc, "metric")
    if not claimed:
        r.state("metric", "jobs", "not-rederivable", None, None)
        return
    try:
        derived = derived_metric(doc)
    except (SuiteError, TypeError, KeyError, ValueError, OverflowError) as exc:
        r.state("metric", "jobs", "not-rederivable", claimed.get("aiucpm"), str(exc).split(": ")[-1][:120])
        return
    sources = {"tld_s": "load jobs", "throughput_elapsed_s": "throughput jobs", "ttt_s": "throughput jobs",
               "load_time_v102_s": "load jobs", "throughput_elapsed_v102_s": "throughput jobs",
               "scale_factor": "scale_factor", "streams": "streams"}
    for key, value in derived.items():
        if key not in claimed:
            continue
        ok = claimed[key] == value if key in ("scale_factor", "streams") else _agree(claimed[key], value)
        r.state(f"metric.{key}", sources.get(key, "jobs"), "rederived" if ok else "mismatch", claimed[key], value)
        if not ok:
            r.problems["figures.problems"].append(_p(f"metric.{key}", value, claimed[key],
                                                     f"re-derived from {sources.get(key, 'the jobs')}"))


def _use_case_results(doc, jobs, r: Rederivation) -> None:
    results = _dict(doc, "use_case_results")
    for key in sorted(results, key=natural):
        entry = results[key] if isinstance(results[key], dict) else {}
        n = int(str(key)[2:]) if str(key)[:2] == "uc" and str(key)[2:].isdigit() else None
        if n not in metric.USE_CASES:
            continue
        mine = [j for _, j in jobs if j.get("use_case") == n and j.get("status") == "ok"]
        for phase in ("training", "serving_1", "serving_2", "scoring"):
            times = [metric.round_ms(j["end_s"] - j["start_s"]) for j in mine if j.get("phase") == phase]
            _one_time(r, f"use_case_results.{key}.{phase}_s", entry.get(f"{phase}_s"), times[0] if len(times) == 1 else None,
                      f"the {phase} job of use case {n}")
        tput = [metric.round_ms(j["end_s"] - j["start_s"]) for j in mine if j.get("phase") == "throughput"]
        _one_time(r, f"use_case_results.{key}.throughput_mean_s", entry.get("throughput_mean_s"),
                  round(sum(tput) / len(tput), 3) if tput else None, f"the throughput jobs of use case {n}")


def natural(key) -> tuple:
    """A sort key reading the numbers in `key` as numbers: uc2 before uc10 (the page's order too)."""
    import re

    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", str(key)) if p)


def _one_time(r: Rederivation, figure, claimed, derived, source) -> None:
    if claimed is None:
        return
    if derived is None:
        r.state(figure, source, "not-rederivable", claimed, None)
        r.problems["figures.problems"].append(_p(figure, f"a time from {source}", claimed, "no such job"))
    elif _agree(claimed, derived, 0):
        r.state(figure, source, "rederived", claimed, derived)
    else:
        r.state(figure, source, "mismatch", claimed, derived)
        r.problems["figures.problems"].append(_p(figure, derived, claimed, f"re-derived from {source}"))


# --------------------------------------------------------------------------- sizes and scale factor


def sizing_groups() -> list:
    """The table groups whose sizing a checker may use: the suite's own, and any already loaded in
    this process (a test's). A checker never imports a module a result names."""
    import importlib

    groups = [importlib.import_module(m).GROUP for m in SUITE_GROUPS]
    for mod in list(sys.modules.values()):
        g = getattr(mod, "GROUP", None)
        if g is not None and getattr(g, "rows", None) is not None and g not in groups and hasattr(g, "schemas"):
            groups.append(g)
    return groups


def expected_rows(sf, split) -> dict:
    """{table: rows} the known groups' sizing gives at a scale factor, for one split."""
    out = {}
    for g in sizing_groups():
        if g.rows is not None:
            out.update(g.rows(sf, split))
    return out


def _sizes(doc, r: Rederivation) -> None:
    gen, loads, sf = _dict(doc, "generation"), _list(doc, "loads"), doc.get("scale_factor")
    out = r.problems["sizes.problems"]
    rows_loaded = sum(x.get("rows", 0) for x in loads if _num(x.get("rows")))
    if gen and loads:
        ok = gen.get("rows") == rows_loaded
        r.state("generation.rows", "loads[].rows", "rederived" if ok else "mismatch", gen.get("rows"), rows_loaded)
        if not ok:
            out.append(_p("generation.rows", rows_loaded, gen.get("rows"), "the rows the load phase read"))
    if "scale_factor" in gen and gen["scale_factor"] != sf:
        out.append(_p("scale_factor", gen["scale_factor"], sf, "the scale factor the generation record names"))
    if not (_num(sf) and 0 < sf <= metric.MAX_NUMBER):
        r.state("scale_factor", "generation sizes", "not-rederivable", sf, None)
        return
    tables = _dict(gen, "tables")
    if tables:
        _table_sizes(tables, loads, sf, r)
    else:
        _total_rows(gen, rows_loaded, sf, r)


def _table_sizes(tables, loads, sf, r: Rederivation) -> None:
    out = r.problems["sizes.problems"]
    per_load = {x.get("split"): x.get("rows") for x in loads}
    compared = mismatched = 0
    for split in sorted(tables, key=str):
        recorded = tables[split] if isinstance(tables[split], dict) else {}
        total = sum(t.get("rows", 0) for t in recorded.values() if isinstance(t, dict) and _num(t.get("rows")))
        if split in per_load and per_load[split] != total:
            out.append(_p(f"loads[{split}].rows", total, per_load[split], f"the generation record's {split} tables"))
        try:
            want = expected_rows(sf, split)
        except (ValueError, OverflowError, ArithmeticError):
            continue
        for name in sorted(set(recorded) & set(want)):
            got = recorded[name].get("rows") if isinstance(recorded[name], dict) else None
            compared += 1
            if got != want[name]:
                mismatched += 1
                out.append(_p(f"generation.tables.{split}.{name}.rows", want[name], got,
                              f"the generator's sizing at the stated scale factor {sf:g}"))
    status = "not-rederivable" if not compared else "mismatch" if mismatched else "rederived"
    r.state("scale_factor", "generation tables' rows (generator sizing)", status, sf,
            f"{compared - mismatched} of {compared} tables match")
    _bytes_per_row(tables, r)


def _bytes_per_row(tables, r: Rederivation) -> None:
    """Rows and bytes of one table recorded together: a CSV row of N columns is at least N bytes
    (N - 1 commas and a newline), so rows rewritten without their bytes show."""
    columns = {}
    for g in sizing_groups():
        for name, schema in g.schemas().items():
            columns[name] = (len(schema), sum(1 for f in schema if f.metadata and f.metadata.get(b"label") == b"1"))
    checked = short = 0
    for split in sorted(tables, key=str):
        for name, t in sorted(tables[split].items(), key=str) if isinstance(tables[split], dict) else ():
            if name not in columns or not isinstance(t, dict) or not (_num(t.get("rows")) and _num(t.get("bytes"))):
                continue
            n, labels = columns[name]
            floor = t["rows"] * (n - labels if split == "serving" else n)
            checked += 1
            if t["bytes"] < floor:
                short += 1
                r.problems["sizes.problems"].append(_p(
                    f"generation.tables.{split}.{name}.bytes", f"at least {floor} ({t['rows']} rows of "
                    f"{n - labels if split == 'serving' else n} columns)", t["bytes"], "the rows recorded beside them"))
    if checked:
        r.state("generation.tables[].rows", "the bytes recorded beside them", "mismatch" if short else "rederived",
                None, f"{checked - short} of {checked} tables hold their rows' bytes")


def _total_rows(gen, rows_loaded, sf, r: Rederivation) -> None:
    """No per-table record: the rows the sizing fixes at the stated SF are a lower bound of the total."""
    got = gen.get("rows") if _num(gen.get("rows")) else rows_loaded
    if not got:
        r.state("scale_factor", "generation sizes", "not-rederivable", sf, None)
        return
    try:
        floor = sum(sum(expected_rows(sf, s).values()) for s in ("training", "serving", "scoring"))
    except (ValueError, OverflowError, ArithmeticError):
        r.state("scale_factor", "generation sizes", "not-rederivable", sf, None)
        return
    ok = got >= floor
    r.state("scale_factor", "generation rows (generator sizing, lower bound)", "rederived" if ok else "mismatch",
            sf, f"at least {floor} rows, got {got}")
    if not ok:
        r.problems["sizes.problems"].append(_p("generation.rows", f"at least {floor}", got,
                                               f"the generator's sizing at the stated scale factor {sf:g}"))


# --------------------------------------------------------------------------- the result's own verdict


def _verdict(doc, r: Rederivation) -> None:
    out = r.problems["verdict.problems"]
    reasons = [str(x) for x in doc.get("reasons", [])] if isinstance(doc.get("reasons"), list) else []
    own = "; ".join(x for x in reasons if "invalid" in x or "missed" in x or "failed" in x)[:200]
    if doc.get("valid") is not True:
        out.append(_p("valid", True, doc.get("valid"), own or "the result's own verdict"))
    failed_q = sorted(k for k, q in _dict(doc, "quality").items() if isinstance(q, dict) and q.get("passed") is False)
    if failed_q:
        out.append(_p("quality.passed", "every threshold passed", f"failed: {', '.join(failed_q)}",
                      "the result's own scoring"))
    failed_j = sorted({j.get("use_case") for j in _list(doc, "jobs") if j.get("status") not in (None, "ok")}, key=str)
    if doc.get("valid") is True and (failed_j or doc.get("status") != "complete" or own):
        out.append(_p("valid", False, True, own or f"status {doc.get('status')}, failed use cases {failed_j}"))
