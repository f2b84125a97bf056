"""Does `suite run` measure AU right? A storage path with a known delay, analytic AU vs measured.

Tiny unet3d-format files sit in the page cache, so reading them costs ~nothing; the
benchmark-only option --debug-read-delay adds a fixed sleep per file read. With T reader
threads each taking d seconds per file, a step of B samples needs B x d / T seconds of
I/O, overlapped with the previous step's compute (prefetch). The steady-state AU (first
step excluded, as DLIO) is therefore compute / max(compute, B x d / T)
(suite.training.run.accelerator.expected_au_percentage). Target: measured within +-0.5 pp.

    python benchmarks/au_fidelity.py [--workdir /tmp/suite-bench-au] [--cpu-hogs K]

--cpu-hogs K runs K busy-looping processes beside the runs: a loaded host, where sleeps overshoot.
The runner counts each step's configured compute (as DLIO does) and pays an overshoot back from the
next step's sleep; it used to count the sleep as it ran, which read AU high under load. Per case it
also prints the AU the step records give with the sleeps as they ran (`step_sleep_s`) as the
numerator -- what the old runner reported.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DATA = ["dataset.record_length=65536", "dataset.record_length_stdev=0"]
# (label, accelerators, batch, threads, computation_time s, delay per file s)
CASES = [   # delays of 0.1-0.2 s keep the real per-file cost (open, read, scheduling) well under 0.5 pp
    ("io-bound 1 thread", 1, 2, 1, 0.20, 0.20, 10),    # io 0.40 s/step -> AU 50%
    ("io-bound 4 threads", 1, 8, 4, 0.32, 0.20, 10),   # io 0.40 s/step -> AU 80%
    ("compute-bound", 1, 4, 2, 0.30, 0.10, 10),        # io 0.20 s/step -> AU 100%
    ("io-bound 2 ranks", 2, 4, 2, 0.24, 0.20, 10),     # io 0.40 s/step -> AU 60%
]
# 8 ranks of 20 ms steps: the case a loaded host starves (no analytic AU: the CPU, not the delay, limits
# it); its check is AU against throughput / demand, which measure the same thing -- the fraction of
# the epoch the accelerators computed
STARVED = ("8 ranks, 20 ms steps", 8, 2, 1, 0.02, 0.001, 60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/suite-bench-au")
    ap.add_argument("--cpu-hogs", type=int, default=0, help="busy-looping processes beside the runs")
    args = ap.parse_args()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.cpu_hogs)]
    try:
        return _cases(args)
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def _sleep_au(run_dir: Path) -> float:
    """Mean over epochs of rank 0's AU with the sleeps as they ran as the compute (the old runner's AU)."""
    from suite.training import figures as metrics
    doc = json.loads((run_dir / "steps" / "rank-0.json").read_text())
    aus = [metrics.epoch_au_from_steps(e["step_start_s"], e["step_end_s"], e.get("step_sleep_s") or e["step_compute_s"])
           for e in doc["epochs"]]
    return sum(aus) / len(aus)


def _cases(args) -> int:
    from suite.training.data import datagen
    from suite.training import workloads
    from suite.training.run.accelerator import expected_au_percentage

    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    wl = workloads.resolve("unet3d", "h100", workloads.parse_params(DATA))
    cases = CASES + [STARVED]
    num_files = max(steps * batch * n for _, n, batch, _, _, _, steps in cases)
    datagen.generate(wl, work / "data", num_files, processes=1)
    print(f"host: {os.cpu_count()} CPUs, {args.cpu_hogs} CPU hogs, load average {os.getloadavg()[0]:.2f} at start")
    worst = 0.0
    for label, n, batch, threads, compute, delay, steps in cases:
        res = work / "res"
        shutil.rmtree(res, ignore_errors=True)
        files_needed = steps * batch * n
        argv = [sys.executable, "-m", "suite", "run", "--workload", "unet3d", "--accelerators", str(n),
                "--data-dir", str(work / "data"), "--results-dir", str(res), "--runs", "1", "--division", "open",
                "--no-cache-drop", "--debug-read-delay", str(delay)]
        for p in DATA + [f"reader.batch_size={batch}", f"reader.read_threads={threads}", "reader.prefetch_size=2",
                         f"train.computation_time={compute}", "train.epochs=2",
                         f"dataset.num_files_train={files_needed}",
                         f"checkpoint.checkpoint_folder={res / 'ckpt'}", "checkpoint.model_size=1"]:
            argv += ["--param", p]
        proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
        path = res / "run-1" / "results.json"
        if not path.exists():
            raise SystemExit(f"{label}: suite run failed: {proc.stderr.strip()}")
        doc = json.loads(path.read_text())
        measured = doc["metric"]["train_au_mean_percentage"]
        tp_pct = 100 * doc["metric"]["train_throughput_mean_samples_per_second"] / (n * batch / compute)
        if (label, n, batch, threads, compute, delay, steps) == STARVED:
            print(f"{label:22s} N={n} B={batch} T={threads} compute={compute}s: measured AU {measured:6.2f}%, "
                  f"throughput / demand {tp_pct:6.2f}%, AU - that {measured - tp_pct:+.2f} pp; with the sleeps "
                  f"as they ran {_sleep_au(res / 'run-1'):6.2f}%")
            continue
        expected = expected_au_percentage(compute, batch * delay / threads)
        diff = measured - expected
        worst = max(worst, abs(diff))
        print(f"{label:22s} N={n} B={batch} T={threads} compute={compute}s delay={delay}s/file: "
              f"analytic {expected:6.2f}%  measured {measured:6.2f}% "
              f"(epochs {', '.join(f'{a:.2f}' for a in doc['metric']['train_au_percentage'])})  diff {diff:+.2f} pp; "
              f"with the sleeps as they ran {_sleep_au(res / 'run-1'):6.2f}%")
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    print(f"WORST |measured - analytic| = {worst:.2f} pp (target <= 0.5)")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
