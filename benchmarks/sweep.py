"""How long does `suite sweep --find-max` take, what maximum does it find, and does the page-cache
ceiling follow the analytic demand (N x batch x record length / computation time)?

Runs, in this process (suite.cli.main, as a user would type them):
  1. suite sweep --workload W --find-max [--param ...]                 -> SWEEP/find-max
  2. with --ceiling-ns: suite sweep --accelerators NS --ceiling        -> SWEEP/ceiling
and prints the wall time of each, the confirmed maximum, and per N the ceiling's MiB/s against
the analytic demand (ratio; 1.0 means the runner reads exactly what the accelerators consume).
Without --data-dir the miniature dataset is used (generated once under ./results/data; its
1 GiB memory cgroup keeps the reads on the storage). Target: find-max answers in < 10 minutes
for resnet50 here. Compare the ceiling's largest N at the threshold with benchmarks/scale.py's.

    python benchmarks/sweep.py [--workload resnet50] [--ceiling-ns 4,8,16] [--param K=V ...]
"""

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def sweep(argv: list[str]) -> tuple[int, float]:
    from suite import cli

    t0 = time.time()
    code = cli.main(argv)
    return code, time.time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="resnet50")
    ap.add_argument("--accelerator-type", default="h100")
    ap.add_argument("--workdir", default="/tmp/suite-bench-sweep")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--ceiling-ns", default=None, help="also a list sweep with --ceiling at these N, e.g. 4,8,16")
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--skip-find-max", action="store_true")
    args = ap.parse_args()
    from suite.training.sweep import result

    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    common = ["--workload", args.workload, "--accelerator-type", args.accelerator_type]
    common += [a for p in args.param for a in ("--param", p)]
    if args.data_dir:
        common += ["--data-dir", args.data_dir]
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()} at start", flush=True)
    lines = []
    if not args.skip_find_max:
        code, secs = sweep(["sweep", *common, "--find-max", "--results-dir", str(work / "find-max")])
        doc = result.load(work / "find-max")
        ans = doc["max_accelerators"] or {}
        probes = ", ".join(f"{p['accelerators']}:{(p['au_percentage'] or 0):.1f}%" for p in doc["probes"])
        lines.append(f"FIND-MAX {args.workload} {args.accelerator_type}: N={ans.get('accelerators')} "
                     f"({'confirmed' if ans.get('confirmed') else 'NOT confirmed'}; AU "
                     f"{', '.join(f'{a:.1f}' for a in ans.get('au_per_run') or [])}) in {secs / 60:.1f} min "
                     f"(target < 10); probes N:AU {probes}; exit {code}; load average end "
                     f"{doc['host']['load_average_end'][0]:.2f}")
    if args.ceiling_ns:
        code, secs = sweep(["sweep", *common, "--accelerators", args.ceiling_ns, "--ceiling", "--division", "open",
                            "--results-dir", str(work / "ceiling")])
        doc = result.load(work / "ceiling")
        demand = doc["demand_mib_per_second_per_accelerator"]
        for p in doc["points"]:
            c, s = p["ceiling"] or {}, p["storage"] or {}
            want = p["accelerators"] * demand
            lines.append(f"CEILING N={p['accelerators']}: ceiling {c.get('mib_per_second') or 0:,.0f} MiB/s "
                         f"(AU {c.get('au_percentage') or 0:.1f}%) vs analytic demand {want:,.0f} MiB/s: ratio "
                         f"{(c.get('mib_per_second') or 0) / want:.3f}; storage {s.get('mib_per_second') or 0:,.0f} "
                         f"MiB/s (AU {s.get('au_percentage') or 0:.1f}%); first/later epoch storage "
                         f"{s.get('first_to_later_ratio') or 0:.3f}, ceiling {c.get('first_to_later_ratio') or 0:.3f}")
        lines.append(f"ceiling sweep: {secs / 60:.1f} min; knee {doc['knee']}")
    print(f"load average {os.getloadavg()} at end (2 cores shared with other work: figures are noisy)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
