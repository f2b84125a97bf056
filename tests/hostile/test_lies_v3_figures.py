"""Results that lie (issue 46, class 1): published v3.0 figures not tied to each other. Each case tampers
a copy of the real published leaves (tests/data/v3, copied to tmp_path) so that every figure still agrees
with the ones beside it that the checker compared before, runs `suite check` through cli.main and asserts
the verdict and the rule id that catches the lie at its root: the training throughput against the
accelerators' 100 %-AU rate, the record length and the AU; a vector-DB recall outside [0, 1] or below the
round's floor, a QPS the ranks' batches do not give, a copied run; a checkpoint bandwidth and duration the
model's size and the leaf's own timed section do not give; host-memory records (what decides whether the
page cache must be cleared) that contradict each other."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
import shutil
from pathlib import Path

import pytest

from suite import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "v3"
TRAIN = "tree/closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"
CKPT = "tree/closed/Alluxio/results/aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"
CKPT_RECORDS = ("checkpointing_alluxio/closed/Alluxio/results/aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/"
                "llama3-8b")
WRITE, READ = "20260708_064613", "20260708_065100"
VDB = "vector_database_TTA/closed/TTA/results/seahorse-storage/vector_database/milvus/DISKANN"
VRUN = "20260724_090536"
RANKS = "vectordb/simple/vdb_multi_node_summary.json"


@pytest.fixture
def v3(tmp_path) -> Path:
    dst = tmp_path / "v3"
    shutil.copytree(DATA, dst)
    return dst


def edit(p: Path, fn) -> None:
    doc = json.loads(p.read_text())
    fn(doc)
    p.write_text(json.dumps(doc, indent=4))


def check(path: Path, capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = cli.main(["check", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def found(doc: dict, rule_id: str) -> list[dict]:
    out = [f for f in doc["findings"] if f["rule_id"] == rule_id]
    for d in doc.get("delegated") or []:          # a tree's kv_cache / vector_database parts
        out += [f for f in d.get("findings") or [] if f["rule_id"] == rule_id]
    return out


def rule_ids(doc: dict) -> set:
    return {f["rule_id"] for f in doc["findings"]}


# --------------------------------------------------------------------------- 1. training throughput


def _double_throughput(doc: dict) -> None:
    m = doc["metric"]
    for k in list(m):
        if k.startswith(("train_throughput_", "train_io_")):
            m[k] = [2 * v for v in m[k]] if isinstance(m[k], list) else 2 * m[k]


def test_real_trees_keep_their_verdicts(v3, capsys):
    code, doc = check(v3 / "tree", capsys)
    assert code == 0 and doc["verdict"] == "closed", sorted(rule_ids(doc))


def test_training_throughput_doubled_exceeds_the_accelerators(v3, capsys):
    """8 b200 x batch 7 / 0.162 s = 345.7 samples/s at 100 % AU; doubled, the runs claim ~634."""
    for s in (v3 / TRAIN / "run").glob("*/summary.json"):
        edit(s, _double_throughput)
    code, doc = check(v3 / "tree", capsys)
    assert code == 1 and doc["verdict"] == "invalid"
    bound = found(doc, "3.3.8-trainingThroughputBound")
    assert len({f["path"] for f in bound}) == 6 and all(f["severity"] == "error" for f in bound)
    f = next(f for f in bound if f["field"] == "metric.train_throughput_mean_samples_per_second")
    assert f["expected"].startswith("<= 345.68 samples/s")
    assert found(doc, "3.3.8-trainingAuMatchesThroughput")           # AU 92 % is not 183 % of the rate


def test_training_io_alone_doubled_is_not_its_samples(v3, capsys):
    for s in (v3 / TRAIN / "run").glob("*/summary.json"):
        edit(s, lambda d: d["metric"].update(train_io_mean_MB_per_second=2 * d["metric"]["train_io_mean_MB_per_second"]))
    code, doc = check(v3 / "tree", capsys)
    assert code == 1 and doc["verdict"] == "invalid"
    f = found(doc, "3.3.8-trainingThroughputBytesAgree")
    assert len(f) == 6 and f[0]["field"] == "metric.train_io_mean_MB_per_second"


def test_training_au_raised_with_throughput_kept(v3, capsys):
    """Per-epoch AU and its mean set to 99.5 % while the samples/s still give ~92 %."""
    run = sorted((v3 / TRAIN / "run").iterdir())[2] / "summary.json"
    edit(run, lambda d: d["metric"].update(train_au_percentage=[99.5] * 5, train_au_mean_percentage=99.5))
    code, doc = check(v3 / "tree", capsys)
    assert code == 1
    f = found(doc, "3.3.8-trainingAuMatchesThroughput")
    assert f and f[0]["actual"] == "99.50"


# --------------------------------------------------------------------------- 2-4. vector database


def _vrun(v3: Path) -> Path:
    return v3 / VDB / "run" / VRUN


@pytest.mark.parametrize("recall, rules", [
    (0.0, {"vdb-recall-claimed-floor"}),
    (-0.5, {"vdb-recall-range", "vdb-recall-claimed-floor"}),
    (1.7, {"vdb-recall-range"}),
])
def test_vdb_recall_outside_0_1_or_under_the_floor(v3, capsys, recall, rules):
    """The claim made in summary.json and in the ranks' record alike, so that no record contradicts it."""
    edit(_vrun(v3) / "summary.json", lambda d: d.update(recall=recall))
    edit(_vrun(v3) / RANKS, lambda d: d["recall"].update(mean_recall=recall))
    code, doc = check(v3 / "vector_database_TTA/closed/TTA/results/seahorse-storage/vector_database", capsys)
    assert code == 1 and doc["verdict"] == "invalid"
    got = {f["rule_id"] for f in doc["findings"]} & {"vdb-recall-range", "vdb-recall-claimed-floor"}
    assert got == rules
    f = found(doc, sorted(rules)[0])[0]
    assert f["severity"] == "error" and f["field"] == "recall" and f["actual"] == recall


def test_vdb_published_recall_under_the_rounds_floor(v3, capsys):
    """0.21 (TTA, 1M uniform vectors) is under v3.0's floor, 0.90 recall@10 (big-ann-benchmarks' convention,
    rules/v3.0/vector_database.yaml; issue 48): an error though the leaf cannot re-derive it (its own admission)."""
    code, doc = check(v3 / "vector_database_TTA/closed/TTA/results/seahorse-storage/vector_database", capsys)
    assert code == 1 and doc["verdict"] == "invalid"
    assert rule_ids(doc) == {"vdb-run-count", "vdb-ground-truth-recorded", "vdb-recall-claimed-floor"}
    f, = found(doc, "vdb-recall-claimed-floor")
    assert (f["severity"], f["effect"], f["field"], f["actual"]) == ("error", "invalid", "recall", 0.209675)
    assert f["expected"] == ">= 0.9" and "0.9" in f["message"]


def test_vdb_qps_doubled_with_the_ranks_query_counts(v3, capsys):
    """QPS and every query count doubled (summary.json, the ranks' aggregate and each rank's): the ranks'
    batches (8,947 + ... = 36,072 of 100 queries, mean_batch_time_ms / mean_latency_ms) still give 3,607,200."""
    def double(d):
        d["throughput_qps"] *= 2
        d["total_queries"] *= 2
        for r in d["rank_summaries"]:
            r["total_queries"] *= 2
            r["throughput_qps"] *= 2
    edit(_vrun(v3) / RANKS, double)
    edit(_vrun(v3) / "summary.json", lambda d: d.update(throughput_qps=2 * d["throughput_qps"],
                                                        query_count=2 * d["query_count"]))
    code, doc = check(v3 / "vector_database_TTA/closed/TTA/results/seahorse-storage/vector_database", capsys)
    assert code == 1 and doc["verdict"] == "invalid"
    got = {f["field"]: f for f in found(doc, "vdb-figures-rederived")}
    assert got["throughput_qps"]["expected"] == pytest.approx(57619.796006935765)
    assert got["query_count"]["expected"] == 3607200
    assert got["rank_summaries[0].total_queries"]["expected"].startswith("894700 (successful_batches 8947 x 100")


def test_vdb_copied_run(v3, capsys):
    shutil.copytree(_vrun(v3), _vrun(v3).parent / "20260724_100000")
    code, doc = check(v3 / "vector_database_TTA/closed/TTA/results/seahorse-storage/vector_database", capsys)
    assert code == 1
    f, = found(doc, "vdb-runs-distinct")
    assert f["severity"] == "error" and "20260724_100000" in f["path"] and f["actual"] == "those of run " + VRUN


def test_training_run_copied_without_its_per_epoch_lists(v3, capsys):
    """Runs 3 and 4 keep only their means (the per-epoch lists removed), run 4's the same as run 3's."""
    runs = sorted((v3 / TRAIN / "run").iterdir())
    def means_of(src):
        m = json.loads((src / "summary.json").read_text())["metric"]
        return lambda d: d.update(metric={k: v for k, v in m.items() if not isinstance(v, list)})
    edit(runs[3] / "summary.json", means_of(runs[3]))
    edit(runs[4] / "summary.json", means_of(runs[3]))
    code, doc = check(v3 / "tree", capsys)
    assert code == 1
    f, = found(doc, "2.1.17-trainingRunsDistinct")
    assert runs[4].name in f["path"]


# --------------------------------------------------------------------------- 5-6. checkpointing


def _x10(doc: dict) -> None:
    """GiB/s x 10, durations / 10: the bytes (GiB/s x s) still the model's checkpoint."""
    m = doc["metric"]
    for k in list(m):
        if "GB_per_second" in k:
            m[k] *= 10
        elif "duration" in k:
            m[k] /= 10


def test_checkpoint_bandwidth_x10_duration_over_10(v3, capsys):
    """10 checkpoints of 2.26 s and 9 pauses of 5 s are 67.6 s of the write's 278.5-s timed section."""
    edit(v3 / CKPT / WRITE / "summary.json", _x10)
    code, doc = check(v3 / "tree", capsys)
    assert code == 1 and doc["verdict"] == "invalid"
    f, = found(doc, "4.3.6-checkpointDurationsFitRun")
    assert f["severity"] == "error" and f["actual"].startswith("10 x 2.261 s (save)") and WRITE in f["path"]
    assert "timed section of 278.5 s" in f["expected"]


def test_checkpoint_bandwidth_x10_alone(v3, capsys):
    edit(v3 / CKPT / WRITE / "summary.json", lambda d: d["metric"].update(
        save_checkpoint_io_mean_GB_per_second=10 * d["metric"]["save_checkpoint_io_mean_GB_per_second"]))
    code, doc = check(v3 / "tree", capsys)
    assert code == 1
    f, = found(doc, "4.3.6-checkpointBandwidthMatchesSize")
    assert f["actual"] == "46.4397" and f["expected"].startswith("4.6313 GiB/s (the model's 104.70 GiB")


def test_checkpoint_records_x10_with_their_times(v3, capsys):
    """Rank 0's records forged with the summary (each checkpoint's end = start + duration / 10, GiB/s x 10):
    4.3.6's re-derivation agrees with the summary; the section is nine-tenths idle."""
    leaf = v3 / CKPT_RECORDS / WRITE
    edit(leaf / "summary.json", _x10)

    def records(doc):
        for k, c in doc["1"].items():
            if k.startswith("save_ckpt"):
                c["duration"] /= 10
                c["throughput"] *= 10
                c["end"] = (datetime.fromisoformat(c["start"]) + timedelta(seconds=c["duration"])).isoformat()
    edit(leaf / "0_per_epoch_stats.json", records)
    code, doc = check(v3 / "checkpointing_alluxio", capsys)
    assert code == 1 and doc["verdict"] == "invalid"
    assert "4.3.6-checkpointSummaryRederived" not in rule_ids(doc)
    f, = found(doc, "4.3.6-checkpointDurationsFitRun")
    assert f["actual"].startswith("10 x 2.261 s (save)")


def test_checkpoint_records_outside_the_timed_section(v3, capsys):
    leaf = v3 / CKPT_RECORDS / WRITE
    edit(leaf / "0_per_epoch_stats.json", lambda d: d["1"]["save_ckpt1"].update(
        start="2026-07-08T06:30:00.000000", end="2026-07-08T06:30:24.933577"))
    code, doc = check(v3 / "checkpointing_alluxio", capsys)
    assert code == 1
    f = [f for f in found(doc, "4.3.6-checkpointDurationsFitRun") if f["field"] == "1.save_ckpt1.start, end"]
    assert f and f[0]["path"].endswith("0_per_epoch_stats.json")


def test_checkpoint_host_memory_lowered_to_skip_the_cache_clear(v3, capsys):
    """host_memory_GB cut to 30 GiB: 104.7 GiB is then 3.5x the memory and one combined invocation would need
    no cache clear (4.3.1), while the same summary's meminfo and the metadata record 747.9 GiB."""
    for ts in (WRITE, READ):
        edit(v3 / CKPT / ts / "summary.json", lambda d: d.update(host_memory_GB=[30.0]))
    code, doc = check(v3 / "tree", capsys)
    assert code == 1 and doc["verdict"] == "invalid"
    got = {(Path(f["path"]).name, f["field"]) for f in found(doc, "EVID-02-checkpointHostMemoryConsistent")}
    assert ("summary.json", "host_meminfo.MemTotal") in got
    assert (f"checkpointing_{WRITE}_metadata.json", "system_info.total_memory_bytes") in got


def test_checkpoint_page_cache_larger_than_the_memory(v3, capsys):
    edit(v3 / CKPT / READ / "summary.json", lambda d: d["host_meminfo"].update(Cached="900000000 kB"))
    code, doc = check(v3 / "tree", capsys)
    assert code == 1
    f, = found(doc, "EVID-02-checkpointHostMemoryConsistent")
    assert f["field"] == "host_meminfo.Cached"


OURS_CKPT = DATA.parent / "checkpoint" / "v3-llama3-8b-miniature" / "R"


@pytest.mark.parametrize("plant, field", [
    (lambda d: d["handoff"]["cache_clear"].update(resident_bytes_after=d["handoff"]["cache_clear"]["resident_bytes_before"]),
     "handoff.cache_clear.resident_bytes_after"),
    (lambda d: d["enforcement"]["cache_drop"].update(attempted=False), "enforcement.cache_drop.succeeded"),
    (lambda d: d["handoff"]["cache_clear"].update(error="EPERM: /proc/sys/vm/drop_caches"), "handoff.cache_clear.succeeded"),
])
def test_our_checkpoint_cache_clear_contradicting_itself(tmp_path, capsys, plant, field):
    """Our read leaf (tests/data/checkpoint): its clear says succeeded while its own records say otherwise."""
    root = tmp_path / "R"
    shutil.copytree(OURS_CKPT, root)
    read = next(p for p in root.rglob("run-1/results.json") if json.loads(p.read_text())["phase"] == "read")
    edit(read, plant)
    code, doc = check(root, capsys)
    assert code == 1
    hits = [f for b in doc["benchmarks"] for f in b["findings"] if f["rule_id"] == "checkpoint-cache-clear-consistent"]
    assert hits and hits[0]["field"] == field and hits[0]["severity"] == "error" and hits[0]["effect"] == "invalid"
