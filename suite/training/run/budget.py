"""The miniature's memory: the page cache its dataset is sized from and the processes' own memory, apart.

A miniature (`suite run` without --data-dir) sizes its dataset by the dataset-size rule from a small
memory figure -- the cache budget: the workload's `miniature.cache_budget_bytes`, else --memory-limit,
else 1 GiB -- and runs mpiexec and its ranks in a memory cgroup standing for "the host memory". That
cgroup holds the page cache the rule counts AND every process's own memory (mpiexec, its proxy, each
rank's Python, mpi4py and read buffers). With one figure for both, a 64 MiB cgroup left the page cache
next to nothing: retinanet's rank thrashed at AU 4-14 % and was then OOM-killed (issue 37). So the
cgroup's limit is the cache budget plus a bound on the processes' own memory:

    limit = cache budget + LAUNCHER_BYTES + ranks x (RANK_BASE_BYTES + read_threads x read buffer)

and the dataset is at least 5x the cache budget (the rule) and larger than the whole limit, so the
page cache cannot hold it whatever the processes leave unused. The bounds are what was measured here
with headroom (a rank's VmHWM: 36-45 MiB -- Python 3, mpi4py, suite's rank modules, its buffers;
mpiexec + hydra_pmi_proxy: ~5 MiB); each run records the bound beside every rank's measured peak
(steps/rank-<r>.json peak_rss_bytes), so what the page cache was left is on the record.
"""

from dataclasses import asdict, dataclass

MIB = 1024 * 1024
RANK_BASE_BYTES = 64 * MIB      # one rank without its read buffers: measured 36 MiB VmHWM here
LAUNCHER_BYTES = 16 * MIB       # mpiexec and hydra_pmi_proxy: measured ~5 MiB RSS together here


@dataclass(frozen=True)
class MemoryBudget:
    """A miniature's cgroup, in parts (results.json enforcement.memory_budget)."""

    cache_budget_bytes: int          # the page cache the dataset-size rule counts (its "host memory")
    ranks: int                       # ranks in the cgroup
    rank_base_bytes: int             # bound per rank: Python, mpi4py, suite's modules
    rank_buffers_bytes: int          # per rank: read_threads x its read buffer (suite.training.run.loader)
    launcher_bytes: int              # bound: mpiexec and its proxy

    @property
    def own_memory_bytes(self) -> int:
        """The bound on the processes' own (not page-cache) memory in the cgroup."""
        return self.launcher_bytes + self.ranks * (self.rank_base_bytes + self.rank_buffers_bytes)

    @property
    def cgroup_limit_bytes(self) -> int:
        return self.cache_budget_bytes + self.own_memory_bytes

    def to_dict(self) -> dict:
        return {**asdict(self), "own_memory_bytes": self.own_memory_bytes,
                "cgroup_limit_bytes": self.cgroup_limit_bytes}


def rank_buffers_bytes(workload, max_file_bytes: int) -> int:
    """What one rank's reader holds in buffers for these files (the loader's own arithmetic)."""
    from suite.training.run.loader import ReaderConfig

    return ReaderConfig(read_threads=workload.read_threads, transfer_size_bytes=workload.transfer_size_bytes,
                        odirect=workload.odirect, max_file_bytes=max_file_bytes).buffers_bytes


def largest_record_bytes(workload) -> int:
    """The largest file the generator writes for this workload (mean + 3 stdev, or the mean)."""
    rec = workload.record_length_bytes + 3 * (workload.record_length_stdev_bytes or 0)
    return int(rec * workload.num_samples_per_file) + 64 * 1024     # the format's framing, generously


def miniature(workload, ranks: int, cache_budget_bytes: int) -> MemoryBudget:
    """The budget for `ranks` ranks of `workload` on one host with this cache budget."""
    return MemoryBudget(cache_budget_bytes=int(cache_budget_bytes), ranks=int(ranks),
                        rank_base_bytes=RANK_BASE_BYTES,
                        rank_buffers_bytes=rank_buffers_bytes(workload, largest_record_bytes(workload)),
                        launcher_bytes=LAUNCHER_BYTES)


def files_beyond(budget: MemoryBudget, workload) -> int:
    """The fewest files whose bytes exceed the whole cgroup limit (the dataset's floor: the page cache
    cannot hold it even where the processes use less than their bound)."""
    per_file = max(1, int(workload.record_length_bytes * workload.num_samples_per_file))
    return budget.cgroup_limit_bytes // per_file + 1


def measured(budget: MemoryBudget, ranks_peak_rss_bytes: list, ranks_storage_read_bytes: list) -> dict:
    """results.json's enforcement.memory_budget: the parts, each rank's measured peak, the room that left
    the page cache at most (the limit less the ranks' peaks and the launcher's bound), whether every
    rank stayed within its bound, and what each rank's reads fetched from storage (not the cache)."""
    peaks = [p for p in ranks_peak_rss_bytes if isinstance(p, int)]
    out = {**budget.to_dict(), "ranks_peak_rss_bytes": list(ranks_peak_rss_bytes),
           "ranks_storage_read_bytes": list(ranks_storage_read_bytes)}
    if peaks and len(peaks) == len(ranks_peak_rss_bytes):
        out["cache_room_bytes"] = budget.cgroup_limit_bytes - sum(peaks) - budget.launcher_bytes
        out["within_bound"] = max(peaks) <= budget.rank_base_bytes + budget.rank_buffers_bytes
    return out
