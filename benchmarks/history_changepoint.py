"""Does `suite history regressions` find a real slowdown, and only it? Two series of 20 real runs
each (resnet50, one rank, 12 files of 20 samples, 3 epochs of 0.6 s of compute, --runs 1), each run
recording itself into a store of its own:

- planted: the runner's hidden per-file read delay from run 11 on, set for a 10 % slowdown (12
  files x DELAY_S of reads per epoch beside 0.6 s of compute); expected: one change point, at run 11
- unchanged: 20 runs of one setting; expected: none

    python benchmarks/history_changepoint.py [--workdir /tmp/suite-bench-changepoint] [--runs 20]

About 2 minutes per series on a quiet 2-core machine.
"""

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TINY = ["dataset.num_samples_per_file=20", "dataset.record_length=1000", "dataset.record_length_stdev=0",
        "reader.batch_size=8", "reader.read_threads=1", "train.epochs=3", "train.computation_time=0.02"]
DELAY_S = 0.05           # 12 x (0.05 + ~0.005 s per read) = 0.66 s of reads per epoch against 0.6 s of compute: ~10 % slower


def series(work: Path, data: Path, name: str, runs: int, planted_from: int | None) -> list:
    store = work / f"{name}.sqlite"
    for k in range(1, runs + 1):
        argv = [sys.executable, "-m", "suite", "run", "--workload", "resnet50", "--accelerators", "1", "--data-dir",
                str(data), "--results-dir", str(work / name / f"r{k}"), "--division", "open", "--runs", "1",
                "--allow-no-cache-drop", "--history", str(store)]
        if planted_from is not None and k >= planted_from:
            argv += ["--debug-read-delay", str(DELAY_S)]
        for p in TINY + [f"checkpoint.checkpoint_folder={work / 'ckpt'}"]:
            argv += ["--param", p]
        out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
        if out.returncode not in (0, 1):
            raise SystemExit(f"{name} run {k}: {out.stderr.strip()}")
    trend = subprocess.run([sys.executable, "-m", "suite", "history", "trend", "--history", str(store), "--figure",
                            "samples_per_second", "--format", "json"], capture_output=True, text=True, check=True)
    doc = json.loads(trend.stdout)["series"][0]
    values = [p["value"] for p in doc["points"]]
    print(f"{name}: samples/s per run: {', '.join(f'{v:.1f}' for v in values)}")
    for c in doc["changes"]:
        print(f"  change point at run {c['position']}: {c['change_percent']:+.1f}% "
              f"({c['low']:.3f}..{c['high']:.3f} at 95%), {c['verdict']}")
    return [c["position"] for c in doc["changes"]]


def main() -> int:
    from suite.training.data import datagen
    from suite.training import workloads

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/suite-bench-changepoint")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    keep = [p for p in TINY if p.startswith("dataset.")]
    datagen.generate(workloads.resolve("resnet50", "h100", workloads.parse_params(keep)), work / "data", 12, processes=1)
    half = args.runs // 2 + 1
    planted = series(work, work / "data", "planted", args.runs, half)
    unchanged = series(work, work / "data", "unchanged", args.runs, None)
    ok = planted == [half] and unchanged == []
    print(f"planted from run {half}: change points at {planted or 'none'}; unchanged: {unchanged or 'none'}: "
          f"{'PASS' if ok else 'FAIL'}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
