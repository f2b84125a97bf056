"""How fast does `suite run` read, against fio on the same files from the page cache?

For unet3d (one ~140 MB npz sample per file) and resnet50 (1,251 TFRecord samples per
file, where per-sample overhead would show): generate real files, warm the page cache,
run fio's buffered sequential read of the directory
    fio --opendir=D --rw=read --bs=1M --ioengine=psync --readonly --invalidate=0
then `suite run --division open --no-cache-drop --param train.computation_time=0` on the
same files, and print the runner's read rate (bytes actually read / epoch time, and
DLIO's train_io_mean_MB_per_second) over fio's. Target: >= 0.85 (DLIO: 0.07-0.17 here).
Two runner settings per workload: reader.transfer_size=1MiB (fio's --bs, the like-for-like
ratio) and the workload's own transfer_size (unet3d 0 = whole files in 4 MiB reads,
resnet50 256 KiB: four times fio's request count).

    python benchmarks/runner_vs_fio.py [--workdir /tmp/suite-bench] [--workloads unet3d resnet50] [--keep]
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

FILES = {"unet3d": 28, "resnet50": 16}     # 4 steps of 7 / 50 steps of 400: every file read each epoch


def fio_mib_s(train_dir: Path, repeats: int) -> float:
    best = 0.0
    for _ in range(repeats):
        out = subprocess.run(["fio", "--name=seq", f"--opendir={train_dir}", "--rw=read", "--bs=1M",
                              "--ioengine=psync", "--readonly", "--invalidate=0", "--output-format=json"],
                             capture_output=True, text=True, check=True)
        job = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]["read"]
        best = max(best, job["bw_bytes"] / 1024**2)
    return best


def suite_run(workload: str, data: Path, results: Path, extra: list[str]) -> dict:
    if results.exists():
        shutil.rmtree(results)
    argv = [sys.executable, "-m", "suite", "run", "--workload", workload, "--accelerators", "1",
            "--data-dir", str(data), "--results-dir", str(results), "--runs", "1", "--division", "open",
            "--no-cache-drop", "--param", "train.computation_time=0",
            "--param", f"checkpoint.checkpoint_folder={results / 'ckpt'}", "--param", "checkpoint.model_size=1",
            *extra]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    if not (results / "run-1" / "results.json").exists():
        raise SystemExit(f"suite run failed: {proc.stderr.strip()}")
    doc = json.loads((results / "run-1" / "results.json").read_text())
    if doc["status"] != "complete":
        raise SystemExit(f"suite run failed: {doc['error']}")
    return doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/suite-bench-fio")
    ap.add_argument("--workloads", nargs="+", default=["unet3d", "resnet50"])
    ap.add_argument("--repeats", type=int, default=5, help="fio + runner pairs per setting")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    from suite.training.data import datagen
    from suite.training import workloads

    work = Path(args.workdir)
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    rows = []
    for name in args.workloads:
        wl = workloads.resolve(name, "h100")
        data = work / name
        scan = datagen.scan(data, wl) if data.exists() else None
        if not scan or scan.num_files != FILES[name] or scan.problems:
            shutil.rmtree(data, ignore_errors=True)
            t0 = time.time()
            datagen.generate(wl, data, FILES[name], processes=os.cpu_count())
            print(f"{name}: generated {FILES[name]} files in {time.time() - t0:.1f} s")
        files_ = datagen.scan(data, wl).files
        warm(files_)
        for label, extra in (("transfer_size=1MiB", ["--param", "reader.transfer_size=1048576"]),
                             (f"workload transfer_size={wl.transfer_size_bytes}", [])):
            pairs = []     # fio and the runner back to back, so a load change on the shared host hits both
            for _ in range(args.repeats):
                warm(files_)
                fio = fio_mib_s(data / "train", 1)
                doc = suite_run(name, data, work / f"res-{name}", extra)
                pairs.append((fio, doc["metric"]["throughput_mib_s"], doc))
            ratios = sorted(r / f for f, r, _ in pairs)
            median = ratios[len(ratios) // 2]
            rows.append((f"{name} {label}", median, min(ratios), max(ratios)))
            for f, r, doc in pairs:
                print(f"{name} [{label}, read_threads {wl.read_threads}]: fio {f:.0f} MiB/s, suite run {r:.0f} MiB/s "
                      f"read (DLIO-style {doc['metric']['train_io_mean_MB_per_second']:.0f} MB/s, "
                      f"{sum(e['steps'] for e in doc['epochs'])} steps) -> {r / f:.2f}")
    print(f"load average {os.getloadavg()[0]:.2f} at end (2 cores shared with other work: figures are noisy)")
    for name, median, lo, hi in rows:
        print(f"RATIO {name}: runner/fio median {median:.3f} (range {lo:.2f}-{hi:.2f})  (target >= 0.85)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
