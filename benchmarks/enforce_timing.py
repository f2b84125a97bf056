"""How long enforcement costs here: cgroup create+remove, start-in-cgroup, cache drops.

    python benchmarks/enforce_timing.py [--drop-mib 512]

Needs root (cache drop, cgroup). Drops the machine's page cache a few times.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from suite.enforce.cache import drop_caches, page_cache_residency
from suite.enforce.cgroup import MemoryCgroup, unique_name
from suite.enforce.detect import detect_cgroup

MIB = 1 << 20


def summary(xs):
    xs = sorted(xs)
    return (f"median {statistics.median(xs) * 1e3:.2f} ms, min {xs[0] * 1e3:.2f} ms, "
            f"max {xs[-1] * 1e3:.2f} ms (n={len(xs)})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--drop-mib", type=int, default=512, help="file to cache before a timed drop")
    ap.add_argument("-n", type=int, default=50)
    args = ap.parse_args()
    print(f"cgroup: {detect_cgroup()}")

    both, create, remove = [], [], []
    for _ in range(args.n):
        t0 = time.perf_counter()
        with MemoryCgroup(256 * MIB, unique_name("bench")) as cg:
            pass
        both.append(time.perf_counter() - t0)
        create.append(cg.create_s)
        remove.append(cg.remove_s)
    print(f"cgroup create+remove (empty): {summary(both)}")
    print(f"  create (mkdir + limit + read-back): {summary(create)}")
    print(f"  remove (rmdir):                     {summary(remove)}")

    plain, inside, cycle = [], [], []
    for _ in range(args.n // 2):
        t0 = time.perf_counter()
        subprocess.run(["true"], check=True)
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with MemoryCgroup(256 * MIB, unique_name("bench")) as cg:
            t1 = time.perf_counter()
            cg.start(["true"]).wait()
            inside.append(time.perf_counter() - t1)
        cycle.append(time.perf_counter() - t0)
    print(f"start `true` plain:            {summary(plain)}")
    print(f"start `true` in the cgroup:    {summary(inside)}")
    print(f"create + start + wait + remove: {summary(cycle)}")

    d = drop_caches()
    print(f"cache drop (as found): {d.duration_s:.3f} s (sync {d.sync_duration_s:.3f} s), "
          f"Cached {d.cached_bytes_before / MIB:.0f} -> {d.cached_bytes_after / MIB:.0f} MiB")
    d = drop_caches()
    print(f"cache drop (just dropped): {d.duration_s:.3f} s (sync {d.sync_duration_s:.3f} s), "
          f"Cached {d.cached_bytes_before / MIB:.0f} -> {d.cached_bytes_after / MIB:.0f} MiB")
    with tempfile.NamedTemporaryFile(dir=os.environ.get("TMPDIR", "/tmp"), delete=True) as f:
        block = os.urandom(MIB)
        for _ in range(args.drop_mib):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
        with open(f.name, "rb") as r:
            while r.read(8 * MIB):
                pass
        before, size = page_cache_residency(f.name)
        d = drop_caches()
        after, _ = page_cache_residency(f.name)
        print(f"cache drop ({args.drop_mib} MiB file cached): {d.duration_s:.3f} s "
              f"(sync {d.sync_duration_s:.3f} s), Cached {d.cached_bytes_before / MIB:.0f} -> "
              f"{d.cached_bytes_after / MIB:.0f} MiB; file resident {before / MIB:.0f} -> "
              f"{after / MIB:.1f} MiB of {size / MIB:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
