#!/usr/bin/env python3
"""The checkpoint writer/reader's rates against fio with the same writers, file sizes and fsync.

    python benchmarks/checkpoint_vs_fio.py [--dir DIR] [--ranks 8] [--rank-size 128MiB]
                                           [--checkpoints 3] [--repeat 3]

Ours: `mpiexec -n R python -m suite.checkpointing.rank PLAN`, the rank `suite run --workload
llama3-*` starts, each rank writing two files of rank-size/2 per checkpoint (16 MiB writes, each file
fsync'd before close), then -- after a page-cache drop -- reading them back; the rate of a
checkpoint is its bytes / the slowest rank's time (the MLPerf metric), averaged over the checkpoints.
fio: R jobs (`--numjobs=R --nrfiles=2 --size=rank-size --file_service_type=sequential --bs=16M
--ioengine=psync --rw=write --end_fsync=1`), once per checkpoint into new files
(`--filename_format=ckpt<k>.$jobnum.$filenum`; ours: a new folder per checkpoint, emptied before the
phase); then after a drop `--rw=read` of the same files, once per checkpoint, a drop before each; the rate is all bytes / the slowest
job's runtime. Order alternates per repeat. Prints per repeat the ratio ours/fio for write and read,
the per-rank (per-job) min..max GiB/s of both, the median ratio and the load average.
Needs root (cache drops). Everything written is removed.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from suite import files, sizes  # noqa: E402
from suite.enforce import cache
from suite.checkpointing import results  # noqa: E402

GIB = 1 << 30
CHUNK = 16 << 20


def drop() -> None:
    d = cache.drop_caches()
    if not d.succeeded:
        sys.exit(f"checkpoint_vs_fio: cache drop: {d.error} (run as root)")


def ours(workdir: Path, ranks: int, rank_size: int, n: int, phase: str) -> tuple[float, float, float]:
    """(GiB/s as the metric, slowest rank GiB/s, fastest rank GiB/s) of one write or read phase."""
    run_dir = workdir / f"ours-{phase}"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    if phase == "write":            # new files, as a checkpoint is (fio's are new too)
        shutil.rmtree(workdir / "ckpt", ignore_errors=True)
        drop()
    shards = [[[f"rank{r}_model_states.pt", rank_size // 2], [f"rank{r}_optim_states.pt", rank_size - rank_size // 2]]
              for r in range(ranks)]
    plan = {"schema_version": 1, "run_dir": str(run_dir), "workload": "llama3-8b", "processes": ranks,
            "mode": "default", "miniature": False, "checkpoint_dir": str(workdir / "ckpt"),
            "num_checkpoints_write": n if phase == "write" else 0, "num_checkpoints_read": n if phase == "read" else 0,
            "fsync": True, "time_between_checkpoints_s": 0, "chunk_bytes": CHUNK, "rank_shards": shards}
    files.write_json(run_dir / "plan.json", plan, schema="checkpoint-plan", indent=None)
    mpiexec = Path(sys.executable).parent / "mpiexec"
    subprocess.run([str(mpiexec), "-n", str(ranks), sys.executable, "-m", "suite.checkpointing.rank",
                    str(run_dir / "plan.json")], check=True, capture_output=True, cwd=REPO)
    docs = results.load_ranks(run_dir, ranks)
    per = results.per_checkpoint(docs)
    own = [x["bytes"] / GIB / x["duration_s"] for d in docs for x in d["checkpoints"]]
    return statistics.fmean(c["throughput_gib_s"] for c in per), min(own), max(own)


def fio(workdir: Path, ranks: int, rank_size: int, n: int, phase: str) -> tuple[float, float, float]:
    d = workdir / "fio"
    if phase == "write":            # new files per checkpoint, as ours
        shutil.rmtree(d, ignore_errors=True)
        drop()
    d.mkdir(exist_ok=True)
    rates, job_rates = [], []
    for k in range(n):
        if phase == "read":
            drop()
        cmd = ["fio", "--name=ckpt", f"--directory={d}", f"--filename_format=ckpt{k}.$jobnum.$filenum",
               f"--numjobs={ranks}", "--nrfiles=2", f"--size={rank_size}",
               "--file_service_type=sequential", f"--bs={CHUNK}", "--ioengine=psync", "--direct=0",
               f"--rw={phase}", "--output-format=json"]
        cmd += ["--end_fsync=1"] if phase == "write" else ["--readonly"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        jobs = json.loads(out[out.index("{"):])["jobs"]
        io = [j[phase]["io_bytes"] for j in jobs]
        secs = [j["job_runtime"] / 1000 for j in jobs]
        rates.append(sum(io) / GIB / max(secs))
        job_rates += [b / GIB / s for b, s in zip(io, secs) if s > 0]
    return statistics.fmean(rates), min(job_rates), max(job_rates)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=Path, default=None, help="a directory on the file system to test (default: /tmp)")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--rank-size", default="128MiB", help="bytes per rank per checkpoint (two files)")
    ap.add_argument("--checkpoints", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rank_size = sizes.parse_size(args.rank_size)
    if os.geteuid() != 0:
        sys.exit("checkpoint_vs_fio: needs root (page-cache drops)")
    base = Path(tempfile.mkdtemp(prefix="ckpt-vs-fio-", dir=args.dir))
    load0 = Path("/proc/loadavg").read_text().split()[:3]
    ratios = {"write": [], "read": []}
    try:
        for k in range(args.repeat):
            got = {}
            order = ("ours", "fio") if k % 2 == 0 else ("fio", "ours")
            for who in order:
                fn = ours if who == "ours" else fio
                got[(who, "write")] = fn(base, args.ranks, rank_size, args.checkpoints, "write")
                drop()
                got[(who, "read")] = fn(base, args.ranks, rank_size, args.checkpoints, "read")
            for ph in ("write", "read"):
                o, f = got[("ours", ph)], got[("fio", ph)]
                ratios[ph].append(o[0] / f[0])
                print(f"repeat {k + 1} {ph}: ours {o[0]:.3f} GiB/s (ranks {o[1]:.3f}..{o[2]:.3f}), fio {f[0]:.3f} GiB/s "
                      f"(jobs {f[1]:.3f}..{f[2]:.3f}), ratio ours/fio = {o[0] / f[0]:.2f}", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    load1 = Path("/proc/loadavg").read_text().split()[:3]
    for ph in ("write", "read"):
        r = ratios[ph]
        print(f"ratio {ph} ours/fio = {statistics.median(r):.2f} (median of {len(r)}; range {min(r):.2f}-{max(r):.2f})")
    print(f"{args.ranks} ranks x {rank_size / 2**20:.0f} MiB (2 files), {args.checkpoints} checkpoints; "
          f"load average before {' '.join(load0)}, after {' '.join(load1)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
