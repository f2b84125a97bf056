"""Checking a TPCx-AI run result against rules/tpcx-ai/: a pure function, doc in, findings out.

    from suite.tpcx_ai import check

    from suite.tpcx_ai import leaf as result
    findings = check.check(result.read(run_dir), path="run_dir/tpcxai-result.json")

The checks are rules (rules/tpcx-ai/result.yaml) evaluated by the one rule engine
(suite.rules.evaluate) over the facts `scope` extracts here from the document (declared in
suite/tpcx_ai/facts.yaml). Every failure is a suite.rules.findings.Finding (effect invalid):
  tpcxai-run-complete        status complete
  tpcxai-all-use-cases       all ten use cases ran every stage without failing
  tpcxai-ucNN-quality        each quality value meets its threshold (rules/tpcx-ai/thresholds.yaml),
                             recomputed from the value, not taken from the stated pass/fail
  tpcxai-streams-min         at least 2 throughput streams
  tpcxai-stream-permutation  each stream ran each use case once (a permutation of 1..10) in the
                             order it states
  tpcxai-phases-order        the seven phases present, complete and in order
  tpcxai-times-positive      every phase and job time positive, end after start
  tpcxai-aiucpm-recomputed   AIUCpm@SF recomputed from the jobs equals the stated one
  tpcxai-jobs-sequential     no two jobs of one lane (load, a power phase, scoring, a stream) overlap
  tpcxai-jobs-in-phase       jobs inside their phases, durations end - start, phases in sequence
  tpcxai-figures-rederived   every metric component and use-case time re-derived from the jobs
  tpcxai-sizes-match-sf      generation and load rows agree, and match the generator's sizing at the SF
  tpcxai-beats-constant      each scored model beats the best constant predictor on the scoring split
  tpcxai-result-valid        the result's own verdict (valid, recorded failed thresholds) is kept
  tpcxai-code-that-ran       the record of the code that ran (provenance.json) is the code the run's
                             .mlps-code-image and its result's code_image name (a run from before runs
                             recorded their code, with none of the three, is not held to it)
  tpcxai-sf-publishable      SF >= 1 (effect open: an SF < 1 result is a test, not publishable)
The re-derivations are suite/tpcx_ai/rederive.py's; `assess` adds what was re-derived (statements).
"""

import math
from pathlib import Path

from suite.check import hostcpu, hostrun
from suite.errors import SuiteError
from suite.rules import engine as rules
from suite.rules.engine import Item, Scope
from suite.rules.evaluate import evaluate
from suite.rules.findings import Finding, make
from suite.tpcx_ai import evidence
from suite.tpcx_ai import figures as metric
from suite.tpcx_ai import rederive

PHASE_ORDER = ("generation", "load", "training", "serving_1", "serving_2", "scoring", "throughput")
STAGES = ("training", "serving_1", "serving_2", "scoring")
RULESET = "tpcx-ai"
RULE_FILES = ("result.yaml",)
THRESHOLDS = "rules/tpcx-ai/thresholds.yaml"


def _f(rule_id, path, field, expected, actual, note="") -> Finding:
    return make(rule_id, "error", "invalid", path, field, expected, actual, note)


def _p(field, expected, actual, note="") -> Item:
    """One fault a structural check found: a problem item the rule (op empty) reports as it is."""
    return Item(actual, None, field, expected, note=note, expected_given=True)


def check(doc: dict, path: str = "tpcxai-result.json", thresholds: dict | None = None,
          rederived=None) -> list[Finding]:
    if thresholds is None:
        from suite.tpcx_ai import usecase
        from suite.tpcx_ai.registry import Registry

        thresholds = usecase.thresholds(Registry())
    return evaluate(rules.load_layers(RULESET, RULE_FILES), "run", scope(doc, path, thresholds, rederived))


def grade(findings) -> str:
    """valid (no finding but notes), open (only open findings: valid, not publishable), or invalid."""
    if any(f.effect == "invalid" for f in findings):
        return "invalid"
    return "open" if any(f.effect == "open" for f in findings) else "valid"    # closed: a note (a warning)


def scope(doc: dict, path: str, thresholds: dict, rederived=None) -> Scope:
    """The facts rules/tpcx-ai/result.yaml names, from one result document."""
    rederived = rederived or rederive.rederive(doc)
    facts = {"status": doc.get("status"), "streams": doc.get("streams"), "scale_factor": doc.get("scale_factor"),
             "use_cases.problems": _use_cases(doc), "streams.problems": _streams(doc),
             "phases.problems": _phases(doc), "times.problems": _times(doc), "aiucpm.problems": _aiucpm(doc, path),
             "constant.problems": _constants(doc),
             **rederived.problems}
    quality = doc.get("quality") if isinstance(doc.get("quality"), dict) else {}
    limits = {f"uc{n}": {"metric": th.metric, "op": th.op, "value": th.value} for n, th in thresholds.items()}
    sources = {f"quality.uc{n}": (path, f"quality.uc{n}.value") for n in thresholds}
    return Scope("run", path, facts, sources, {"quality": (quality, path), "thresholds": (limits, THRESHOLDS)})


def _constants(doc) -> list[Item]:
    """Scored use cases whose value is not strictly better than the best constant's (both recorded)."""
    from suite.tpcx_ai.quality import beats

    out = []
    quality = doc.get("quality") if isinstance(doc.get("quality"), dict) else {}
    for key, q in sorted(quality.items()):
        if not isinstance(q, dict) or q.get("metric") in (None, "none") or q.get("value") is None:
            continue
        const = q.get("constant")
        field = f"quality.{key}.constant"
        if not isinstance(const, dict) or not isinstance(const.get("value"), (int, float)):
            out.append(_p(field, "the best constant predictor's value", "not recorded"))
        elif not isinstance(q["value"], (int, float)) or not beats(q["metric"], q["value"], const["value"]):
            out.append(_p(f"quality.{key}.value", f"better than the constant {const.get('prediction')!r}'s "
                          f"{q['metric']} {const['value']:.4g}", q["value"], "the model does not beat a constant"))
    return out


def _use_cases(doc) -> list[Item]:
    out = []
    if sorted(doc.get("use_cases", [])) != list(metric.USE_CASES):
        out.append(_p("use_cases", list(metric.USE_CASES), doc.get("use_cases")))
    jobs = doc.get("jobs", [])
    for stage in STAGES:
        ok = sorted({j.get("use_case") for j in jobs if j.get("phase") == stage and j.get("status") == "ok"})
        if ok != list(metric.USE_CASES):
            out.append(_p(f"jobs.{stage}", "use cases 1..10 ok", ok))
    failed = sorted({j.get("use_case") for j in jobs if j.get("status") != "ok"})
    if failed:
        out.append(_p("jobs.status", "no failed job", f"failed use cases {failed}"))
    return out


def _streams(doc) -> list[Item]:
    out = []
    streams = doc.get("streams")
    stated = {s.get("stream"): s.get("permutation") for s in doc.get("stream_runs", [])}
    ran = {}
    for j in sorted((j for j in doc.get("jobs", []) if j.get("phase") == "throughput"), key=lambda j: j.get("start_s", 0)):
        ran.setdefault(j.get("stream"), []).append(j.get("use_case"))
    for s in range(1, (streams if isinstance(streams, int) else 0) + 1):
        order = ran.get(s, [])
        if sorted(order) != list(metric.USE_CASES):
            out.append(_p(f"stream {s}", "a permutation of 1..10", order))
        elif stated.get(s) != order:
            out.append(_p(f"stream_runs[{s}].permutation", stated.get(s), order, "the order the jobs ran in"))
    extra = sorted(k for k in ran if not isinstance(streams, int) or not isinstance(k, int) or not 1 <= k <= streams)
    if extra:
        out.append(_p("jobs.stream", f"streams 1..{streams}", extra))
    return out


def _phases(doc) -> list[Item]:
    phases = doc.get("phases", [])
    names = [p.get("name") for p in phases]
    out = []
    if names != list(PHASE_ORDER):
        out.append(_p("phases", list(PHASE_ORDER), names))
    incomplete = [p.get("name") for p in phases if not p.get("complete")]
    if incomplete:
        out.append(_p("phases.complete", "every phase complete", incomplete))
    starts = [p.get("start_s") for p in phases]
    if all(isinstance(s, (int, float)) for s in starts) and starts != sorted(starts):
        out.append(_p("phases.start_s", "non-decreasing", starts))
    return out


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _times(doc) -> list[Item]:
    out = []
    for i, p in enumerate(doc.get("phases", [])):
        if p.get("complete") and not _positive(p.get("duration_s")):
            out.append(_p(f"phases[{i}].duration_s", "> 0", p.get("duration_s")))
    for i, j in enumerate(doc.get("jobs", [])):
        s, e = j.get("start_s"), j.get("end_s")
        if not (isinstance(s, (int, float)) and isinstance(e, (int, float)) and _positive(round(e - s, 3))):
            out.append(_p(f"jobs[{i}].end_s", f"after start_s {s}", e))
    return out


def _aiucpm(doc, path) -> list[Item]:
    stated = (doc.get("metric") or {}).get("aiucpm")
    jobs = [metric.Job(j["phase"], j["start_s"], j["end_s"], j.get("use_case"), j.get("stream"))
            for j in doc.get("jobs", []) if j.get("status") == "ok" and j.get("phase") in metric.PHASES]
    try:
        inputs = metric.Inputs.from_jobs(jobs, doc.get("kit_version", "1.0.3"), doc.get("scale_factor"), doc.get("streams"))
        recomputed = metric.compute(inputs, where=path).aiucpm
    except (SuiteError, TypeError, KeyError, ValueError) as exc:
        return [_p("metric.aiucpm", "an AIUCpm computable from the jobs", stated, str(exc).split(": ")[-1][:200])]
    if recomputed is None or stated is None or abs(recomputed - stated) > 0.0005:
        return [_p("metric.aiucpm", recomputed, stated)]
    return []


def verdict(path) -> tuple[str, list[Finding], dict]:
    """`suite check` on a TPCx-AI run directory (or its tpcxai-result.json): (verdict, findings, doc)."""
    v, findings, doc, _ = assess(path)
    return v, findings, doc


def assess(path) -> tuple[str, list[Finding], dict, list]:
    """(verdict, findings, doc, rederived statements) of a run directory or its tpcxai-result.json.

    The verdict is "valid" with no finding, "open" with only open findings (SF < 1: valid, not
    publishable), else "invalid" (every other TPCx-AI rule is a measurement rule).
    """
    from suite.tpcx_ai import leaf as result

    path = Path(path)
    where = path / result.RESULT_FILE if path.is_dir() else path
    doc = result.read(path)
    if doc.get("schema_version") != 2:
        return "invalid", [_f("tpcxai-run-complete", str(where), "schema_version",
                              "a run result of ours (schema_version 2)", doc.get("schema_version"),
                              "an FDR data file carries no per-job evidence to check")], doc, []
    r = rederive.rederive(doc)
    items, statements = evidence.data_problems(where.parent, doc)   # the data below the records, if there
    r.problems["sizes.problems"] += items
    r.statements += statements
    items, statements = evidence.quality_problems(where.parent, doc)  # quality re-scored from its output
    r.problems["figures.problems"] += items
    r.statements += statements
    r.problems["code_image.problems"] = code_problems(where.parent, doc)
    findings = check(doc, path=str(where), rederived=r)
    findings += hostcpu.findings([sampled(doc, where)], None)     # the run's host_metrics.json
    return grade(findings), findings, doc, r.statements


def code_problems(run_dir, doc: dict) -> list[Item]:
    """The code that ran (provenance.json, suite.harness.provenance) against the code the run's
    .mlps-code-image and its result's code_image name: each disagreement, or a record missing where the
    others name code. None of the three: a run from before TPCx-AI runs recorded their code."""
    from suite.harness import provenance

    try:
        line, rec = provenance.recorded(run_dir)
    except SuiteError as exc:
        return [_p(provenance.RECORD_FILE, "a readable record of the code that ran", str(exc)[:200])]
    stated = doc.get("code_image")
    ran = provenance.pointer(rec) if rec is not None else None
    pointer_path = Path(run_dir) / provenance.POINTER_FILE
    if ran is None:
        named = [n for n in (stated, line) if n]
        return [Item("none", Path(run_dir) / provenance.RECORD_FILE, "(file)", "the record of the code that ran "
                     f"({named[0]}, as the run names it)", expected_given=True)] if named else []
    out = []
    if line != ran:
        out.append(Item(line[:80] if line else "absent", pointer_path, "(line 1)", f"{ran} (provenance.json)",
                        expected_given=True))
    if stated != ran:
        out.append(_p("code_image", f"{ran} (provenance.json)", stated if stated else "absent"))
    return out


def sampled(doc: dict, where) -> hostrun.Run:
    """What the run's host_metrics.json is checked against: its timed window (started_at, whole seconds,
    plus its phases' first start_s and last end_s) and its hosts (host.hostname; on a dask cluster of
    other machines, at least that one: the file names the others)."""
    base = hostrun.unix_s(doc.get("started_at"))
    spans = [p for p in (doc.get("phases") or []) + (doc.get("stream_runs") or []) if isinstance(p, dict)]
    starts = [p["start_s"] for p in spans if _finite(p.get("start_s"))]
    ends = [p["end_s"] for p in spans if _finite(p.get("end_s"))]
    host = doc.get("host") if isinstance(doc.get("host"), dict) else {}
    engine = doc.get("engine") if isinstance(doc.get("engine"), dict) else {}
    alone = engine.get("name") == "local" or engine.get("local_cluster") is True
    window = (base + min(starts), base + max(ends)) if base is not None and starts and ends else (None, None)
    return hostrun.run(where.parent, *window, (host.get("hostname"),), f"{where.name}: started_at, phases[], "
                       "stream_runs[] start_s, end_s; host.hostname", all_hosts=alone, precision_s=1.0)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def is_result(path) -> bool:
    from suite.tpcx_ai import leaf as result

    path = Path(path)
    return (path.is_dir() and (path / result.RESULT_FILE).is_file()) or path.name == result.RESULT_FILE
