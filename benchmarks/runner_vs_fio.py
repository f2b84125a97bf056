"""How fast does `suite run` read, against fio on the same files from the page cache?

For unet3d (one ~140 MB npz sample per file) and resnet50 (1,251 TFRecord samples per
file, where per-sample overhead would show): generate real files, warm the page cache,
run fio's buffered sequential read of the directory
    fio --opendir=D --rw=read --bs=1M --ioengine=psync --readonly --invalidate=0
then `suite run --division open --no-cache-drop --param train.computation_time=0` on the
same files, and print the runner's read rate (bytes actually read / epoch time, and
DLIO's train_io_mean_MB_per_second) over fio's. Target: >= 0.85 (DLIO: 0.07-0.17 here).

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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FILES = {"unet3d": 28, "resnet50": 16}     # 4 steps of 7 / 50 steps of 400: every file read each epoch


def warm(paths) -> None:
    buf = bytearray(8 << 20)
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass


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
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    from suite import datagen, workloads

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
        fio = fio_mib_s(data / "train", args.repeats)
        best = None
        for _ in range(args.repeats):
            warm(files_)
            doc = suite_run(name, data, work / f"res-{name}", [])
            if best is None or doc["metric"]["throughput_mib_s"] > best["metric"]["throughput_mib_s"]:
                best = doc
        m = best["metric"]
        rows.append((name, fio, m["throughput_mib_s"], m["train_io_mean_MB_per_second"], best))
        print(f"{name}: fio {fio:.0f} MiB/s; suite run {m['throughput_mib_s']:.0f} MiB/s read "
              f"(DLIO-style train_io_mean_MB_per_second {m['train_io_mean_MB_per_second']:.0f}); "
              f"ratio {m['throughput_mib_s'] / fio:.2f} "
              f"[read_threads {best['params'].get('reader.read_threads', wl.read_threads)}, "
              f"{sum(e['steps'] for e in best['epochs'])} steps]")
    print(f"load average {os.getloadavg()[0]:.2f} at end (2 cores shared with other work: figures are noisy)")
    for name, fio, mib, _, _ in rows:
        print(f"RATIO {name} runner/fio = {mib / fio:.3f}  (target >= 0.85)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
