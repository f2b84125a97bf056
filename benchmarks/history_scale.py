"""Does `suite history` stay quick with a long history? 10,000 entries in one SQLite store (5
systems x 2 workloads, 3 figures of 3 runs each); then, as a user runs them (a new process each):

    suite history list                        target < 1 s
    suite history trend --workload W --figure samples_per_second --out DIR    target < 2 s
and recording one real result into that store (the overhead `suite run` pays)  target < 0.2 s

    python benchmarks/history_scale.py [--workdir /tmp/suite-bench-history] [--entries 10000]
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def fill(store_path: Path, n: int) -> None:
    from suite.history import db
    from suite.history.entry import Entry, Figure

    rng = random.Random(1)
    start = datetime(2026, 1, 1)
    with db.open_store(str(store_path)) as store:
        with store._write():            # one transaction: filling is not what is measured
            for i in range(n):
                system, workload = i % 5, ("unet3d", "resnet50")[i % 2]
                slow = 0.9 if i > n * 0.7 and system == 0 else 1.0
                runs = tuple(400.0 * slow * rng.lognormvariate(0, 0.01) for _ in range(3))
                when = (start + timedelta(minutes=30 * i)).isoformat()
                store.add(Entry(recorded_at=when, started_at=when, source="run", status="ok", kind="training",
                                workload=workload, accelerator="h100", accelerators=1, ruleset="v1.0", division="open",
                                verdict="non-compliant", system_fp=f"{system:016x}", system_label=f"host{system}",
                                results_path=f"/results/{i}", content_hash=f"{i:064x}",
                                command=("suite", "run", "--workload", workload), system={"host.hostname": f"host{system}"},
                                figures=tuple(Figure(name, label, True, tuple(r * k for r in runs),
                                                     tuple((r * k,) * 3 for r in runs))
                                              for name, label, k in (("samples_per_second", "samples/s", 1.0),
                                                                     ("au_percentage", "AU %", 0.25),
                                                                     ("mib_per_second", "MiB/s", 0.001)))))


def timed(argv, env) -> float:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "suite", *argv], env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"suite {' '.join(argv)}: exit {out.returncode}: {out.stderr.strip()}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/suite-bench-history")
    ap.add_argument("--entries", type=int, default=10_000)
    args = ap.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    store = work / "history.sqlite"
    t0 = time.perf_counter()
    fill(store, args.entries)
    print(f"filled {args.entries} entries in {time.perf_counter() - t0:.1f} s ({store.stat().st_size / 2**20:.1f} MiB)")
    env = {**os.environ, "PYTHONPATH": str(REPO), "SUITE_HISTORY": str(store)}
    t_list = min(timed(["history", "list"], env) for _ in range(3))
    t_trend = min(timed(["history", "trend", "--workload", "unet3d", "--figure", "samples_per_second", "--out",
                         str(work / "page"), "--force"], env) for _ in range(3))
    t_record = record_overhead(store)
    ok = t_list < 1.0 and t_trend < 2.0 and t_record < 0.2
    print(f"suite history list ({args.entries} entries):  {t_list:.2f} s (target < 1 s)")
    print(f"suite history trend --out ({args.entries // 2} entries in 5 series): {t_trend:.2f} s (target < 2 s)")
    print(f"recording one real result into it:   {t_record:.3f} s (target < 0.2 s)")
    print("PASS" if ok else "FAIL")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


def record_overhead(store: Path) -> float:
    """What `suite run` pays after its run: RunRecord.finish on a real results dir (tests/data/suite-run)."""
    import argparse as ap

    from suite.harness import resultsdir
    from suite.history import record

    result = REPO / "tests" / "data" / "suite-run" / "unet3d-h100"
    best = float("inf")
    for _ in range(5):
        args = ap.Namespace(history=str(store), results_dir=None, workload="unet3d", argv=["run", "--workload", "unet3d"])
        begun = record.RunRecord(args)
        resultsdir.CLAIMED.append(result)
        t0 = time.perf_counter()
        begun.finish(0, "ok")
        best = min(best, time.perf_counter() - t0)
    return best


if __name__ == "__main__":
    sys.exit(main())
