"""The DLIO-compatible files of a run: summary.json, per_epoch_stats.json, configs/*.yaml, the log.

Shapes follow DLIO v1.0 as MLPerf Storage v1.0 submissions carry them (see the WEKA and
DDN results under shared/fixtures), so existing tools read our runs and we read theirs.
"""

import datetime as dt
import os
import platform

from suite import files
from suite.enforce.cache import cpuinfo, meminfo, meminfo_bytes

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"


def timestamp(unix_s: float) -> str:
    """DLIO's utcnow() format: 2024-08-20T08:49:32.267883 (UTC, no zone suffix)."""
    return dt.datetime.fromtimestamp(unix_s, dt.timezone.utc).strftime(TIME_FORMAT)


def mem_total_bytes() -> int:
    return meminfo_bytes("MemTotal") or 0


def summary(*, start_unix_s, end_unix_s, num_accelerators, num_hosts, hostname, metric, num_files_train,
            num_samples_per_file, host_memory_bytes, host_cpu_count, epochs, data_size_per_host_bytes) -> dict:
    """summary.json with DLIO v1.0's keys. host_memory_bytes and host_cpu_count: one value, or a
    list with one per host in rank order (DLIO's host_memory_GB / host_cpu_count across hosts)."""
    gib = 1024.0**3
    mems = host_memory_bytes if isinstance(host_memory_bytes, list) else [host_memory_bytes]
    cpus = host_cpu_count if isinstance(host_cpu_count, list) else [host_cpu_count]
    return {
        "start": timestamp(start_unix_s),
        "num_accelerators": num_accelerators,
        "num_hosts": num_hosts,
        "hostname": hostname,
        "metric": metric,
        "num_files_train": num_files_train,
        "num_files_eval": 0,
        "num_samples_per_file": num_samples_per_file,
        "host_cpu_count": cpus,
        "host_processor_name": platform.processor() or platform.machine(),
        "potential_caching": [int(data_size_per_host_bytes <= m) for m in mems],
        "host_cpuinfo": cpuinfo(),
        "host_meminfo": meminfo(),
        "host_memory_GB": [m / gib for m in mems],
        "data_size_per_host_GB": data_size_per_host_bytes / gib,
        "epochs": epochs,
        "end": timestamp(end_unix_s),
    }


def per_epoch_stats(epochs, checkpoint=None, run_start_unix_s=0.0) -> dict:
    """per_epoch_stats.json: {"1": {start, block1: {start, end, duration}, end, duration}, ...};
    the last epoch carries ckpt1 when a checkpoint was written (durations are strings, as DLIO's)."""
    out = {}
    for e in epochs:
        t0, t1 = run_start_unix_s + e.start_s, run_start_unix_s + e.end_s
        entry = {"start": timestamp(t0),
                 "block1": {"start": timestamp(t0), "end": timestamp(t1), "duration": f"{t1 - t0:.2f}"}}
        end = t1
        if checkpoint and e is epochs[-1]:
            c0, c1 = run_start_unix_s + checkpoint["start_s"], run_start_unix_s + checkpoint["end_s"]
            entry["ckpt1"] = {"start": timestamp(c0), "end": timestamp(c1), "duration": f"{c1 - c0:.2f}"}
            end = c1
        entry["end"] = timestamp(end)
        entry["duration"] = f"{end - t0:.2f}"
        out[str(e.epoch)] = entry
    return out


def hydra_value(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def overrides(workload, params: dict, num_files_train: int, data_folder: str) -> list[str]:
    """configs/overrides.yaml as DLIO's Hydra writes it: `- workload=unet3d_h100`, `- ++workload.k=v`."""
    lines = [f"workload={workload.dlio_name}",
             "++workload.workflow.generate_data=False",
             "++workload.workflow.train=True",
             f"++workload.dataset.num_files_train={num_files_train}",
             f"++workload.dataset.data_folder={data_folder}"]
    for key, value in sorted(params.items()):
        if key in ("dataset.num_files_train", "dataset.data_folder"):
            continue
        lines.append(f"++workload.{key}={hydra_value(value)}")
    return lines


RENAMED_2X = {"record_length": "record_length_bytes", "record_length_stdev": "record_length_bytes_stdev",
              "record_length_resize": "record_length_bytes_resize"}    # DLIO 1.x's dataset keys -> mlpstorage's


def config(workload, num_files_train: int, data_folder: str, tool: str = "dlio") -> dict:
    """configs/config.yaml: DLIO's merged config, under its `workload:` key; as mlpstorage's DLIO writes it
    (tool "mlpstorage": model {name, model_size}, dataset.record_length_bytes...) where the round's tool is it."""
    cfg = {k: dict(v) for k, v in workload.config.items() if v}
    cfg.setdefault("dataset", {}).update(num_files_train=num_files_train, data_folder=data_folder)
    model = workload.name
    if tool == "mlpstorage":
        cfg["dataset"] = {RENAMED_2X.get(k, k): v for k, v in cfg["dataset"].items()}
        size = (cfg.get("checkpoint") or {}).get("model_size")
        model = {"name": workload.name, **({"type": workload.model_type} if workload.model_type else {}),
                 **({"model_size": size} if size else {})}
    # DLIO 1.x/2.x's merged config has its profiler section (`profiler: none`: we run none); mlpstorage's has not
    profiling = {"profiling": {"profiler": "none"}} if tool != "mlpstorage" else {}
    return {"workload": {
        "model": model,
        "framework": workload.framework,
        "workflow": {"generate_data": False, "train": True,
                     "checkpoint": bool(workload.checkpoint_model_size_bytes), "profiling": False},
        **cfg, **profiling,
    }}


def write_configs(run_dir, workload, params, num_files_train, data_folder, name: str = "configs",
                  tool: str = "dlio") -> None:
    """<run>/configs/ (DLIO 1.x's Hydra folder as we write it), or `name` (mlpstorage's: dlio_config)."""
    import yaml

    cdir = os.path.join(run_dir, name)
    files.write_atomic(os.path.join(cdir, "config.yaml"),
                       yaml.safe_dump(config(workload, num_files_train, data_folder, tool), sort_keys=False))
    files.write_atomic(os.path.join(cdir, "overrides.yaml"),
                       "".join(f"- {line}\n" for line in overrides(workload, params, num_files_train, data_folder)))


def data_size_hint(num_files: int, workload, num_hosts: int) -> float:
    """DLIO's data_size_per_host: the bytes each host's ranks consume per epoch."""
    return num_files * workload.num_samples_per_file * workload.record_length_bytes / max(1, num_hosts)
