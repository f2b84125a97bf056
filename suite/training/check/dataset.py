"""The dataset-size facts of a run, graded: the minimum `suite datasize` gives, the minimum allowing a
documented tolerance (rules param `dataset_memory_tolerance_gib_per_host`: a submitter who sized from
nominal memory while psutil saw a little more per host is short by a hair, not by 80%), and the
basis of both in words: the memory figure used, where it came from, the host count and which part
of the rule (5x memory or the minimum steps) set the minimum.

Memory figure, first found: a per-host memory limit documented in the system description (a cgroup
memory.max, honoured as `suite run --memory-limit` is), our results.json's applied cgroup limit,
DLIO's summary.json host_memory_GB (GiB despite its name; summed over the hosts).
"""

from __future__ import annotations

import math

from suite.errors import SuiteError
from suite.numbers import as_int, finite_list, is_number
from suite.sizes import GIB
from suite.training import datasize

MAX_MEMORY_GIB = float(2 ** 40)          # a host_memory_GB entry above 1 EiB counts as 1 EiB


def memory(summaries, results_docs, documented_limit: int | None, system_path) -> tuple[int | None, int, str]:
    """(total memory bytes, host count, where it came from)."""
    hosts = max([as_int(s.get("num_hosts")) or 0 for s in summaries] + [len(summaries), 1])
    if documented_limit:
        return documented_limit * hosts, hosts, \
            f"{documented_limit / GIB:.2f} GiB per host: the memory limit documented in {system_path.name}"
    limits = [((r.get("enforcement") or {}).get("memory_limit") or {}).get("applied_bytes") for r in results_docs]
    limits = [x for x in limits if is_number(x) and x > 0]
    if limits:
        return int(max(limits)) * hosts, hosts, f"{max(limits) / GIB:.2f} GiB per host: results.json's cgroup limit"
    mem = [s.get("host_memory_GB") for s in summaries]
    if mem and all(finite_list(m) is not None for m in mem):   # capped per entry: 1e308 + 1e308 overflows fsum
        total_gib = math.fsum(min(max(x, 0.0), MAX_MEMORY_GIB) for m in mem for x in m)
        if total_gib > 0:
            return int(total_gib * GIB), hosts, "summary.json host_memory_GB, summed over the hosts"
    return None, hosts, "unknown"


def required(w, accelerators: int, total_bytes: int, hosts: int, source: str, ruleset: str,
             tolerance_gib_per_host) -> dict:
    """dataset.required_files, dataset.required_files_tolerant and dataset.size_basis."""
    try:
        exact = datasize.compute(w, accelerators, 1, total_bytes, ruleset)
        tol = int((tolerance_gib_per_host or 0) * GIB * hosts)
        loose = datasize.compute(w, accelerators, 1, max(total_bytes - tol, 1), ruleset) if tol else exact
    except SuiteError:
        return {}
    rule = "5x host memory" if exact.dictated_by == "memory" else "minimum steps"
    basis = (f"minimum {exact.num_files} files set by the {rule} rule for {accelerators} accelerators, "
             f"memory {total_bytes / GIB:.2f} GiB ({source}), {hosts} host(s)")
    if tol:
        basis += f"; {loose.num_files} with the {tolerance_gib_per_host} GiB/host tolerance"
    return {"dataset.required_files": exact.num_files, "dataset.required_files_tolerant": loose.num_files,
            "dataset.size_basis": basis}
