"""Writes tests/data/suite-run/unet3d-h100: a small result dir in the shape `suite run` writes
(R/run-<k>/{summary.json, per_epoch_stats.json, configs/, steps/rank-<r>.json, results.json}),
with numbers computed by suite.storage.metrics from the step times below. Run it to regenerate."""

import json
from pathlib import Path

import yaml

from suite.storage import metrics

OUT = Path(__file__).resolve().parent / "suite-run" / "unet3d-h100"
RECORD = 146600628
COMPUTE = 0.323
# per run, per epoch: (steps, data wait per step in s)
RUNS = {1: [(6, 0.010), (6, 0.012), (6, 0.011)], 2: [(6, 0.020), (6, 0.009), (6, 0.015)]}


def main():
    t = 1_763_700_000.0
    runs_out = {}
    for k, epochs in RUNS.items():
        d = OUT / f"run-{k}"
        (d / "configs").mkdir(parents=True, exist_ok=True)
        (d / "steps").mkdir(exist_ok=True)
        run_start = t
        ep_docs, rank_epochs, per_epoch = [], [], {}
        for e, (steps, wait) in enumerate(epochs, start=1):
            starts, ends, comps = [], [], []
            t0 = t
            for _ in range(steps):
                starts.append(t); t += wait + COMPUTE; ends.append(t); comps.append(COMPUTE)
            au = metrics.epoch_au_from_steps(starts, ends, comps)
            tput = metrics.epoch_throughput_from_steps(
                [x - run_start for x in starts], [x - run_start for x in ends], steps * 7)  # DLIO v1.0
            ep_docs.append({"epoch": e, "start_s": t0, "end_s": t, "duration_s": t - t0, "steps": steps,
                            "samples": steps * 7, "bytes_read": steps * 7 * RECORD, "au_percentage": au,
                            "throughput_samples_per_second": tput,
                            "throughput_mib_per_second": metrics.mib_per_second(tput, RECORD)})
            rank_epochs.append({"epoch": e, "step_start_s": [x - run_start for x in starts],
                                "step_end_s": [x - run_start for x in ends], "step_compute_s": comps,
                                "start_s": t0 - run_start, "end_s": t - run_start,
                                "samples": steps * 7, "bytes_read": steps * 7 * RECORD})
            per_epoch[str(e)] = {"start": f"2025-11-21T04:40:{e:02d}", "end": f"2025-11-21T04:41:{e:02d}",
                                 "duration": f"{t - t0:.2f}"}
            t += 0.5
        metric = metrics.run_metric([x["au_percentage"] for x in ep_docs],
                                    [x["throughput_samples_per_second"] for x in ep_docs], RECORD, 0.9)
        summary = {"start": "2025-11-21T04:40:00", "end": "2025-11-21T04:42:00", "num_accelerators": 1,
                   "num_hosts": 1, "hostname": "ci-host", "metric": metric, "num_files_train": 42,
                   "num_samples_per_file": 1, "host_memory_GB": [0.25], "host_cpu_count": [2], "epochs": 3}
        results = {
            "schema_version": 1, "status": "complete", "complete": True, "miniature": True, "error": None,
            "workload": "unet3d", "dlio_workload": "unet3d_h100", "accelerator": "h100", "num_accelerators": 1,
            "hosts": ["ci-host"], "num_hosts": 1, "ruleset": "v1.0", "division": "closed", "run_index": k,
            "duration_s": t - run_start, "metric": metric, "epochs": ep_docs,
            "enforcement": {
                "cache_drop": {"attempted": True, "succeeded": True, "error": None,
                               "method": "sync; echo 3 > /proc/sys/vm/drop_caches", "duration_s": 0.41,
                               "cached_bytes_before": 912_000_000, "cached_bytes_after": 48_000_000},
                "memory_limit": {"version": "v1", "requested_bytes": 268_435_456, "applied_bytes": 268_435_456,
                                 "peak_bytes": 201_326_592, "oom_kills": 0, "removed": True},
                "host_memory_bytes": 268_435_456, "required_files": 42},
            "compliance": {"compliant": False, "reasons": ["miniature: the 500-step minimum is not applied"]},
            "host": {"hostname": "ci-host", "cpu_count": 2, "mem_total_bytes": 25_769_803_776,
                     "kernel": "6.1.0-test"},
            "versions": {"suite": "0.1.0", "python": "3.11.2", "mpi": "mpich 4.1, mpi4py 4.0"},
        }
        (d / "summary.json").write_text(json.dumps(summary, indent=4, sort_keys=True) + "\n")
        (d / "per_epoch_stats.json").write_text(json.dumps(per_epoch, indent=4, sort_keys=True) + "\n")
        (d / "results.json").write_text(json.dumps(results, indent=4, sort_keys=True) + "\n")
        (d / "configs" / "overrides.yaml").write_text(yaml.safe_dump(
            ["workload=unet3d_h100", "++workload.dataset.num_files_train=42"]))
        (d / "configs" / "config.yaml").write_text(yaml.safe_dump({"workload": {
            "model": "unet3d", "dataset": {"record_length": RECORD, "num_files_train": 42, "format": "npz"},
            "reader": {"batch_size": 7}, "train": {"computation_time": COMPUTE, "epochs": 3}}}))
        (d / "steps" / "rank-0.json").write_text(json.dumps({
            "schema_version": 1, "rank": 0, "hostname": "ci-host", "run_start_unix_s": run_start,
            "epochs": rank_epochs, "checkpoint": None}, indent=1) + "\n")
        runs_out[f"run-{k}"] = metric
        t += 5


if __name__ == "__main__":
    main()
