"""Where a training run writes: numbered R/run-<k>/ (v1.0, v2.0), or the v3.0 leaves published
trees have, R/training/<model>/{datasize,datagen,run}/<YYYYMMDD_HHMMSS>/ (ruleset.yaml `leaves:
timestamped`).

A v3.0 leaf holds what outside tools (mlcommons' mlpstorage and checker) read: summary.json,
<rank>_per_epoch_stats.json, dlio.log, training_<ts>_metadata.json (the executed command, the
parameters, the invocation's arguments), fs_separation.json, dlio_config/{config,overrides}.yaml
and .mlps-code-image; beside them our own evidence (results.json, steps/, plan.json), which is
what `suite check` re-derives the figures from. The run set (R/run_set.json) names every leaf.
Leaf names are suite.harness.leafstamp's (the rules' clock, local time), strictly increasing within
their folder (a run shorter than a second waits for the next one), so the lexically earliest run leaf
is the warm-up, as the rules read it.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from suite import files, redact
from suite.harness import leafstamp
from suite.rules import rulesets

BENCHMARK = "training"
METADATA_SCHEMA = "training-metadata"


def timestamped(ruleset: str) -> bool:
    return rulesets.get(ruleset).leaves == "timestamped"


def make(base: Path) -> Path:
    """A new leaf under `base` named by the current second (leafstamp.fresh: later than every leaf
    already there, waiting for the next second when this one is taken)."""
    base.mkdir(parents=True, exist_ok=True)
    leaf = base / leafstamp.fresh(base)
    leaf.mkdir()
    return leaf


def model_dir(prep) -> Path:
    return Path(prep.results_dir) / BENCHMARK / prep.workload.name


def run_dir(prep, k: int) -> Path:
    """Run k's directory (made): R/run-<k>, or a new leaf R/training/<model>/run/<ts> (v3.0)."""
    if not timestamped(prep.ruleset):
        path = Path(prep.results_dir) / f"run-{k}"
        path.mkdir(parents=True, exist_ok=True)
    else:
        path = make(model_dir(prep) / "run")
    prep.leaves[k] = path
    return path.resolve()


def relative(prep, k: int) -> str:
    """Run k's directory relative to R (run_set.json's paths)."""
    return Path(prep.leaves.get(k, Path(prep.results_dir) / f"run-{k}")).relative_to(prep.results_dir).as_posix()


def reference_tool(prep) -> str:
    """Whose files a run of this round leaves: dlio (1.x) or mlpstorage (ruleset.yaml reference_tool)."""
    return rulesets.get(prep.ruleset).reference_tool


def config_dir_name(prep) -> str:
    """DLIO's Hydra output folder: configs/ (DLIO 1.x, v1.0) or dlio_config/ (mlpstorage's, v2.0 on)."""
    return "dlio_config" if timestamped(prep.ruleset) or reference_tool(prep) == "mlpstorage" else "configs"


def per_epoch_name(prep) -> str:
    """per_epoch_stats.json (DLIO 1.x/2.x), or rank 0's 0_per_epoch_stats.json (v3.0's leaves)."""
    return "0_per_epoch_stats.json" if timestamped(prep.ruleset) else "per_epoch_stats.json"


def metadata(prep, command: str, leaf: Path, extra: dict | None = None, stamp: str | None = None) -> dict:
    """training_<ts>_metadata.json: what mlpstorage records of an invocation step (benchmark_type,
    model, command, run_datetime, accelerator, parameters, override_parameters, executed_command,
    args) plus the provenance of the code that ran."""
    from suite.harness import provenance
    from suite.training.run.dlio_output import config, overrides

    wl, opts = prep.workload, prep.opts
    files_n = len(prep.files) if prep.files else prep.required_files
    over = dict(line[len("++workload."):].split("=", 1)
                for line in overrides(wl, prep.params, files_n, str(prep.data_dir)) if line.startswith("++workload."))
    over = {k: v for k, v in over.items() if not k.startswith("workflow.")}   # as mlpstorage records them
    return {
        "schema_version": 1, "benchmark_type": BENCHMARK, "model": wl.name, "command": command,
        "run_datetime": stamp or leaf.name, "num_processes": opts.accelerators, "accelerator": wl.accelerator,
        "result_dir": str(Path(leaf).resolve()),
        "parameters": _overridden(config(wl, files_n, str(prep.data_dir), reference_tool(prep))["workload"], over),
        "override_parameters": dict(sorted(over.items())),
        "system_info": system_info(prep),
        "executed_command": shlex.join(redact.command(sys.argv)),
        "verification": "MINIATURE" if prep.miniature else prep.opts.division.upper(),
        "args": {"mode": opts.division, "benchmark": BENCHMARK, "model": wl.name, "command": command,
                 "num_accelerators": opts.accelerators, "accelerator_type": wl.accelerator,
                 "hosts": list(prep.hosts), "data_dir": str(prep.data_dir), "results_dir": str(prep.results_dir),
                 "ruleset": prep.ruleset, "miniature": prep.miniature, "params": list(redact.command(opts.params))},
        "provenance": provenance.for_run(),
        **(extra or {}),
    }


def _overridden(params: dict, over: dict) -> dict:
    """The parameters with each overridden value as mlpstorage records it: the override's text."""
    for key, text in over.items():
        section, _, name = key.partition(".")
        if isinstance(params.get(section), dict) and name in params[section]:
            params[section][name] = text
    return params


def system_info(prep) -> dict:
    """mlpstorage's system_info: memory and cores over the run's hosts (each host's probe on several
    hosts, this host's on one), how they were collected and when."""
    import os
    import time

    from suite.enforce.cache import meminfo_bytes

    cluster = getattr(prep, "cluster", None)
    hosts = [(h.mem_total_bytes, h.cpu_count) for h in cluster.hosts] if cluster else \
        [(meminfo_bytes("MemTotal") or 0, os.cpu_count() or 1)]
    mems = [m for m, _ in hosts]
    return {"total_memory_bytes": sum(mems), "total_cores": sum(c for _, c in hosts), "num_hosts": len(hosts),
            "min_memory_bytes": min(mems), "max_memory_bytes": max(mems),
            "collection_method": "host-probe" if cluster else "local",
            "collection_timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def write_metadata(prep, command: str, leaf: Path, extra: dict | None = None, stamp: str | None = None) -> Path:
    """<leaf>/training_<stamp>_metadata.json (stamp: the leaf's name, or a numbered run's start)."""
    path = Path(leaf) / f"{BENCHMARK}_{stamp or leaf.name}_metadata.json"
    files.write_json(path, metadata(prep, command, Path(leaf), extra, stamp), schema=METADATA_SCHEMA)
    return path


def write_steps(prep) -> None:
    """The invocation's datasize leaf (the sizing: files, bytes), and its datagen leaf when it
    generated the dataset (the miniature), each with its metadata and .mlps-code-image (v3.0)."""
    from suite.harness import provenance

    if not timestamped(prep.ruleset):
        return
    size = make(model_dir(prep) / "datasize")
    write_metadata(prep, "datasize", size, {"datasize": {
        **prep.required.to_dict(), "required_files": prep.required_files, "miniature": prep.miniature,
        "record_length_bytes": prep.workload.record_length_bytes}})
    provenance.write_pointer(size)
    if prep.generated:
        gen = make(model_dir(prep) / "datagen")
        write_metadata(prep, "datagen", gen, {"datagen": prep.generated})
        write_datagen_config(prep, gen)
        provenance.write_pointer(gen)


def write_datagen_config(prep, gen: Path) -> None:
    """The datagen leaf's dlio_config/overrides.yaml and fs_separation.json, as a published datagen
    leaf has them (generate_data=True, train=False: what readers take as a generation log)."""
    from suite.storage import separation

    wl = prep.workload
    lines = [f"workload={wl.dlio_name}", "++workload.workflow.generate_data=True", "++workload.workflow.train=False",
             f"++workload.dataset.num_files_train={prep.generated['num_files']}",
             f"++workload.dataset.data_folder={prep.data_dir}"]
    files.write_atomic(gen / "dlio_config" / "overrides.yaml", "".join(f"- {line}\n" for line in lines))
    if prep.fs_separation is not None:
        separation.write(gen, separation.probe(wl, prep.data, prep.results_dir))
