"""How long `suite report` takes on many runs: N runs as one benchmark and as N/5 benchmarks of 5.

Prints wall and CPU seconds per shape and the CPU per run; target: 2,000 runs in seconds, CPU per
run flat as N grows (linear time).

    python benchmarks/report_scale.py [--ns 500 2000] [--workdir /tmp/suite-bench-report]
"""

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def build(root: Path, n: int, shape: str) -> Path:
    from check_builders import dlio_benchmark

    if shape == "one":
        b = dlio_benchmark(root / "bench", runs=1)
        for k in range(2, n + 1):
            shutil.copytree(b / "run1", b / f"run{k}")
    else:
        first = dlio_benchmark(root / "sys0" / "unet3d-h100")
        for i in range(1, n // 5):
            shutil.copytree(first, root / f"sys{i}" / "unet3d-h100")
    return root


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", nargs="+", type=int, default=[500, 2000])
    ap.add_argument("--workdir", default="/tmp/suite-bench-report")
    args = ap.parse_args()
    work = Path(args.workdir)
    for n in args.ns:
        for shape in ("one", "many"):
            shutil.rmtree(work, ignore_errors=True)
            src = build(work / "in", n, shape)
            t0 = time.time()
            r = subprocess.run([sys.executable, "-c", "import resource, sys; from suite import cli; c = cli.main(sys.argv[1:]); "
                                "u = resource.getrusage(resource.RUSAGE_SELF); print(u.ru_utime + u.ru_stime); sys.exit(c)",
                                "report", str(src), "--out", str(work / "out")], capture_output=True, text=True,
                               cwd=REPO)
            wall = time.time() - t0
            cpu = float(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else float("nan")
            label = f"1 benchmark x {n} runs" if shape == "one" else f"{n // 5} benchmarks x 5 runs"
            print(f"{label:28s} exit {r.returncode}  wall {wall:6.1f} s  cpu {cpu:6.1f} s  "
                  f"cpu/run {1000 * cpu / n:5.1f} ms", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
