"""A query run's storage figures per query, from the counters the worker snapshotted around each phase
(suite.vector_database.worker.phases): the index device's own counters (/sys/dev/block/<dev>/stat), the
run's I/O cgroup's (suite.enforce.iocount: v1 blkio throttle accounting or v2 io.stat) and the engine
process's /proc/<pid>/io read_bytes; the engine's own count where it has one (neither diskannpy 0.7.0 nor
Milvus 2.3.5 exposes one: said so). Phases: load (index open), cold (the queries after the cache clear: the
run's figures) and warm (the same queries again at once).

Mean I/O size is bytes / I/Os of a counter; a p99 I/O size is not derivable from counters (they keep totals,
not each request's size): recorded as None with the reason.
"""

from __future__ import annotations

from suite.enforce import iocount

DEVICE = "device"          # the counters' key of the device's stat file in the plan
P99_NOTE = "not derivable: block counters keep totals, not each request's size (a per-request trace would)"


def counters(dev: str | None, cg) -> dict:
    """The files the worker snapshots: the device's stat and the cgroup's counter files (by name)."""
    out = {DEVICE: iocount.stat_path(dev)} if dev else {}
    return {**out, **(cg.counter_files if cg is not None else {})}


def _per_query(total: dict | None, n: int) -> dict | None:
    if total is None:
        return None
    b, ios = total.get("read_bytes"), total.get("read_ios")
    return {**total, "bytes_read_per_query": b / n if n and b is not None else None,
            "read_ios_per_query": ios / n if n and ios is not None else None,
            "mean_io_bytes": b / ios if ios else None}


def phase(ph: dict, dev: str | None, cg_version: str | None) -> dict:
    """One phase's figures: totals and per query from each counter."""
    a, b = ph["before"], ph["after"]
    n = int(ph.get("issued") or 0)
    dev_total = None
    if dev and DEVICE in a["files"] and DEVICE in b["files"]:
        dev_total = iocount.delta(iocount.parse_device_stat(a["files"][DEVICE]), iocount.parse_device_stat(b["files"][DEVICE]))
    cg_total = None
    if cg_version and dev:
        x, y = (iocount.parse_stats(cg_version, s["files"], dev) for s in (a, b))
        cg_total = iocount.delta(x, y, ("read_bytes", "read_ios")) if x and y else None
    proc = None
    if "read_bytes" in a.get("proc", {}) and "read_bytes" in b.get("proc", {}):
        proc = {"read_bytes": b["proc"]["read_bytes"] - a["proc"]["read_bytes"]}
    wall = ph.get("wall_s")
    out = {"queries": n, "wall_s": wall, "throughput_qps": n / wall if n and wall else None,
           "device": _per_query(dev_total, n) if n else dev_total, "cgroup": _per_query(cg_total, n) if n else cg_total,
           "process": _per_query(proc, n) if n else proc, "p99_io_bytes": None, "p99_io_bytes_note": P99_NOTE}
    return out


def figures(res: dict, dev: str | None, cg_evidence: dict | None) -> dict:
    """summary.json's `io`: per phase, and the run's headline storage figures (the cold pass): bytes and
    I/Os per query from the run's own cgroup where it counted, else the device's (every process on it)."""
    phases = res.get("io_phases") or {}
    version = (cg_evidence or {}).get("version")
    per = {name: phase(ph, dev, version) for name, ph in phases.items()}
    cold = per.get("cold") or {}
    own = cold.get("cgroup") or {}
    devq = cold.get("device") or {}
    src = "cgroup" if own.get("read_ios") is not None else ("device" if devq else None)
    pick = own if src == "cgroup" else devq
    warm = ((per.get("warm") or {}).get(src) or {}) if src else {}
    return {"phases": per, "cgroup": cg_evidence, "device_id": dev, "source": src,
            "engine": res.get("engine_io"), "engine_note": res.get("engine_io_note"),
            "bytes_read_per_query": pick.get("bytes_read_per_query"),
            "read_ops_per_query": pick.get("read_ios_per_query"), "mean_io_bytes": pick.get("mean_io_bytes"),
            "p99_io_bytes": None, "p99_io_bytes_note": P99_NOTE,
            "warm_bytes_read_per_query": warm.get("bytes_read_per_query"),
            "warm_read_ops_per_query": warm.get("read_ios_per_query"),
            "process_bytes_read_per_query": (cold.get("process") or {}).get("bytes_read_per_query")}
