"""Our runner against DLIO (the reference code), on the same files, same host, back to back.

For each workload: one dataset written by `suite datagen` (both engines read it: DLIO's valid/ is
there), warmed into the page cache; then, alternating engines for each point:
- read rate at computation_time 0 (N = 1, every file once), against fio's buffered sequential
  read of the same directory (fio --opendir=D --rw=read --bs=1M --ioengine=psync --invalidate=0);
  suite's rate is bytes actually read / epoch time, DLIO's is the dataset's bytes / epoch time
  (DLIO counts no bytes; its own "MB/s" is samples/s x the configured record length);
- AU at the workload's computation time for N = 1..k (page cache, --no-cache-drop, so the engine's
  own CPU use is what limits it), the largest N with AU >= 90%;
- start-up per run: the command's wall time minus its epochs (process start, imports, MPI,
  results), and for DLIO the time from launch to its first timestamp (engine.startup_s);
- peak memory per rank: the memory cgroup's peak (--memory-limit) / N.
Reduced sizes (stated in the table): unet3d's record length and computation time are divided by
--unet3d-scale (as scale.py does); the step count per epoch is --steps.

    python benchmarks/engines.py [--workloads resnet50 unet3d] [--ns 1 2 3 4 6 8] [--steps 5] [--give-up 60] [--unet3d-scale 8]
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def loadavg() -> str:
    return open("/proc/loadavg").read().split(" ", 3)[:3].__str__()


def params(name: str, scale: int, scale_compute: bool = True) -> list[str]:
    from suite.training import workloads

    w = workloads.resolve(name, "h100")
    if name != "unet3d" or scale == 1:
        return []
    out = [f"dataset.record_length={int(w.record_length_bytes / scale)}",
           f"dataset.record_length_stdev={int(w.record_length_stdev_bytes / scale)}"]
    return out + ([f"train.computation_time={w.computation_time_s / scale:.6f}"] if scale_compute else [])


def dataset(name: str, workdir: Path, files: int, extra: list[str]) -> Path:
    data = workdir / f"{name}-data"
    if not (data / "generation_log.json").exists():
        subprocess.run([sys.executable, "-m", "suite", "datagen", "--workload", name, "--files", str(files),
                        "--data-dir", str(data), *[f"--param={p}" for p in extra]], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
    return data


def run(engine: str, name: str, n: int, data: Path, results: Path, extra: list[str]) -> dict:
    if results.exists():
        shutil.rmtree(results)
    argv = [sys.executable, "-m", "suite", "run", "--engine", engine, "--workload", name, "--accelerators", str(n),
            "--data-dir", str(data), "--results-dir", str(results), "--runs", "1", "--division", "open",
            "--no-cache-drop", "--memory-limit", "16GiB", "--param", "train.epochs=1",
            "--param", f"checkpoint.checkpoint_folder={results / 'ckpt'}", "--param", "checkpoint.model_size=1", *[f"--param={p}" for p in extra]]
    t0 = time.time()
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    wall = time.time() - t0
    path = results / "run-1" / "results.json"
    if not path.exists():
        raise SystemExit(f"{engine} {name} N={n}: no results.json (rc {proc.returncode}):\n{proc.stdout[-2000:]}"
                         f"\n{proc.stderr[-2000:]}")
    doc = json.loads(path.read_text())
    if doc["status"] != "complete":
        raise SystemExit(f"{engine} {name} N={n}: {doc['error']}")
    e = doc["epochs"][0]
    peak = (doc["enforcement"].get("memory_limit") or {}).get("peak_bytes") or 0
    startup = (doc.get("engine") or {}).get("startup_s")
    return {"au": doc["metric"]["train_au_mean_percentage"], "read_mib_s": e["read_mib_per_second"],
            "claimed_mb_s": doc["metric"]["train_io_mean_MB_per_second"],
            "samples_s": doc["metric"]["train_throughput_mean_samples_per_second"],
            "overhead_s": wall - sum(x["duration_s"] for x in doc["epochs"]), "startup_s": startup,
            "peak_per_rank_mib": peak / n / 2**20, "epoch_s": e["duration_s"], "wall_s": wall}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/suite-engines"))
    ap.add_argument("--workloads", nargs="+", default=["resnet50", "unet3d"])
    ap.add_argument("--ns", nargs="+", type=int, default=[1, 2, 3, 4, 6, 8])
    ap.add_argument("--steps", type=int, default=5, help="steps per epoch at the largest N")
    ap.add_argument("--unet3d-scale", type=int, default=8)
    ap.add_argument("--engines", nargs="+", default=["suite", "dlio"])
    ap.add_argument("--give-up", type=float, default=60.0, help="stop an engine's N sweep once its AU is below this")
    ap.add_argument("--workload-compute", action="store_true",
                    help="unet3d: keep the workload's computation time (scale the record length only): each "
                         "rank then reads 1/scale of the real bytes per second, so the engine's own CPU is the limit")
    ap.add_argument("--skip-compute0", action="store_true", help="skip the read-rate-at-compute-0 runs")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    from runner_vs_fio import fio_mib_s, warm
    from suite.training import workloads

    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"load average at start: {loadavg()}", flush=True)
    for name in args.workloads:
        w = workloads.resolve(name, "h100")
        extra = params(name, args.unet3d_scale, not args.workload_compute)
        files = math.ceil(max(args.ns) * args.steps * w.batch_size / w.num_samples_per_file)
        data = dataset(name, args.workdir, files, extra)
        train = sorted((data / "train").rglob("img_*"))
        warm(train)
        fio = fio_mib_s(data / "train", 3)
        print(f"{name}: {len(train)} files, {sum(p.stat().st_size for p in train) / 2**30:.2f} GiB, "
              f"params {extra or 'real'}; fio {fio:.0f} MiB/s (page cache); load {loadavg()}", flush=True)
        for engine in ([] if args.skip_compute0 else args.engines):
            r = run(engine, name, 1, data, args.workdir / "r", [*extra, "train.computation_time=0"])
            rows.append({"workload": name, "engine": engine, "n": 0, **r, "fio_mib_s": fio})
            print(f"  {engine:<5} compute 0: read {r['read_mib_s']:.0f} MiB/s = {r['read_mib_s'] / fio:.2f} x fio "
                  f"(claimed {r['claimed_mb_s']:.0f} MB/s); start-up+teardown {r['overhead_s']:.1f} s; "
                  f"load {loadavg()}", flush=True)
        given_up = set()
        for n in args.ns:
            for engine in args.engines:
                if engine in given_up:      # AU fell below --give-up at a smaller N: larger N only cost time
                    continue
                warm(train)
                r = run(engine, name, n, data, args.workdir / "r", extra)
                rows.append({"workload": name, "engine": engine, "n": n, **r})
                if r["au"] < args.give_up:
                    given_up.add(engine)
                print(f"  {engine:<5} N={n}: AU {r['au']:.1f}%  {r['samples_s']:.1f} samples/s  "
                      f"start-up+teardown {r['overhead_s']:.1f} s"
                      + (f" (DLIO launch->first stamp {r['startup_s']:.1f} s)" if r["startup_s"] else "")
                      + f"  peak/rank {r['peak_per_rank_mib']:.0f} MiB  load {loadavg()}", flush=True)
    for name in args.workloads:
        for engine in args.engines:
            ok = [r["n"] for r in rows if r["workload"] == name and r["engine"] == engine and r["n"] and r["au"] >= 90]
            print(f"{name} {engine}: largest N with AU >= 90%: {max(ok) if ok else 'none'} (of {args.ns})")
    (args.workdir / f"engines-{os.getpid()}.json").write_text(json.dumps(rows, indent=2))
    print(f"load average at end: {loadavg()}; rows in {args.workdir / f'engines-{os.getpid()}.json'}")
    if not args.keep:
        shutil.rmtree(args.workdir / "r", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
