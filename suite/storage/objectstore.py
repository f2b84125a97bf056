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


def ranks(run_dir: Path, n: int) -> tuple[dict, int]:
    """The summed requests of the ranks' files that exist (a failed run's too), and how many there were."""
    snaps = []
    for r in range(n):
        path = Path(run_dir) / "ranks" / f"requests-{r}.json"
        if path.exists():
            snaps.append(files.load_json(path, schema=SCHEMA))
    return summary(merge(snaps)), len(snaps)


def record(storage: dict, run_dir: Path, n: int, drop, **extra) -> dict:
    """results.json's object_storage: where (host, bucket, prefix; no key), the client, the ranks' requests."""
    listed = (storage.get("requests") or {}).get("requests", {}).get("LIST", 0)
    summed, reporting = ranks(run_dir, n)
    return {"endpoint_host": storage.get("endpoint_host"), "bucket": storage.get("bucket"),
            "prefix": storage.get("prefix"), "library": storage.get("library"), **extra,
            "list_requests_launcher": listed, "list_requests_ranks": summed["requests"].get("LIST", 0),
            "ranks_reporting": reporting, "requests": summed, "cache_clear": getattr(drop, "method", None)}


def evidence(prep, run_dir: Path, drop) -> dict:
    """A training run's object_storage (the storage evidence of the dataset scan: its one listing)."""
    return record(dict(prep.dataset_evidence.get("storage") or {}), run_dir, prep.opts.accelerators, drop,
                  prefetch_window_files_per_rank=prep.workload.read_threads,
                  prefetch_batches_per_rank=prep.workload.prefetch_size)
