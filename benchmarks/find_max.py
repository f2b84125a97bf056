"""How long does `suite sweep --find-max --ceiling` take with sequential probes (the default) and
with --full-probes (every probe runs every epoch), and do both find the same N?

    python benchmarks/find_max.py --data-dir D [--workload resnet50] [--accelerator-type h100] [--full] [--seq]

D: an open-division dataset (`suite datagen --workload resnet50 --files 40 --data-dir D`). Prints
per mode the wall time, the confirmed N, the probes (N: AU %, epochs run) and the load average.
Target (issue 30): resnet50 h100 on 40 files answers, confirmed, in < 10 minutes here.
"""

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def epochs_run(sweep_dir: Path, rel: str) -> int | None:
    p = sweep_dir / rel / "run-1" / "results.json"
    try:
        return len(json.loads(p.read_text())["epochs"])
    except (OSError, ValueError, KeyError):
        return None


def one(mode: str, args, work: Path) -> str:
    from suite import cli
    from suite.sweep import result

    out = work / mode
    argv = ["sweep", "--workload", args.workload, "--accelerator-type", args.accelerator_type, "--find-max",
            "--ceiling", "--division", "open", "--data-dir", args.data_dir, "--results-dir", str(out)]
    if mode == "full":
        argv.append("--full-probes")
    load0, t0 = os.getloadavg()[0], time.time()
    code = cli.main(argv)
    secs = time.time() - t0
    doc = result.load(out)
    ans = doc["max_accelerators"] or {}
    probes = ", ".join(f"{p['accelerators']}:{(p['au_percentage'] or 0):.1f}%/{epochs_run(out, p['results_dir'])}ep"
                       for p in doc["probes"])
    return (f"{mode.upper()}: N={ans.get('accelerators')} ({'confirmed' if ans.get('confirmed') else 'NOT confirmed'}, "
            f"AU {', '.join(f'{a:.1f}' for a in ans.get('au_per_run') or [])}) in {secs / 60:.1f} min (target < 10); "
            f"exit {code}; probes N:AU/epochs {probes}; load average {load0:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at end")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--workload", default="resnet50")
    ap.add_argument("--accelerator-type", default="h100")
    ap.add_argument("--workdir", default="/tmp/suite-bench-find-max")
    ap.add_argument("--full", action="store_true", help="the --full-probes sweep only")
    ap.add_argument("--seq", action="store_true", help="the sequential sweep only")
    args = ap.parse_args()
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    modes = ["seq"] if args.seq else ["full"] if args.full else ["seq", "full"]
    lines = [one(m, args, work) for m in modes]
    print(f"host: {os.cpu_count()} CPUs (figures taken on a shared host are noisy)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
