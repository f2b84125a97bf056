"""One client of a kv_cache trial: `mpiexec -n N python -m suite.kv_cache.rank --rank-output-base
<trial dir> --rank-cache-base <cache dir> --seed-base 42 --model ... --num-users ... --duration ...
--gpu-mem-gb ... --cpu-mem-gb ... --max-concurrent-allocs ... --generation-mode none` (the
reference wrapper's options: the metadata records this command and the checker reads it).

Rank r (MPI COMM_WORLD) runs with seed seed-base + r, its cache in <cache base>/rank_<r>/ (emptied
of entry files first and after; without --storage-capacity-gb its capacity is 95% of the dir's free
space over the ranks on its host), its results in <output base>/rank_<r>/kvcache_results_<ts>.json.
Beside the results, kvcache_requests_<ts>.csv: the storage requests' records (suite.kv_cache.requests);
with --io-trace-dir, every cache operation of the rank (suite.kv_cache.trace). The ranks start together (a barrier). Errors: one line in <suite dir>/errors/rank-<r>.txt, abort.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

from suite import files
from suite.errors import RunError
from suite.kv_cache import requests, stats, trace
from suite.kv_cache.model import GIB, Params
from suite.kv_cache.tier import clear_entries

STORAGE_FREE_FRACTION = 0.95


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m suite.kv_cache.rank", allow_abbrev=False)
    p.add_argument("--rank-output-base", required=True)
    p.add_argument("--rank-cache-base", required=True)
    p.add_argument("--suite-dir", required=True, help="where pid and error files go (the harness's)")
    p.add_argument("--seed-base", type=int, required=True)
    p.add_argument("--option", type=int, required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--num-users", type=int, required=True)
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--gpu-mem-gb", type=float, required=True)
    p.add_argument("--cpu-mem-gb", type=float, required=True)
    p.add_argument("--max-concurrent-allocs", type=int, required=True)
    p.add_argument("--generation-mode", default="none", choices=["none"])
    p.add_argument("--storage-capacity-gb", type=float, default=0.0)
    p.add_argument("--token-bytes-divisor", type=int, default=1)
    p.add_argument("--workload", default="kv-cache")
    p.add_argument("--timestamp", required=True)
    p.add_argument("--trial", type=int, default=0, help="the trial's number (the trace's column)")
    p.add_argument("--io-trace-dir", default=None, help="write every cache operation of the rank there (CSV)")
    return p


def params_of(a) -> Params:
    return Params(option=a.option, model=a.model, users=a.num_users, duration_s=a.duration, gpu_mem_gb=a.gpu_mem_gb,
                  cpu_mem_gb=a.cpu_mem_gb, max_concurrent_allocs=a.max_concurrent_allocs, seed_base=a.seed_base,
                  generation_mode=a.generation_mode, storage_capacity_gb=a.storage_capacity_gb,
                  token_bytes_divisor=a.token_bytes_divisor)


def host_ranks(comm) -> int:
    """How many ranks run on this rank's host (MPI's shared-memory split; a collective). They share the
    cache dir's file system, so each takes its share of the free space: every rank taking all of it
    overfills the dir (ENOSPC), which fails the trial (issue 36, class 11)."""
    from mpi4py import MPI

    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return max(1, local.Get_size())
    finally:
        local.Free()


def trial(a, rank: int, comm, barrier) -> dict:
    """Build the tiers, meet the others, run the users, return the results document."""
    from suite.kv_cache import cache as kvcache
    from suite.kv_cache import model
    from suite.kv_cache import sim
    from suite.kv_cache.tier import MemoryTier, Pattern, StorageTier
    from suite.storage.backend.select import backend_for

    doc = model.load(a.workload)
    params = params_of(a)
    seed = a.seed_base + rank
    backend = backend_for("local_fs", Path(a.rank_cache_base) / f"rank_{rank}")
    backend.make_prefix("")
    clear_entries(backend)
    free = backend.free_bytes() or 0           # read by every rank before any writes (the barrier below)
    capacity = int(a.storage_capacity_gb * GIB) or int(STORAGE_FREE_FRACTION * free / host_ranks(comm))
    stop = threading.Event()
    pattern = Pattern(seed)
    tiers = [MemoryTier("gpu", pattern, seed, stop), MemoryTier("cpu", pattern, seed, stop),
             StorageTier(backend, pattern, seed, stop)]
    barrier(comm)
    t0 = time.perf_counter()
    cache = kvcache.Cache(tiers, {"gpu": int(a.gpu_mem_gb * GIB), "cpu": int(a.cpu_mem_gb * GIB),
                                  "storage": capacity}, t0)
    run = sim.run(doc, params, cache, lambda tokens: model.entry_bytes(doc, params, tokens), t0, stop, seed)
    records = requests.rows_of(cache.ops)
    result = stats.rank_doc(run, cache, params, seed, rank, a.token_bytes_divisor > 1, records,
                            f"{requests.PREFIX}{a.timestamp}{requests.SUFFIX}")
    clear_entries(backend)
    return result, records[0], cache.ops


def main(argv=None) -> int:
    from mpi4py import MPI

    from suite.harness.ranks import barrier, fail, finished, started

    a = parser().parse_args(argv)
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    suite_dir = Path(a.suite_dir)
    started(suite_dir, rank)
    try:
        result, rows, ops = trial(a, rank, comm, barrier)
        out = Path(a.rank_output_base) / f"rank_{rank}"
        out.mkdir(parents=True, exist_ok=True)
        requests.write(out / result["suite_figures"]["request_split"]["records_file"], rows)
        if a.io_trace_dir:
            trace.write_part(Path(a.io_trace_dir), a.option, a.trial, rank, ops)
        files.write_atomic(out / f"kvcache_results_{a.timestamp}.json", files.dump_json(result, indent=2))
        empty = stats.served_nothing(result)      # the file stays as evidence; the trial failed
        if empty:
            raise RunError(empty)
        s = result["summary"]
        print(f"  rank {rank}: {s['total_requests']} requests, {s['avg_throughput_tokens_per_sec']:.1f} tokens/s, "
              f"storage read {s['cache_stats']['tier_storage_read_bandwidth_gbps']:.3f} GiB/s, write "
              f"{s['cache_stats']['tier_storage_write_bandwidth_gbps']:.3f} GiB/s", flush=True)
        barrier(comm)
        finished(suite_dir, rank)
    except Exception as exc:  # noqa: BLE001 - one line for the CLI, a bug's traceback to the stderr log
        if isinstance(exc, OSError) and not isinstance(exc, RunError):
            exc = RunError(f"{exc.filename or a.rank_cache_base}: {exc.strerror or exc}")
        fail(comm, suite_dir, rank, exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
