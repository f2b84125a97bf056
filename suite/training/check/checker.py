"""`suite check` of training's benchmark nodes: each node's facts (facts), rules (suite.rules) ->
findings, verdicts and recomputed aggregates.

`check(path, ruleset="auto") -> CheckResult`: the benchmark nodes under PATH (the node model of
suite.layouts.benchdirs.tree), or those a layout found and hands over (`nodes`), each judged where it sits.
Every rule runs on every scope it applies to and every finding is kept (no stop at the first error). What
is the tree's own (unusable entries outside any node, aborted benchmark dirs, the code dirs, SHA256SUMS,
TODOs) is the layout's check, not this one (suite.layouts.benchdirs.check).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from suite.check import hostcpu, hostrun
from suite.layouts.benchdirs import tree as layout

from suite.training.check import evidence

from suite.training.check import facts

from suite.training.check import leaves as v3leaves
from suite.training import leaf as training_leaf
from suite.training.reference import ours as reference

from suite.training.check import rederive
from suite.check.result import BenchmarkResult, CheckResult, described, evaluate, rel
from suite.errors import ResultError
from suite.rules import findings, rulesets
from suite.rules import engine as rules
from suite.rules.findings import Finding
from suite.rules.verdict import Voice
from suite.training import workloads
from suite.training.figures import check_headline

__all__ = ["BenchmarkResult", "CheckResult", "check", "rule_set"]


# --------------------------------------------------------------------------- entry point


def check(path, ruleset: str = "auto", exclude=(), nodes: layout.Tree | None = None) -> CheckResult:
    """The benchmark nodes under `path` judged (`exclude`: directories holding other kinds' results,
    not walked), or `nodes`: the tree a layout discovered, its benchmark nodes the ones to judge (no walk
    again). The result holds the nodes' results only: no finding of the tree's own."""
    rulesets.refuse_unknown(ruleset)
    tree = nodes if nodes is not None else layout.discover_tree(path, ruleset, exclude)
    if not tree.benchmarks and not tree.incomplete and nodes is None:   # an aborted dir: the layout says so
        extra = f" ({len(tree.problems)} unusable entries, e.g. {tree.problems[0].path}: " \
                f"{tree.problems[0].actual})" if tree.problems else ""
        raise ResultError(f"{path}: expected run output (summary.json, configs/overrides.yaml, results.json, "
                          f"...) somewhere below, got none{extra}")
    results = [_check_benchmark(b, tree) for b in tree.benchmarks]
    verdict = findings.worst([r.verdict for r in results])
    fix = any(r.fix_required for r in results)
    compliant = all(r.compliant for r in results) and not fix and not any(r.miniature for r in results)
    return CheckResult(tree.root, results, [], verdict, compliant, {}, fix, [])


def _check_benchmark(b: layout.Benchmark, tree: layout.Tree) -> BenchmarkResult:
    rs = rule_set(b.ruleset, b.division, b.workload, b.accelerator)
    root = tree.root
    found: list[Finding] = []
    agg, bscope = facts.benchmark_scope(b, tree, rs.params)
    series = bool(b.ruleset and training_leaf.timestamped(b.ruleset))
    if series and any(isinstance(r.results, dict) for r in b.runs):     # our own v3.0 leaves: their evidence re-read
        bscope.facts.update(v3leaves.facts(b))
    system_path = bscope.facts.get("system.file")
    system_doc = (bscope.docs.get("system") or ({},))[0].get("doc")
    limit = evidence.documented_memory_limit(system_doc) if system_doc is not None else None
    records, host_scopes = _rederive(b, rs.params, bscope, root)   # every claim re-derived (one mechanism)
    found += evaluate(rs, "benchmark", bscope, root)
    if series:           # timestamped leaves: judged as the reference tool's are (one rule per clause)
        found += reference.judged(b.path, b.ruleset, b.division, root, v3leaves.more(b))
    for run in b.runs + ([b.warmup] if b.warmup else []):
        found += evaluate(rs, "run", facts.run_scope(b, run, rs.params, limit,
                                                      Path(system_path) if system_path else None), root)
        for host in run.hosts:
            found += evaluate(rs, "host", host_scopes[id(host)], root)
    found += hostcpu.findings([_sampled(run, root) for run in b.runs + ([b.warmup] if b.warmup else [])], root)
    verdict = findings.verdict(found, b.division)
    fix = findings.fix_required(found)
    # a result claims the closed division unless the tree (or results.json) says open; a document
    # to fix keeps it from compliance until fixed
    miniature = any(isinstance(h.results, dict) and h.results.get("miniature") is True
                    for run in b.runs for h in run.hosts)
    voice = Voice(verdict, miniature, b.division or "closed", fix)   # compliant as asked (suite.rules.verdict)
    judged_by = reference.rules(b.ruleset).rules if series else []
    files = rs.files + (reference.rules(b.ruleset).files if series else [])
    return BenchmarkResult(b, verdict, found, agg, voice.compliant, files, len(rs.rules) + len(judged_by),
                           {**{r.id: described(r) for r in rs.rules + judged_by}, **hostcpu.RULES}, fix, records,
                           miniature, check_headline(agg) if agg else None)


def _sampled(run: layout.Run, root: Path) -> hostrun.Run:
    """What the run's host metrics are checked against (host-cpu-saturated and hostrun's rules): its
    results.json's start, end (UTC) and hosts; where it has none (DLIO's output alone), nothing."""
    dirs = [run.path, *(h.path for h in run.hosts)]
    res = next((h for h in run.hosts if isinstance(h.results, dict)), None)
    if res is None:
        return hostrun.run(dirs)
    doc = res.results
    return hostrun.run(dirs, doc.get("start"), doc.get("end"), doc.get("hosts", ()),
                       f"{rel(res.path / 'results.json', root)}: start, end, hosts")


def _rederive(b: layout.Benchmark, params: dict, bscope, root: Path):
    """The host scopes (by host id), each with its re-derived claims attached (suite.training.check.rederive),
    the run set's claims attached to the benchmark scope, and the records of what was re-derived."""
    records: list[dict] = []
    scopes: dict = {}
    run_figs: list[dict] = []
    for run in b.runs + ([b.warmup] if b.warmup else []):
        host_figs = []
        for host in run.hosts:
            scopes[id(host)] = hscope = facts.host_scope(b, run, host, params)
            recs, figs = rederive.attach_host(b, host, hscope, root)
            records += recs
            if isinstance(host.summary, dict) or host.rank_steps:     # rank 0 alone on multi-host v1.0
                host_figs.append(figs)
        if not run.warmup:
            run_figs.append(rederive.run_figures(host_figs))
    records += rederive.attach_benchmark(b, bscope, run_figs, root)
    return records, scopes


def rule_set(ruleset: str, division: str | None, workload: str | None, accelerator: str | None) -> rules.RuleSet:
    """The rules a benchmark is held to: its ruleset's layers for its division and workload, with
    au_threshold_percentage derived from the workload file (workloads/ is the one source of it)."""
    rs = rules.load(ruleset, division, workload if workload in _workload_files(ruleset) else None)
    threshold = workloads.au_threshold_percentage(workload, accelerator)
    if threshold is None:
        return rs
    return dataclasses.replace(rs, params={**rs.params, "au_threshold_percentage": threshold})


def _workload_files(ruleset: str) -> set[str]:
    return set(rules.workload_layers(ruleset))


