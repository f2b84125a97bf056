"""How close does the vector_database query phase come to the storage's random-read limit?

A disk-resident index (DiskANN) turns each query into a few dozen 4 KiB random reads of the index
file (beam search: up to beam_width reads in flight per client), so the physical limit is the
file system's 4 KiB random-read rate at the same queue depth. This script runs
    suite run --workload vdb-mini --index diskann (cache cleared before each run)
and takes from each run's summary.json the QPS and the I/Os per query the run's own I/O cgroup counted
(io.read_ops_per_query; io.mean_io_bytes says they are 4 KiB reads), i.e. the query phase's storage read
rate in reads/s (the bytes per query / 4 KiB printed beside it as a cross-check); then
    fio --rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=C*W --filename=<the index file>
on the same file (the same file system), and prints the ratio (median and range of the runs).

    python benchmarks/vdb_vs_fio.py [--workdir /tmp/suite-vdb-bench] [--runs 5] [--clients 4] [--fio-seconds 10]
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def fio_iops(path: Path, depth: int, seconds: int) -> float:
    out = subprocess.run(["fio", "--name=vdb", f"--filename={path}", "--rw=randread", "--bs=4k", "--direct=1",
                          "--ioengine=libaio", f"--iodepth={depth}", "--readonly", f"--runtime={seconds}",
                          "--time_based", "--output-format=json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]["read"]["iops"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/suite-vdb-bench"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--fio-seconds", type=int, default=10)
    a = ap.parse_args()
    data, results = a.workdir / "D", a.workdir / "R"
    if results.exists():
        import shutil

        shutil.rmtree(results)
    if not (data / "dataset.json").is_file():          # the dataset, made once (suite datagen, ~15 s)
        subprocess.run([sys.executable, "-m", "suite", "datagen", "--workload", "vdb-mini", "--data-dir", str(data)],
                       cwd=REPO, check=True)
    subprocess.run([sys.executable, "-m", "suite", "run", "--workload", "vdb-mini", "--index", "diskann",
                    "--data-dir", str(data), "--results-dir", str(results), "--runs", str(a.runs),
                    "--clients", str(a.clients), "--allow-no-cache-drop"], cwd=REPO, check=False)
    runs = sorted(results.glob("vector_database/diskann/DISKANN/run/*/summary.json"))
    if not runs:
        print("no run completed", file=sys.stderr)
        return 1
    docs = [json.loads(p.read_text()) for p in runs]
    beam = 2                                         # vdb-mini's search.beam_width
    depth = a.clients * beam
    index_file = Path(docs[0]["index_dir"]) / "ann_disk.index"
    rates = [d["throughput_qps"] * d["io"]["read_ops_per_query"] for d in docs]
    by_bytes = [d["throughput_qps"] * d["io"]["bytes_read_per_query"] / 4096 for d in docs]
    fio = [fio_iops(index_file, depth, a.fio_seconds) for _ in range(3)]
    import os

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; counter {docs[0]['io']['source']}, "
          f"mean I/O {statistics.median(d['io']['mean_io_bytes'] for d in docs):,.0f} B; "
          f"reads/s by bytes / 4 KiB: {statistics.median(by_bytes):,.0f}")
    ratios = sorted(r / statistics.median(fio) for r in rates)
    print(f"query phase: {statistics.median(rates):,.0f} reads/s (median of {len(rates)} runs; "
          f"{statistics.median(d['io']['read_ops_per_query'] for d in docs):.1f} reads per query, "
          f"{statistics.median(d['io']['bytes_read_per_query'] for d in docs) / 1024:.1f} KiB read per query, "
          f"{statistics.median(d['throughput_qps'] for d in docs):.1f} QPS, {a.clients} clients x beam {beam})")
    print(f"fio randread 4k direct libaio iodepth={depth} on {index_file}: {statistics.median(fio):,.0f} IOPS "
          f"(median of 3: {', '.join(f'{x:,.0f}' for x in fio)})")
    print(f"ratio query-phase reads / fio = {statistics.median(ratios):.2f} (range {ratios[0]:.2f}-{ratios[-1]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
