"""Results that lie, round two (issue 36), for kv_cache, vector_database and checkpoint leaves: each forgery
of classes 4, 6 and 11 planted into a real leaf (our own small runs, made here as tests/kinds/test_dispatch.py
makes them, and the committed published ones: tests/data/v3/kv_cache_FarmGPU, checkpointing_alluxio,
tests/data/checkpoint/v3-llama3-8b-miniature). Each case asserts the finding (rule id, expected, actual),
the verdict and exit code of `suite check`, and that `suite metrics` shows the re-derived figure."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import paths

FARMGPU = (paths.DATA / "v3" / "kv_cache_FarmGPU" / "open" / "FarmGPU" / "results" / "potato8-qlc-np6-open-tnf-70b" /
           "kv_cache" / "llama3.1-70b-instruct" / "run" / "20260709_215001")
ALLUXIO = paths.DATA / "v3" / "checkpointing_alluxio"
ALLUXIO_MODEL = ALLUXIO / "closed" / "Alluxio" / "results" / "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h" / "checkpointing" / "llama3-8b"
CKPT = paths.DATA / "checkpoint" / "v3-llama3-8b-miniature" / "R"


def jedit(path: Path, fn) -> None:
    doc = json.loads(Path(path).read_text())
    fn(doc)
    Path(path).write_text(json.dumps(doc))


def checked(run_cli, path) -> tuple[int, dict]:
    code, out, err = run_cli("check", path, "--format", "json")
    return code, json.loads(out)


def findings(doc: dict, rule_id: str) -> list[dict]:
    return [f for f in doc.get("findings", []) if f["rule_id"] == rule_id]


def metrics(run_cli, path) -> dict:
    code, out, err = run_cli("metrics", path, "--format", "json")
    assert code == 0, err
    return json.loads(out)


# --------------------------------------------------------------------------- kv_cache: our own run


@pytest.fixture(scope="module")
def kv_leaf(tmp_path_factory):
    """One open run, 2 ranks, 3 s, its cache dir on /dev/shm (another file system than the results), made
    once a session for every xdist worker (tests/conftest.py `once`); tests copy it (`kv`)."""
    from tests.conftest import once

    return once(tmp_path_factory, "hostile-kv-leaf", _kv_leaf)


def _kv_leaf(tmp_path_factory):
    from suite import cli

    if not Path("/dev/shm").is_dir() or os.stat("/dev/shm").st_dev == os.stat(tmp_path_factory.getbasetemp()).st_dev:
        pytest.skip("no tmpfs /dev/shm apart from the results")
    base = tmp_path_factory.mktemp("kv")
    cache = Path(os.environ.get("TMPDIR_SHM", "/dev/shm")) / f"suite-lies-{os.getpid()}"
    cache.mkdir(exist_ok=True)
    try:
        cli.main([str(a) for a in ("run", "--workload", "kv-cache", "--cache-dir", cache, "--results-dir", base / "R",
                                   "--option", "1", "--trials", "1", "--duration", "3", "--inter-option-delay", "0",
                                   "--accelerators", "2", "--kv-users", "8", "--allow-no-cache-drop", "--division", "open")])
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    leaf, = (base / "R").glob("kv_cache/*/run/*")
    return leaf


@pytest.fixture
def kv(kv_leaf, tmp_path) -> Path:
    dest = tmp_path / "R" / kv_leaf.relative_to(kv_leaf.parents[3])
    shutil.copytree(kv_leaf, dest)
    return dest


def _meta(leaf: Path) -> Path:
    return next(leaf.glob("kv_cache_*_metadata.json"))


def _rank(leaf: Path, r: int) -> Path:
    return next(leaf.glob(f"option_1/trial_0/rank_{r}/kvcache_results_*.json"))


def test_kv_baseline_is_an_open_result_without_findings(kv, run_cli):
    code, doc = checked(run_cli, kv)
    assert (code, doc["verdict"], doc["findings"]) == (0, "open", [])     # open as asked: compliant (exit 0)


def test_kv_elapsed_halved_tokens_doubled(kv, run_cli):
    before = metrics(run_cli, kv)["options"]["1"]["aggregated_avg_throughput_tokens_per_sec"]
    elapsed = {}

    def halve(d):
        s = d["summary"]
        elapsed["s"] = s["elapsed_time"]
        s["elapsed_time"] /= 2
        s["avg_throughput_tokens_per_sec"] = s["total_tokens"] / s["elapsed_time"]
        d["suite_figures"]["elapsed_s"] = s["elapsed_time"]
    jedit(_rank(kv, 0), halve)
    code, doc = checked(run_cli, kv)
    hit = [f for f in findings(doc, "kvcache-rank-figures-rederived") if f["field"].endswith("summary.elapsed_time")]
    assert hit and hit[0]["expected"] == "at least the trial's --duration, 3 s" and hit[0]["actual"] == elapsed["s"] / 2
    assert (code, doc["verdict"]) == (1, "invalid")
    after = metrics(run_cli, kv)["options"]["1"]["aggregated_avg_throughput_tokens_per_sec"]
    assert after <= before * 1.06 + 1e-9          # tokens over the trial's duration, not over the halved time


def test_kv_one_rank_dropped_with_its_counts(kv, run_cli):
    shutil.rmtree(kv / "option_1" / "trial_0" / "rank_1")
    jedit(_meta(kv), lambda d: d.update(num_processes=1))
    jedit(kv / "summary.json", lambda d: d.update(total_ranks=1))
    code, doc = checked(run_cli, kv)
    hit = findings(doc, "kvcache-per-client-isolation")
    assert hit and hit[0]["expected"] == "rank_0..rank_1" and hit[0]["actual"] == ["rank_0"]     # mpiexec -n 2 ran
    assert (code, doc["verdict"]) == (1, "invalid")


def test_kv_fs_separation_deleted(kv, run_cli):
    (kv / "fs_separation.json").unlink()
    code, doc = checked(run_cli, kv)
    assert (code, doc["verdict"]) == (0, "open")          # the metadata keeps the probe: still shown apart
    jedit(_meta(kv), lambda d: d["suite"].pop("fs_separation"))
    code, doc = checked(run_cli, kv)
    hit = findings(doc, "kvcache-posix-cache-dir")
    assert hit and hit[0]["actual"] is None and hit[0]["expected"] is True
    assert (code, doc["verdict"]) == (1, "invalid")


def test_kv_relabelled_miniature(run_cli, tmp_path, voiced):
    """The session's real kv-cache miniature (`voiced`: its cache dir ./results/kvcache-data/, a run of 1
    rank), copied, relabelled as no miniature everywhere a flag says so."""
    from host_builders import copied_results

    root, _ = copied_results(voiced, "kv_cache", tmp_path / "R")
    leaf, = root.glob("kv_cache/*/run/*")
    jedit(_meta(leaf), lambda d: d["suite"].update(miniature=False, reduced=[]))
    for p in leaf.glob("option_*/trial_*/rank_*/kvcache_results_*.json"):
        jedit(p, lambda d: d["suite_figures"].update(miniature=False))
    code, doc = checked(run_cli, leaf)
    hit = findings(doc, "kvcache-not-miniature")
    assert hit and (hit[0]["expected"], hit[0]["actual"], hit[0]["effect"]) == (False, True, "invalid")
    assert (code, doc["verdict"]) == (1, "invalid")
    assert metrics(run_cli, leaf)["miniature"] is True


def test_kv_total_requests_cut_to_two(run_cli, tmp_path):
    """FarmGPU's rank 20 (the headline P95's): total_requests 2 and its P95 from the first two latencies."""
    import numpy as np

    leaf = tmp_path / "leaf"
    shutil.copytree(FARMGPU, leaf)
    rank = next(leaf.glob("option_3/trial_0/rank_20/*.json"))
    lat = json.loads(rank.read_text())["storage_latencies"]

    def cut(d):
        d["summary"]["total_requests"] = 2
        d["summary"]["storage_io_latency_ms"]["p95"] = float(np.percentile(np.asarray(lat[:2]) * 1000.0, 95))
    jedit(rank, cut)
    code, doc = checked(run_cli, leaf)
    got = {f["field"].split(" ", 1)[1]: f for f in findings(doc, "kvcache-rank-figures-rederived") if "rank_20" in f["field"]}
    assert (got["summary.total_requests"]["expected"], got["summary.total_requests"]["actual"]) == (278.0, 2.0)
    assert got["summary.total_requests (latency array)"]["expected"] == 279.0
    assert got["summary.storage_io_latency_ms.p95"]["expected"] == pytest.approx(float(np.percentile(np.asarray(lat) * 1000, 95)))
    assert (code, doc["verdict"]) == (1, "invalid")
    m = metrics(run_cli, leaf)
    assert m["options"]["3"]["aggregated_p95_latency_ms"] > 40000         # not the forged 17-odd ms
    assert any(s["status"] == "mismatch" for s in m["rederived"])


def _tiny_tmpfs(where: Path) -> Path:
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a 2 MiB tmpfs here (needs root)")
    return where


def test_kv_enospc_fails_the_trial_whatever_the_metadata_says(run_cli, tmp_path):
    cache = _tiny_tmpfs(tmp_path / "tiny")
    try:
        code, out, err = run_cli("run", "--workload", "kv-cache", "--cache-dir", cache, "--results-dir", tmp_path / "R",
                                 "--option", "1", "--trials", "1", "--duration", "2", "--inter-option-delay", "0",
                                 "--accelerators", 1, "--kv-users", 4, "--kv-storage-capacity-gb", 1,
                                 "--allow-no-cache-drop", "--division", "open")
    finally:
        subprocess.run(["umount", str(cache)], check=False)
    assert code != 0 and "No space left on device" in out + err
    leaf, = (tmp_path / "R").glob("kv_cache/*/run/*")
    trial, = json.loads(_meta(leaf).read_text())["suite"]["trials"]
    assert trial["status"] == "failed" and "No space left on device" in trial["error"]
    jedit(_meta(leaf), lambda d: d["suite"]["trials"][0].update(status="complete", error=None))   # the lie
    code, doc = checked(run_cli, leaf)
    hit = [f for f in findings(doc, "kvcache-trials-complete") if "log" in f["field"]]
    assert hit and hit[0]["expected"] == "no traceback or I/O error" and "No space left on device" in hit[0]["actual"]
    assert (code, doc["verdict"]) == (1, "invalid")


# --------------------------------------------------------------------------- vector_database: our own run


@pytest.fixture(scope="module")
def vdb_run(tiny_diskann):
    """One DiskANN run of a tiny workload (vdb-tiny, recall floor 0.9: the session's, each test copies it),
    the workload registered meanwhile."""
    from tests.vector_database.conftest import tiny_workload

    with tiny_workload(tiny_diskann):
        yield tiny_diskann / "R"


@pytest.fixture
def vdb(vdb_run, tmp_path) -> Path:
    shutil.copytree(vdb_run, tmp_path / "R")
    return tmp_path / "R"


def _run_leaf(root: Path) -> Path:
    return Path(glob.glob(str(root / "vector_database/*/*/run/*"))[0])


def _vrun(m: dict) -> dict:
    return m["benchmarks"][0]["runs"][0]


def test_vdb_baseline_figures_rederive(vdb, run_cli):
    code, doc = checked(run_cli, vdb)
    assert {f["rule_id"] for f in doc["findings"]} == {"vdb-run-count", "vdb-closed-database"}   # 1 run, DiskANN
    run = _vrun(metrics(run_cli, vdb))
    assert run["recall"] >= 0.9 and run["not_rederivable"] == [] and run["rederive_problems"] == []


def test_vdb_ids_zeroed_recall_kept(vdb, run_cli):
    import numpy as np

    leaf = _run_leaf(vdb)
    ids = leaf / "vectordb" / "engine" / "ids.npy"
    np.save(ids, np.zeros_like(np.load(ids)))
    jedit(leaf / "summary.json", lambda d: d.update(recall=0.91))
    code, doc = checked(run_cli, vdb)
    floor, = findings(doc, "vdb-recall-floor")
    assert floor["expected"] == ">= 0.9" and floor["actual"] < 0.1
    hit, = [f for f in findings(doc, "vdb-figures-rederived") if f["field"] == "recall"]
    assert hit["actual"] == 0.91 and hit["expected"] == floor["actual"]
    assert (code, doc["verdict"]) == (1, "invalid")
    assert _vrun(metrics(run_cli, vdb))["recall"] == floor["actual"]          # the ids' recall, not 0.91


def test_vdb_qps_times_ten_and_latencies_forged(vdb, run_cli):
    leaf = _run_leaf(vdb)
    s = json.loads((leaf / "summary.json").read_text())
    jedit(leaf / "summary.json", lambda d: d.update(throughput_qps=10 * s["throughput_qps"],
                                                    p99_latency_ms=s["p99_latency_ms"] / 10))
    code, doc = checked(run_cli, vdb)
    got = {f["field"]: f for f in findings(doc, "vdb-figures-rederived")}
    assert got["throughput_qps"]["expected"] == pytest.approx(s["throughput_qps"])
    assert got["throughput_qps"]["actual"] == 10 * s["throughput_qps"]
    assert got["p99_latency_ms"]["expected"] == pytest.approx(s["p99_latency_ms"])
    assert (code, doc["verdict"]) == (1, "invalid")
    run = _vrun(metrics(run_cli, vdb))
    assert run["throughput_qps"] == pytest.approx(s["throughput_qps"]) and run["claimed"]["throughput_qps"] == 10 * s["throughput_qps"]


def test_vdb_ground_truth_from_the_engines_answers(vdb, run_cli):
    """groundtruth.ibin rewritten from the engine's own ids (recall 1.0), summary.json keeping the original SHA-256."""
    import numpy as np

    from suite.vector_database import dataset

    leaf = _run_leaf(vdb)
    truth = leaf / "vectordb" / "groundtruth.ibin"
    _ids, dist = dataset.read_truth(truth)
    ids = np.load(leaf / "vectordb" / "engine" / "ids.npy")
    qidx = np.load(leaf / "vectordb" / "engine" / "query_index.npy")
    fake = np.zeros_like(_ids)
    fake[qidx] = ids[:, :fake.shape[1]]
    truth.write_bytes(np.array(fake.shape, dtype="<u4").tobytes() + fake.astype("<u4").tobytes() + dist.tobytes())
    jedit(leaf / "summary.json", lambda d: d.update(recall=1.0))
    code, doc = checked(run_cli, vdb)
    hit = [f for f in findings(doc, "vdb-ground-truth-integrity") if f["field"] == "sha256"]
    recorded = json.loads((leaf / "summary.json").read_text())["ground_truth"]["sha256"]
    assert hit and recorded in hit[0]["expected"] and hit[0]["actual"] != recorded
    assert (code, doc["verdict"]) == (1, "invalid")


def test_vdb_recall_floor_from_the_workload_not_the_result(vdb, run_cli):
    import numpy as np

    leaf = _run_leaf(vdb)
    ids = leaf / "vectordb" / "engine" / "ids.npy"
    np.save(ids, np.zeros_like(np.load(ids)))
    jedit(leaf / "summary.json", lambda d: d.update(recall_floor=0.0))
    code, doc = checked(run_cli, vdb)
    floor, = findings(doc, "vdb-recall-floor")
    assert floor["expected"] == ">= 0.9" and (code, doc["verdict"]) == (1, "invalid")      # not the result's 0.0


def test_vdb_engine_key_removed_keeps_the_rules(vdb, run_cli):
    leaf = _run_leaf(vdb)
    jedit(leaf / "summary.json", lambda d: [d.pop("engine"), d.update(cache_drop={"succeeded": False})])
    code, doc = checked(run_cli, vdb)
    hit, = findings(doc, "vdb-cache-cleared")
    assert (hit["expected"], hit["actual"]) == (True, False)
    assert _vrun(metrics(run_cli, vdb))["source"] == "suite"


def test_vdb_returned_ids_deleted_recall_not_rederivable(vdb, run_cli):
    leaf = _run_leaf(vdb)
    (leaf / "vectordb" / "engine" / "ids.npy").unlink()
    code, doc = checked(run_cli, vdb)
    floor, = findings(doc, "vdb-recall-floor")                 # a fact that cannot be computed fails its rule
    assert floor["actual"] is None and (code, doc["verdict"]) == (1, "invalid")
    run = _vrun(metrics(run_cli, vdb))
    assert run["recall"] is None and run["not_rederivable"] == ["recall"]
    code, out, err = run_cli("metrics", vdb)
    assert "claimed, not re-derivable (counted in no verdict): recall 0.9" in out


# --------------------------------------------------------------------------- checkpointing leaves


def test_ckpt_forged_leaf_summary_in_place(run_cli, tmp_path):
    root = tmp_path / "R"
    shutil.copytree(CKPT, root)
    write = sorted((root / "checkpointing" / "llama3-8b").iterdir())[0]
    jedit(write / "summary.json", lambda d: d["metric"].update(save_checkpoint_io_mean_GB_per_second=99.0))
    code, out, err = run_cli("check", root)
    assert code == 1 and "verdict: INVALID" in out
    assert "metric.save_checkpoint_io_mean_GB_per_second: expected 1.05" in out and "got 99.0" in out
    assert "(4.3.6-checkpointSummaryRederived)" in out
    code, out, err = run_cli("metrics", root)
    assert code == 0 and "1.053 GiB/s" in out and not re.search(r"(?<![\w/.-])99(\.0+)? GiB/s", out)   # not the path's digits


def test_ckpt_relabelled_to_an_older_round_keeps_the_leaf_rules(run_cli, tmp_path):
    root = tmp_path / "R"
    shutil.copytree(CKPT, root)
    for leaf in (root / "checkpointing" / "llama3-8b").iterdir():
        jedit(leaf / "run-1" / "results.json", lambda d: d.update(ruleset="v2.0"))
    write = sorted((root / "checkpointing" / "llama3-8b").iterdir())[0]
    jedit(write / "summary.json", lambda d: d["metric"].update(save_checkpoint_io_mean_GB_per_second=99.0))
    code, out, err = run_cli("check", root)
    assert code == 1 and "ruleset: checkpointing (v3.0)" in out and "(4.3.6-checkpointSummaryRederived)" in out


def test_ckpt_forged_published_leaf_summary(run_cli, tmp_path):
    shutil.copytree(ALLUXIO, tmp_path / "t")
    model = tmp_path / "t" / ALLUXIO_MODEL.relative_to(ALLUXIO)
    jedit(model / "20260708_064613" / "summary.json",
          lambda d: d["metric"].update(save_checkpoint_io_mean_GB_per_second=99.0))
    code, out, err = run_cli("check", model)
    assert code == 1 and "(4.3.6-checkpointSummaryRederived)" in out
    # the text rounds for people and wraps at 100 columns; the JSON keeps the exact re-derived value
    assert "metric.save_checkpoint_io_mean_GB_per_second: expected 4.64, got 99.0" in " ".join(out.split())
    code, out, err = run_cli("check", model, "--format", "json")
    assert "4.643973844563218" in out
    code, out, err = run_cli("metrics", tmp_path / "t")
    assert code == 0 and "Write B/W 4.64 GiB/s" in out and "99.00" not in out


def test_ckpt_same_verdict_in_place_and_in_the_published_layout(run_cli, tmp_path):
    """The same leaves (made with checkpoints and results on one file system): INVALID for 4.4.2 in place and
    in a published tree, never CLOSED in one and INVALID in the other; our own leaves are checked by their
    own kind in both places (issue 44), so the finding is the same rule in both."""
    shutil.copytree(CKPT, tmp_path / "here")
    shutil.copytree(CKPT / "checkpointing", tmp_path / "t" / "closed" / "Org" / "results" / "sys" / "checkpointing")
    code, out, err = run_cli("check", tmp_path / "here")
    assert code == 1 and "verdict: INVALID" in out and out.count("(4.4.2-checkpointFilesystemCheck)") == 2
    code, out, err = run_cli("check", tmp_path / "t")
    assert code == 1 and "verdict: INVALID" in out and out.count("(4.4.2-checkpointFilesystemCheck)") == 2
    assert "runFilesReadable" not in out                   # the suite's fs_separation.json is read, not refused


def _skip_clear(h: dict, forge_flag: bool) -> None:
    """The read's cache clear not made; with forge_flag, the record also says none was required."""
    h["cache_clear"].update(performed=False, succeeded=False)
    if forge_flag:
        h["clear_required"] = False


@pytest.mark.parametrize("forge_flag", [False, True], ids=["clear-skipped", "clear-skipped-flag-forged"])
def test_ckpt_clear_required_is_rederived_not_read_from_the_record(run_cli, tmp_path, forge_flag):
    """4.3.1 (issue 36, class 5: `clear_required` forged to false): 193 MB per client against 25 GB of
    memory needs the clear, whatever the record's own flag says."""
    root = tmp_path / "R"
    shutil.copytree(CKPT, root)
    read = sorted((root / "checkpointing" / "llama3-8b").iterdir())[1]
    jedit(read / "run-1" / "results.json", lambda d: _skip_clear(d["handoff"], forge_flag))
    code, out, err = run_cli("check", root)
    assert code == 1 and "(checkpoint-cache-clear-3x)" in out, out + err


def test_ckpt_clear_not_required_at_three_times_memory(run_cli, tmp_path):
    """The near miss: data per client at 3x the client's memory needs no clear (4.3.1), so skipping it is
    no finding of that rule."""
    root = tmp_path / "R"
    shutil.copytree(CKPT, root)
    read = sorted((root / "checkpointing" / "llama3-8b").iterdir())[1]

    def at_three_times(d):
        h = d["handoff"]
        h["client_memory_bytes"] = h["checkpoint_bytes_per_client"] // 3
        _skip_clear(h, forge_flag=False)
    jedit(read / "run-1" / "results.json", at_three_times)
    code, out, err = run_cli("check", root)
    assert "(checkpoint-cache-clear-3x)" not in out, out + err
