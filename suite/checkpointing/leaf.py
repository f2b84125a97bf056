"""MLPerf Storage v3.0 checkpointing leaves: `<results>/checkpointing/<model>/<YYYYMMDD_HHMMSS>/`, one for
the write, one for the read. Written by our runs (`decorate`), read the same way for ours and for the
published ones of mlcommons/storage_results_v3.0 (`read`, `pair`).

A leaf as published: summary.json (DLIO's checkpointing summary with `start` and `end`), per rank
`<r>_per_epoch_stats.json` and `<r>_output.json`, `checkpointing_<ts>_metadata.json` (the invocation),
`checkpointing_<ts>_timeseries.json` (suite.checkpointing.timeseries), `collector-staging/
cluster_info.json`, `fs_separation.json`, `dlio_config/{config,hydra,overrides}.yaml`,
`checkpointing_run.std{out,err}.log`. Ours adds its own evidence beside them: checkpoint_run_set.json
and run-1/ (results.json with the ranks' records, plan.json, the read's `handoff`), which `suite check`
holds to rules/v3.0/checkpointing*.yaml. No dlio.log: the ranks are suite's, not DLIO's.
"""

from __future__ import annotations

import socket
from datetime import datetime
from pathlib import Path

from suite import files, redact
from suite.errors import ResultError
from suite.harness import leafstamp

GIB = 1 << 30
METADATA = "checkpointing_{ts}_metadata.json"
TIMESERIES = "checkpointing_{ts}_timeseries.json"
MAX_LEAF_FILE_BYTES = 64 << 20        # a published timeseries is about 0.5 MB for 5 minutes at 10 s


def new_leaf(parent: Path) -> Path:
    """parent/<stamp> not taken yet, later than the leaves there (suite.harness.leafstamp: the rules'
    clock, the one every kind's leaves are named by; waits for the next second when this one is taken)."""
    return Path(parent) / leafstamp.fresh(parent)


# --------------------------------------------------------------------------- writing (our runs)


def decorate(leaf: Path, doc: dict, ranks: list[dict], overrides: dict, argv: list[str], sampler) -> None:
    """The published leaf files for one phase, from the run's results.json doc and its ranks' records."""
    from suite.checkpointing import results

    ts = leaf.name
    files.write_json(leaf / "summary.json", results.dlio_summary(doc, doc["checkpoints"]), schema="checkpoint-summary")
    key = "save" if doc["phase"] == "write" else "load"
    totals = results.host_memory_totals(doc)
    memory, memory_first = dict(zip(doc["hosts"], totals)), totals[0]
    for r in ranks:
        own = {}
        for c in r["checkpoints"]:
            d = c["duration_s"]
            own[f"{key}_ckpt{c['index']}"] = {"start": results._iso(c["start_unix_s"]), "end": results._iso(c["end_unix_s"]),
                                              "duration": d, "throughput": c["bytes"] / GIB / d if d > 0 else 0.0}
        window = {"start": results._iso(doc["start_unix_s"]), "end": results._iso(doc["end_unix_s"]),
                  "duration": f"{doc['end_unix_s'] - doc['start_unix_s']:.2f}"}
        files.write_json(leaf / f"{r['rank']}_per_epoch_stats.json", {"1": {**window, **own}}, schema="per-epoch-stats")
        files.write_json(leaf / f"{r['rank']}_output.json", {"hostname": r["hostname"], "1": window,
                                                            "host_memory_GB": memory.get(r["hostname"], memory_first) / GIB},
                         schema="checkpoint-output")
    files.write_json(leaf / METADATA.format(ts=ts), metadata(doc, ts, leaf, overrides, argv), schema="checkpoint-metadata")
    files.write_json(leaf / TIMESERIES.format(ts=ts), sampler.doc(), schema="checkpoint-timeseries", indent=None)
    (leaf / "collector-staging").mkdir(exist_ok=True)
    files.write_json(leaf / "collector-staging" / "cluster_info.json", cluster_info(), schema="checkpoint-cluster-info")
    _dlio_config(leaf / "dlio_config", doc, overrides)
    log = leaf / "run-1" / "mpiexec.log"
    files.write_atomic(leaf / "checkpointing_run.stdout.log", log.read_bytes() if log.is_file() else b"")
    errs = sorted((leaf / "run-1" / "errors").glob("*.txt")) if (leaf / "run-1" / "errors").is_dir() else []
    files.write_atomic(leaf / "checkpointing_run.stderr.log", b"".join(p.read_bytes() for p in errs))


def reference_files(run_dir: Path, doc: dict, argv: list[str]) -> None:
    """A numbered run (run-<k>/, one phase per invocation) as mlpstorage leaves each run: its
    checkpointing_<ts>_metadata.json (ts: the run's start) and dlio_config/, beside summary.json."""
    ts = leafstamp.stamp(doc["start_unix_s"])
    over = overrides_of(doc)
    files.write_json(run_dir / METADATA.format(ts=ts), metadata(doc, ts, run_dir, over, argv),
                     schema="checkpoint-metadata")
    _dlio_config(run_dir / "dlio_config", doc, over)


def metadata(doc: dict, ts: str, leaf: Path, overrides: dict, argv: list[str]) -> dict:
    from suite.checkpointing import results

    p = doc["parallelism"]
    return {"benchmark_type": "checkpointing", "model": doc["workload"], "command": "run", "run_datetime": ts,
            "num_processes": doc["processes"], "accelerator": None, "result_dir": str(leaf.resolve()),
            "parameters": {"model": {**_model(doc), "parallelism": {"pipeline": p["pipeline"], "tensor": p["tensor"],
                                                                    "zero_stage": p["zero_stage"]}},
                           "framework": "pytorch",
                           "workflow": {"generate_data": False, "train": False, "checkpoint": True},
                           "checkpoint": {"checkpoint_folder": doc["checkpoint_dir"],
                                          "time_between_checkpoints": doc["time_between_checkpoints_s"],
                                          "num_checkpoints_write": doc["num_checkpoints_write"],
                                          "num_checkpoints_read": doc["num_checkpoints_read"], "fsync": doc["fsync"]}},
            "override_parameters": overrides,
            "system_info": {"num_hosts": len(doc["hosts"]), "hosts": [{"hostname": h} for h in doc["hosts"]],
                            "total_memory_bytes": sum(results.host_memory_totals(doc))},
            "suite": {"argv": list(redact.command(argv)), "ruleset": doc["ruleset"], "mode": doc["mode"], "division": doc["division"],
                      "miniature": doc["miniature"], "phase": doc["phase"]}}


def _model(doc: dict) -> dict:
    """The model as DLIO's checkpoint workload config describes it (name, type, layers, datatypes, the
    transformer's sizes), for the model the run wrote (the miniature's where it was one)."""
    from dataclasses import asdict

    from suite.checkpointing import model
    from suite.checkpointing import workloads

    t = asdict(model.from_workload(workloads.load(doc["workload"]), doc["processes"], doc["mode"],
                                   bool(doc["miniature"])).model)
    top = ("num_layers", "model_datatype", "optimizer_datatype")
    return {"name": doc["workload"].replace("-", "_"), "type": "transformer", **{k: t.pop(k) for k in top},
            "transformer": t}


def cluster_info() -> dict:
    from suite.checkpointing.timeseries import _iso, _read, keyed_ints

    cpus, cur = [], {}
    for line in _read("/proc/cpuinfo").splitlines():
        if not line.strip():
            if cur:
                cpus.append(cur)
            cur = {}
            continue
        k, _, v = line.partition(":")
        cur[k.strip()] = v.strip()
    if cur:
        cpus.append(cur)
    host = socket.gethostname()
    return {host: {"hostname": host, "collection_timestamp": _iso(), "meminfo": keyed_ints(_read("/proc/meminfo"), ":"),
                   "cpuinfo": cpus}}


def _dlio_config(d: Path, doc: dict, overrides: dict) -> None:
    import yaml

    d.mkdir(exist_ok=True)
    config = {"workload": {"model": {"name": doc["workload"].replace("-", "_")},
                           "workflow": {"generate_data": False, "train": False, "checkpoint": True},
                           "checkpoint": {k.split(".", 1)[1]: v for k, v in overrides.items()}}}
    files.write_atomic(d / "config.yaml", yaml.safe_dump(config, sort_keys=True))
    files.write_atomic(d / "hydra.yaml", yaml.safe_dump({"hydra": {"job": {"name": "suite-checkpoint"}}}))
    lines = [f"workload={doc['workload'].replace('-', '_')}"] + [f"++workload.{k}={v}" for k, v in overrides.items()]
    files.write_atomic(d / "overrides.yaml", yaml.safe_dump(lines))


def overrides_of(doc: dict) -> dict:
    """The checkpoint parameters the invocation set (as the published metadata's override_parameters; subset
    mode as mlpstorage records it, checkpoint.mode, which the checkpointing judge reads for 4.3.5 and 4.3.3)."""
    out = {"checkpoint.num_checkpoints_read": doc["num_checkpoints_read"],
           "checkpoint.num_checkpoints_write": doc["num_checkpoints_write"],
           "checkpoint.checkpoint_folder": doc["checkpoint_dir"]}
    return {**out, "checkpoint.mode": "subset"} if doc.get("mode") == "subset" else out


# --------------------------------------------------------------------------- reading (ours and published)


def _time(text, where: Path, key: str) -> float:
    """An ISO time of a summary (naive: the leaf's local time; only differences are used)."""
    if not isinstance(text, str) or len(text) > 40:
        raise ResultError(f"{where}: {key}: expected an ISO date-time, got {str(text)[:40]!r}")
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ResultError(f"{where}: {key}: expected an ISO date-time, got {text!r}") from None
    return t.replace(tzinfo=None).timestamp() if t.tzinfo is None else t.timestamp()


def _number(m: dict, key: str, where: Path):
    v = m.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")) or v < 0:
        raise ResultError(f"{where}: metric.{key}: expected a finite number >= 0, got {v!r}")
    return float(v)


def read(leaf) -> dict:
    """One checkpointing leaf (ours or published): its phase, model, processes, window and figures.
    Bad input is a ResultError naming the file and field."""
    leaf = Path(leaf)
    if not leafstamp.is_stamp(leaf.name):
        raise ResultError(f"{leaf}: expected a timestamp directory YYYYMMDD_HHMMSS, got {leaf.name!r}")
    sp = leaf / "summary.json"
    s = files.load_json(sp, schema="checkpoint-summary", error=ResultError, root=leaf)
    meta_p = leaf / METADATA.format(ts=leaf.name)
    meta = files.load_json(meta_p, schema="checkpoint-metadata", error=ResultError, root=leaf) if meta_p.is_file() else None
    m = s["metric"]
    phases = [p for p, k in (("write", "save"), ("read", "load")) if f"{k}_checkpoint_io_mean_GB_per_second" in m]
    if len(phases) != 1:
        raise ResultError(f"{sp}: metric: expected save_ or load_checkpoint_io_mean_GB_per_second (one phase), "
                          f"got {'both' if phases else 'neither'}")
    phase = phases[0]
    k = "save" if phase == "write" else "load"
    start, end = _time(s.get("start"), sp, "start"), _time(s.get("end"), sp, "end")
    ck = (meta or {}).get("parameters", {}).get("checkpoint", {})
    out = {"path": str(leaf), "phase": phase, "model": (meta or {}).get("model") or (leaf.parent.name if leaf.parent.parent.name == "checkpointing"
                                                                      else s.get("model")),
           "processes": (meta or {}).get("num_processes", s["num_accelerators"]),
           "checkpoints": ck.get(f"num_checkpoints_{phase}"), "start_unix_s": start, "end_unix_s": end,
           "duration_s": end - start, "throughput_gib_s": _number(m, f"{k}_checkpoint_io_mean_GB_per_second", sp),
           "duration_mean_s": _number(m, f"{k}_checkpoint_duration_mean_seconds", sp),
           "checkpoint_size_gib": _number(m, "checkpoint_size_GB", sp),
           "ranks": len(list(leaf.glob("*_per_epoch_stats.json"))), "timeseries": None,
           "fs_separation": (leaf / "fs_separation.json").is_file()}
    ts = leaf / TIMESERIES.format(ts=leaf.name)
    if ts.is_file() and ts.stat().st_size > 64:     # staff replace pruned files by a 16-byte placeholder
        from suite.checkpointing.timeseries import summarise

        out["timeseries"] = summarise(files.load_json(ts, schema="checkpoint-timeseries", error=ResultError,
                                                      limit=MAX_LEAF_FILE_BYTES, root=leaf))
    return out


def pair(write_leaf, read_leaf) -> dict:
    """A write leaf and its read: the gap (read start - write end) against 4.7.1's 30 s."""
    from suite.checkpointing.handoff import WINDOW_S

    w, r = read(write_leaf), read(read_leaf)
    if (w["phase"], r["phase"]) != ("write", "read"):
        raise ResultError(f"{read_leaf}: expected a write leaf then a read leaf, got {w['phase']} then {r['phase']}")
    gap = r["start_unix_s"] - w["end_unix_s"]
    return {"write": w, "read": r, "gap_s": gap, "window_s": WINDOW_S, "within_window": 0 <= gap <= WINDOW_S}


def leaves(model_dir) -> list[Path]:
    """The timestamp leaves of checkpointing/<model>/, in time order."""
    d = Path(model_dir)
    return sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink() and leafstamp.is_stamp(p.name))
