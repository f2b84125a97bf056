"""How long `suite check` takes on a whole published tree of ~4,000 files (target: under 5 s).

Builds a temporary multi-organisation tree from a published organisation directory (default: DDN's
whole v1.0 tree in ../shared/trees, code/ included), N copies side by side under Closed/, and times
the CLI end to end (`python -m suite check TREE`, imports included) several times: best and median.

    python benchmarks/check_tree.py [--org PATH] [--copies 7] [--repeat 5]
"""

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_ORG = REPO.parent / "shared" / "trees" / "mlperf-storage-v1.0" / "Closed" / "DDN"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--org", type=Path, default=DEFAULT_ORG)
    ap.add_argument("--copies", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    if not args.org.is_dir():
        print(f"{args.org}: not present", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="suite-check-tree-") as tmp:
        closed = Path(tmp) / "Closed"
        for k in range(args.copies):
            shutil.copytree(args.org, closed / f"{args.org.name}{k}", symlinks=True)
            for p in (closed / f"{args.org.name}{k}").rglob("*"):
                p.chmod(0o755 if p.is_dir() else 0o644)
        n = sum(1 for p in Path(tmp).rglob("*") if p.is_file())
        times, cpu, out = [], [], ""
        for _ in range(args.repeat):
            t = time.perf_counter()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run([sys.executable, "-m", "suite", "check", tmp], capture_output=True, text=True,
                                  cwd=REPO)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times.append(time.perf_counter() - t)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            out = done.stdout
        last = out.strip().splitlines()[-1] if out.strip() else done.stderr.strip()[-200:]
        print(f"{args.copies} x {args.org.name}: {n} files; best {min(times):.2f} s, median "
              f"{statistics.median(times):.2f} s of {args.repeat} ({'under' if min(times) < 5 else 'OVER'} "
              f"the 5 s target); CPU time (user + sys) best {min(cpu):.2f} s, median {statistics.median(cpu):.2f} s "
              f"(what an idle machine's wall time would be)\n{last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
