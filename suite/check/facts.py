"""The facts `suite check`'s rules name, per scope, from a discovered tree (suite.check.layout).

A scope is {fact name: value or [Item]} with where each fact came from. Facts the rules can name:

tree       problems.unreadable, problems.links, problems.dir_links, benchmarks.count
benchmark  runs.count, single_run, warmup.present, submission, system.{file,name,expected_name,doc},
           generation_logs, runs.{model,accelerator,num_accelerators,num_files_train,
           num_samples_per_file,num_hosts} (one item per run/host, for all_equal),
           runs.start_s (each run's start, in run order), runs.duplicate_summaries, values.nonfinite,
           report.* (mlperf_storage_report.json), report.unmatched_runs, aggregate.*,
           problems.{unreadable,links,dir_links}
run        hosts.start_s, summaries.count, dataset.{num_files_train,required_files,host_memory_bytes,
           accelerators,host_memory_zero_entries,required_files_steps (without host memory)}
host       files.{summary,overrides,config,per_epoch,results}, summary.* (summary.json),
           results.* (our results.json), per_epoch.epochs, overrides.workload, overrides.params,
           params.<section.key> (override, else config.yaml), config.differences (config.yaml's values
           that differ from the workload's; suite.check.params), values.nonfinite (NaN/Infinity in any
           of the host's files), expected.{workload_name,
           au_meet_expectation}, recomputed.{au_mean,au_stdev,throughput_mean,throughput_stdev,
           io_mean,io_stdev,rank_outputs_au,rank_outputs_throughput,steps_au,
           steps_throughput}, rank_outputs.ranks,
           steps.ranks, steps.problems, ours, warmup, workload, problems.unreadable

All recomputation goes through suite.storage.metrics and the dataset-size rule through suite.storage.datasize.
DLIO's summary.json `host_memory_GB` is GiB despite its name (psutil total / 1024^3: WEKA's
2015.59 "GB" is its MemTotal of 2113502212 kB in GiB); host memory = the sum of that list over
all hosts of the run. Read that way, three published datasets (DDN unet3d-a100 252000 files,
DDN resnet50-a100 138129, Micron 9550 unet3d-a100 28000) are exactly the required size.
"""

from __future__ import annotations

import math
from datetime import datetime

import json

from suite.check import identify, layout, params as param_facts, recompute
from suite.errors import SuiteError
from suite.numbers import as_int, finite_list, is_number, nonfinite
from suite.rules import engine as rules
from suite.rules.engine import Item, Scope
from suite.sizes import GIB
from suite.storage import datasize, metrics, workloads

LINK_KINDS = ("outside", "loop")
MAX_MEMORY_GIB = float(2 ** 40)          # a host_memory_GB entry above 1 EiB counts as 1 EiB
DIR_LINK_KINDS = ("dir-link",)


# --------------------------------------------------------------------------- problems


def problem_facts(problems: list[layout.Problem]) -> dict:
    def items(kinds=None, exclude=()):
        return [Item(p.actual, p.path, p.field, p.expected) for p in problems
                if (kinds is None or p.kind in kinds) and p.kind not in exclude]
    return {"problems.unreadable": items(exclude=LINK_KINDS + DIR_LINK_KINDS),
            "problems.links": items(LINK_KINDS), "problems.dir_links": items(DIR_LINK_KINDS)}


def tree_scope(tree: layout.Tree) -> Scope:
    facts = problem_facts(tree.problems)
    facts["benchmarks.count"] = len(tree.benchmarks)
    return Scope("tree", tree.root, facts)


# --------------------------------------------------------------------------- benchmark


def _system_for(b: layout.Benchmark, tree: layout.Tree) -> tuple[layout.SystemFile | None, bool]:
    """The benchmark's system description and whether its name matches the results' system dir.

    No exact match but exactly one description for the organisation: that one, name mismatched.
    """
    mine = [s for s in tree.systems if s.org == b.org]
    exact = next((s for s in mine if b.system is not None and s.name == b.system), None)
    if exact:
        return exact, True
    return (mine[0], b.system is None) if len(mine) == 1 else (None, b.system is None)


def benchmark_scope(b: layout.Benchmark, tree: layout.Tree):
    system, _ = _system_for(b, tree)
    problems = list(b.problems) + (list(system.problems) if system else [])
    facts = problem_facts(problems)
    facts.update({
        "runs.count": len(b.runs), "single_run": b.single_run, "warmup.present": b.warmup is not None,
        "submission": tree.submission, "system.file": str(system.path) if system else None,
        "system.name": system.name if system else None, "system.expected_name": b.system or (system.name if system else None),
        "generation_logs": [str(g.path) for g in b.generation_logs], "workload": b.workload,
    })
    org_dir = next((p for p in b.path.parents if p.name.lower() == "results"), b.path.parent).parent
    sources = {"runs.count": (b.path, "runs"),
               "system.file": (org_dir / "systems" / f"{b.system or '<system>'}.json", "file"),
               "system.name": (system.path if system else org_dir / "systems", "file name"),
               "generation_logs": (org_dir / "generation_logs" / (b.system or ""), f"{b.workload} datagen logs")}
    docs = {}
    if system is not None and system.doc is not None:
        docs["system"] = ({"doc": system.doc}, system.path)
        sources["system.doc"] = (system.path, "(top level)")
    # consistency items: one per host (model/accelerator/files) or per run (accelerators/hosts)
    for key in ("model", "accelerator", "num_files_train", "num_samples_per_file", "num_accelerators", "num_hosts"):
        facts[f"runs.{key}"] = []
    run_values = []
    for run in b.runs:
        hosts_n = 0
        accels = 0
        for host in run.hosts:
            s = host.summary if isinstance(host.summary, dict) else {}
            model, accel, _ = identify.host_workload(host)
            where = host.files.get("overrides") or host.files.get("summary") or host.path
            if model:
                facts["runs.model"].append(Item(model, where, "workload"))
            if accel:
                facts["runs.accelerator"].append(Item(accel, where, "workload"))
            spath = host.files.get("summary", host.path)
            for key in ("num_files_train", "num_samples_per_file"):
                if key in s:
                    facts[f"runs.{key}"].append(Item(s[key], spath, key))
            if (as_int(s.get("num_accelerators")) or 0) > 0:      # a negative count is a schema finding
                accels += s["num_accelerators"]
            hosts_n = as_int(s.get("num_hosts")) or hosts_n
        first = run.hosts[0].files.get("summary", run.path) if run.hosts else run.path
        facts["runs.num_accelerators"].append(Item(accels, first, "num_accelerators"))
        facts["runs.num_hosts"].append(Item(hosts_n or len(run.hosts), first, "num_hosts"))
        run_values.append((run, *_run_throughput(b, run)))
    facts.update(_distinct_runs(b.runs))
    sources["runs.start_s"] = (b.path, "start")
    if b.report is not None:
        facts["values.nonfinite"] = _nonfinite_items([(b.report, b.report_path)])
    agg = _aggregate(b, run_values)
    if agg:
        for k, v in agg["overall"].items():
            facts[f"aggregate.{k}"] = v
    if b.report is not None:
        docs["report"] = (b.report, b.report_path)
        facts["report.unmatched_runs"] = _unmatched_report_runs(b, run_values)
        sources["report.unmatched_runs"] = (b.report_path, "runs")
    return agg, Scope("benchmark", b.path, facts, sources, docs)


def _distinct_runs(runs: list[layout.Run]) -> dict:
    """runs.start_s (each run's earliest host start, in run order) and runs.duplicate_summaries
    (a run whose summaries are those of an earlier run): five runs are five measurements."""
    starts, dups, seen = [], [], {}
    for run in runs:
        spath = run.hosts[0].files.get("summary", run.path) if run.hosts else run.path
        times = [(t, h.summary["start"]) for h in run.hosts if isinstance(h.summary, dict)
                 if (t := _timestamp(h.summary.get("start"))) is not None]
        if times:
            t, text = min(times)
            starts.append(Item(t, spath, "start", shown=text))
        if not run.summaries:
            continue
        key = json.dumps(run.summaries, sort_keys=True, default=repr)
        if key in seen:
            dups.append(Item(f"identical to {seen[key]}", spath, "(whole file)", "a distinct measurement"))
        else:
            seen[key] = run.name
    return {"runs.start_s": starts, "runs.duplicate_summaries": dups}


def _nonfinite_items(docs) -> list[Item]:
    """One item per NaN/Infinity in the given (document, path) pairs."""
    return [Item(text, path, where, "a finite number") for doc, path in docs if doc is not None
            for where, text in nonfinite(doc)]


def _workload(b: layout.Benchmark):
    """The resolved workload, or None when unknown (rules needing it are then skipped)."""
    return workloads.find(b.workload, b.accelerator)


def _run_throughput(b: layout.Benchmark, run: layout.Run):
    """(samples/s, MB/s) of a run from its per-epoch lists: summed over hosts; None when unusable."""
    tp_total = mb_total = 0.0
    for host in run.hosts:
        m = (host.summary or {}).get("metric") if isinstance(host.summary, dict) else None
        tps = finite_list(m.get(metrics.SAMPLES)) if isinstance(m, dict) else None
        rec = recompute.record_length_of(b, host)
        if tps is None or rec is None:
            return None, None
        mean, _ = metrics.mean_pstdev(tps)
        tp_total += mean
        mb_total += metrics.mib_per_second(mean, rec)
    return (tp_total, mb_total) if run.hosts else (None, None)


def _aggregate(b: layout.Benchmark, run_values) -> dict | None:
    """The benchmark's mlperf_storage_report.json, recomputed from its runs (None: no usable run)."""
    usable = [(r, tp, mb) for r, tp, mb in run_values if tp is not None]
    if not usable:
        return None
    s0 = usable[0][0].summary or {}
    accels = sum(max(as_int(h.summary.get("num_accelerators")) or 0, 0) for h in usable[0][0].hosts
                 if isinstance(h.summary, dict))
    hosts = as_int(s0.get("num_hosts")) or len(usable[0][0].hosts)
    info = {"model": b.workload, "accelerator": b.accelerator, "num_client_hosts": hosts,
            metrics.NUM_ACCELERATORS: str(accels), "num_files_train": s0.get("num_files_train"),
            "num_samples_per_file": s0.get("num_samples_per_file")}
    return metrics.storage_report(info, {r.name: (tp, mb) for r, tp, mb in usable})


def _close(a, b) -> bool:
    return rules.close_enough(a, b, rel=1e-9)


def _unmatched_report_runs(b: layout.Benchmark, run_values) -> list[Item]:
    """Report runs whose samples/s and MB/s match no run (by name first, else by value)."""
    runs = b.report.get("runs") if isinstance(b.report, dict) else None
    if not isinstance(runs, dict):
        return [Item("no runs object", b.report_path, "runs", "an object of runs")]
    out = []
    free = [(r, tp, mb) for r, tp, mb in run_values if tp is not None]
    for name, entry in runs.items():
        entry = entry if isinstance(entry, dict) else {}
        # report.py's keys, or the run's DLIO metric block (as `suite run` writes its report)
        tp, mb = entry.get(metrics.SAMPLES), entry.get(metrics.REPORT_MB)
        if not (is_number(tp) and is_number(mb)):
            tp, mb = entry.get(metrics.SAMPLES_MEAN), entry.get(metrics.IO_MEAN)
        named = next((x for x in free if x[0].name == name), None)
        match = named if named and _close(named[1], tp) and _close(named[2], mb) else \
            next((x for x in free if _close(x[1], tp) and _close(x[2], mb)), None)
        if match:
            free.remove(match)
            continue
        expected = f"{named[1]!r} samples/s (recomputed from {named[0].name})" if named else \
            "a run with these samples/s and MB/s"
        out.append(Item(tp, b.report_path, f"runs.{name}.train_throughput_samples_per_second", expected))
    return out


# --------------------------------------------------------------------------- run


def run_scope(b: layout.Benchmark, run: layout.Run) -> Scope:
    facts: dict = {}
    sources: dict = {}
    starts = []
    for host in run.hosts:
        s = host.summary if isinstance(host.summary, dict) else {}
        t = _timestamp(s.get("start"))
        if t is not None:
            starts.append(Item(t, host.files.get("summary"), "start"))
    facts["hosts.start_s"] = starts
    facts["summaries.count"] = sum(isinstance(h.summary, dict) for h in run.hosts)
    sources["hosts.start_s"] = (run.path, "start")
    summaries = [(h, h.summary) for h in run.hosts if isinstance(h.summary, dict)]
    if summaries:
        first_host, s0 = summaries[0]
        spath = first_host.files.get("summary")
        files_train = [s.get("num_files_train") for _, s in summaries]
        if all(as_int(x) is not None for x in files_train):
            facts["dataset.num_files_train"] = min(files_train)
            sources["dataset.num_files_train"] = (spath, "num_files_train")
        mem = [h.summary.get("host_memory_GB") for h, _ in summaries]
        facts["dataset.host_memory_zero_entries"] = sum(
            1 for m in mem if isinstance(m, list) for x in m if isinstance(x, (int, float)) and x == 0)
        sources["dataset.host_memory_zero_entries"] = (spath, "host_memory_GB (entries equal to 0)")
        facts["dataset.host_memory_gib_entries"] = [x for m in mem if isinstance(m, list) for x in m]   # one per host
        sources["dataset.host_memory_gib_entries"] = (spath, "host_memory_GB")
        if all(finite_list(m) is not None for m in mem):     # capped per entry: 1e308 + 1e308 overflows fsum
            total_gib = math.fsum(min(max(x, 0.0), MAX_MEMORY_GIB) for m in mem for x in m)
            facts["dataset.host_memory_bytes"] = int(total_gib * GIB) if total_gib > 0 else None
        sources["dataset.host_memory_bytes"] = (spath, "host_memory_GB")
        accels = [as_int(s.get("num_accelerators")) for _, s in summaries]
        if all(a is not None and a > 0 for a in accels):
            facts["dataset.accelerators"] = sum(accels)
        facts.update(_required_files(b, facts.get("dataset.accelerators"), facts.get("dataset.host_memory_bytes")))
    return Scope("run", run.path, facts, sources)


def _required_files(b: layout.Benchmark, accelerators, memory_bytes) -> dict:
    """dataset.required_files (both parts of the rule), or without host memory
    dataset.required_files_steps (the steps part alone: the memory part cannot be computed)."""
    w = _workload(b)
    if not (w and accelerators):
        return {}
    try:
        if memory_bytes:
            return {"dataset.required_files": datasize.compute(w, accelerators, 1, memory_bytes, b.ruleset).num_files}
        return {"dataset.required_files_steps": datasize.steps_part(w, accelerators, b.ruleset)}
    except SuiteError:
        return {}


def _timestamp(text):
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


# --------------------------------------------------------------------------- host


HOST_FILES = {"summary": "summary.json", "overrides": "configs/overrides.yaml", "config": "configs/config.yaml",
              "per_epoch": "per_epoch_stats.json", "results": "results.json"}


def host_scope(b: layout.Benchmark, run: layout.Run, host: layout.Host, params: dict) -> Scope:
    facts = problem_facts(host.problems)
    sources: dict = {}
    docs: dict = {}
    for key, default in HOST_FILES.items():
        facts[f"files.{key}"] = str(host.files[key]) if key in host.files else None
        sources[f"files.{key}"] = (host.path / default, "file")
    facts["workload"] = b.workload
    facts["warmup"] = run.warmup
    facts["ours"] = host.results is not None or host.rank_steps is not None
    summary = host.summary if isinstance(host.summary, dict) else None
    if summary is not None:
        docs["summary"] = (summary, host.files["summary"])
    if isinstance(host.results, dict):
        docs["results"] = (host.results, host.files["results"])
    if isinstance(host.per_epoch, dict):
        facts["per_epoch.epochs"] = [k for k in host.per_epoch if str(k).isdigit()]
        sources["per_epoch.epochs"] = (host.files["per_epoch"], "(epochs)")
    metric = summary.get("metric") if summary and isinstance(summary.get("metric"), dict) else None
    facts.update(_expectations(b, metric, params))
    param_facts.param_facts(host, params, facts, sources)
    facts["config.differences"] = param_facts.config_differences(host, _workload(b))
    sources["config.differences"] = (host.files.get("config"), "(workload parameters)")
    facts["values.nonfinite"] = _nonfinite_items(_host_docs(host))
    recompute.recomputed_facts(b, host, metric, summary, facts, sources)
    return Scope("host", host.path, facts, sources, docs)


def _host_docs(host: layout.Host):
    """(document, path) for every parsed file of a host."""
    steps_dir = host.files.get("rank_steps", host.path / "steps")
    yield host.summary, host.files.get("summary")
    yield host.results, host.files.get("results")
    yield host.per_epoch, host.files.get("per_epoch")
    yield host.config, host.files.get("config")
    for r, doc in sorted((host.rank_outputs or {}).items()):
        yield doc, host.path / f"{r}_output.json"
    for r, doc in sorted((host.rank_steps or {}).items()):
        yield doc, steps_dir / f"rank-{r}.json"


def _expectations(b: layout.Benchmark, metric: dict | None, params: dict) -> dict:
    """What the ruleset and workload say the files should carry: the workload name, the AU verdict."""
    out = {}
    if b.workload:
        with_accel = params.get("workload_name_with_accelerator", True) and b.accelerator not in (None, "v100")
        out["expected.workload_name"] = f"{b.workload}_{b.accelerator}" if with_accel else b.workload
    threshold = params.get("au_threshold_percentage")
    if metric is not None and isinstance(threshold, (int, float)):
        mean = metric.get(metrics.AU_MEAN)
        if isinstance(mean, (int, float)) and not isinstance(mean, bool):   # inf too: it is judged
            out["expected.au_meet_expectation"] = "success" if mean >= threshold else "fail"
    return out
