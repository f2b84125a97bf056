"""`suite run` of a vector_database workload with each real engine, in its own venv: the embedded
DiskANN (two runs, cache cleared before each, recall against the exact ground truth) and Milvus's
embedded standalone server with HNSW. The engines' venvs are built once (suite engine install) and
kept in the engines dir; a test skips only when an install is impossible here."""

import json
import shutil

from suite.vector_database import leaf as leaves
from tests.vector_database.conftest import engine_or_skip, tiny_workload


def _runs(r):
    return sorted((r / "vector_database").glob("*/*/run/*/summary.json"))


def _tiny_copy(made, tmp_path):
    """A copy of the session's vdb-tiny dataset with the DiskANN index its run built (`tiny_diskann_two`)."""
    return shutil.copytree(made["base"] / "D", tmp_path / "D")


def test_diskann_runs_measure_qps_latency_recall_and_io(tiny_diskann_two, run_cli, tmp_path):
    """The session's `suite run` of vdb-tiny as the workload says (tests/conftest.py `tiny_diskann_two`: the
    index built, then two query runs), read as it is; the refusal on a copy of its dataset."""
    made, name = tiny_diskann_two, "vdb-tiny"
    code, out, err, r = made["code"], made["out"], made["err"], made["base"] / "R"
    assert code == 1 and "(vdb-run-count)" in out, out + err     # two runs of five: complete, not compliant
    assert "vector_database.yaml: 2 finding(s)" in out
    assert out.splitlines()[-1] == "verdict: INVALID NOT PUBLISHABLE (not compliant)"
    runs = _runs(r)
    assert len(runs) == 2 and len(list((r / "vector_database/diskann/DISKANN/datagen").iterdir())) == 1
    for s in runs:
        doc = json.loads(s.read_text())
        assert doc["status"] == "complete" and doc["recall"] >= 0.9 and doc["query_count"] == 200
        assert doc["engine_version"].startswith("diskannpy 0.7.0")
        assert doc["p50_latency_ms"] <= doc["p95_latency_ms"] <= doc["p99_latency_ms"] <= doc["p999_latency_ms"]
        assert doc["page_cache_before"]["index_bytes"] > 0 and "cache_drop" in doc
        assert doc["ground_truth"]["coverage_vectors"] == 2000
        assert doc["io"]["bytes_read_per_query"] is not None
        assert list(s.parent.glob("vector_database_*_metadata.json"))
    assert "recall 0." in out and "QPS" in out
    with tiny_workload(made["base"]):
        recs = leaves.load_tree(r)                       # the reader the published leaf goes through
        assert {x.source for x in recs} == {"suite"} and all(x.recall >= 0.9 for x in recs if x.phase == "run")
        code, out, err = run_cli("metrics", r, "--format", "json")
        assert code == 0 and json.loads(out)["benchmarks"][0]["num_runs"] == 2
        # an index built for other data is refused, in one line, before anything is written
        data = _tiny_copy(made, tmp_path)
        marker = data / "index" / "diskann-DISKANN" / "suite-index.json"
        doc = json.loads(marker.read_text())
        marker.write_text(json.dumps({**doc, "vectors_sha256": "0" * 64}))
        code, out, err = run_cli("run", "--workload", name, "--index", "diskann", "--data-dir", data,
                                 "--results-dir", tmp_path / "R2", "--allow-no-cache-drop")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "an index built for other data" in err
    assert not (tmp_path / "R2").exists()


def test_milvus_embedded_hnsw(tiny, run_cli, tmp_path):
    engine_or_skip("milvus")
    name, data = tiny
    r = tmp_path / "R"
    code, out, err = run_cli("run", "--workload", name, "--index", "hnsw", "--engine", "milvus", "--data-dir", data,
                             "--results-dir", r, "--runs", 1, "--query-count", 50, "--allow-no-cache-drop")
    assert code == 1 and "vdb.run_count: expected 5, got 1" in out, out + err     # 50 queries: each of vdb-tiny's once
    (s,) = _runs(r)
    doc = json.loads(s.read_text())
    assert doc["engine"] == "milvus" and doc["index_type"] == "HNSW" and doc["recall"] >= 0.9
    assert "milvus server" in doc["engine_version"] and "pymilvus 2.3" in doc["engine_version"]


def test_milvus_embedded_diskann_is_refused(tiny, run_cli, tmp_path):
    name, data = tiny
    code, out, err = run_cli("run", "--workload", name, "--index", "diskann", "--engine", "milvus", "--data-dir", data,
                             "--results-dir", tmp_path / "R")
    assert code == 2 and "bad_function_call" in err and len(err.strip().splitlines()) == 1


def test_diskann_beam_width_and_the_clients_cpu_figures(tiny_diskann_two, run_cli, tmp_path):
    """--beam-width reaches the engine and the leaf; each client process says where its pass's time went
    (on a CPU, waiting for one, asleep for its reads), which benchmarks/vdb_vs_fio.py prints. On a copy of
    the session's dataset, its index built (`tiny_diskann_two`)."""
    with tiny_workload(tiny_diskann_two["base"]):
        _beam_width_and_cpu(run_cli, "vdb-tiny", _tiny_copy(tiny_diskann_two, tmp_path), tmp_path)


def _beam_width_and_cpu(run_cli, name, data, tmp_path):
    r = tmp_path / "R"
    code, out, err = run_cli("run", "--workload", name, "--index", "diskann", "--data-dir", data, "--results-dir", r,
                             "--runs", "1", "--clients", "3", "--beam-width", "4", "--allow-no-cache-drop")
    assert code == 1 and "(vdb-run-count)" in out, out + err
    (s,) = _runs(r)
    doc = json.loads(s.read_text())
    assert doc["search"]["beam_width"] == 4 and doc["recall"] >= 0.9
    plan = json.loads((s.parent / "vectordb/engine/plan.json").read_text())
    assert plan["search"]["beam_width"] == 4
    cold = json.loads((s.parent / "vectordb/engine/result.json").read_text())["io_phases"]["cold"]
    cpu = cold["clients_cpu"]
    assert cpu["processes"] == 3 and cpu["user_s"] + cpu["sys_s"] > 0 and cpu["run_s"] > 0
    accounted = cpu["run_s"] + cpu["runqueue_s"] + cpu["asleep_s"]   # each client's own pass, whole
    assert cpu["pass_s"] - 0.01 <= accounted <= 1.05 * cpu["pass_s"] + 0.01, cpu
    # each pass lies within the phase (a busy host starts a client late, a client ends before the slowest)
    assert 0 < cpu["pass_s"] <= 1.2 * 3 * cold["wall_s"] + 0.05, (cpu, cold["wall_s"])
    code, out, err = run_cli("run", "--workload", name, "--index", "hnsw", "--data-dir", data, "--results-dir",
                             tmp_path / "R2", "--beam-width", "4", "--allow-no-cache-drop")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--beam-width" in err
    assert not (tmp_path / "R2").exists()
