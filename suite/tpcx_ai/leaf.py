"""tpcxai-result.json: what a run measured, schema-checked on write and on read.

schema_version 2 (suite/tpcx_ai/schemas/tpcxai-result.schema.json), kind tpcx-ai-run: phases in order
with start/end, every job (phase, use case, stream, start/end, status, error), per-use-case times
and quality against thresholds, per-stream start/end and order, SF, streams, seed, library
versions, host facts, SHA-256 of the use-case code and definition files, the code that ran
(`code_image`, set by `suite run`: the md5-tree-v2 pointer of suite.harness.provenance, whose
.mlps-code-image and provenance.json it writes beside this file), and AIUCpm@SF with its
components (kit 1.0.3 mode; the 1.0.2 load and throughput figures beside them) or the reasons
there is none. schema_version 1 is the FDR data-file form (suite/tpcx_ai/fdr.py) that earlier runs
wrote; `read` accepts both, and `fdr_doc` turns a version-2 result into that form, which is how
`suite metrics` and `suite report` read a run directory.
"""

import hashlib
import importlib.util
import os
import platform
from pathlib import Path

from suite import files
from suite.errors import ResultError, expected_got
from suite.tpcx_ai import figures as metric
from suite.tpcx_ai import naming

RESULT_FILE = "tpcxai-result.json"
SCHEMA = "tpcxai-result"
SCHEMA_VERSION = 2
KIT_MODE = "1.0.3"
LIBRARIES = ("numpy", "pandas", "pyarrow", "scikit-learn", "xgboost", "statsmodels", "scipy", "jsonschema", "PyYAML")
METRIC_PHASES = set(metric.PHASES)


# --------------------------------------------------------------------------- the metric or why not


def conclude(run) -> None:
    """Set run.metric (AIUCpm and components) or run.reasons (why no metric / not publishable)."""
    opts = run.options
    reasons = run.reasons
    if run.status != "complete" and not any("interrupted" in r for r in reasons):
        reasons.append("the run did not complete")
    if sorted(run.use_cases) != list(metric.USE_CASES):
        reasons.append(f"only use cases {','.join(map(str, sorted(run.use_cases)))} ran: AIUCpm needs all ten")
    if run.failed:
        reasons.append(f"use case(s) {','.join(map(str, sorted(run.failed)))} failed: the run is invalid")
    missed = sorted(n for n, q in run.quality.items() if not q["passed"])
    if missed:
        ids = ", ".join(run.quality[n]["rule_id"] for n in missed)
        reasons.append(f"quality threshold(s) missed ({ids}): the run is invalid")
    flat = sorted(n for n, q in run.quality.items() if q.get("beats_constant") is False)
    if flat:
        reasons.append(f"use case(s) {','.join(map(str, flat))} do not beat the best constant predictor "
                       "on the scoring split (tpcxai-beats-constant): the run is invalid")
    unscored = sorted(n for n in run.use_cases if n not in run.quality and n not in run.failed)
    if unscored and run.status == "complete":
        reasons.append(f"use case(s) {','.join(map(str, unscored))} have no quality value")
    if opts.streams < 2:
        reasons.append(f"streams: expected at least 2 for AIUCpm, got {opts.streams}")
    if reasons:
        return
    jobs = metric_jobs(run.jobs)
    inputs = metric.Inputs.from_jobs(jobs, KIT_MODE, opts.scale_factor, opts.streams)
    r = metric.compute(inputs, where="run")
    run.metric = {**{k: v for k, v in r.to_dict().items() if k not in ("total_price", "currency", "price_per_aiucpm")},
                  "kit_version": KIT_MODE,
                  "load_time_v102_s": metric.load_time_s(jobs, "1.0.2"),
                  "throughput_elapsed_v102_s": metric.throughput_time_s(jobs, "1.0.2"),
                  "publishable": opts.scale_factor >= 1}
    if opts.scale_factor < 1:
        reasons.append(f"scale factor {opts.scale_factor:g} < 1: AIUCpm computed, not publishable")


def metric_jobs(records) -> list:
    return [metric.Job(j.phase, j.start_s, j.end_s, j.use_case, j.stream)
            for j in records if j.status == "ok" and j.phase in METRIC_PHASES]


# --------------------------------------------------------------------------- facts


def library_versions() -> dict:
    from importlib import metadata

    import suite

    out = {"python": platform.python_version(), "suite": suite.__version__}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def host_facts() -> dict:
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = None
    return {"hostname": platform.node(), "system": platform.platform(), "machine": platform.machine(),
            "cpu_count": os.cpu_count(), "memory_bytes": memory}


def _sha256(path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except (OSError, TypeError):
        return None


def code_hashes(registry, numbers) -> dict:
    out = {}
    for n in numbers:
        module = registry.usecase_module(n)
        registry.activate()
        spec = importlib.util.find_spec(module.split(":")[0])
        origin = spec.origin if spec else None
        out[f"uc{n}"] = {"module": module, "code_sha256": _sha256(origin),
                         "definition_sha256": _sha256(registry.workload_file(n))}
    return out


# --------------------------------------------------------------------------- the document


def _per_use_case(run) -> dict:
    out = {}
    for n, uc in sorted(run.use_cases.items()):
        times = {}
        for j in run.jobs:
            if j.use_case == n and j.status == "ok" and j.phase in ("training", "serving_1", "serving_2", "scoring"):
                times[f"{j.phase}_s"] = j.duration_s
        tput = [j.duration_s for j in run.jobs if j.use_case == n and j.phase == "throughput" and j.status == "ok"]
        if tput:
            times["throughput_mean_s"] = round(sum(tput) / len(tput), 3)
        out[f"uc{n}"] = {"name": uc.name, "algorithm": uc.algorithm, "metric": uc.metric,
                         "status": "failed" if n in run.failed else "ok", **times}
    return out


def to_doc(run) -> dict:
    opts = run.options
    quality = {f"uc{n}": {k: v for k, v in q.items()} for n, q in sorted(run.quality.items())}
    jobs = [{k: v for k, v in dict(phase=j.phase, use_case=j.use_case, stream=j.stream, start_s=j.start_s,
                                   end_s=j.end_s, duration_s=j.duration_s, status=j.status, error=j.error).items()
             if v is not None} for j in run.jobs]
    return {
        "schema_version": SCHEMA_VERSION, "kind": "tpcx-ai-run", "kit_version": KIT_MODE,
        "status": run.status, "valid": run.status == "complete" and not run.failed
        and all(q["passed"] and q.get("beats_constant", True) for q in run.quality.values()),
        "started_at": run.started_at, "scale_factor": opts.scale_factor, "streams": opts.streams,
        "seed": opts.seed, "processes": opts.processes, "launcher": opts.launcher,
        "use_cases": sorted(run.use_cases), "data_dir": str(opts.data_dir),
        "phases": run.phases, "jobs": jobs, "errors": list(run.errors),
        "generation": run.generation, "loads": run.loads, "stream_runs": run.streams,
        "use_case_results": _per_use_case(run), "quality": quality,
        "metric": run.metric, "reasons": list(run.reasons),
        "substitutes": naming.records(run.use_cases), "disclosures": [naming.LOAD_DIFFERS],
        "metric_name": naming.metric_name(opts.scale_factor, naming.records(run.use_cases)),
        "libraries": library_versions(), "host": host_facts(),
        "code": code_hashes(opts.registry, sorted(run.use_cases)),
        "engine": run.engine,
    }


def write(results_dir: Path, doc: dict) -> Path:
    path = Path(results_dir) / RESULT_FILE
    files.write_json(path, doc, schema=SCHEMA)
    return path


def read(path) -> dict:
    """A result document of either version, validated against its schema."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULT_FILE
    doc = files.load_json(path, error=ResultError, root=path.parent)    # never read through a link out of the run
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if version == 1:
        files.validate(doc, "fdr", path, ResultError)
    elif version == 2:
        files.validate(doc, SCHEMA, path, ResultError)
    else:
        raise ResultError(expected_got(path, "schema_version", "1 or 2", repr(version)))
    return doc


def fdr_doc(doc: dict, source: str = "") -> dict:
    """A version-2 result as the FDR data-file form (schema_version 1) suite/tpcx_ai/fdr.py computes from."""
    out = {"schema_version": 1, "kind": "tpcx-ai-run", "kit_version": doc["kit_version"],
           "scale_factor": doc["scale_factor"], "streams": doc["streams"], "source": source or doc.get("data_dir", ""),
           "notes": f"status {doc['status']}; " + ("; ".join(doc["reasons"]) or "valid")}
    jobs = [{k: j[k] for k in ("phase", "use_case", "stream", "start_s", "end_s") if k in j}
            for j in doc["jobs"] if j["status"] == "ok" and j["phase"] in METRIC_PHASES]
    if jobs:
        out["jobs"] = jobs
    quality = {}
    for key, q in doc["quality"].items():
        if q["metric"] != "none" and q.get("value") is not None:
            quality[key] = {"metric": q["metric"], "value": q["value"], "higher_is_better": q["op"] == "min"}
            if q.get("threshold") is not None:
                quality[key]["threshold"] = q["threshold"]
    if quality:
        out["quality"] = quality
    return out
