"""How long `suite check` takes on everything in ../shared/fixtures, and how it grows.

Checks the fixtures tree once (1x), then a temporary tree holding 4 copies of it (4x), each
several times, and prints the best wall time, the file counts and the time ratio (linear growth
means ratio ~= file ratio = 4). Target: 1x under 2 s on the 2-core build machine.

    python benchmarks/check_fixtures.py [--repeat 5] [--fixtures PATH]
"""

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import suite.kinds.registry  # noqa: E402,F401  as the CLI: the kinds' facts join the rule vocabulary
from suite.training.check.checker import check  # noqa: E402


def files_in(path: Path) -> int:
    return sum(1 for p in path.rglob("*") if p.is_file())


def best_of(path: Path, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = check(path)
        best = min(best, time.perf_counter() - t)
    return best, result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fixtures", type=Path, default=REPO.parent / "shared" / "fixtures")
    args = ap.parse_args(argv)
    if not args.fixtures.is_dir():
        print(f"{args.fixtures}: not present", file=sys.stderr)
        return 2
    check(args.fixtures)  # warm imports, rule cache, page cache
    t1, r1 = best_of(args.fixtures, args.repeat)
    n1 = files_in(args.fixtures)
    with tempfile.TemporaryDirectory(prefix="suite-check-bench-") as tmp:
        for k in range(4):
            shutil.copytree(args.fixtures, Path(tmp) / f"copy-{k}", symlinks=True)
        t4, r4 = best_of(Path(tmp), args.repeat)
        n4 = files_in(Path(tmp))
    print(f"1x: {len(r1.benchmarks)} benchmarks, {n1} files, best of {args.repeat}: {t1:.3f} s "
          f"({'under' if t1 < 2 else 'OVER'} the 2 s target)")
    print(f"4x: {len(r4.benchmarks)} benchmarks, {n4} files, best of {args.repeat}: {t4:.3f} s")
    print(f"time ratio 4x/1x: {t4 / t1:.2f} for a file ratio of {n4 / n1:.2f} (linear = equal ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
