"""What does host sampling cost the runner? `suite run` from the page cache with the host sampler
(suite.harness.hostmetrics, host_metrics.json at its default 1 s) and without it
(SUITE_HOST_METRICS_INTERVAL_S=0), alternating, so a load change on the shared host hits both.

unet3d with 4 MiB records (64 files, 256 MiB: it stays in the page cache), no compute, 150 epochs
(a few seconds a run); the read rate is results.json's metric.throughput_mib_s (bytes actually read
/ epoch time). Prints each pair, the median on/off ratio, and the sampler's own CPU time per run
(host_metrics.json's sampler_cpu_s) against the run's duration. Target: cost < 1 % (ratio >= 0.99).

    python benchmarks/host_metrics_cost.py [--workdir /tmp/suite-bench-hm] [--pairs 7] [--keep]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pagecache import warm   # benchmarks/pagecache.py, beside this script

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DATA_PARAMS = ["dataset.record_length=4194304", "dataset.record_length_stdev=0"]
RUN_PARAMS = DATA_PARAMS + ["train.computation_time=0", "train.epochs=150", "checkpoint.model_size=1"]
FILES = 64


def suite_run(data: Path, results: Path, sampled: bool) -> dict:
    if results.exists():
        shutil.rmtree(results)
    argv = [sys.executable, "-m", "suite", "run", "--workload", "unet3d", "--accelerators", "1",
            "--data-dir", str(data), "--results-dir", str(results), "--runs", "1", "--division", "open",
            "--no-cache-drop", "--param", f"checkpoint.checkpoint_folder={results / 'ckpt'}"]
    for p in RUN_PARAMS:
        argv += ["--param", p]
    env = {**os.environ, "SUITE_HOST_METRICS_INTERVAL_S": "1" if sampled else "0"}
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=env)
    run = results / "run-1"
    if not (run / "results.json").exists():
        raise SystemExit(f"suite run failed: {proc.stderr.strip()}")
    doc = json.loads((run / "results.json").read_text())
    if doc["status"] != "complete":
        raise SystemExit(f"suite run failed: {doc['error']}")
    hm = run / "host_metrics.json"
    if hm.exists() != sampled:
        raise SystemExit(f"{hm}: expected {'a' if sampled else 'no'} host_metrics.json")
    doc["_host"] = json.loads(hm.read_text())["hosts"][0] if sampled else None      # this host's series
    return doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/suite-bench-hm")
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    from suite.training.data import datagen
    from suite.training import workloads

    work = Path(args.workdir)
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    wl = workloads.resolve("unet3d", "h100", workloads.parse_params(DATA_PARAMS))
    data = work / "unet3d"
    scan = datagen.scan(data, wl) if data.exists() else None
    if not scan or scan.num_files != FILES or scan.problems:
        shutil.rmtree(data, ignore_errors=True)
        datagen.generate(wl, data, FILES, processes=1)
    files_ = datagen.scan(data, wl).files
    ratios, costs = [], []
    for i in range(args.pairs):
        rates = {}
        for sampled in ((True, False) if i % 2 else (False, True)):      # alternate which goes first
            warm(files_)
            doc = suite_run(data, work / "res", sampled)
            rates[sampled] = doc["metric"]["throughput_mib_s"]
            if sampled:
                h = doc["_host"]
                costs.append(h["sampler_cpu_s"] / max(h["duration_s"], 1e-9))
                samples = len(h["samples"])
                duration = h["duration_s"]
        ratios.append(rates[True] / rates[False])
        print(f"pair {i + 1}: sampled {rates[True]:.0f} MiB/s, unsampled {rates[False]:.0f} MiB/s -> "
              f"{ratios[-1]:.3f} ({samples} samples in {duration:.1f} s; load {os.getloadavg()[0]:.2f})")
    ratios.sort()
    costs.sort()
    print(f"load average {os.getloadavg()[0]:.2f} at end (2 cores shared with other work: figures are noisy)")
    print(f"RATIO sampled/unsampled read rate: median {ratios[len(ratios) // 2]:.3f} (range {ratios[0]:.3f}-"
          f"{ratios[-1]:.3f}); sampler CPU per second of run: median {100 * costs[len(costs) // 2]:.3f} % of one "
          f"core (target: cost < 1 %)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
