#!/usr/bin/env python3
"""The kv_cache storage tier's write and read rates against fio with the same file sizes and fsync pattern.

    python benchmarks/kvcache_vs_fio.py [--dir DIR] [--jobs 4] [--files-per-job 2] [--file-size 256MiB]
                                        [--repeat 4] [--warmup 1] [--processes] [--same-files] [--wall]

Ours: suite.kv_cache.tier.StorageTier, what each rank of `suite run --workload kv-cache` writes and reads
with: J threads of one process (a rank's users are threads), each writing its files whole (one KV entry
a file) from the rank's pre-generated pattern (each 4 KiB block stamped) in the tier's WRITE_CHUNK
writes, fsync before close; then each reading its files back whole in READ_CHUNK reads into one
preallocated buffer, after posix_fadvise(DONTNEED) on the file. Rate = all bytes / the phase's wall time.

fio, the same in every respect the comparison is about:
- write: `--thread --numjobs=J --nrfiles=F --filesize=S --bs=<WRITE_CHUNK> --ioengine=psync --rw=write
  --fsync_on_close=1 --fallocate=none --file_service_type=sequential` (J threads of one process, unless
  --processes: fio's default fork);
- read: the files fio wrote in this repeat (as ours reads the files ours wrote; --same-files: the files
  ours wrote, one fio job per thread of ours, `--filename=` its files: the same blocks of the same
  layout, but on a virtual disk the second reader of a block may get it from the host's cache, which
  the guest's drop does not reach), `--bs=<READ_CHUNK> --rw=read --invalidate=1` (fio's invalidate is
  posix_fadvise(DONTNEED) on each file as it opens it, the tier's drop) `--fadvise_hint=0` (no readahead
  hint: the tier gives none), so both read after the same page-cache treatment;
- rate: fio's `bw_bytes` (group_reporting), or with --wall all bytes / the fio process's wall time.
A page-cache drop (root) before every phase. The order ours/fio alternates per repeat (on this virtual
disk the set written last, read by the one going second, may still be in the host's cache, which the
guest's drop does not reach: the side going first is at a disadvantage, so an even --repeat gives each
side that place equally often), and the first --warmup repeats are not counted (the first writes after
a while run slower here, whoever makes them).
Prints each repeat, then the median ratio ours/fio of write and of read, and the load average; beside
them the CPU seconds (user + system, from the OS: this process's for ours, the fio child's rusage)
per GiB moved, a figure the other helpers' load disturbs less than a rate does.
Everything written is removed.
"""

import argparse
import json
import os
import resource
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
CPU = {}              # the last phase's CPU seconds (user + system) per GiB: "ours" (this process), "fio" (the child)


def drop() -> None:
    d = cache.drop_caches()
    if not d.succeeded:
        sys.exit(f"kvcache_vs_fio: cache drop: {d.error} (run as root)")


class Ours:
    """The storage tier on FOLDER: J threads, F entries each."""

    def __init__(self, folder: Path, jobs: int, per_job: int, size: int):
        from suite.kv_cache.tier import Pattern, StorageTier
        from suite.storage.backend.select import backend_for

        self.folder, self.size = folder, size
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.tier = StorageTier(backend_for("local_fs", folder), Pattern(42), 42, threading.Event())
        self.keys = [[f"job{j}_entry{k}" for k in range(per_job)] for j in range(jobs)]

    def files(self) -> list[list[str]]:
        return [[str(self.folder / self.tier.file(k)) for k in ks] for ks in self.keys]

    def phase(self, work) -> float:
        threads = [threading.Thread(target=work, args=(ks,)) for ks in self.keys]
        gib = sum(map(len, self.keys)) * self.size / GIB
        c0, t0 = os.times(), time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        seconds, c1 = time.perf_counter() - t0, os.times()
        CPU["ours"] = (c1.user - c0.user + c1.system - c0.system) / gib
        return gib / seconds

    def write(self) -> float:
        import numpy as np

        from suite.kv_cache.tier import WRITE_CHUNK

        def work(ks):
            chunk = np.empty(WRITE_CHUNK, dtype=np.uint8)
            for k in ks:
                self.tier.write(k, self.size, chunk)
        return self.phase(work)

    def read(self) -> float:
        def work(ks):
            for k in ks:
                self.tier.read(k, self.size)
        return self.phase(work)


def fio_run(args: list, key: str, nbytes: int, wall: bool) -> float:
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    out = subprocess.run(["fio", "--output-format=json", "--group_reporting", *args],
                         capture_output=True, text=True, check=True).stdout
    seconds, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["fio"] = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / (nbytes / GIB)   # fio's start-up too
    got = json.loads(out[out.index("{"):])["jobs"][0][key]
    if got["io_bytes"] != nbytes:
        sys.exit(f"kvcache_vs_fio: fio {key}: expected {nbytes} bytes, got {got['io_bytes']}")
    return nbytes / GIB / seconds if wall else got["bw_bytes"] / GIB


def fio_job(folder: Path, jobs: int, per_job: int, size: int, bs: int, a) -> list[str]:
    return [*([] if a.processes else ["--thread"]), "--name=kv", f"--directory={folder}", f"--numjobs={jobs}",
            f"--nrfiles={per_job}", f"--filesize={size}", f"--size={size * per_job}", f"--bs={bs}",
            "--ioengine=psync", "--file_service_type=sequential"]


def fio_write(folder: Path, jobs: int, per_job: int, size: int, a) -> float:
    """fio writes its own files into FOLDER (kept for fio_read_own)."""
    from suite.kv_cache.tier import WRITE_CHUNK

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return fio_run(fio_job(folder, jobs, per_job, size, WRITE_CHUNK, a)
                   + ["--rw=write", "--fsync_on_close=1", "--fallocate=none"], "write", jobs * per_job * size, a.wall)


READ_FLAGS = ["--rw=read", "--invalidate=1", "--fadvise_hint=0"]


def fio_read_own(folder: Path, jobs: int, per_job: int, size: int, a) -> float:
    """fio reads back the files it wrote (as ours reads the files ours wrote)."""
    from suite.kv_cache.tier import READ_CHUNK

    return fio_run(fio_job(folder, jobs, per_job, size, READ_CHUNK, a) + READ_FLAGS, "read", jobs * per_job * size,
                   a.wall)


def fio_read_same(files: list[list[str]], size: int, a) -> float:
    """fio reads the files ours wrote (--same-files): one job per thread of ours."""
    from suite.kv_cache.tier import READ_CHUNK

    args = [] if a.processes else ["--thread"]
    for j, names in enumerate(files):
        args += [f"--name=kv{j}", "--filename=" + ":".join(names), f"--bs={READ_CHUNK}", "--ioengine=psync",
                 "--file_service_type=sequential", *READ_FLAGS]
    return fio_run(args, "read", sum(map(len, files)) * size, a.wall)


def one_repeat(root: Path, k: int, size: int, a) -> dict:
    """{phase: (ours GiB/s, fio GiB/s)} of one repeat, ours first on even repeats."""
    order = ("ours", "fio") if k % 2 == 0 else ("fio", "ours")
    ours = Ours(root / "ours", a.jobs, a.files_per_job, size)
    try:
        w, r = {}, {}
        cpu = {"write": {}, "read": {}}
        for who in order:
            drop()
            w[who] = ours.write() if who == "ours" else fio_write(root / "fio", a.jobs, a.files_per_job, size, a)
            cpu["write"][who] = CPU[who]
        for who in order:
            drop()
            if who == "ours":
                r[who] = ours.read()
            elif a.same_files:
                r[who] = fio_read_same(ours.files(), size, a)
            else:
                r[who] = fio_read_own(root / "fio", a.jobs, a.files_per_job, size, a)
            cpu["read"][who] = CPU[who]
    finally:
        shutil.rmtree(root / "ours", ignore_errors=True)
        shutil.rmtree(root / "fio", ignore_errors=True)
    return {ph: (got["ours"], got["fio"], cpu[ph]["ours"], cpu[ph]["fio"]) for ph, got in (("write", w), ("read", r))}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", default=None, help="a folder on the file system under test (default: /var/tmp)")
    p.add_argument("--jobs", type=int, default=4, help="threads of ours, fio jobs")
    p.add_argument("--files-per-job", type=int, default=2)
    p.add_argument("--file-size", default="256MiB", help="one KV entry's file")
    p.add_argument("--repeat", type=int, default=4, help="counted repeats (even: each side first equally often)")
    p.add_argument("--warmup", type=int, default=1, help="repeats run first and not counted")
    p.add_argument("--processes", action="store_true", help="fio's jobs as processes (its default), not threads")
    p.add_argument("--same-files", action="store_true",
                   help="fio reads the files ours wrote (default: each reads back the files it wrote)")
    p.add_argument("--wall", action="store_true", help="fio's rate from its process's wall time, not its bw_bytes")
    a = p.parse_args()
    if not shutil.which("fio"):
        sys.exit("kvcache_vs_fio: fio not found")
    size = sizes.parse_size(a.file_size)
    root = Path(tempfile.mkdtemp(prefix="kvcache-vs-fio-", dir=a.dir or "/var/tmp"))      # removed at the end
    loads = [os.getloadavg()[0]]
    print(f"load average before: {loads[0]:.1f}; {a.jobs} jobs x {a.files_per_job} files x {a.file_size}, "
          f"fio as {'processes' if a.processes else 'threads'}, fio rate from {'wall time' if a.wall else 'bw_bytes'}")
    ratios, cpus = {"write": [], "read": []}, {"write": [], "read": []}
    try:
        for k in range(a.warmup + a.repeat):
            got = one_repeat(root, k, size, a)
            loads.append(os.getloadavg()[0])
            tag = "warm-up" if k < a.warmup else f"repeat {k - a.warmup + 1}"
            for ph, (mine, theirs, my_cpu, their_cpu) in got.items():
                if k >= a.warmup:
                    ratios[ph].append(mine / theirs)
                    cpus[ph].append((my_cpu, their_cpu))
                print(f"{tag} {ph}: ours {mine:.3f} GiB/s, fio {theirs:.3f} GiB/s, ratio {mine / theirs:.2f}; CPU s/GiB "
                      f"ours {my_cpu:.3f}, fio {their_cpu:.3f} ({'ours' if k % 2 == 0 else 'fio'} first; "
                      f"load {loads[-1]:.1f})", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for ph, rs in ratios.items():
        if rs:
            mine, theirs = (statistics.median(c[i] for c in cpus[ph]) for i in (0, 1))
            print(f"{ph}: median ratio ours/fio {statistics.median(rs):.2f} (range {min(rs):.2f}-{max(rs):.2f}, "
                  f"{len(rs)} repeats); median CPU s/GiB ours {mine:.3f}, fio {theirs:.3f} (fio's start-up included)")
    print(f"load average: median {statistics.median(loads):.1f} (range {min(loads):.1f}-{max(loads):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
