"""The files a published v3.0 vector_database run leaf holds beside its summary.json, written from what
our run measured: `.mlps-code-image` (the code that ran: suite.harness.provenance) and
`vectordb/simple/vdb_multi_node_summary.json` (the reference's "simple" phase, its ranks' records
gathered into one document: batch and latency percentiles, per-query recall, disk I/O, the ranks).

What differs from the reference's, and why (the file says it too, under `suite_notes`):
- one rank: our client is one process whose threads issue the queries (no MPI gather); `mpi` says so;
- one query per request: `batch_size` 1, so a batch's time is its query's latency;
- disk I/O: the query phase's /proc/<pid>/io read_bytes/write_bytes (the process's own storage I/O),
  not the client's /proc/diskstats (which counts every process on the host: summary.json's `io.device`);
- sizes formatted with binary units (MiB), where the reference prints MiB as "MB".

    reference.write_run_leaf(leaf, doc, truth, k)   # after summary.json; truth: the ground-truth file, None
                                                    # where the run measured nothing (the pointer alone)
"""

from __future__ import annotations

from pathlib import Path

from suite import files
from suite.harness import provenance

MULTI_NODE = Path("vectordb") / "simple" / "vdb_multi_node_summary.json"
NOTES = ["one rank: one client process whose threads issue the queries (no MPI gather)",
         "batch_size 1: each query is its own request, so a batch's time is its query's latency",
         "disk_io: the query phase's /proc/<pid>/io read_bytes/write_bytes, not /proc/diskstats",
         "sizes formatted in binary units (MiB)"]


def _mib(n: int | float) -> str:
    return f"{n / 1048576:.2f} MiB"


def per_query_recall(ids, query_index, truth_ids, k: int):
    """Each issued query's |returned ∩ exact top-k| / k (numpy array, issue order)."""
    import numpy as np

    out = np.zeros(len(ids), dtype=np.float64)
    for s in range(0, len(ids), 65536):
        got = ids[s:s + 65536, :k]
        gt = truth_ids[query_index[s:s + 65536], :k].astype(np.int64)
        out[s:s + 65536] = (got[:, :, None] == gt[:, None, :]).any(2).sum(1) / k
    return out


def _percentiles(values, prefix: str, suffix: str) -> dict:
    import numpy as np

    if not len(values):
        return {}
    pct = {"min": 0, "median": 50, "p95": 95, "p99": 99, "p999": 99.9, "p9999": 99.99, "max": 100}
    return {f"{prefix}{name}{suffix}": float(np.percentile(values, p)) for name, p in pct.items()} | {
        f"{prefix}mean{suffix}": float(np.mean(values))}


def _disk_io(process: dict, duration_s: float, storage: dict) -> dict:
    read, written = int(process.get("read_bytes", 0)), int(process.get("write_bytes", 0))
    per_s = (lambda n: n / duration_s if duration_s > 0 else 0.0)
    return {"applicable": bool(process), "status": "OK" if process else "UNAVAILABLE",
            "scope": "the query phase's /proc/<pid>/io read_bytes and write_bytes (the client process's own "
                     "storage I/O)",
            "devices": {str(storage.get("source") or "unknown"): {
                "bytes_read": read, "bytes_written": written, "read_formatted": _mib(read),
                "write_formatted": _mib(written)}},
            "storage_target": {"applicable": True, "confidence": "exact", "data_path": storage.get("path"),
                               "fstype": storage.get("fstype"), "mountpoint": storage.get("mountpoint"),
                               "network_mounts_detected": [], "source": storage.get("source"),
                               "reason": "the index directory's mount (/proc/self/mountinfo)"},
            "total_bytes_read": read, "total_bytes_read_per_sec": per_s(read), "total_bytes_written": written,
            "total_bytes_written_per_sec": per_s(written), "total_read_formatted": _mib(read),
            "total_write_formatted": _mib(written)}


def multi_node_summary(leaf: Path, doc: dict, truth_ids, k: int) -> dict:
    """The reference's vdb_multi_node_summary.json keys, from the worker's files and summary.json `doc`."""
    import numpy as np

    engine = leaf / "vectordb" / "engine"
    lat = np.load(engine / "latencies_ms.npy")
    recall = per_query_recall(np.load(engine / "ids.npy"), np.load(engine / "query_index.npy"), truth_ids, k)
    wall = float(doc.get("total_time_seconds") or 0.0)
    failed = len((files.load_json(engine / "result.json").get("query") or {}).get("errors") or [])
    n = int(len(lat))
    disk = _disk_io((doc.get("io") or {}).get("process") or {}, wall, doc.get("storage") or {})
    rank = {"csv_file_count": 0, "disk_io": disk, "start_time": doc.get("start_unix_s"),
            "end_time": doc.get("end_unix_s"), "failed_batches": failed, "rank_output_dir": str(engine),
            "successful_batches": n, "throughput_qps": doc.get("throughput_qps"), "total_queries": n,
            "total_time_seconds": wall}
    total = {key: disk[key] for key in ("total_bytes_read", "total_bytes_read_per_sec", "total_bytes_written",
                                        "total_bytes_written_per_sec", "total_read_formatted",
                                        "total_write_formatted")}
    return {"schema_version": 1, "suite_notes": NOTES, "aggregation": "single_rank_client_threads",
            "benchmark_phase": "simple_bench", "batch_size": 1, "batch_count": n, "successful_batches": n,
            "failed_batches": failed, "total_queries": n, "total_time_seconds": wall,
            "throughput_qps": doc.get("throughput_qps"),
            **_percentiles(lat, "", "_latency_ms"), **_percentiles(lat, "", "_batch_time_ms"),
            "disk_io": {"aggregation": "single_rank", "applicable": disk["applicable"], "duration_seconds": wall,
                        "host_count": 1, "hosts_not_applicable": [], **total},
            "mpi": {"expected_ranks": 1, "rank_count": 1, "ranks_seen": [0], "failed_ranks": [], "missing_ranks": [],
                    "malformed_payload_count": 0, "partial_failure": False},
            "rank_summaries": [rank],
            "recall": {"aggregation": "per_query_recall_exact", "num_queries_evaluated": int(len(recall)),
                       **_recall_stats(recall)}}


def _recall_stats(recall) -> dict:
    import numpy as np

    if not len(recall):
        return {}
    pct = {"min": 0, "p5": 5, "median": 50, "p95": 95, "p99": 99, "max": 100}
    return {f"{name}_recall": float(np.percentile(recall, p)) for name, p in pct.items()} | {
        "mean_recall": float(np.mean(recall))}


def write_run_leaf(leaf: Path, doc: dict, truth: Path | None, k: int) -> None:
    """A run leaf's reference files beside its summary.json: the pointer always, the multi-node summary
    where the run measured its queries (`truth`: the dataset's ground truth file)."""
    from suite.vector_database import dataset

    provenance.write_pointer(leaf)
    if truth is None or not (leaf / "vectordb" / "engine" / "latencies_ms.npy").is_file():
        return
    truth_ids, _ = dataset.read_truth(truth)
    (leaf / MULTI_NODE).parent.mkdir(parents=True, exist_ok=True)
    files.write_atomic(leaf / MULTI_NODE, files.dump_json(multi_node_summary(leaf, doc, truth_ids, k), indent=2))
