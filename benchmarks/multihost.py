"""The runner's read rate with its ranks on 2 hosts against 1 host, on the same files.

Hosts are network namespaces made here (tools/netns-hosts.sh; own address and hostname, one
kernel, one page cache), reached through tools/netns-launcher as ssh would reach real hosts:
mpiexec starts the ranks over TCP and every step's barrier crosses the bridge. Both settings run
through the launcher (1 host: N ranks on host 1; 2 hosts: N/2 on each), from the page cache
(`--division open --no-cache-drop`, computation_time 0, as runner_vs_fio.py), and alternate which
goes first. Prints per setting the read rate (bytes actually read / epoch time, MiB/s; median and
range over the pairs, epochs after the first) and the ratio 2 hosts / 1 host; the load average.
On one 2-core box the 2 "hosts" share the CPUs and the page cache, so the ratio shows what the
cross-host machinery costs, not what a second client adds. Needs root and iproute2.

    python benchmarks/multihost.py [--ranks 2 4] [--repeats 3] [--workdir /tmp/suite-bench-hosts]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PREFIX, SUBNET = "sbench", "10.231.251"
PARAMS = ["dataset.record_length=4194304", "dataset.record_length_stdev=0", "train.epochs=4",
          "train.computation_time=0", "checkpoint.model_size=1"]


def netns(*args) -> str:
    env = dict(os.environ, SUITE_NETNS_SUBNET=SUBNET)
    return subprocess.run(["sh", str(REPO / "tools" / "netns-hosts.sh"), *args], env=env, check=True,
                          capture_output=True, text=True).stdout


def one(hosts: list, ranks: int, data: Path, results: Path) -> float:
    if results.exists():
        shutil.rmtree(results)
    argv = [sys.executable, "-m", "suite", "run", "--workload", "unet3d", "--accelerators", str(ranks),
            "--data-dir", str(data), "--results-dir", str(results), "--runs", "1", "--division", "open",
            "--no-cache-drop", "--hosts", ",".join(hosts), "--launcher", str(REPO / "tools" / "netns-launcher"),
            "--param", f"checkpoint.checkpoint_folder={results / 'ckpt'}"]
    for p in PARAMS:
        argv += ["--param", p]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    found = list(results.glob("run-1/*/results.json"))
    if not found:
        raise SystemExit(f"suite run failed: {proc.stderr.strip()[-500:]}")
    doc = json.loads(found[0].read_text())
    if doc["status"] != "complete":
        raise SystemExit(f"suite run failed: {doc['error']}")
    later = doc["epochs"][1:]              # the first epoch includes mpiexec's and the readers' start
    return sum(e["bytes_read"] for e in later) / 1024**2 / sum(e["duration_s"] for e in later)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/suite-bench-hosts")
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--files", type=int, default=128, help="4 MiB unet3d files (all read every epoch)")
    args = ap.parse_args()
    from suite.training.data import datagen
    from suite.training import workloads

    work = Path(args.workdir)
    data = work / "data"
    if not data.is_dir():
        wl = workloads.resolve("unet3d", "h100", workloads.parse_params(PARAMS[:2]))
        datagen.generate(wl, data, args.files, processes=1)
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          f"{args.files} x 4 MiB unet3d files from the page cache")
    hosts = netns("up", "2", PREFIX).split()
    try:
        for n in args.ranks:
            rates = {1: [], 2: []}
            for i in range(args.repeats):
                for h in ((1, 2) if i % 2 == 0 else (2, 1)):
                    rates[h].append(one(hosts[:h], n, data, work / f"r{h}"))
            m1, m2 = statistics.median(rates[1]), statistics.median(rates[2])
            print(f"{n} ranks: 1 host {m1:.0f} MiB/s ({min(rates[1]):.0f}-{max(rates[1]):.0f}), "
                  f"2 hosts x {n // 2} {m2:.0f} MiB/s ({min(rates[2]):.0f}-{max(rates[2]):.0f}); "
                  f"ratio 2 hosts / 1 host = {m2 / m1:.2f}")
    finally:
        netns("down", PREFIX)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
