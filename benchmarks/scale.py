"""How many simulated accelerators does this host sustain at AU >= 90%, from the page cache?

For each N, `suite run --division open --no-cache-drop` on a dataset that is already in
the page cache (so storage is not the limit, the runner's own CPU use is), with
dataset.num_files_train sized for --steps steps per epoch; the largest N whose mean AU is
>= 90% is printed. DLIO reaches 3 (resnet50 h100) and 3 (unet3d h100) on this 2-core host;
targets: >= 12 and >= 6.

resnet50 runs with its real records (143 MB TFRecord files of 1,251 samples). unet3d's
real ~140 MB samples would need N x 7 x steps files (>20 GB at N = 8) in the page cache of
a 24 GB shared host, so by default it runs scaled: record length, its stdev AND the
computation time all divided by --unet3d-scale (4): the bytes per second each rank must
read stay the same, while the per-file and per-step overheads weigh 4x more than in the
real workload (a conservative stand-in). --unet3d-scale 1 runs the real thing.

    python benchmarks/scale.py [--workloads resnet50 unet3d] [--ns 4 8 10 12 14 16]
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pagecache import warm   # benchmarks/pagecache.py, beside this script

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_NS = {"resnet50": [4, 8, 12, 16, 20, 24], "unet3d": [2, 3, 4, 6, 8]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/suite-bench-scale")
    ap.add_argument("--workloads", nargs="+", default=["resnet50", "unet3d"])
    ap.add_argument("--ns", nargs="+", type=int, default=None)
    ap.add_argument("--steps", type=int, default=5, help="steps per epoch (the first is excluded from AU)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--unet3d-scale", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=2, help="runs per N; the best AU counts (the host is shared)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    from suite.training.data import datagen
    from suite.training import workloads

    work = Path(args.workdir)
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    verdicts = {}
    for name in args.workloads:
        base = workloads.resolve(name, "h100")
        data_params, run_params = [], []
        if name == "unet3d" and args.unet3d_scale != 1:
            k = args.unet3d_scale
            data_params = [f"dataset.record_length={int(base.record_length_bytes / k)}",
                           f"dataset.record_length_stdev={int(base.record_length_stdev_bytes / k)}"]
            run_params = [f"train.computation_time={base.computation_time_s / k:.6f}"]
            print(f"unet3d scaled 1/{k:g}: record_length {int(base.record_length_bytes / k)} B, "
                  f"computation_time {base.computation_time_s / k:.4f} s")
        wl = workloads.resolve(name, "h100", workloads.parse_params(data_params))
        ns = args.ns or DEFAULT_NS[name]
        per_n_files = {n: math.ceil(n * wl.batch_size * args.steps / wl.num_samples_per_file) for n in ns}
        need = max(per_n_files.values())
        data = work / name
        scan = datagen.scan(data, wl) if data.exists() else None
        if not scan or scan.num_files < need or scan.problems:
            shutil.rmtree(data, ignore_errors=True)
            t0 = time.time()
            datagen.generate(wl, data, need, processes=os.cpu_count())
            print(f"{name}: generated {need} files in {time.time() - t0:.1f} s")
        files_ = datagen.scan(data, wl).files
        best = 0
        fails = 0
        for n in ns:
            res = work / f"res-{name}-{n}"
            shutil.rmtree(res, ignore_errors=True)
            warm(files_[:per_n_files[n]])
            argv = [sys.executable, "-m", "suite", "run", "--workload", name, "--accelerators", str(n),
                    "--data-dir", str(data), "--results-dir", str(res), "--runs", "1", "--division", "open",
                    "--no-cache-drop"]
            for p in data_params + run_params + [f"dataset.num_files_train={per_n_files[n]}",
                                                 f"train.epochs={args.epochs}",
                                                 f"checkpoint.checkpoint_folder={res / 'ckpt'}",
                                                 "checkpoint.model_size=1"]:
                argv += ["--param", p]
            load0 = os.getloadavg()[0]
            doc = None
            for _ in range(args.repeats):
                shutil.rmtree(res, ignore_errors=True)
                warm(files_[:per_n_files[n]])
                proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
                path = res / "run-1" / "results.json"
                if not path.exists():
                    print(f"{name} N={n}: failed: {proc.stderr.strip()}")
                    break
                got = json.loads(path.read_text())
                if doc is None or got["metric"]["train_au_mean_percentage"] > doc["metric"]["train_au_mean_percentage"]:
                    doc = got
            if doc is None:
                break
            m = doc["metric"]
            au = m["train_au_mean_percentage"]
            ok = au >= 90.0
            print(f"{name} N={n:2d}: AU {au:6.2f}% (epochs {', '.join(f'{a:.1f}' for a in m['train_au_percentage'])}) "
                  f"{m['train_throughput_mean_samples_per_second']:.1f} samples/s, "
                  f"{m['throughput_mib_s']:.0f} MiB/s read, {doc['epochs'][0]['steps']} steps/epoch, "
                  f"load {load0:.1f} -> {'ok' if ok else 'below 90%'} (best of {args.repeats})")
            shutil.rmtree(res, ignore_errors=True)
            if ok:
                best, fails = n, 0
            else:
                fails += 1
                if fails >= 2:
                    break
        verdicts[name] = best
        if not args.keep:
            shutil.rmtree(data, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.2f} at end (2 cores shared with other work: figures are noisy)")
    for name, n in verdicts.items():
        target = {"resnet50": 12, "unet3d": 6}.get(name)
        print(f"SCALE {name} h100: largest N at AU >= 90% = {n} (target >= {target}; DLIO here: 3)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
