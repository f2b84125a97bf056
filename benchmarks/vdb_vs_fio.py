"""How close does the vector_database query phase come to the storage's random-read limit?

A disk-resident index (DiskANN) turns each query into about a hundred 4 KiB random reads of the index
file (beam search: up to beam_width reads in flight per client, O_DIRECT through libaio), so the physical
limit is the file system's 4 KiB random-read rate at the same queue depth. Each pair runs, back to back
(the order alternating from pair to pair, as the shared VM's rate drifts):
    suite run --workload vdb-mini --index diskann --runs 1 --clients C [--beam-width W]   (cache dropped first)
and takes from its summary.json the QPS, the recall and the 4-KiB reads per query its I/O cgroup counted
(io.read_ops_per_query), i.e. the query phase's storage read rate; and
    fio --rw=randread --bs=4k --direct=1 --ioengine=libaio --numjobs=C --iodepth=W --filename=<the index file>
on the same file (the same file system), in the query phase's shape: C processes (--numjobs) of W reads in
flight each (so that on a shared CPU fio's processes get the share the clients get), and, for the record, as
one process of C*W (the figure before 2026-12-07). The ratio is the query phase's reads/s over fio's IOPS (both
4 KiB: bytes/s in the same proportion). C*W is the most reads the query phase can have in flight; what it
keeps in flight on average is measured at the device (Little's law on /sys/dev/block/<dev>/stat: the reads'
queue milliseconds over the wall time; device-wide, so other sessions' reads count too), fio's on the same
meter beside it, and fio is run a third time, one process at that depth rounded up (the third ratio). Also printed,
from the clients' own counters (worker.py): CPU per query (user, sys) and per read against fio's, and the
mean number of clients on a CPU, waiting for one, and asleep (waiting for their reads); and each ratio per CPU
second (fio's CPU per read over the query phase's: the ratio both would reach if each were CPU-bound on
the same cores, which the shared VM's load does not move much).

    python benchmarks/vdb_vs_fio.py [--workdir /tmp/suite-vdb-bench] [--pairs 3] [--clients 4] [--beam-width W]
                                    [--fio-seconds 5]
"""

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEVICE_STAT = "/sys/dev/block/{}/stat"


def read_ticks(dev: str) -> tuple:
    """(read I/Os completed, ms spent by reads in the device queue) of the block device `dev` (major:minor)."""
    f = Path(DEVICE_STAT.format(dev)).read_text().split()
    return int(f[0]), int(f[3])


def fio(path: Path, depth: int, seconds: int, dev: str, jobs: int = 1) -> dict:
    """fio's 4 KiB O_DIRECT random reads of `path`: `jobs` processes of `depth` reads in flight each; its IOPS, the
    reads it kept in flight at the device (Little's law), and its CPU per read (its processes' rusage)."""
    (_, t0), w0, ru0 = read_ticks(dev), time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["fio", "--name=vdb", f"--filename={path}", "--rw=randread", "--bs=4k", "--direct=1",
                          "--ioengine=libaio", f"--iodepth={depth}", f"--numjobs={jobs}", "--group_reporting",
                          "--readonly", f"--runtime={seconds}", "--time_based", "--output-format=json"],
                         capture_output=True, text=True, check=True)
    (_, t1), w1, ru1 = read_ticks(dev), time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    iops = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]["read"]["iops"]
    cpu_s = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
    return {"iops": iops, "depth": depth, "jobs": jobs, "dev_inflight": (t1 - t0) / 1000 / (w1 - w0),
            "cpu_us_per_read": cpu_s / (iops * seconds) * 1e6 if iops else math.nan, "cores": cpu_s / (w1 - w0)}


def query_run(a, data: Path, results: Path) -> dict:
    """One `suite run` of one measured run; its summary and the worker's own result (the clients' CPU figures)."""
    shutil.rmtree(results, ignore_errors=True)
    cmd = [sys.executable, "-m", "suite", "run", "--workload", "vdb-mini", "--index", "diskann", "--data-dir", str(data),
           "--results-dir", str(results), "--runs", "1", "--clients", str(a.clients), "--allow-no-cache-drop"]
    if a.beam_width:
        cmd += ["--beam-width", str(a.beam_width)]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    runs = sorted(results.glob("vector_database/diskann/DISKANN/run/*/summary.json"))
    if not runs:
        raise SystemExit(f"vdb_vs_fio: no run completed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    doc = json.loads(runs[0].read_text())
    res = json.loads((runs[0].parent / "vectordb" / "engine" / "result.json").read_text())
    cold = res["io_phases"]["cold"]
    dt = cold["after"]["t_s"] - cold["before"]["t_s"]
    before, after = (cold[k]["files"]["device"].split() for k in ("before", "after"))
    queries, wall = doc["io"]["phases"]["cold"]["queries"], cold["wall_s"]
    reads_per_query = doc["io"]["read_ops_per_query"]
    cpu = cold.get("clients_cpu") or {}
    beam = doc["search"]["beam_width"]
    return {"qps": doc["throughput_qps"], "recall": doc["recall"], "reads_per_query": reads_per_query,
            "reads_s": doc["throughput_qps"] * reads_per_query, "beam": beam, "index_dir": doc["index_dir"],
            "dev": doc["io"]["device_id"], "mean_io_bytes": doc["io"]["mean_io_bytes"],
            "dev_inflight": (int(after[3]) - int(before[3])) / 1000 / dt,
            "user_us_q": cpu.get("user_s", math.nan) / queries * 1e6, "sys_us_q": cpu.get("sys_s", math.nan) / queries * 1e6,
            "on_cpu": cpu.get("run_s", math.nan) / wall, "runqueue": cpu.get("runqueue_s", math.nan) / wall,
            "asleep": cpu.get("asleep_s", math.nan) / wall, "in_flight_max": a.clients * beam,
            "cores": (cpu.get("user_s", math.nan) + cpu.get("sys_s", math.nan)) / wall}


def pair(a, k: int, data: Path) -> dict:
    """Pair k: the query run and fio (C processes x W; one process x C*W), in the order k's parity says; then fio
    once more, one process at the depth the query phase kept at the device."""
    results = a.workdir / f"R{k}"
    first_fio = k % 2 == 1
    f_same = f_one = None
    if first_fio:
        probe = query_probe(a, data)
        f_same = fio(probe["index"], probe["beam"], a.fio_seconds, probe["dev"], jobs=a.clients)
        f_one = fio(probe["index"], a.clients * probe["beam"], a.fio_seconds, probe["dev"])
    q = query_run(a, data, results)
    index = Path(q["index_dir"]) / "ann_disk.index"
    if f_same is None:
        f_same = fio(index, q["beam"], a.fio_seconds, q["dev"], jobs=a.clients)
        f_one = fio(index, q["in_flight_max"], a.fio_seconds, q["dev"])
    f_matched = fio(index, max(1, math.ceil(q["dev_inflight"] - 0.05)), a.fio_seconds, q["dev"])
    return {"q": q, "fio": f_same, "fio_one": f_one, "fio_matched": f_matched, "load": os.getloadavg()[0],
            "fio_first": first_fio}


def query_probe(a, data: Path) -> dict:
    """The index file, its device and the beam width, before the first query run (fio goes first in odd pairs)."""
    meta = data / "index" / "diskann-DISKANN"
    dev = os.stat(meta / "ann_disk.index").st_dev
    from suite.vector_database import workload

    beam = a.beam_width or workload.load("vdb-mini").beam_width
    return {"index": meta / "ann_disk.index", "dev": f"{os.major(dev)}:{os.minor(dev)}", "beam": beam}


def q_cpu(q: dict) -> float:
    """The query phase's CPU microseconds per 4-KiB read (its client processes' user + sys)."""
    return (q["user_us_q"] + q["sys_us_q"]) / q["reads_per_query"]


def report(pairs: list) -> None:
    for i, p in enumerate(pairs):
        q, f, o, m = p["q"], p["fio"], p["fio_one"], p["fio_matched"]
        print(f"pair {i + 1} (load {p['load']:.1f}, {'fio' if p['fio_first'] else 'query'} first): "
              f"{q['reads_s']:,.0f} reads/s ({q['qps']:.0f} QPS x {q['reads_per_query']:.1f}, recall@10 {q['recall']:.3f}) "
              f"vs fio {f['jobs']} jobs x iodepth {f['depth']} {f['iops']:,.0f} IOPS = {q['reads_s'] / f['iops']:.2f}; "
              f"1 job x iodepth {o['depth']} {o['iops']:,.0f} = {q['reads_s'] / o['iops']:.2f}"
              + f"; 1 job at the depth it keeps, {m['depth']}: {m['iops']:,.0f} = {q['reads_s'] / m['iops']:.2f}")
        print(f"    clients (mean of {q['in_flight_max'] // q['beam']}): {q['on_cpu']:.2f} on a CPU, {q['runqueue']:.2f} "
              f"waiting for one, {q['asleep']:.2f} asleep in io_getevents; "
              f"CPU per query {q['user_us_q']:,.0f} us user + {q['sys_us_q']:,.0f} us sys = "
              f"{q_cpu(q):.1f} us per read (fio {f['cpu_us_per_read']:.1f} / {o['cpu_us_per_read']:.1f}); "
              f"cores used {q['cores']:.2f} (fio {f['cores']:.2f} / {o['cores']:.2f}); "
              f"reads in flight at the device (Little) {q['dev_inflight']:.2f}, fio's {f['dev_inflight']:.2f}")
    q0, loads = pairs[0]["q"], [p["load"] for p in pairs]
    print(f"query phase: {statistics.median(p['q']['reads_s'] for p in pairs):,.0f} reads/s of {q0['mean_io_bytes']:,.0f} B "
          f"(median of {len(pairs)} pairs; {q0['in_flight_max'] // q0['beam']} client processes x beam {q0['beam']}); "
          f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    for key, what in (("fio", "fio with the query phase's shape ({jobs} processes x iodepth {depth})"),
                      ("fio_one", "fio 1 process x iodepth {depth}"),
                      ("fio_matched", "fio 1 process at the depth the query phase keeps at the device")):
        r = sorted(p["q"]["reads_s"] / p[key]["iops"] for p in pairs)
        f = pairs[0][key]
        per_cpu = sorted(p[key]["cpu_us_per_read"] / q_cpu(p["q"]) for p in pairs)
        print(f"ratio query-phase reads / {what.format(**f)}: {statistics.median(r):.2f} (range {r[0]:.2f}-{r[-1]:.2f}; "
              f"fio {statistics.median(p[key]['iops'] for p in pairs):,.0f} IOPS); per CPU second "
              f"{statistics.median(per_cpu):.2f} ({per_cpu[0]:.2f}-{per_cpu[-1]:.2f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/suite-vdb-bench"))
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--beam-width", type=int, default=None, help="DiskANN's beam width (default: the workload's)")
    ap.add_argument("--fio-seconds", type=int, default=5)
    a = ap.parse_args()
    data = a.workdir / "D"
    if not (data / "dataset.json").is_file():          # the dataset, made once (suite datagen, ~15 s)
        subprocess.run([sys.executable, "-m", "suite", "datagen", "--workload", "vdb-mini", "--data-dir", str(data)],
                       cwd=REPO, check=True)
    report([pair(a, k, data) for k in range(a.pairs)])
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
