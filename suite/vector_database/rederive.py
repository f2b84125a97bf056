"""A vector_database run leaf's figures re-derived from the engine's own records (issue 36, class 4):
the returned ids (vectordb/engine/ids.npy, query_index.npy) scored against the ground truth (the
leaf's copy vectordb/groundtruth.ibin, else the file summary.json names) whose SHA-256 must be the one
recorded at datagen (summary.json ground_truth.sha256 and the data dir's dataset.json); QPS from the
query count over the engine's wall time (result.json query.wall_s); the latency percentiles from
the recorded latencies (latencies_ms.npy). A figure these cannot give is "not re-derivable": it is
shown as claimed and never counts toward a verdict (its rule sees no fact, and a required one fails)."""

from __future__ import annotations

from pathlib import Path

from suite import files
from suite.errors import ResultError
from suite.rules.ops import Item

FIGURES = ("throughput_qps", "total_time_seconds", "query_count", "mean_latency_ms", "p50_latency_ms",
           "p95_latency_ms", "p99_latency_ms", "p999_latency_ms", "recall")
PERCENTILES = {"p50_latency_ms": 50, "p95_latency_ms": 95, "p99_latency_ms": 99, "p999_latency_ms": 99.9}
MAX_ARRAY_BYTES = 512 << 20
REL_TOLERANCE = 1e-6
TRUTH_COPY = "groundtruth.ibin"


def _item(where, field: str, expected, actual, note: str = "") -> Item:
    return Item(actual, str(where), field, expected, note=note, expected_given=True)


def _array(path: Path, root: Path):
    import io

    import numpy as np

    return np.load(io.BytesIO(files.read_bytes(path, MAX_ARRAY_BYTES, ResultError, root=root)), allow_pickle=False)


def truth_file(leaf: Path, doc: dict) -> Path | None:
    """The ground truth the run scored against: the leaf's copy, else the file summary.json names."""
    own = leaf / "vectordb" / TRUTH_COPY
    if own.is_file() and not own.is_symlink():
        return own if own.stat().st_size <= MAX_ARRAY_BYTES else None
    gt = doc.get("ground_truth") if isinstance(doc.get("ground_truth"), dict) else {}
    named = Path(gt["file"]) if isinstance(gt.get("file"), str) and gt["file"] else None
    if named is None or named.name != TRUTH_COPY or not named.is_file():    # a regular groundtruth.ibin, bounded:
        return None                                                          # never any file a result names
    return named if named.stat().st_size <= MAX_ARRAY_BYTES else None


def truth_problems(leaf: Path, doc: dict, truth: Path | None) -> list[Item]:
    """The ground truth's SHA-256 against every record of it made at datagen."""
    from suite.vector_database import dataset

    if truth is None:
        return []
    got = files.sha256(truth)
    gt = doc.get("ground_truth") if isinstance(doc.get("ground_truth"), dict) else {}
    want = [("summary.json ground_truth.sha256", gt.get("sha256"))]
    data = doc.get("data_dir")
    meta = Path(data) / dataset.META if isinstance(data, str) and data else None
    if meta is not None and meta.is_file():
        try:
            d = files.load_json(meta, error=ResultError)
            want.append((f"{meta} sha256.{dataset.TRUTH}", ((d or {}).get("sha256") or {}).get(dataset.TRUTH)))
        except ResultError:
            pass
    return [_item(truth, "sha256", f"{w} (from {name})", got) for name, w in want if isinstance(w, str) and w != got] + \
        [_item(leaf / "summary.json", "ground_truth.sha256", f"the SHA-256 of {truth.name}", "nothing recorded")
         for name, w in want[:1] if not isinstance(w, str)]


def derive(leaf: Path, doc: dict, root: Path, k: int | None) -> tuple[dict, list[str], list[Item]]:
    """({figure: re-derived value}, [figures not re-derivable], [problems: the truth's hash, unreadable
    records]) of one of our run leaves."""
    import numpy as np

    from suite.vector_database import dataset, figures as results

    eng = leaf / "vectordb" / "engine"
    out: dict = {}
    problems: list[Item] = []
    try:
        res = files.load_json(eng / "result.json", error=ResultError, root=root)
        lat = np.asarray(_array(eng / "latencies_ms.npy", root), dtype=float).ravel()
        wall = float(((res or {}).get("query") or {}).get("wall_s"))
    except (ResultError, OSError, ValueError, TypeError, AttributeError) as exc:
        problems.append(_item(eng, "latencies_ms.npy, result.json", "the engine's query records", str(exc)[:160]))
        return out, list(FIGURES), problems
    if wall > 0 and np.isfinite(lat).all():
        out.update(query_count=int(lat.size), total_time_seconds=wall, throughput_qps=lat.size / wall)
        if lat.size:
            out["mean_latency_ms"] = float(lat.mean())
            out.update({name: float(np.percentile(lat, q)) for name, q in PERCENTILES.items()})
    truth = truth_file(leaf, doc)
    problems += truth_problems(leaf, doc, truth)
    if truth is not None and k:
        try:
            ids = _array(eng / "ids.npy", root)
            qidx = _array(eng / "query_index.npy", root)
            truth_ids, _ = dataset.read_truth(truth)
            if ids.ndim == 2 and ids.shape[1] >= k and qidx.shape[0] == ids.shape[0] and \
                    (qidx.size == 0 or (0 <= qidx.min() and qidx.max() < truth_ids.shape[0])):
                out["recall"] = results.recall_at_k(ids, qidx, truth_ids, k)[0]
        except (ResultError, OSError, ValueError) as exc:
            problems.append(_item(eng, "ids.npy, query_index.npy", "the engine's returned ids", str(exc)[:160]))
    return out, [f for f in FIGURES if f not in out], problems


def mismatches(rel: str, doc: dict, derived: dict) -> list[Item]:
    """summary.json's figures that differ from their re-derivation."""
    out = []
    for name, value in derived.items():
        claimed = doc.get(name)
        ok = isinstance(claimed, (int, float)) and not isinstance(claimed, bool) and \
            abs(claimed - value) <= REL_TOLERANCE * max(1.0, abs(claimed), abs(value))
        if not ok:
            out.append(_item(rel, name, value, claimed, "re-derived from vectordb/engine/ and the ground truth"))
    return out


# --------------------------------------------------------------------------- published (MLPerf Storage v3.0) leaves

EVIDENCE = "vectordb/simple/vdb_multi_node_summary.json"   # the tool's per-rank records, gathered over MPI
SPAN_REL = 0.01
# The aggregate's wall time may exceed the ranks' own span (max end - min start) by the launch and the MPI
# gather around them: 7 ms in 62.6 s (0.01 %) on the published TTA leaf. 1 % of the span allows that on a run
# of a second or more; a wall time off by more is not the ranks' and the span is used instead.
CLAIMED_ONLY = {"mean_latency_ms": "mean_latency_ms", "p50_latency_ms": "median_latency_ms",
                "p95_latency_ms": "p95_latency_ms", "p99_latency_ms": "p99_latency_ms",
                "p999_latency_ms": "p999_latency_ms", "recall": "recall.mean_recall"}


def _finite(v) -> bool:
    import math

    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _evidence_value(ev: dict, dotted: str):
    for part in dotted.split("."):
        ev = ev.get(part) if isinstance(ev, dict) else None
    return ev if _finite(ev) else None


def derive_published(leaf: Path, doc: dict, root: Path) -> tuple[dict, list[str], list[Item], dict]:
    """({figure: re-derived value}, [figures not re-derivable], [problems], {figure: claimed}) of a published
    run leaf. Its evidence, vectordb/simple/vdb_multi_node_summary.json, keeps each rank's total_queries,
    start_time and end_time: the query count is their sum, the wall time the aggregate's (held to the ranks'
    span), QPS the one over the other. The latencies and recall it keeps only as aggregates (the per-query
    records stay on the clients): they are claimed, not re-derivable, shown as such and counted in no
    verdict; a summary.json that contradicts them is a problem all the same."""
    claimed = {f: doc.get(f) for f in FIGURES}
    p = leaf / EVIDENCE
    try:
        ev = files.load_json(p, error=ResultError, root=root) if p.is_file() else None
    except ResultError as exc:
        return {}, list(FIGURES), [_item(p, "(file)", "the ranks' records", str(exc)[:160])], claimed
    if not isinstance(ev, dict):
        return {}, list(FIGURES), [], claimed
    if claimed.get("p50_latency_ms") is None:
        claimed["p50_latency_ms"] = _evidence_value(ev, "median_latency_ms")
    problems = [_item(leaf / "summary.json", name, want, claimed.get(name), f"{EVIDENCE} records {key}")
                for name, key in CLAIMED_ONLY.items() if name in doc
                and (want := _evidence_value(ev, key)) is not None and not _same(claimed.get(name), want)]
    out = _rank_figures(ev, p, problems)
    return out, [f for f in FIGURES if f not in out], problems, claimed


def _same(a, b) -> bool:
    return _finite(a) and abs(a - b) <= REL_TOLERANCE * max(1.0, abs(a), abs(b))


def _rank_figures(ev: dict, p: Path, problems: list) -> dict:
    ranks = ev.get("rank_summaries")
    if not isinstance(ranks, list) or not ranks or not all(
            isinstance(r, dict) and all(_finite(r.get(k)) for k in ("total_queries", "start_time", "end_time"))
            for r in ranks):
        problems.append(_item(p, "rank_summaries", "each rank's total_queries, start_time and end_time",
                              "missing or not numbers"))
        return {}
    queries = _batched_queries(ev, ranks, p, problems)
    span = max(r["end_time"] for r in ranks) - min(r["start_time"] for r in ranks)
    wall = ev.get("total_time_seconds")
    if not _finite(wall) or not span - 1e-6 <= wall <= span * (1 + SPAN_REL):
        problems.append(_item(p, "total_time_seconds", f"the ranks' span {span:.6f} s (up to {SPAN_REL:.0%} more)",
                              wall))
        wall = span
    if not wall > 0:
        return {"query_count": queries}
    return {"query_count": queries, "total_time_seconds": float(wall), "throughput_qps": queries / wall}


def batch_size(ev: dict) -> int | None:
    """Queries per batch, from the ranks' own latency records: each batch's time is its queries' (the
    per-query latency is the batch's over its size), so mean_batch_time_ms / mean_latency_ms is the batch
    (100 on the published TTA leaf); None where the two are absent or give no whole number."""
    bt, lat = _evidence_value(ev, "mean_batch_time_ms"), _evidence_value(ev, "mean_latency_ms")
    if bt is None or lat is None or not lat > 0 or not bt >= lat:
        return None
    n = bt / lat
    return round(n) if abs(n - round(n)) <= 1e-3 * n else None


def _batched_queries(ev: dict, ranks: list, p: Path, problems: list) -> int:
    """The query count the ranks' batches give (successful_batches x the batch size, where both are recorded),
    else their total_queries; each rank's total_queries and throughput_qps, and the aggregate's, held to it."""
    size = batch_size(ev)
    counted = sum(int(r["total_queries"]) for r in ranks)
    batched = [r.get("successful_batches") for r in ranks]
    if size is None or not all(_finite(b) and b >= 0 for b in batched):
        return counted
    for i, r in enumerate(ranks):
        want = int(r["successful_batches"]) * size
        if int(r["total_queries"]) != want:
            problems.append(_item(p, f"rank_summaries[{i}].total_queries", f"{want} (successful_batches "
                                  f"{int(r['successful_batches'])} x {size} queries a batch)", r["total_queries"]))
        took = r.get("total_time_seconds")
        if _finite(r.get("throughput_qps")) and _finite(took) and took > 0 and not _same(r["throughput_qps"], want / took):
            problems.append(_item(p, f"rank_summaries[{i}].throughput_qps", f"{want / took} ({want} queries / "
                                  f"total_time_seconds {took})", r["throughput_qps"]))
    queries = sum(int(b) for b in batched) * size
    agg = ev.get("total_queries")
    if _finite(agg) and int(agg) != queries:
        problems.append(_item(p, "total_queries", f"{queries} (the ranks' batches x {size})", agg))
    return queries
