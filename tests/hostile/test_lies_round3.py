"""Results that lie, round three (issue 36 leftovers) on the checkpointing and published-tree side, each
planted into a real fixture: our own v3.0 8B miniature pair (tests/data/checkpoint/v3-llama3-8b-miniature),
the published Alluxio 8B pair (tests/data/v3/checkpointing_alluxio) and the published v3.0 tree
(tests/data/v3/tree). Each case asserts the finding (rule id, expected, actual) and the verdict and exit
code of `suite check`.

1. a checkpoint size the model's layout does not write (claimed, or recorded per checkpoint);
2. a code image with no code (only its .code-hash.json): a hash of nothing, refused;
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import paths

GIB = 1 << 30
CKPT = paths.DATA / "checkpoint" / "v3-llama3-8b-miniature" / "R"
TREE = paths.DATA / "v3" / "tree"
IMAGE = "Alluxio/code-c5cbafac"          # the tree's pool image (a stand-in holding code: tests/data/v3/tree/README.md)
ALLUXIO = paths.DATA / "v3" / "checkpointing_alluxio"
ALLUXIO_MODEL = ALLUXIO / "closed" / "Alluxio" / "results" / "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h" / "checkpointing" / "llama3-8b"
WRITE, READ = "20260708_064613", "20260708_065100"
MINI_BYTES = 19_345_152            # the 8B miniature's checkpoint at 8 ranks (suite.checkpointing.model)
LLAMA8B_BYTES = 112_425_623_552    # the 8B checkpoint at 8 ranks: the published leaf's 104.70452117919922 GiB


def jedit(path: Path, fn) -> None:
    doc = json.loads(Path(path).read_text())
    fn(doc)
    Path(path).write_text(json.dumps(doc))


def checked(run_cli, path) -> tuple[int, dict]:
    code, out, err = run_cli("check", path, "--format", "json")
    assert not err.strip() or "Traceback" not in err, err
    return code, json.loads(out)


def findings(doc: dict, rule_id: str) -> list[dict]:
    """Every finding of `rule_id` in a `check --format json` document (our kinds' and the tree's)."""
    out = [f for f in doc.get("findings", []) if f["rule_id"] == rule_id]
    for b in doc.get("benchmarks", []):
        out += [f for f in b.get("findings", []) if f["rule_id"] == rule_id]
    return out


def _times_ten(metric: dict) -> None:
    """The claimed size and every GiB/s x10: throughput = size / duration still holds in summary.json."""
    for k in list(metric):
        if k == "checkpoint_size_GB" or k.endswith("_GB_per_second"):
            metric[k] *= 10


@pytest.fixture
def ours(tmp_path) -> Path:
    shutil.copytree(CKPT, tmp_path / "R")
    return tmp_path / "R"


def _leaf(root: Path, i: int) -> Path:
    return sorted((root / "checkpointing" / "llama3-8b").iterdir())[i]


# --------------------------------------------------------------------------- 1. size against the layout


def test_ckpt_genuine_miniature_size_is_the_layouts(ours, run_cli):
    code, doc = checked(run_cli, ours)
    assert findings(doc, "4.3.3-checkpointSizeMatchesModel") == []
    summary = json.loads((_leaf(ours, 0) / "summary.json").read_text())
    assert summary["metric"]["checkpoint_size_GB"] * GIB == MINI_BYTES


def test_ckpt_size_and_bandwidth_times_ten_in_summary(ours, run_cli):
    """A leaf's summary.json with its size and GiB/s x10 (consistent with its durations, so the per-rank
    re-derivation, which takes the size as given, agrees): the layout's size catches it."""
    jedit(_leaf(ours, 0) / "summary.json", lambda d: _times_ten(d["metric"]))
    code, doc = checked(run_cli, ours)
    hit, = findings(doc, "4.3.3-checkpointSizeMatchesModel")
    assert hit["field"] == "metric.checkpoint_size_GB" and hit["severity"] == "error"
    assert hit["expected"] == pytest.approx(MINI_BYTES / GIB) and hit["actual"] == pytest.approx(10 * MINI_BYTES / GIB)
    assert hit["path"].endswith("summary.json")
    assert (code, doc["verdict"]) == (1, "invalid")


def test_ckpt_size_in_decimal_gb_is_not_gib(ours, run_cli):
    """GB vs GiB never confused: the same bytes written as decimal GB (7.4 % more) is a mismatch."""
    jedit(_leaf(ours, 1) / "summary.json", lambda d: d["metric"].update(checkpoint_size_GB=MINI_BYTES / 1e9))
    code, doc = checked(run_cli, ours)
    hit, = findings(doc, "4.3.3-checkpointSizeMatchesModel")
    assert hit["actual"] == MINI_BYTES / 1e9 and hit["expected"] == pytest.approx(MINI_BYTES / GIB)
    assert code == 1


def test_ckpt_recorded_bytes_per_rank_forged(ours, run_cli):
    """Rank 3's per_epoch_stats.json throughput x2 (its durations kept): it records twice its shards."""
    def double(d):
        for k, c in d["1"].items():
            if k.startswith("save_ckpt"):
                c["throughput"] *= 2
    jedit(_leaf(ours, 0) / "3_per_epoch_stats.json", double)
    code, doc = checked(run_cli, ours)
    hits = findings(doc, "4.3.3-checkpointSizeMatchesModel")
    assert len(hits) == 10 and all(h["path"].endswith("3_per_epoch_stats.json") for h in hits)
    assert hits[0]["expected"] == pytest.approx(MINI_BYTES / 8 / GIB)
    assert hits[0]["actual"] == pytest.approx(2 * MINI_BYTES / 8 / GIB)
    assert code == 1


def test_published_genuine_size_is_the_layouts(run_cli, tmp_path):
    shutil.copytree(ALLUXIO, tmp_path / "t")
    code, doc = checked(run_cli, tmp_path / "t")
    assert findings(doc, "4.3.3-checkpointSizeMatchesModel") == []
    summary = json.loads((ALLUXIO_MODEL / WRITE / "summary.json").read_text())
    assert summary["metric"]["checkpoint_size_GB"] * GIB == LLAMA8B_BYTES


@pytest.mark.parametrize("leaf", [WRITE, READ])
def test_published_size_and_bandwidth_times_ten(run_cli, tmp_path, leaf):
    """The published write (or read) leaf's summary.json: size and GiB/s x10 together. Without rank 0's
    records re-derivation takes the size as given; the layout does not."""
    shutil.copytree(ALLUXIO, tmp_path / "t")
    model = tmp_path / "t" / ALLUXIO_MODEL.relative_to(ALLUXIO)
    jedit(model / leaf / "summary.json", lambda d: _times_ten(d["metric"]))
    code, doc = checked(run_cli, model)
    hit, = findings(doc, "4.3.3-checkpointSizeMatchesModel")
    assert hit["expected"] == pytest.approx(LLAMA8B_BYTES / GIB) and hit["actual"] == pytest.approx(10 * LLAMA8B_BYTES / GIB)
    assert hit["severity"] == "error" and (code, doc["verdict"]) == (1, "invalid")


def test_published_recorded_bytes_forged(run_cli, tmp_path):
    """Rank 0's per_epoch_stats.json throughput x3 with summary.json's GiB/s x3 to match (size kept): the
    bytes it records per checkpoint (DLIO: throughput x duration, the whole checkpoint) are not the model's."""
    shutil.copytree(ALLUXIO, tmp_path / "t")
    model = tmp_path / "t" / ALLUXIO_MODEL.relative_to(ALLUXIO)

    def triple(d):
        for c in d["1"].values():
            if isinstance(c, dict) and "throughput" in c:
                c["throughput"] *= 3
    jedit(model / WRITE / "0_per_epoch_stats.json", triple)
    code, doc = checked(run_cli, model)
    hits = findings(doc, "4.3.3-checkpointSizeMatchesModel")
    assert len(hits) == 10 and all(h["path"].endswith("0_per_epoch_stats.json") for h in hits)
    assert hits[0]["expected"] == pytest.approx(LLAMA8B_BYTES / GIB)
    assert hits[0]["actual"] == pytest.approx(3 * LLAMA8B_BYTES / GIB, rel=1e-5)
    assert code == 1


def _shrunk_to_two_layers(model: Path, leaf: str) -> float:
    """The leaf's metadata recording a 2-layer model, its summary claiming that model's checkpoint and GiB/s to
    match: each figure agrees with the configuration it records. Returns the claimed GiB."""
    from suite.checkpointing.reference import ckptsize

    meta = next((model / leaf).glob("checkpointing_*_metadata.json"))
    jedit(meta, lambda d: d["parameters"]["model"].update(num_layers=2))
    small = ckptsize.config_bytes(json.loads(meta.read_text())["parameters"]["model"], 8) / GIB

    def claim(d):
        ratio = small / d["metric"]["checkpoint_size_GB"]
        for k in list(d["metric"]):
            if k == "checkpoint_size_GB" or k.endswith("_GB_per_second"):
                d["metric"][k] *= ratio
    jedit(model / leaf / "summary.json", claim)
    return small


def test_published_size_vouched_for_by_a_smaller_recorded_model(run_cli, tmp_path):
    """The size is held to the configuration the leaf records (a miniature's to its own), so a forger shrinks
    the recorded model with the claim: a configuration that is neither the model's nor its miniature's is a
    mismatch itself, and the claim is held to the round's table."""
    shutil.copytree(TREE, tmp_path / "t")              # the tree's leaves hold the metadata
    model = tmp_path / "t" / "closed/Alluxio/results/aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"
    small = _shrunk_to_two_layers(model, WRITE)
    code, doc = checked(run_cli, model)
    hits = findings(doc, "4.3.3-checkpointSizeMatchesModel")
    config = [h for h in hits if h["field"].startswith("parameters.model")]
    assert len(config) == 1 and config[0]["path"].endswith("_metadata.json")
    assert config[0]["actual"] == f"{small:.4f} GiB" and "104.7045 GiB" in config[0]["expected"]
    claimed = [h for h in hits if h["field"] == "metric.checkpoint_size_GB"]
    assert claimed and claimed[0]["expected"] == pytest.approx(LLAMA8B_BYTES / GIB)
    assert (code, doc["verdict"]) == (1, "invalid")


def test_our_miniature_is_held_to_its_own_configuration(ours, run_cli):
    """Our pair records the 8B miniature's configuration (the workload file's `miniature` block): its size is
    that configuration's layout, the same judge as the published leaves', no code that knows a miniature."""
    from suite.checkpointing.reference import ckptsize

    meta = json.loads(next(_leaf(ours, 0).glob("checkpointing_*_metadata.json")).read_text())
    assert ckptsize.config_bytes(meta["parameters"]["model"], 8) == MINI_BYTES
    code, doc = checked(run_cli, ours)
    assert findings(doc, "4.3.3-checkpointSizeMatchesModel") == []
    assert findings(doc, "4.3.6-checkpointBandwidthMatchesSize") == []


def _read_later(root: Path, seconds: float) -> None:
    """The read leaf's timed section `seconds` later (its summary.json start and end)."""
    from datetime import datetime, timedelta

    def later(d):
        for k in ("start", "end"):
            d[k] = (datetime.fromisoformat(d[k]) + timedelta(seconds=seconds)).isoformat()
    jedit(_leaf(root, 1) / "summary.json", later)


@pytest.mark.parametrize("seconds,caught", [(5, []), (40, ["2.1.24-checkpointingTimestampGap",
                                                            "4.7.1-checkpointCacheFlushValidation"])])
def test_ckpt_gap_of_a_miniature_is_held_to_the_flush_window_not_its_second_long_write(ours, run_cli, seconds, caught):
    """2.1.24 bounds the gap by the write's duration, never below 4.7.1's 30 s (the round's
    checkpoint_gap_floor_s): the miniature's write lasts a second or two, so a read 5 s after it is no finding,
    one 40 s after it breaks both clauses."""
    _read_later(ours, seconds)
    code, doc = checked(run_cli, ours)
    gap = {f["rule_id"] for f in findings(doc, "2.1.24-checkpointingTimestampGap")
           + findings(doc, "4.7.1-checkpointCacheFlushValidation")}
    assert sorted(gap) == caught


# --------------------------------------------------------------------------- 2. a code image with no code


def test_tree_image_with_code_verifies(run_cli, tmp_path):
    """The fixture's image holds code whose md5-tree-v2 is the hash it records: CHECK-02 is evaluated, not skipped."""
    from suite.layouts import pool as pool

    shutil.copytree(TREE, tmp_path / "t")
    image = tmp_path / "t" / IMAGE
    assert pool.code_files(image) and pool.tree_md5(image) == json.loads((image / ".code-hash.json").read_text())["hash"]
    code, doc = checked(run_cli, tmp_path / "t")
    assert (code, doc["verdict"]) == (0, "closed") and doc["compliant"] is True
    assert not [f for f in doc["findings"] if f["rule_id"].startswith("CHECK-")]


@pytest.mark.parametrize("leftover", [[], ["__pycache__/x.pyc", "tests/test_x.py"]], ids=["bare", "only-excluded"])
def test_tree_image_with_no_code_is_refused(run_cli, tmp_path, leftover):
    """The image emptied to its .code-hash.json (or to files the hash leaves out): a finding that counts."""
    shutil.copytree(TREE, tmp_path / "t")
    image = tmp_path / "t" / IMAGE
    for p in sorted(image.iterdir()):
        if p.name != ".code-hash.json":
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    for rel in leftover:
        (image / rel).parent.mkdir(parents=True, exist_ok=True)
        (image / rel).write_text("x = 1\n")
    code, doc = checked(run_cli, tmp_path / "t")
    hit, = findings(doc, "CHECK-02-poolImageHasCode")
    assert hit["severity"] == "error" and hit["effect"] == "fix-required"
    assert hit["path"].endswith("code-c5cbafac") and hit["actual"].startswith("no code")
    assert (code, doc["compliant"], doc["fix_required"]) == (1, False, True)     # "CLOSED, fix required (not compliant)"


# --------------------------------------------------------------------------- 3. published vector_database figures

VDB = paths.DATA / "v3" / "vector_database_TTA"
VDB_RUN = Path("closed/TTA/results/seahorse-storage/vector_database/milvus/DISKANN/run/20260724_090536")
VDB_KIND = Path("closed/TTA/results/seahorse-storage/vector_database")   # the kind's part (the tree root: the layout's)
VDB_CLAIMED_ONLY = {"mean_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "p999_latency_ms", "recall"}


@pytest.fixture
def vdb(tmp_path) -> Path:
    shutil.copytree(VDB, tmp_path / "t")
    return tmp_path / "t"


def _vrun(run_cli, root: Path) -> dict:
    code, out, err = run_cli("metrics", root, "--format", "json")
    assert code == 0, err
    return json.loads(out)["benchmarks"][0]["runs"][0]


def test_vdb_published_figures_not_rederivable_are_shown_as_claimed(vdb, run_cli):
    """The leaf keeps no per-query records: its latencies and recall are claimed, never a figure; its QPS is
    the ranks' (3,607,200 queries over the aggregate's 62.6 s)."""
    run = _vrun(run_cli, vdb)
    assert set(run["not_rederivable"]) == VDB_CLAIMED_ONLY and run["rederive_problems"] == []
    assert run["recall"] is None and run["claimed"]["recall"] == 0.209675
    assert run["throughput_qps"] == pytest.approx(3607200 / 62.60348439216614) and run["query_count"] == 3607200
    code, out, err = run_cli("metrics", vdb)
    assert "claimed, not re-derivable (counted in no verdict): " in out and "recall 0.209675" in out


@pytest.mark.parametrize("recall, own", [(0.0, {"vdb-recall-claimed-floor"}), (0.5166, {"vdb-recall-claimed-floor"}),
                                         (0.8999, {"vdb-recall-claimed-floor"}), (0.90, set()), (0.99, set())])
def test_vdb_published_claimed_recall_counts_only_against_itself(vdb, run_cli, recall, own):
    """A claimed recall (summary.json and the ranks' file agreeing) is not re-derivable: no re-derived recall
    rule fires; but a claim under the round's floor (v3.0: 0.90 recall@10, issue 48; SAMSUNG's published
    0.5166 among them) is the result's own admission (vdb-recall-claimed-floor)."""
    jedit(vdb / VDB_RUN / "summary.json", lambda d: d.update(recall=recall))
    jedit(vdb / VDB_RUN / "vectordb/simple/vdb_multi_node_summary.json", lambda d: d["recall"].update(mean_recall=recall))
    code, doc = checked(run_cli, vdb / VDB_KIND)
    assert {f["rule_id"] for f in findings(doc, "vdb-recall-floor") + findings(doc, "vdb-figures-rederived")} == set()
    assert {f["rule_id"] for f in doc["findings"]} == {"vdb-run-count", "vdb-ground-truth-recorded"} | own


def test_vdb_published_qps_times_ten_with_the_rank_records_left(vdb, run_cli):
    """summary.json's QPS x10 (and the aggregate's in the ranks' file), the ranks' own records left: caught, and
    `metrics` shows the ranks' QPS."""
    s = json.loads((vdb / VDB_RUN / "summary.json").read_text())
    jedit(vdb / VDB_RUN / "summary.json", lambda d: d.update(throughput_qps=10 * s["throughput_qps"]))
    jedit(vdb / VDB_RUN / "vectordb/simple/vdb_multi_node_summary.json",
          lambda d: d.update(throughput_qps=10 * d["throughput_qps"]))
    code, doc = checked(run_cli, vdb / VDB_KIND)
    hit, = findings(doc, "vdb-figures-rederived")
    assert hit["field"] == "throughput_qps" and hit["actual"] == 10 * s["throughput_qps"]
    assert hit["expected"] == pytest.approx(s["throughput_qps"]) and hit["severity"] == "error"
    assert (code, doc["verdict"]) == (1, "invalid")
    assert _vrun(run_cli, vdb)["throughput_qps"] == pytest.approx(s["throughput_qps"])


def test_vdb_published_wall_time_cut_to_fake_qps(vdb, run_cli):
    """summary.json and the ranks' file both claim a 6.26 s run (QPS x10): the ranks' own start and end say 62.6 s."""
    s = json.loads((vdb / VDB_RUN / "summary.json").read_text())
    jedit(vdb / VDB_RUN / "summary.json", lambda d: d.update(throughput_qps=10 * s["throughput_qps"],
                                                             total_time_seconds=s["total_time_seconds"] / 10))
    jedit(vdb / VDB_RUN / "vectordb/simple/vdb_multi_node_summary.json",
          lambda d: d.update(total_time_seconds=d["total_time_seconds"] / 10))
    code, doc = checked(run_cli, vdb / VDB_KIND)
    got = {f["field"] for f in findings(doc, "vdb-figures-rederived")}
    assert {"total_time_seconds", "throughput_qps"} <= got and code == 1


def test_vdb_published_p99_contradicting_its_ranks_file(vdb, run_cli):
    """A claimed figure (p99) that the ranks' file records otherwise: still claimed only, but the contradiction is
    caught."""
    jedit(vdb / VDB_RUN / "summary.json", lambda d: d.update(p99_latency_ms=1.0))
    code, doc = checked(run_cli, vdb / VDB_KIND)
    hit, = findings(doc, "vdb-figures-rederived")
    assert (hit["field"], hit["expected"], hit["actual"]) == ("p99_latency_ms", 107.3797607421875, 1.0)
    assert code == 1
