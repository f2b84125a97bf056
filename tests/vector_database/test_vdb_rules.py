"""rules/v3.0/vector_database.yaml: every rule id with a passing and a failing case (the checker's
meta-test, tests/training/check/test_checker.py, counts these CASES), over leaves written as `suite run` writes
them; and the published leaf (tests/data/v3/vector_database_TTA) read by the same rules."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from suite.errors import SuiteError
from suite.vector_database import check
from suite.vector_database import leaf as leaves

PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "v3" / "vector_database_TTA"
B = "vector_database/milvus/HNSW"


def _summary(phase: str, **over) -> dict:
    doc = {"schema_version": 1, "num_vectors": 1000, "dimension": 16, "inserted_vectors": 1000, "index_type": "HNSW",
           "database": {"database": "milvus"}, "engine": "milvus", "engine_version": "milvus server v2.3.5",
           "workload": "vdb-x", "phase": phase, "status": "complete"}
    if phase == "run":
        doc.update(throughput_qps=100.0, total_time_seconds=2.0, query_count=200, mean_latency_ms=1.0,
                   p50_latency_ms=0.9, p95_latency_ms=2.0, p99_latency_ms=3.0, p999_latency_ms=4.0, recall=0.95,
                   recall_floor=0.9, k=10, cache_drop={"succeeded": True},
                   ground_truth={"complete": True, "coverage_vectors": 1000, "num_vectors": 1000})
    doc.update(over)
    return doc


@pytest.fixture(autouse=True)
def vdb_x(tmp_path_factory):
    """The workload vdb-x the leaves name (k 10, recall floor 0.9: the rules' floor, not the result's)."""
    from suite.storage import workloads
    from tests.vector_database.conftest import TINY

    wdir = tmp_path_factory.mktemp("wl")
    (wdir / "vdb-x.yaml").write_text(TINY.format(name="vdb-x", dim=16))
    workloads.add_dir(wdir)
    yield
    workloads.remove_dir(wdir)


def records(d: Path, queries: int = 200, nq: int = 50, k: int = 10) -> dict:
    """An engine's query records in run leaf `d` (as the worker writes them: vectordb/engine/ids.npy,
    query_index.npy, latencies_ms.npy, result.json; the ground truth's copy vectordb/groundtruth.ibin),
    every returned id the exact one; the summary.json figures they re-derive to."""
    import hashlib

    import numpy as np

    eng = d / "vectordb" / "engine"
    eng.mkdir(parents=True)
    truth = np.arange(nq * k, dtype="<u4").reshape(nq, k)
    raw = np.array([nq, k], dtype="<u4").tobytes() + truth.tobytes() + np.zeros(nq * k, dtype="<f4").tobytes()
    (d / "vectordb" / "groundtruth.ibin").write_bytes(raw)
    qidx = np.arange(queries) % nq
    lat = 1.0 + (np.arange(queries) % 17) / 4.0
    np.save(eng / "ids.npy", truth[qidx].astype(np.int64))
    np.save(eng / "query_index.npy", qidx)
    np.save(eng / "latencies_ms.npy", lat)
    (eng / "result.json").write_text(json.dumps({"query": {"wall_s": 2.0, "issued": queries}}))
    return {"throughput_qps": queries / 2.0, "total_time_seconds": 2.0, "query_count": queries,
            "mean_latency_ms": float(lat.mean()), "p50_latency_ms": float(np.percentile(lat, 50)),
            "p95_latency_ms": float(np.percentile(lat, 95)), "p99_latency_ms": float(np.percentile(lat, 99)),
            "p999_latency_ms": float(np.percentile(lat, 99.9)), "recall": 1.0,
            "ground_truth": {"complete": True, "coverage_vectors": 1000, "num_vectors": 1000,
                             "sha256": hashlib.sha256(raw).hexdigest()}}


def tree(root: Path, runs: int = 5) -> Path:
    leaves_ = [("datagen", "20260101_000000")] + [("run", f"20260101_00010{i}") for i in range(runs)]
    for i, (phase, ts) in enumerate(leaves_):
        d = root / B / phase / ts
        d.mkdir(parents=True)
        doc = _summary(phase, **(records(d, queries=190 + 10 * i) if phase == "run" else {}))   # each run its own
        (d / "summary.json").write_text(json.dumps(doc))
        (d / f"vector_database_{ts}_metadata.json").write_text(json.dumps({"benchmark_type": "vector_database"}))
    return root


def _zero_ids(root: Path) -> None:
    import numpy as np

    ids = sorted((root / B / "run").iterdir())[-1] / "vectordb" / "engine" / "ids.npy"
    np.save(ids, np.zeros_like(np.load(ids)))


def _edit(phase: str, every: bool = False, **over):
    def mutate(root: Path) -> None:
        for d in sorted((root / B / phase).iterdir())[0 if every else -1:]:
            doc = json.loads((d / "summary.json").read_text())
            doc.update(over)
            (d / "summary.json").write_text(json.dumps(doc))
    return mutate


def _rename_index(root: Path) -> None:
    (root / B).rename(root / "vector_database/milvus/IVF_FLAT")
    for s in (root / "vector_database/milvus/IVF_FLAT").glob("*/*/summary.json"):
        doc = json.loads(s.read_text())
        doc["index_type"] = "IVF_FLAT"
        s.write_text(json.dumps(doc))


def _drop_run(root: Path) -> None:
    import shutil

    shutil.rmtree(sorted((root / B / "run").iterdir())[0])


def _copy_run(root: Path) -> None:
    """The last run copied over the one before it (a copied run is not a run)."""
    import shutil

    a, b = sorted((root / B / "run").iterdir())[-2:]
    shutil.rmtree(a)
    shutil.copytree(b, a)


CASES = {
    "vdb-run-count": _drop_run,
    "vdb-closed-index-type": _rename_index,
    "vdb-closed-database": lambda r: [_edit(p, True, database={"database": "diskann"})(r) for p in ("datagen", "run")],
    "vdb-dimension-consistent": _edit("run", dimension=32),
    "vdb-index-type-consistent": _edit("run", index_type="DISKANN"),
    "vdb-collection-populated": _edit("datagen", inserted_vectors=999),
    "vdb-metrics-reported": _edit("run", p999_latency_ms=None),
    "vdb-recall-floor": _zero_ids,          # the returned ids, not summary.json's recall
    "vdb-figures-rederived": _edit("run", throughput_qps=1000.0),
    "vdb-ground-truth-integrity": _edit("run", ground_truth={"complete": False, "coverage_vectors": 900, "num_vectors": 1000}),
    "vdb-ground-truth-recorded": _edit("run", ground_truth=None),
    "vdb-cache-cleared": _edit("run", cache_drop={"succeeded": False}),
    "vdb-recall-range": _edit("run", recall=1.7),
    "vdb-recall-claimed-floor": _edit("run", recall=0.5),             # the ids give 1.0; the claim is under 0.9
    "vdb-runs-distinct": _copy_run,
}


def _ids(root: Path) -> set:
    recs, found, _ = check.load_and_check(root)
    return {f.rule_id for f in found}


def test_cases_cover_the_rule_file():
    from suite.rules import engine

    assert set(CASES) == {r.id for r in engine.load_layers(check.round_of([]), check.RULE_FILES).rules}


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_case(tmp_path, rule_id):
    root = tree(tmp_path / "R")
    assert _ids(root) == set(), "the passing case has no finding at all"
    CASES[rule_id](root)
    recs, found, _ = check.load_and_check(root)
    hit = [f for f in found if f.rule_id == rule_id]
    assert hit, f"{rule_id} not in {sorted(f.rule_id for f in found)}"
    assert hit[0].message.startswith(f"{hit[0].path}: {hit[0].field}: expected ")


def test_published_leaf_and_ours_read_the_same_way(tmp_path):
    ours = leaves.load_tree(tree(tmp_path / "R"))
    pub = leaves.load_tree(PUBLISHED)
    run = next(r for r in pub if r.phase == "run")
    assert run.source == "published" and run.engine == "milvus" and run.index_type == "DISKANN"
    # QPS and the query count re-derived from the ranks' records (vectordb/simple/vdb_multi_node_summary.json);
    # the latencies and recall, which the leaf keeps only as aggregates, claimed, not re-derivable (issue 36)
    assert (run.throughput_qps, run.query_count) == (pytest.approx(57619.796006935765), 3607200)
    assert (run.p99_latency_ms, run.recall, run.p50_latency_ms) == (None, None, None)
    assert (run.claimed["p99_latency_ms"], run.claimed["recall"]) == (107.3797607421875, 0.209675)
    assert run.claimed["p50_latency_ms"] == pytest.approx(1.6168415546417)      # the ranks' file's median
    assert set(run.not_rederivable) == {"mean_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms",
                                        "p999_latency_ms", "recall"} and run.rederive_problems == []
    assert set(run.to_dict()) == set(ours[1].to_dict())
    assert {f.rule_id for f in check.load_and_check(PUBLISHED)[1]} == {"vdb-run-count", "vdb-ground-truth-recorded",
                                                                 "vdb-recall-claimed-floor"}   # 0.21 < 0.90


def test_metrics_cli_reads_the_published_leaf(run_cli):
    code, out, err = run_cli("metrics", PUBLISHED, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    b = doc["benchmarks"][0]
    assert b["source"] == "published" and b["mean_over_runs"]["throughput_qps"] == pytest.approx(57619.796006935765)
    code, out, err = run_cli("metrics", PUBLISHED)
    assert code == 0 and "57,619.8" in out and "claimed, not re-derivable (counted in no verdict): " in out
    assert "recall 0.209675" in out


def test_report_of_the_published_leaf(run_cli, tmp_path):
    code, out, err = run_cli("report", PUBLISHED, "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "milvus DISKANN" in md and "vdb-run-count" in md
    assert (tmp_path / "rep" / "vdb_runs.csv").read_text().count("\n") == 2


@settings(max_examples=80, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=True), st.integers(), st.text(max_size=5)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.sampled_from(
        ["recall", "throughput_qps", "p99_latency_ms", "engine", "schema_version", "ground_truth", "io",
         "dimension", "database", "cache_drop", "search", "dram", "param", "search_list", "ef", "percent",
         "mean_io_bytes", "warm_read_ops_per_query"]), c, max_size=6)), max_leaves=12)))
def test_any_summary_is_read_or_refused_in_one_line(tmp_path_factory, doc):
    root = tmp_path_factory.mktemp("t")
    d = root / B / "run" / "20260101_000000"
    d.mkdir(parents=True)
    (d / "summary.json").write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    try:
        recs, found, _ = check.load_and_check(root)
    except SuiteError as exc:
        assert "\n" not in str(exc)
    else:
        assert len(recs) == 1 and all(f.rule_id.startswith("vdb-") for f in found)


SAMSUNG = Path(__file__).resolve().parents[1] / "data" / "v3" / "vector_database_SAMSUNG"


def test_published_samsung_recall_under_the_floor(run_cli):
    """SAMSUNG's published run (the reference's VectorDBBench leaf: statistics.json and config.json, no
    summary.json) claims recall@10 0.5166 at 143.2 QPS: under v3.0's floor of 0.90, an error naming the floor,
    though no record in the leaf re-derives it (issue 48)."""
    recs, found, _ = check.load_and_check(SAMSUNG)
    run, = recs
    assert (run.source, run.summary_file, run.dimension, run.summary_index_type) == ("published", "statistics.json",
                                                                                    1536, "DISKANN")
    assert run.claimed["recall"] == pytest.approx(0.5166) and run.claimed["throughput_qps"] == pytest.approx(143.2177, rel=1e-6)
    assert {f.rule_id for f in found} == {"vdb-run-count", "vdb-ground-truth-recorded", "vdb-recall-claimed-floor"}
    f, = [f for f in found if f.rule_id == "vdb-recall-claimed-floor"]
    assert (f.severity, f.effect, f.field, f.expected, f.actual) == ("error", "invalid", "recall", ">= 0.9",
                                                                     pytest.approx(0.5166))
    assert f.path.endswith("run/20260721_102834/statistics.json")
    code, out, err = run_cli("check", SAMSUNG / "closed/SAMSUNG/results/MEMORY_AE/vector_database")
    assert code == 1 and "headline: none: recall@10 0.5166 under the floor 0.9" in out


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.binary(max_size=100), st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=True), st.integers(), st.text(max_size=5)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.sampled_from(
        ["recall", "mean_recall", "recall_at_k", "throughput_qps", "total_queries", "vector_dim", "index_type",
         "median_latency_ms", "disk_io"]), c, max_size=6)), max_leaves=10)), st.booleans())
def test_any_statistics_leaf_is_read_or_refused_in_one_line(tmp_path_factory, doc, which):
    """A VectorDBBench leaf's statistics.json or config.json holding anything: read, or one line (exit 2)."""
    root = tmp_path_factory.mktemp("s")
    d = root / B / "run" / "20260101_000000"
    d.mkdir(parents=True)
    good = {"vector_dim": 8, "index_type": "DISKANN"}
    raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    (d / "statistics.json").write_bytes(raw if which else b"{}")
    (d / "config.json").write_bytes(json.dumps(good).encode() if which else raw)
    try:
        recs, found, _ = check.load_and_check(root)
    except SuiteError as exc:
        assert "\n" not in str(exc)
    else:
        assert len(recs) == 1 and all(f.rule_id.startswith("vdb-") for f in found)
