"""`suite compare` of every kind, through the real CLI: two results of a kind give ratios and verdicts;
a forged summary value does not move a figure (each comes from the kind's re-derivation from its
lowest-level evidence), while changed evidence does; results that are not like for like are refused
(exit 2, one line). Real results: the committed checkpoint leaves, published v3.0 leaves and TPCx-AI
run, and real `suite run`s of kv-cache and of the embedded DiskANN vector database."""

import json
import shutil
from pathlib import Path

import pytest

import paths

V3 = paths.DATA / "v3"
CKPT_V2 = paths.DATA / "checkpoint" / "llama3-8b-miniature" / "R"
CKPT_V3 = paths.DATA / "checkpoint" / "v3-llama3-8b-miniature" / "R" / "checkpointing" / "llama3-8b"
VERDICTS = {"faster", "slower", "not significant", "no interval"}


def compared(run_cli, *argv) -> dict:
    code, out, err = run_cli("compare", *argv, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert "left out" not in err
    return doc


def figures(doc: dict, i: int = 0) -> dict:
    return {f["figure"]: f for f in doc["comparisons"][i]["figures"]}


def refused(run_cli, *argv, what: str) -> None:
    code, out, err = run_cli("compare", *argv, "--format", "json")
    assert code == 2 and out == "" and err.count("\n") == 1 and what in err and "Traceback" not in err, err


def edit_json(path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


# ----------------------------------------------------------------------------- checkpointing (ours)

def test_checkpointing_figures_come_from_the_ranks_not_the_claims(run_cli, tmp_path):
    b = tmp_path / "B"
    shutil.copytree(CKPT_V2, b)
    for res in b.glob("run-*/results.json"):                 # every claim above the ranks, forged x10
        edit_json(res, lambda d: d["metric"]["read"].update(throughput_mean_gib_s=99.0, duration_mean_s=99.0))
    edit_json(b / "checkpoint_run_set.json", lambda d: d["overall"].update(read_throughput_mean_gib_s=99.0))
    doc = compared(run_cli, CKPT_V2, b)
    f = figures(doc)
    assert set(f) == {"read_gib_s", "read_duration_s"} and f["read_gib_s"]["basis"] == "per run (5 vs 5)"
    assert f["read_gib_s"]["ratio"] == pytest.approx(1.0) and f["read_gib_s"]["verdict"] in VERDICTS
    assert 0.3 < f["read_gib_s"]["a_mean"] < 3                          # the ranks' GiB/s, not the forged 99
    assert doc["results"][0]["kind"] == "checkpointing" and doc["results"][0]["identity"]["phase"] == "read"
    # a rank's record is the evidence: one checkpoint of one rank twice as long lowers that run's figure
    rank = b / "run-3" / "ranks" / "rank-0.json"
    doc3 = json.loads(rank.read_text())
    c = doc3["checkpoints"][0]
    c["end_unix_s"] += 10 * c["duration_s"]
    c["duration_s"] *= 11
    rank.write_text(json.dumps(doc3))
    f = figures(compared(run_cli, CKPT_V2, b))
    assert f["read_gib_s"]["ratio"] < 1.0 and f["read_duration_s"]["ratio"] > 1.0


def test_checkpointing_write_and_read_are_not_compared(run_cli):
    write, read = sorted(CKPT_V3.iterdir())
    refused(run_cli, write, read, what="phase: expected write")
    refused(run_cli, CKPT_V2, read, what="ruleset: expected v2.0")        # a v2.0 read against a v3.0 one
    code, out, err = run_cli("compare", CKPT_V2, read, "--allow-different", "--format", "json")
    assert code == 0 and json.loads(out)["differences"], err


# ----------------------------------------------------------------------------- published v3.0 trees

def test_published_checkpointing_from_the_per_checkpoint_records(run_cli, tmp_path):
    src = V3 / "checkpointing_alluxio"
    b = tmp_path / "B"
    shutil.copytree(src, b)
    (leaf,) = b.glob("closed/*/results/*/checkpointing/*/20260708_064613")
    edit_json(leaf / "summary.json", lambda d: d["metric"].update(save_checkpoint_io_mean_GB_per_second=99.0))
    doc = compared(run_cli, src, b, "--only", "phase=write")
    f = figures(doc)
    assert f["write_gib_s"]["ratio"] == pytest.approx(1.0) and f["write_gib_s"]["a_mean"] == pytest.approx(4.644, abs=1e-3)
    assert "per epoch (10 vs 10" in f["write_gib_s"]["basis"] and f["write_gib_s"]["verdict"] in VERDICTS
    assert [r["kind"] for r in doc["results"]] == ["checkpointing", "checkpointing"]
    refused(run_cli, src, b, what="phase: expected write")                 # the read against the write


def test_published_training_of_a_tree_compares_with_its_runs(run_cli, tmp_path):
    tree = V3 / "tree"
    b = tmp_path / "B"
    shutil.copytree(tree, b)
    doc = compared(run_cli, tree, b, "--only", "workload=unet3d")
    f = figures(doc)
    assert f["samples_per_second"]["basis"] == "per run (5 vs 5)" and f["samples_per_second"]["ratio"] == pytest.approx(1.0)
    assert f["au_percentage"]["verdict"] in VERDICTS and doc["results"][0]["identity"]["accelerator"] == "b200"
    refused(run_cli, tree, b, what="kind: expected training")            # its checkpointing against its training
    # one leaf of a series, out of its tree: judged by its leaves as in the tree (its one run is the
    # warm-up, so it has no measured run to compare)
    refused(run_cli, tree, V3 / "training_alluxio", "--only", "workload=unet3d", what="at least one run with numbers")


# ----------------------------------------------------------------------------- TPCx-AI

def test_tpcx_ai_figures_come_from_the_jobs(run_cli, tmp_path):
    a = paths.DATA / "tpcxai-sf0.01"
    forged, slow, other = tmp_path / "forged", tmp_path / "slow", tmp_path / "sf"
    for d in (forged, slow, other):
        shutil.copytree(a, d)
    edit_json(forged / "tpcxai-result.json", lambda d: (d["metric"].update(aiucpm=999.0, aiucpm_unrounded=999.0),
                                                        d["use_case_results"]["uc1"].update(training_s=0.001)))
    f = figures(compared(run_cli, a, forged))
    assert f["aiucpm"]["ratio"] == pytest.approx(1.0) and f["uc01_training_s"]["ratio"] == pytest.approx(1.0)
    assert f["aiucpm"]["a_mean"] == pytest.approx(3.518, abs=1e-3) and f["aiucpm"]["verdict"] == "no interval"

    def stretch(d):                      # use case 8's training job took twice as long: its end and all after
        (job,) = [j for j in d["jobs"] if j["phase"] == "training" and j.get("use_case") == 8]
        extra = job["end_s"] - job["start_s"]
        for j in d["jobs"]:
            if j["start_s"] >= job["end_s"]:
                j["start_s"], j["end_s"] = round(j["start_s"] + extra, 3), round(j["end_s"] + extra, 3)
        job["end_s"] = round(job["end_s"] + extra, 3)
        job["duration_s"] = round(job["end_s"] - job["start_s"], 3)
    edit_json(slow / "tpcxai-result.json", stretch)
    f = figures(compared(run_cli, a, slow))
    assert f["uc08_training_s"]["ratio"] == pytest.approx(2.0, rel=1e-3) and f["tptt_s"]["ratio"] > 1.0
    assert f["uc01_training_s"]["ratio"] == pytest.approx(1.0) and f["aiucpm"]["ratio"] < 1.0
    edit_json(other / "tpcxai-result.json", lambda d: d.update(scale_factor=0.02))
    refused(run_cli, a, other, what="scale factor: expected 0.01")


# ----------------------------------------------------------------------------- kv_cache (real runs)

@pytest.fixture(scope="module")
def kv(kv_two_trials, tmp_path_factory):
    """A copy of the session's real kv-cache run (tests/conftest.py `kv_two_trials`: option 1, two trials
    of four seconds, one rank) and its leaf."""
    r = Path(shutil.copytree(kv_two_trials / "R", tmp_path_factory.mktemp("kv") / "R", symlinks=True))
    (leaf,) = (r / "kv_cache").glob("*/run/*")
    return r, leaf


def test_kv_cache_figures_come_from_the_rank_files(kv, run_cli, tmp_path):
    r, leaf = kv
    b = tmp_path / "B"
    shutil.copytree(r, b)
    (leaf_b,) = (b / "kv_cache").glob("*/run/*")
    edit_json(leaf_b / "summary.json", lambda d: d["options"]["1"].update(
        aggregated_avg_throughput_tokens_per_sec=1e9, aggregated_p95_latency_ms=1e-6))
    for rank in leaf_b.glob("option_1/trial_*/rank_*/kvcache_results_*.json"):   # the rank's own claims
        edit_json(rank, lambda d: (d["summary"].update(avg_throughput_tokens_per_sec=1e9),
                                   d["summary"]["storage_io_latency_ms"].update(p95=1e-6)))
    doc = compared(run_cli, r, b)
    f = figures(doc)
    assert {"tokens_per_second", "p95_latency_ms", "read_gib_s", "write_gib_s"} <= set(f)
    assert f["tokens_per_second"]["ratio"] == pytest.approx(1.0) and f["p95_latency_ms"]["ratio"] == pytest.approx(1.0)
    assert f["tokens_per_second"]["a_mean"] < 1e9 and f["tokens_per_second"]["basis"] == "per run (2 vs 2)"
    assert f["tokens_per_second"]["verdict"] in VERDICTS
    res = doc["results"][0]
    assert res["kind"] == "kv_cache" and res["identity"]["option"] == 1 and res["identity"]["workload"] == "llama3.1-8b"
    (farm,) = (V3 / "kv_cache_FarmGPU").glob("open/*/results/*/kv_cache/*/run/*")
    refused(run_cli, r, farm, what="workload: expected llama3.1-8b")       # option 3 of a 70b model


# ----------------------------------------------------------------------------- vector_database (real runs)

@pytest.fixture(scope="module")
def vdb(tiny_diskann_two):
    """A real DiskANN run of a tiny workload: two query runs (the session's, tests/conftest.py
    `tiny_diskann_two`; read as it is)."""
    return tiny_diskann_two["base"] / "R"


def test_vector_database_figures_come_from_the_worker_evidence(vdb, run_cli, tmp_path):
    b = tmp_path / "B"
    shutil.copytree(vdb, b)
    for s in (b / "vector_database").glob("*/*/run/*/summary.json"):
        edit_json(s, lambda d: d.update(throughput_qps=1e9, p99_latency_ms=1e-6, recall=0.01))
    doc = compared(run_cli, vdb, b)
    f = figures(doc)
    assert set(f) == {"qps", "recall", "p99_latency_ms"} and f["qps"]["basis"] == "per run (2 vs 2)"
    for name in f:
        assert f[name]["ratio"] == pytest.approx(1.0) and f[name]["verdict"] in VERDICTS
    assert f["recall"]["a_mean"] >= 0.8 and f["qps"]["a_mean"] < 1e9
    res = doc["results"][0]
    assert res["identity"]["index"] == "DISKANN" and res["identity"]["dataset"] == "2000 x 16"
    refused(run_cli, vdb, V3 / "vector_database_TTA", what="workload: expected vdb-tiny")   # milvus, 1M x 1536
