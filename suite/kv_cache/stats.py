"""One rank's results file, kvcache_results_<ts>.json, in the published layout (the keys mlcommons'
tools read: requests_completed, total_tokens_generated, the latency arrays in seconds, summary with
storage_io_latency_ms and cache_stats), plus `suite_figures`: what the reference's users asked for
(mlcommons/storage#421, #467, #266), named apart from the reference's own:

- device_read_latency_ms / device_write_latency_ms: per storage operation (not per request), the
  system calls alone, eviction I/O included (demotion writes to storage);
- storage_read_bytes_per_wall_s / storage_write_bytes_per_wall_s: every storage-tier byte
  (evictions included) over the trial's wall time;
- tier_occupancy: each tier's bytes and entries over time;
- request_split: the P95 of each storage request's total, device and queueing time and the device and
  queue shares (suite.kv_cache.requests), from the rows of kvcache_requests_<ts>.csv beside the file;
- requests_queued_at_end: prefill writes still waiting for an allocation slot when the trial ended
  (never issued, so in no record), how many and the longest wait.
"""

from __future__ import annotations

from suite.kv_cache import requests
from suite.kv_cache.model import GIB

PERCENTILES = {"p50": 50, "p95": 95, "p99": 99, "p999": 99.9, "p9999": 99.99}


def percentiles_ms(values_s: list) -> dict:
    """{mean, p50, p95, p99, p999, p9999} in ms (numpy's linear percentile, as the reference's)."""
    import numpy as np

    if not values_s:
        return {"mean": 0.0, **{k: 0.0 for k in PERCENTILES}}
    a = np.asarray(values_s, dtype=float) * 1000.0
    return {"mean": float(a.mean()), **{k: float(np.percentile(a, q)) for k, q in PERCENTILES.items()}}


def op_percentiles(prefix: str, values_s: list) -> dict:
    """{<prefix>_p50_ms: ..} per operation (the reference's cache_stats.storage_read_device_p95_ms shape)."""
    p = percentiles_ms(values_s)
    return {f"{prefix}_{k}_ms": v for k, v in p.items() if k != "mean"}


def rank_doc(run, cache, params, seed: int, rank: int, miniature: bool, records: tuple = ((), 0),
             records_file: str = "") -> dict:
    """The rank's results document. (Past 60 lines: one literal of the published keys, then the suite's, kept
    together so the two key sets are read side by side.)"""
    recs = run.records
    elapsed = run.elapsed_s
    tokens = sum(r.tokens for r in recs)
    storage_total = sum(r.storage_s for r in recs)
    ops = cache.ops
    st = [o for o in ops if o.tier == "storage"]
    reads = [o for o in st if o.kind == "read"]
    writes = [o for o in st if o.kind in ("write", "evict_write")]
    bytes_read = sum(o.nbytes for o in reads)
    bytes_written = sum(o.nbytes for o in writes)
    occ = cache.occupancy()
    cache_stats = {
        "cache_hits": cache.hits, "cache_misses": cache.misses,
        "cache_hit_rate": cache.hits / (cache.hits + cache.misses) if cache.hits + cache.misses else 0.0,
        "gpu_entries": occ.get("gpu", {}).get("entries", 0), "cpu_entries": occ.get("cpu", {}).get("entries", 0),
        "storage_entries": occ.get("storage", {}).get("entries", 0),
        "prefill_writes": sum(1 for o in ops if o.kind == "write"),
        "decode_reads": sum(1 for o in ops if o.kind == "read"),
        "offloads_storage": sum(1 for o in st if o.kind == "evict_write"),
        "tier_storage_kv_bytes_read_gb": bytes_read / GIB, "tier_storage_kv_bytes_written_gb": bytes_written / GIB,
        "tier_storage_read_bandwidth_gbps": bytes_read / GIB / elapsed if elapsed else 0.0,
        "tier_storage_write_bandwidth_gbps": bytes_written / GIB / elapsed if elapsed else 0.0,
        "total_read_bytes": sum(o.nbytes for o in ops if o.kind == "read"),
        "total_write_bytes": sum(o.nbytes for o in ops if o.kind in ("write", "evict_write")),
        "read_iops": len(reads), "write_iops": len(writes),
        **op_percentiles("storage_read", [o.total_s for o in reads]),
        **op_percentiles("storage_write", [o.total_s for o in writes if not o.eviction]),
        **op_percentiles("storage_read_device", [o.device_s for o in reads]),
        **op_percentiles("storage_write_device", [o.device_s for o in writes if not o.eviction]),
    }
    summary = {
        "total_requests": len(recs), "total_tokens": tokens, "elapsed_time": elapsed,
        "avg_throughput_tokens_per_sec": tokens / elapsed if elapsed else 0.0,
        "total_storage_io_time": storage_total,
        "storage_throughput_tokens_per_sec": tokens / storage_total if storage_total else 0.0,
        "requests_per_second": len(recs) / elapsed if elapsed else 0.0,
        "end_to_end_latency_ms": percentiles_ms([r.e2e_s for r in recs]),
        "storage_io_latency_ms": percentiles_ms([r.storage_s for r in recs]),
        "generation_latency_ms": percentiles_ms([0.0 for _ in recs]),
        "cache_stats": cache_stats,
    }
    evictions = [o for o in st if o.eviction]
    suite = {
        "schema_version": 1, "rank": rank, "miniature": miniature, "params": params.to_dict(),
        "device_read_latency_ms": percentiles_ms([o.device_s for o in reads]),
        "device_write_latency_ms": percentiles_ms([o.device_s for o in writes]),
        "eviction_write_latency_ms": percentiles_ms([o.device_s for o in evictions if o.kind == "evict_write"]),
        "eviction_delete_latency_ms": percentiles_ms([o.device_s for o in evictions if o.kind == "delete"]),
        "storage_ops": {"reads": len(reads), "writes": len(writes), "eviction_writes": sum(o.kind == "evict_write" for o in st),
                        "eviction_deletes": sum(o.kind == "delete" for o in st)},
        "storage_read_bytes_per_wall_s": bytes_read / elapsed if elapsed else 0.0,
        "storage_write_bytes_per_wall_s": bytes_written / elapsed if elapsed else 0.0,
        "elapsed_s": elapsed, "allocations_refused": cache.refused, "tier_capacity_bytes": dict(cache.capacity), "tier_occupancy": run.timeline,
        "request_split": {**requests.split(list(records[0])), "storage_requests": records[1],
                          "records_kept": len(records[0]), "records_file": records_file},
        "requests_queued_at_end": {"count": len(run.queued_at_end_s),
                                   "max_wait_s": round(max(run.queued_at_end_s, default=0.0), 6)},
        "device_read_latencies_s": [round(o.device_s, 6) for o in reads][:200000],
        "device_write_latencies_s": [round(o.device_s, 6) for o in writes][:200000],
    }
    return {
        "requests_completed": len(recs), "total_tokens_generated": tokens,
        "total_storage_io_latency": storage_total, "total_generation_latency": 0.0,
        "end_to_end_latencies": [r.e2e_s for r in recs], "storage_latencies": [r.storage_s for r in recs],
        "generation_latencies": [0.0 for _ in recs],
        "prefill_latencies": [r.prefill_s for r in recs], "decode_latencies": [r.decode_s for r in recs if r.phase == "prefill_decode"],
        "throughput_timeline": [], "seed": seed, "summary": summary, "suite_figures": suite,
    }



def served_nothing(result: dict) -> str | None:
    """Why a rank that completed requests measured nothing, or None: its requests generated 0 tokens, or
    no entry was written to any tier (every allocation refused: a cache dir without room, ENOSPC by
    another name). It fails the rank (issue 36, class 11), never a result of tokens/s served from
    nowhere. A rank of 0 requests is judged with its trial (suite.kv_cache.evidence.trial_served_nothing)."""
    s = result["summary"]
    if result["requests_completed"] == 0:
        return None
    if result["total_tokens_generated"] == 0:
        return f"0 tokens generated by {result['requests_completed']} requests (expected at least 1)"
    if s["cache_stats"]["prefill_writes"] == 0:
        refused = result["suite_figures"]["allocations_refused"]
        caps = ", ".join(f"{k} {v} bytes" for k, v in result["suite_figures"]["tier_capacity_bytes"].items()) or "none"
        return (f"no entry written to any tier: {refused} allocations refused (tier capacities: {caps}; "
                f"the storage tier's is the cache dir's free space): nothing was measured")
    return None
