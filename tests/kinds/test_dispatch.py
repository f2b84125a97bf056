"""suite/kinds/dispatch.py and combine.py: `suite metrics`, `suite check` and `suite report` on the results
dir `suite run` writes for each kind, on one holding several kinds, and on a mixed published v3.0 tree
name every benchmark with its kind; a path no kind takes is one line and exit 2. Real runs (real
mpiexec, the embedded DiskANN engine), the committed real results, the CLI as the users call it."""

import json
import re
import shutil
from pathlib import Path

import pytest

import paths
from suite import cli
from tests.training.run.test_v3_series import FAST

V3 = paths.DATA / "v3"
SYSTEM = "closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a"


def _suite(*argv) -> int:
    return cli.main([str(a) for a in argv])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, kv_two_trials):
    """{kind: the results dir `suite run` wrote} for training (v3.0) and kv_cache (a copy of the session's
    `kv_two_trials`), made once; checkpointing (v3.0) and TPCx-AI from the committed real `suite run` results."""
    from suite.training.data import datagen
    from suite.training import workloads

    base = tmp_path_factory.mktemp("runs")
    out = {}
    data = base / "data"
    datagen.generate(workloads.resolve("retinanet", "b200"), data, 24, processes=1)
    assert _suite("run", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1, "--ruleset",
                  "v3.0", "--data-dir", data, "--results-dir", base / "training", "--division", "open", "--runs", 1,
                  *FAST) == 1                                          # open: data and results share a file system
    out["training"] = base / "training"
    shutil.copytree(kv_two_trials / "R", base / "kv_cache", symlinks=True)     # the session's kv-cache run
    assert list((base / "kv_cache" / "kv_cache").glob("*/run/*"))
    out["kv_cache"] = base / "kv_cache"
    out["checkpointing"] = base / "checkpointing"
    shutil.copytree(paths.DATA / "checkpoint" / "v3-llama3-8b-miniature" / "R", out["checkpointing"])
    out["tpcx-ai"] = base / "tpcx"
    out["tpcx-ai"].mkdir()
    shutil.copy(paths.DATA / "tpcxai-sf0.01" / "tpcxai-result.json", out["tpcx-ai"])
    return out


@pytest.fixture(scope="module")
def vdb(tmp_path_factory, tiny_diskann):
    """A vector_database results dir of one DiskANN run of a tiny workload (a copy of the session's)."""
    results = Path(shutil.copytree(tiny_diskann / "R", tmp_path_factory.mktemp("vdb") / "R"))
    assert list((results / "vector_database").glob("*/*/run/*/summary.json"))
    return results


def _metrics(run_cli, path) -> dict:
    code, out, err = run_cli("metrics", path, "--format", "json")
    assert code in (0, 1) and err == "", err
    return json.loads(out)


def _report(run_cli, path, out_dir) -> str:
    code, out, err = run_cli("report", path, "--out", out_dir)
    assert code == 0 and err == "", err
    return (out_dir / "index.html").read_text()


def test_a_kv_cache_results_dir_is_kv_cache_not_training(runs, run_cli, tmp_path):
    r = runs["kv_cache"]
    (leaf,) = (r / "kv_cache").glob("*/run/*")
    doc = _metrics(run_cli, r)
    assert doc["kind"] == "tree" and [b["kind"] for b in doc["benchmarks"]] == ["kv_cache"]
    assert doc["benchmarks"][0]["path"] == str(leaf.relative_to(r))
    assert doc["results"][0]["metrics"]["options"]["1"]["rank_count"] == 1
    code, out, err = run_cli("metrics", r)
    assert "v0.5" not in out and "expected a metric block" not in out and f"== kv_cache: {leaf.relative_to(r)}" in out
    code, out, err = run_cli("check", r, "--format", "json")
    # exit 0 (OPEN as asked) with the cache in /dev/shm, 1 (INVALID: cache and results on one file system) without
    assert code in (0, 1) and [(x["kind"], x["path"]) for x in json.loads(out)["results"]] == \
        [("kv_cache", str(leaf.relative_to(r)))]
    page = _report(run_cli, r, tmp_path / "rep")
    assert "kv_cache: " + str(leaf.relative_to(r)) in page and "Per option" in page


@pytest.mark.parametrize("kind", ["training", "checkpointing", "tpcx-ai"])
def test_each_kinds_results_dir_names_its_benchmarks(runs, run_cli, tmp_path, kind):
    r = runs[kind]
    code, out, err = run_cli("metrics", r, "--format", "json")
    assert code in (0, 1) and err == "" and json.loads(out)
    code, out, err = run_cli("check", r, "--format", "json")
    doc = json.loads(out)
    assert code in (0, 1) and doc.get("kind") in (None, kind) and doc["verdict"]
    if kind == "training":
        (b,) = doc["benchmarks"]
        assert b["workload"] == "retinanet" and "training/retinanet" in b["path"]
    _report(run_cli, r, tmp_path / "rep")


def test_a_vector_database_results_dir(vdb, run_cli, tmp_path):
    doc = _metrics(run_cli, vdb)
    assert doc["kind"] == "vector_database" and [b["path"] for b in doc["benchmarks"]] == ["vector_database/diskann/DISKANN"]
    code, out, err = run_cli("check", vdb, "--format", "json")
    assert code == 1 and json.loads(out)["kind"] == "vector_database"
    assert "diskann DISKANN" in _report(run_cli, vdb, tmp_path / "rep")


def test_a_results_dir_of_several_kinds_names_each(runs, vdb, run_cli, tmp_path):
    """One results dir holding training, checkpointing, kv_cache and vector_database runs: each
    benchmark under its kind, in metrics, check and report."""
    r = tmp_path / "R"
    shutil.copytree(runs["training"], r)
    for name in ("kv_cache", "checkpointing"):
        shutil.copytree(runs[name] / name, r / name)
    shutil.copytree(vdb / "vector_database", r / "vector_database")
    (kv_leaf,) = (r / "kv_cache").glob("*/run/*")
    doc = _metrics(run_cli, r)
    named = {(b["kind"], b["path"]) for b in doc["benchmarks"]}
    assert {("training", "training/retinanet/run"), ("kv_cache", str(kv_leaf.relative_to(r))),
            ("vector_database", "vector_database/diskann/DISKANN")} <= named
    assert {b["kind"] for b in doc["benchmarks"]} == {"training", "checkpointing", "kv_cache", "vector_database"}
    assert all("error" not in x for x in doc["results"]), doc["results"]
    code, out, err = run_cli("check", r, "--format", "json")
    checked = json.loads(out)
    assert checked["kind"] == "tree"
    assert {x["kind"] for x in checked["results"]} == {"training", "checkpointing", "kv_cache", "vector_database"}
    page = _report(run_cli, r, tmp_path / "rep")
    for kind in ("training", "checkpointing", "kv_cache", "vector_database"):
        assert re.search(rf"<td[^>]*>{kind}</td>", page), kind
    assert "retinanet" in page and "diskann DISKANN" in page


@pytest.fixture
def mixed_tree(tmp_path) -> Path:
    """The committed published v3.0 tree (training, checkpointing) with the published kv_cache and
    vector_database benchmark folders copied under one of its systems."""
    tree = tmp_path / "tree"
    shutil.copytree(V3 / "tree", tree)
    system = tree / SYSTEM
    (kv,) = (V3 / "kv_cache_FarmGPU" / "open" / "FarmGPU" / "results").glob("*/kv_cache")
    shutil.copytree(kv, system / "kv_cache")
    shutil.copytree(V3 / "vector_database_TTA/closed/TTA/results/seahorse-storage/vector_database",
                    system / "vector_database")
    return tree


def test_a_mixed_published_tree_names_every_benchmark(mixed_tree, run_cli, tmp_path):
    doc = _metrics(run_cli, mixed_tree)
    kinds = {b["kind"]: b["path"] for b in doc["benchmarks"]}
    assert set(kinds) == {"training", "checkpointing", "kv_cache", "vector_database"}
    assert kinds["vector_database"] == f"{SYSTEM}/vector_database/milvus/DISKANN"
    assert kinds["kv_cache"].startswith(f"{SYSTEM}/kv_cache/llama3.1-70b-instruct/run/")
    kv = next(r for r in doc["results"] if r["kind"] == "kv_cache")["metrics"]
    assert kv["options"]["3"]["aggregated_avg_throughput_tokens_per_sec"] > 0      # the figures, not a name only
    code, out, err = run_cli("metrics", mixed_tree)
    assert "== kv_cache: " in out and "== vector_database: " in out and "unet3d" in out
    code, out, err = run_cli("check", mixed_tree, "--format", "json")
    checked = json.loads(out)
    assert {b["benchmark"] for b in checked["benchmarks"]} == {"training", "checkpointing"}
    assert {d["kind"] for d in checked["delegated"]} == {"kv_cache", "vector_database"}     # kept as it was
    page = _report(run_cli, mixed_tree, tmp_path / "rep")
    for kind in ("mlperf-v3-tree", "kv_cache", "vector_database"):     # a cell each (a hyphenated one: class="nb")
        assert re.search(rf"<td[^>]*>{kind}</td>", page), kind
    assert "Per option" in page and "milvus DISKANN" in page


def test_an_organisation_of_a_mixed_tree(mixed_tree, run_cli):
    org = mixed_tree / "closed" / "Alluxio"
    doc = _metrics(run_cli, org)
    assert {b["kind"] for b in doc["benchmarks"]} == {"training", "checkpointing", "kv_cache", "vector_database"}
    assert all(b["path"].startswith("results/") for b in doc["benchmarks"])


def test_compare_reads_every_kind_of_a_mixed_dir_and_refuses_unlike_kinds(runs, run_cli, tmp_path):
    r = tmp_path / "R"
    shutil.copytree(runs["training"], r)
    shutil.copytree(runs["kv_cache"] / "kv_cache", r / "kv_cache")
    code, out, err = run_cli("compare", r, runs["training"], "--format", "json")       # kv_cache against training
    # R's results in the order they sit (R/kv_cache before R/training), never the kinds' registration order
    assert code == 2 and "kind: expected kv_cache" in err and "got training" in err and "left out" not in err
    code, out, err = run_cli("compare", r, runs["training"], "--format", "json", "--only", "workload=retinanet")
    assert code == 0, err
    assert [x["kind"] for x in json.loads(out)["results"]] == ["training", "training"] and err == ""
    code, out, err = run_cli("compare", runs["kv_cache"], runs["kv_cache"], "--format", "json")
    assert code == 0, err
    assert {x["kind"] for x in json.loads(out)["results"]} == {"kv_cache"}


@pytest.mark.parametrize("command", ["check", "metrics", "report", "compare"])
@pytest.mark.parametrize("content", ["empty", "unrelated"])
def test_a_path_no_kind_takes_is_one_line_and_exit_2(run_cli, tmp_path, command, content):
    d = tmp_path / "d"
    d.mkdir()
    if content == "unrelated":
        (d / "notes.txt").write_text("hello\n")
        (d / "sub").mkdir()
        (d / "sub" / "data.json").write_text("{}\n")
    extra = {"report": ["--out", tmp_path / "rep"], "compare": [d]}.get(command, [])
    code, out, err = run_cli(command, d, *extra)
    assert code == 2 and out == "" and err.count("\n") == 1 and str(d.name) in err and "Traceback" not in err
    assert not (tmp_path / "rep").exists()


def test_a_broken_result_in_a_mixed_tree_is_said_and_the_others_still_shown(mixed_tree, run_cli, tmp_path):
    (meta,) = (mixed_tree / SYSTEM / "kv_cache").glob("*/run/*/kv_cache_*_metadata.json")
    meta.write_text("{broken")
    code, out, err = run_cli("metrics", mixed_tree, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and err == ""
    (kv,) = [r for r in doc["results"] if r["kind"] == "kv_cache"]
    assert "expected valid JSON" in kv["error"] and kv["metrics"] is None
    assert {b["kind"] for b in doc["benchmarks"]} == {"training", "checkpointing", "kv_cache", "vector_database"}
    code, out, err = run_cli("report", mixed_tree, "--out", tmp_path / "rep")
    page = (tmp_path / "rep" / "index.html").read_text()
    assert code == 1 and "unusable: " in page and "milvus DISKANN" in page and "unet3d" in page
