#!/usr/bin/env python3
"""The kv_cache storage tier's write and read rates against fio with the same file sizes and fsync pattern.

    python benchmarks/kvcache_vs_fio.py [--dir DIR] [--jobs 4] [--files-per-job 2] [--file-size 256MiB] [--repeat 2]

Ours: suite.kvcache.tier.StorageTier, what each rank of `suite run --workload kv-cache` writes and reads
with: J threads, each writing its files whole (one KV entry a file) in 1 MiB writes from the rank's
pre-generated pattern (each 4 KiB block stamped), fsync before close; then, after a page-cache drop,
reading each back whole (posix_fadvise DONTNEED first, 1 MiB reads). Rate = all bytes / wall time.
fio: `--numjobs=J --nrfiles=F --filesize=S --bs=1m --ioengine=psync --rw=write --fsync_on_close=1 --fallocate=none
--file_service_type=sequential`, then after a drop `--rw=read --invalidate=1 --fadvise_hint=0`; rate = bw_bytes
(group_reporting). Order alternates per repeat. Prints the ratio ours/fio per phase and the load
average. Needs root for the cache drops. Everything written is removed.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from suite import sizes  # noqa: E402
from suite.enforce import cache  # noqa: E402

GIB = 1 << 30
WALL = False          # --wall: fio's rate as bytes / the wall time of the fio process (as ours is measured)


def drop() -> None:
    d = cache.drop_caches()
    if not d.succeeded:
        sys.exit(f"kvcache_vs_fio: cache drop: {d.error} (run as root)")


def ours(folder: Path, jobs: int, per_job: int, size: int) -> tuple[float, float]:
    """(write GiB/s, read GiB/s) of the storage tier."""
    import numpy as np

    from suite.kvcache.tier import WRITE_CHUNK, Pattern, StorageTier
    from suite.storage.backend.select import backend_for

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    stop = threading.Event()
    tier = StorageTier(backend_for("local_fs", folder), Pattern(42), 42, stop)
    keys = [[f"job{j}_entry{k}" for k in range(per_job)] for j in range(jobs)]

    def phase(work) -> float:
        threads = [threading.Thread(target=work, args=(ks,)) for ks in keys]
        t0 = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return jobs * per_job * size / GIB / (time.perf_counter() - t0)

    def write(ks):
        chunk = np.empty(WRITE_CHUNK, dtype=np.uint8)
        for k in ks:
            tier.write(k, size, chunk)

    def read(ks):
        for k in ks:
            tier.read(k, size)

    w = phase(write)
    drop()
    r = phase(read)
    shutil.rmtree(folder, ignore_errors=True)
    return w, r


def fio(folder: Path, jobs: int, per_job: int, size: int) -> tuple[float, float]:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    base = ["fio", "--name=kv", f"--directory={folder}", f"--numjobs={jobs}", f"--nrfiles={per_job}",
            f"--filesize={size}", f"--size={size * per_job}", "--bs=1m", "--ioengine=psync",
            "--file_service_type=sequential", "--group_reporting", "--output-format=json"]

    def run(extra, key) -> float:
        t0 = time.perf_counter()
        out = subprocess.run(base + extra, capture_output=True, text=True, check=True).stdout
        wall = time.perf_counter() - t0
        reported = json.loads(out[out.index("{"):])["jobs"][0][key]["bw_bytes"] / GIB
        return reported if not WALL else jobs * per_job * size / GIB / wall

    w = run(["--rw=write", "--fsync_on_close=1", "--fallocate=none"], "write")     # no preallocation: as the tier writes
    drop()
    r = run(["--rw=read", "--invalidate=1", "--fadvise_hint=0"], "read")     # no hint: as the tier reads
    shutil.rmtree(folder, ignore_errors=True)
    return w, r


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--dir", default=None)
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--files-per-job", type=int, default=2)
    p.add_argument("--file-size", default="256MiB")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--wall", action="store_true", help="fio's rate from its process's wall time, not its bw_bytes")
    a = p.parse_args()
    global WALL
    WALL = a.wall
    if not shutil.which("fio"):
        sys.exit("kvcache_vs_fio: fio not found")
    size = sizes.parse_size(a.file_size)
    root = Path(a.dir or tempfile.mkdtemp(prefix="kvcache-vs-fio-", dir="/var/tmp"))
    print(f"load average before: {os.getloadavg()[0]:.1f}; {a.jobs} jobs x {a.files_per_job} files x {a.file_size}")
    ratios = {"write": [], "read": []}
    try:
        for k in range(a.repeat):
            order = [("ours", ours), ("fio", fio)] if k % 2 == 0 else [("fio", fio), ("ours", ours)]
            got = {}
            for name, fn in order:
                drop()
                got[name] = fn(root / name, a.jobs, a.files_per_job, size)
            for i, ph in enumerate(("write", "read")):
                ratios[ph].append(got["ours"][i] / got["fio"][i])
                print(f"repeat {k + 1} {ph}: ours {got['ours'][i]:.3f} GiB/s, fio {got['fio'][i]:.3f} GiB/s, "
                      f"ratio {ratios[ph][-1]:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for ph, rs in ratios.items():
        print(f"{ph}: median ratio ours/fio {statistics.median(rs):.2f} (range {min(rs):.2f}-{max(rs):.2f})")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
