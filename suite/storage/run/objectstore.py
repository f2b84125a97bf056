"""A training run on object storage (storage.storage_type object, --data-dir s3://...): the evidence.

Each rank writes what it asked of the server (suite.storage.backend.s3stats: requests by kind,
retries, bytes, latencies) to ranks/requests-<r>.json; results.json's `object_storage` is their sum,
with the endpoint host (never a key), bucket, prefix, client library and version, the prefetch window
per rank, the listings of the run (the launcher's one listing at prepare; ranks list nothing: they
read the plan) and what the cache clear meant.
"""

from __future__ import annotations

from pathlib import Path

from suite import files
from suite.storage.backend.s3stats import REQUESTS, merge, summary

SCHEMA = "object-requests"


def is_object(prep) -> bool:
    from suite.storage.backend.select import ObjectLocation

    return isinstance(prep.data_dir, ObjectLocation)


def write_rank(run_dir: Path, rank: int) -> None:
    """The rank side: this rank's requests since its start."""
    files.write_json(Path(run_dir) / "ranks" / f"requests-{rank}.json",
                     {"schema_version": 1, "rank": rank, **REQUESTS.take()}, schema=SCHEMA)


def evidence(prep, run_dir: Path, drop) -> dict:
    """results.json's object_storage for one run (the ranks' files that exist: a failed run's too)."""
    snaps = []
    for r in range(prep.opts.accelerators):
        path = Path(run_dir) / "ranks" / f"requests-{r}.json"
        if path.exists():
            snaps.append(files.load_json(path, schema=SCHEMA))
    storage = dict(prep.dataset_evidence.get("storage") or {})
    listed = (storage.get("requests") or {}).get("requests", {}).get("LIST", 0)
    ranks = summary(merge(snaps))
    return {
        "endpoint_host": storage.get("endpoint_host"), "bucket": storage.get("bucket"),
        "prefix": storage.get("prefix"), "library": storage.get("library"),
        "prefetch_window_files_per_rank": prep.workload.read_threads,
        "prefetch_batches_per_rank": prep.workload.prefetch_size,
        "list_requests_launcher": listed, "list_requests_ranks": ranks["requests"].get("LIST", 0),
        "ranks_reporting": len(snaps), "requests": ranks,
        "cache_clear": getattr(drop, "method", None),
    }
