#!/usr/bin/env python3
"""datagen's write rate against fio's sequential write of the same size on the same file system.

    python benchmarks/datagen_vs_fio.py --dir /mnt/fs/bench --size 2GiB [--workload unet3d]
                                        [--processes P | --mpi N] [--repeat 1]

fio: --rw=write --bs=1M --ioengine=psync --direct=0 --end_fsync=1, one job, one file of the
dataset's exact byte count; its bw (io bytes / runtime, runtime including the end fsync).
datagen: `suite datagen` of the workload with --files chosen so the dataset is about --size;
its throughput_mb_s from generation_log.json (bytes written / (writing + final fsync pass)).
Both run on --dir after a `sync`, and everything written is removed afterwards. Prints one ratio
line `ratio datagen/fio = X` (target >= 0.8), plus the whole-command wall-clock ratio for honesty
(Python start-up and planning included). On a shared machine, repeat and read the spread.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from suite import sizes
from suite.training.data import datagen  # noqa: E402
from suite.training import workloads


def plan(workload, size_bytes: int) -> tuple[int, int]:
    """(files, exact dataset bytes) for about size_bytes of this workload."""
    per_file = workload.record_length_bytes * workload.num_samples_per_file
    n = max(1, round(size_bytes / per_file))
    lengths = datagen.record_lengths(workload, n, workload.seed)
    total = sum(datagen.expected_size(workload.format, lengths[i], workload.num_samples_per_file) or 0
                for i in range(n))
    return n, total


def run_fio(directory: Path, total: int) -> tuple[float, float]:
    target = directory / "fio.dat"
    cmd = ["fio", "--name=seqwrite", "--rw=write", "--bs=1M", "--ioengine=psync", "--direct=0",
           "--end_fsync=1", f"--size={total}", f"--filename={target}", "--output-format=json"]
    subprocess.run(["sync"], check=True)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t0
    target.unlink()
    write = json.loads(out[out.index("{"):])["jobs"][0]["write"]
    return write["bw_bytes"] / 1e6, write["io_bytes"] / wall / 1e6


def run_datagen(directory: Path, name: str, files: int, processes, mpi) -> tuple[float, float, dict]:
    data = directory / "datagen"
    cmd = [sys.executable, "-m", "suite", "datagen", "--workload", name, "--data-dir", str(data), "--files", str(files)]
    if mpi:
        cmd = [str(Path(sys.executable).parent / "mpiexec"), "-n", str(mpi), *cmd, "--processes", "1"]
    elif processes:
        cmd += ["--processes", str(processes)]
    subprocess.run(["sync"], check=True)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=REPO)
    wall = time.perf_counter() - t0
    log = json.loads((data / datagen.LOG_NAME).read_text())
    shutil.rmtree(data)
    return log["throughput_mb_s"], log["bytes_written"] / wall / 1e6, log


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, default=None, help="a directory on the file system to test (default: /tmp)")
    parser.add_argument("--size", default="2GiB", help="dataset size with a unit (default 2GiB)")
    parser.add_argument("--workload", default="unet3d", choices=workloads.names())
    parser.add_argument("--accelerator-type", default=None)
    parser.add_argument("--processes", type=int, default=None, help="datagen local processes (default: CPU count)")
    parser.add_argument("--mpi", type=int, default=0, help="run datagen as N MPI ranks instead")
    parser.add_argument("--repeat", type=int, default=1, help="alternate fio and datagen this many times")
    args = parser.parse_args()
    workload = workloads.resolve(args.workload, args.accelerator_type or workloads.accelerators(args.workload)[-1])
    files, total = plan(workload, sizes.parse_size(args.size))
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="datagen-vs-fio.", dir=args.dir))
    fio_rates, dg_rates, fio_wall, dg_wall = [], [], [], []
    try:
        for k in range(args.repeat):                     # alternate which goes first
            for which in (("fio", "datagen") if k % 2 == 0 else ("datagen", "fio")):
                if which == "fio":
                    rate, wall = run_fio(base, total)
                    fio_rates.append(rate)
                    fio_wall.append(wall)
                else:
                    rate, wall, log = run_datagen(base, workload.name, files, args.processes, args.mpi)
                    dg_rates.append(rate)
                    dg_wall.append(wall)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ratios = sorted(d / f for d, f in zip(dg_rates, fio_rates))
    walls = sorted(d / f for d, f in zip(dg_wall, fio_wall))
    mode = f"{log['ranks']} MPI ranks" if args.mpi else f"{log['processes']} processes"
    print(f"file system: {base.parent}; {workload.name} {workload.format}, {files} files, {total / 2**30:.2f} GiB; "
          f"datagen {mode}; MB = 10^6 B")
    print(f"fio seq write:  {' '.join(f'{r:.0f}' for r in fio_rates)} MB/s (wall incl. start-up: "
          f"{' '.join(f'{r:.0f}' for r in fio_wall)})")
    print(f"datagen:        {' '.join(f'{r:.0f}' for r in dg_rates)} MB/s (wall incl. start-up: "
          f"{' '.join(f'{r:.0f}' for r in dg_wall)})")
    print(f"ratio datagen/fio = {ratios[len(ratios) // 2]:.2f} (median of {args.repeat} back-to-back pairs, "
          f"range {ratios[0]:.2f}-{ratios[-1]:.2f}; wall-clock {walls[len(walls) // 2]:.2f}; target >= 0.8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
