"""The facts `suite check`'s rules name, per scope, from a discovered tree (suite.layouts.benchdirs.tree).

A scope is {fact name: value or [Item]} with where each fact came from. Every fact is declared in
suite/training/facts.yaml, or in rules/facts.yaml for the tree walk's and the system description's (type, unit,
scopes; tests/training/check/test_facts.py keeps the two in step), and a rule
naming an undeclared one does not load. Facts the rules can name:

tree       the layout's (suite.layouts.benchdirs.facts)
benchmark  runs.count, single_run, warmup.present, submission, system.{file,name,expected_name,doc},
           generation_logs, runs.{model,accelerator,num_accelerators,num_files_train,
           num_samples_per_file,num_hosts} (one item per run/host, for all_equal),
           runs.start_s (each run's start, in run order), runs.duplicate_summaries, values.nonfinite,
           report.* (mlperf_storage_report.json), report.file, report.differences (one item naming every
           field that differs from the runs), aggregate.*, system.{syntax,pdf,solution_type,found_by}
           (suite.training.check.evidence), generation_logs.unmatched, runs.interleaved, runs.throughput_spread_percent,
           dataset.num_subfolders_train, generation.num_subfolders_train (suite.training.check.series), workload.named,
           problems.{unreadable,links,dir_links}
run        hosts.start_s, summaries.count, accelerators.uneven, dataset.{required_files_tolerant,size_basis}
           (suite.training.check.dataset), dataset.{num_files_train,required_files,host_memory_bytes,
           accelerators,host_memory_gib_entries,required_files_steps (without host memory)}
host       run.summaries (a run's summaries: rank 0's alone on multi-host v1.0), files.{summary,overrides,config,per_epoch,results}, summary.* (summary.json),
           results.* (our results.json), per_epoch.epochs, overrides.workload, overrides.params,
           params.<section.key> (override, else config.yaml), config.differences (config.yaml's values
           that differ from the workload's; suite.training.check.params), values.nonfinite (NaN/Infinity in any
           of the host's files), expected.{workload_name,
           au_meet_expectation}, recomputed.{au_mean,au_stdev,throughput_mean,throughput_stdev,
           io_mean,io_stdev,rank_outputs_au,rank_outputs_throughput,steps_au,
           steps_throughput}, rank_outputs.ranks,
           steps.ranks, steps.problems, ours, warmup, workload, problems.unreadable

All recomputation goes through suite.training.figures and the dataset-size rule through suite.training.datasize.
DLIO's summary.json `host_memory_GB` is GiB despite its name (psutil total / 1024^3: WEKA's
2015.59 "GB" is its MemTotal of 2113502212 kB in GiB); host memory = the sum of that list over
all hosts of the run. Read that way, three published datasets (DDN unet3d-a100 252000 files,
DDN resnet50-a100 138129, Micron 9550 unet3d-a100 28000) are exactly the required size.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import json

from suite.layouts.benchdirs import identify, tree as layout
from suite.layouts.walker import problem_facts
from suite.training.check import contradictions, dataset as dataset_facts, evidence, params as param_facts, recompute, \
    series
from suite.errors import SuiteError
from suite.numbers import as_int, finite_list, is_number, nonfinite
from suite.rules import engine as rules
from suite.rules.engine import Item, Scope
from suite.training import workloads
from suite.training import datasize
from suite.training import figures as metrics

# The tree scope's facts (problems.*, benchmarks.count, incomplete, code.changed*) are the layout's:
# suite.layouts.benchdirs.facts. A benchmark's unusable entries are named the same way
# (suite.layouts.walker.problem_facts).


# --------------------------------------------------------------------------- benchmark


def benchmark_scope(b: layout.Benchmark, tree: layout.Tree, params: dict | None = None):
    params = params or {}
    org_dir = next((p for p in b.path.parents if p.name.lower() == "results"), b.path.parent).parent
    facts: dict = {}
    docs: dict = {}
    sources = {"runs.count": (b.path, "runs"),
               "system.file": (org_dir / "systems" / f"{b.system or b.path.name}.json", "file"),
               "system.name": (org_dir / "systems", "file name"),
               "generation_logs": (org_dir / "generation_logs" / (b.system or ""), f"{b.workload or 'the workload'} datagen logs"),
               "report.file": (b.path / "mlperf_storage_report.json", "file")}
    system = evidence.system_facts(b, tree, facts, sources, docs)
    facts.update(problem_facts(list(b.problems) + (list(system.problems) if system else [])))
    if "system.solution_type" in facts:
        facts["system.solution_type"] = evidence.solution_kind(facts["system.solution_type"],
                                                               params.get("solution_types") or [],
                                                               params.get("solution_type_aliases"))
    facts.update({
        "runs.count": len(b.runs), "single_run": b.single_run, "warmup.present": b.warmup is not None,
        "submission": tree.submission, "workload": b.workload, "workload.named": _workload_named(b),
        "report.file": str(b.report_path) if b.report_path else None,
    })
    sources["workload.named"] = (_first_overrides(b) or b.path, "workload")
    run_values = _consistency(b, facts)
    facts.update(_distinct_runs(b.runs))
    sources["runs.start_s"] = (b.path, "start")
    _series_facts(b, tree, facts, sources, run_values)
    if b.report is not None:
        facts["values.nonfinite"] = _nonfinite_items([(b.report, b.report_path)])
    agg = _aggregate(b, run_values)
    if agg:
        for k, v in agg["overall"].items():
            facts[f"aggregate.{k}"] = v
    if b.report is not None:
        docs["report"] = (b.report, b.report_path)
        facts["report.differences"] = evidence.report_differences(b, agg, _unmatched_report_runs(b, run_values))
        sources["report.differences"] = (b.report_path, "(report)")
    return agg, Scope("benchmark", b.path, facts, sources, docs)


def _consistency(b: layout.Benchmark, facts: dict) -> list:
    """runs.{model,accelerator,num_files_train,num_samples_per_file} (one item per host) and
    runs.{num_accelerators,num_hosts} (one per run); returns (run, samples/s, MB/s) per run."""
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
    return run_values


def _series_facts(b: layout.Benchmark, tree: layout.Tree, facts: dict, sources: dict, run_values) -> None:
    """Generation logs, consecutive runs, replicability and subfolders (suite.training.check.series, evidence)."""
    # the dataset is generated before the first run of all (a warm-up included), whatever the names' order
    starts = [s for r in b.runs + ([b.warmup] if b.warmup else []) if (s := series.run_start(r, _timestamp))]
    used_log = evidence.generation_facts(b, facts, sources, min(starts)[0] if starts else None)
    facts["runs.interleaved"] = series.interleaved(b, tree, _timestamp)
    spread = series.spread_percent([tp for _, tp, _ in run_values if tp is not None])
    if spread is not None and len(b.runs) > 1:
        facts["runs.throughput_spread_percent"] = spread
        sources["runs.throughput_spread_percent"] = (b.path, "samples/s across runs (largest distance from the mean, % of it)")
    used, where = series.subfolders(b)
    logs = [used_log] if used_log is not None else b.generation_logs    # the log that made the dataset
    generated = [g.num_subfolders for g in logs if g.num_subfolders is not None]
    if used is not None or generated:
        facts["dataset.num_subfolders_train"] = used if used is not None else 0
        sources["dataset.num_subfolders_train"] = (where or b.path, "dataset.num_subfolders_train")
    if generated:
        facts["generation.num_subfolders_train"] = generated[0]


def _first_overrides(b: layout.Benchmark):
    return next((h.files["overrides"] for r in b.runs for h in r.hosts if "overrides" in h.files), None)


def _workload_named(b: layout.Benchmark) -> str:
    """The workload as identified (unet3d, ...), else what the overrides call it (`gpt9_z900`), else 'none'."""
    if b.workload:
        return b.workload
    named = next((ov["workload"] for r in b.runs for h in r.hosts
                  if (ov := identify.overrides_dict(h.overrides)).get("workload")), None)
    return named or "none (no file names a workload)"


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
    counted = [h for h in run.hosts if isinstance(h.summary, dict)]   # rank 0 alone on multi-host v1.0
    for host in counted:
        m = (host.summary or {}).get("metric") if isinstance(host.summary, dict) else None
        tps = finite_list(m.get(metrics.SAMPLES)) if isinstance(m, dict) else None
        rec = recompute.record_length_of(b, host)
        if tps is None or rec is None:
            return None, None
        mean, _ = metrics.mean_pstdev(tps)
        tp_total += mean
        mb_total += metrics.mib_per_second(mean, rec)
    return (tp_total, mb_total) if counted else (None, None)


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


def run_scope(b: layout.Benchmark, run: layout.Run, params: dict | None = None,
              documented_limit: int | None = None, system_path=None) -> Scope:
    """Run facts; the dataset size graded (suite.training.check.dataset): `documented_limit` is a per-host
    memory limit from the system description, honoured before any recorded memory."""
    params = params or {}
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
    facts["accelerators.uneven"] = series.uneven_accelerators(run)
    summaries = [(h, h.summary) for h in run.hosts if isinstance(h.summary, dict)]
    if summaries:
        first_host, s0 = summaries[0]
        spath = first_host.files.get("summary")
        files_train = [s.get("num_files_train") for _, s in summaries]
        if all(as_int(x) is not None for x in files_train):
            facts["dataset.num_files_train"] = min(files_train)
            sources["dataset.num_files_train"] = (spath, "num_files_train")
        mem = [h.summary.get("host_memory_GB") for h, _ in summaries]
        facts["dataset.host_memory_gib_entries"] = [x for m in mem if isinstance(m, list) for x in m]   # one per host
        sources["dataset.host_memory_gib_entries"] = (spath, "host_memory_GB")
        total, hosts, source = dataset_facts.memory([s for _, s in summaries],
                                                    [h.results for h in run.hosts if isinstance(h.results, dict)],
                                                    documented_limit, system_path)
        facts["dataset.host_memory_bytes"] = total
        sources["dataset.host_memory_bytes"] = (spath, "host_memory_GB")
        accels = [as_int(s.get("num_accelerators")) for _, s in summaries]
        if all(a is not None and a > 0 for a in accels):
            facts["dataset.accelerators"] = sum(accels)
        facts.update(_required_files(b, facts.get("dataset.accelerators"), total, hosts, source,
                                     params.get("dataset_memory_tolerance_gib_per_host")))
    return Scope("run", run.path, facts, sources)


def _required_files(b: layout.Benchmark, accelerators, memory_bytes, hosts=1, source="", tolerance=None) -> dict:
    """dataset.required_files (both parts of the rule, exact and with the tolerance, and their basis),
    or without host memory dataset.required_files_steps (the steps part alone)."""
    w = _workload(b)
    if not (w and accelerators):
        return {}
    if memory_bytes:
        return dataset_facts.required(w, accelerators, memory_bytes, hosts, source, b.ruleset, tolerance)
    try:
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
    facts["run.summaries"] = sum(isinstance(h.summary, dict) for h in run.hosts)   # rank 0's is the run's
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
    facts.update(contradictions.facts(host))          # the run's own verdict, 0 bytes, the cache drop
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
