"""A vector_database run's figures from what the engine's worker measured, and the v3.0 leaves they
are written into: vector_database/<engine>/<INDEX>/{datagen,run}/<stamp>/ (suite.harness.leafstamp) holding
summary.json (the published keys first: num_vectors, dimension, inserted_vectors, index_type,
database.database, throughput_qps, total_time_seconds, query_count, mean/p95/p99/p999_latency_ms,
recall; then ours), vector_database_<ts>_metadata.json, and vectordb/latency_cdf.json.
"""

from __future__ import annotations

from pathlib import Path

from suite import files
from suite.harness import leafstamp

CDF_POINTS = 201          # latency quantiles 0, 0.5, ..., 100 %


def recall_at_k(ids, query_index, truth_ids, k: int) -> tuple[float, int]:
    """Mean over issued queries of |returned ∩ exact top-k| / k; (recall, queries evaluated)."""
    import numpy as np

    if len(ids) == 0:
        return 0.0, 0
    hits = 0
    for s in range(0, len(ids), 65536):
        got = ids[s:s + 65536, :k]
        gt = truth_ids[query_index[s:s + 65536], :k].astype(np.int64)
        hits += int((got[:, :, None] == gt[:, None, :]).any(2).sum())
    return hits / (len(ids) * k), int(len(ids))


def figures(out_dir: Path, truth_ids, k: int) -> dict:
    """QPS, latency percentiles, recall@k and the CDF from the worker's files in `out_dir`."""
    import numpy as np

    res = files.load_json(out_dir / "result.json")
    lat = np.load(out_dir / "latencies_ms.npy")
    qidx = np.load(out_dir / "query_index.npy")
    ids = np.load(out_dir / "ids.npy")
    wall = float(res["query"]["wall_s"])
    recall, evaluated = recall_at_k(ids, qidx, truth_ids, k)
    pct = (lambda p: float(np.percentile(lat, p))) if len(lat) else (lambda p: None)
    qs = np.linspace(0, 100, CDF_POINTS)
    return {"result": res, "throughput_qps": len(lat) / wall if wall > 0 else None, "total_time_seconds": wall,
            "query_count": int(len(lat)), "mean_latency_ms": float(lat.mean()) if len(lat) else None,
            "p50_latency_ms": pct(50), "p95_latency_ms": pct(95), "p99_latency_ms": pct(99),
            "p999_latency_ms": pct(99.9), "max_latency_ms": float(lat.max()) if len(lat) else None,
            "recall": recall, "recall_queries_evaluated": evaluated,
            "cdf": {"percentile": qs.tolist(), "latency_ms": (np.percentile(lat, qs).tolist() if len(lat) else [])}}


def leaf(results_dir: Path, engine: str, index: str, phase: str) -> tuple[Path, str]:
    parent = Path(results_dir) / "vector_database" / engine / index / phase
    parent.mkdir(parents=True, exist_ok=True)
    ts = leafstamp.fresh(parent)
    (parent / ts).mkdir()
    return parent / ts, ts


def metadata(leaf_dir: Path, ts: str, engine: str, index: str, command: str, w, extra: dict) -> None:
    """vector_database_<ts>_metadata.json: the published keys, then what this run used."""
    from suite import __version__
    from suite.rules import rulesets

    doc = {"benchmark_type": "vector_database", "ruleset": rulesets.for_kind("vector_database").name, "model": f"{engine}_{index}", "command": command,
           "run_datetime": ts, "num_processes": None, "accelerator": None, "result_dir": str(leaf_dir),
           "parameters": {"workload": w.name, "num_vectors": w.num_vectors, "dimension": w.dimension,
                          "metric_type": w.metric, "distribution": w.distribution, "index_type": index,
                          "index": w.index.get(index, {}), "k": w.k, "search_list": (extra.get("search") or {}).get("search_list", w.search_list),
                          "ef": (extra.get("search") or {}).get("ef", w.ef),
                          "beam_width": w.beam_width},
           "vdb_engine": engine, "vdb_index": index, "suite_version": __version__, **extra}
    files.write_atomic(leaf_dir / f"vector_database_{ts}_metadata.json", files.dump_json(doc, indent=2))


def summary(leaf_dir: Path, doc: dict) -> None:
    files.write_json(leaf_dir / "summary.json", doc, schema="vdb-summary", indent=2)


def cdf(leaf_dir: Path, cdf_doc: dict) -> None:
    (leaf_dir / "vectordb").mkdir(exist_ok=True)
    files.write_atomic(leaf_dir / "vectordb" / "latency_cdf.json",
                       files.dump_json({"schema_version": 1, **cdf_doc}, indent=None))
