"""TPCx-AI on --engine dask against the local engine: the same SF, streams, use cases and seed run
(1) on the local engine (exec launcher, as `suite run`), (2) on a scheduler and one worker
on each of two network-namespace hosts (tools/netns-hosts.sh; root) and (3) on this box's LocalCluster
(2 single-threaded workers). The namespace hosts share this machine: (2) and (3) both measure the
engine's overhead on one box. Prints each run's phase times
and quality figures and whether the quality figures are identical; --json FILE keeps them.

    python benchmarks/tpcxai_dask.py --scale-factor 0.1 --streams 2 [--use-cases 1,3] [--no-netns]
    python benchmarks/tpcxai_dask.py --dispatch-only      # a job's session + future round trip
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from suite.tpcx_ai import driver  # noqa: E402


def one(name, args, base: Path, **engine) -> dict:
    opts = driver.Options(scale_factor=args.scale_factor, data_dir=base / name / "data", results_dir=base / name / "res",
                          streams=args.streams, use_cases=args.use_cases, processes=2, seed=args.seed,
                          launcher="exec", out=lambda line: print(f"[{name}] {line}", flush=True), **engine)
    start = time.perf_counter()
    run = driver.Driver(opts).execute()
    wall = time.perf_counter() - start
    return {"name": name, "status": run.status, "failed": sorted(run.failed), "wall_s": round(wall, 1),
            "phases": {p["name"]: p["duration_s"] for p in run.phases},
            "quality": {n: q["value"] for n, q in sorted(run.quality.items())},
            "passed": all(q["passed"] for q in run.quality.values()), "engine": run.engine}


def netns(args, base: Path) -> dict:
    from tests.tpcx_ai import dask_netns

    prefix = f"bd{os.getpid() % 100000}h"
    env = dict(os.environ, SUITE_NETNS_SUBNET=f"10.231.{100 + os.getpid() % 150}")
    sh = ["sh", str(REPO / "tools" / "netns-hosts.sh")]
    up = subprocess.run([*sh, "up", "2", prefix], env=env, capture_output=True, text=True, check=True)
    try:
        with dask_netns.cluster(up.stdout.split(), base / "cluster-logs") as address:
            return one("dask-netns", args, base, engine="dask", scheduler=address)
    finally:
        subprocess.run([*sh, "down", prefix], env=env)


def dispatch(n: int = 20) -> dict:
    """What --engine dask adds to each job: a client session + one future's round trip (median of n),
    against a bare `python -c pass` (the exec start both engines pay)."""
    import statistics

    from distributed import Client, LocalCluster

    def noop():
        return 1

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40) as c:
        rt = []
        for _ in range(n):
            t = time.perf_counter()
            with Client(c.scheduler_address, timeout=30) as cl:
                cl.submit(noop, pure=False).result()
            rt.append(time.perf_counter() - t)
    bare = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t)
    return {"session_future_median_s": round(statistics.median(rt), 3), "min_s": round(min(rt), 3),
            "max_s": round(max(rt), 3), "python_start_median_s": round(statistics.median(bare), 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale-factor", type=float, default=0.1)
    ap.add_argument("--streams", type=int, default=2)
    ap.add_argument("--use-cases", type=lambda t: tuple(int(x) for x in t.split(",")), default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-netns", action="store_true", help="skip the two-namespace-host run")
    ap.add_argument("--no-local-cluster", action="store_true", help="skip the LocalCluster run")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--dispatch-only", action="store_true", help="only the per-job session + future round trip")
    args = ap.parse_args()
    if args.dispatch_only:
        print(json.dumps(dispatch()))
        return 0
    with tempfile.TemporaryDirectory(prefix="tpcxai-dask-") as tmp:
        base = Path(tmp)
        runs = [one("local", args, base)]
        if not args.no_netns:
            runs.append(netns(args, base))
        if not args.no_local_cluster:
            runs.append(one("dask-local-cluster", args, base, engine="dask"))
    ref = runs[0]["quality"]
    for r in runs:
        r["same_quality_as_local"] = r["quality"] == ref
        print(json.dumps({k: v for k, v in r.items() if k != "engine"}, default=str))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2, default=str) + "\n")
    return 0 if all(r["status"] == "complete" and r["passed"] and r["same_quality_as_local"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
