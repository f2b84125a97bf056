"""`suite report TREE --out D` on a published v3.0 tree writes results.csv and results.json with the
columns of mlpstorage's `reports reportgen` (mlcommons/storage #826/#829: the v3.0 results tables),
in its order, plus our Verdict and Findings at the end; the values are the ones the leaves publish
(their summary.json figures, unrounded as reportgen writes them). The tree is assembled from the real
published leaves in tests/data/v3: training and checkpointing (Alluxio), kv_cache (FarmGPU, open) and
vector_database (TTA)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from statistics import fmean

import pytest

from suite import cli

V3 = Path(__file__).resolve().parents[1] / "data" / "v3"
TSYS = "aws_c5n18xlarge_i3en24xlarge_8c_10s_8a"
CSYS = "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h"
KV = "open/FarmGPU/results/potato8-qlc-np6-open-tnf-70b/kv_cache/llama3.1-70b-instruct/run/20260709_215001"
VDB = "closed/TTA/results/seahorse-storage/vector_database/milvus/DISKANN/run/20260724_090536"

SUT = ["Public ID", "Organization", "Division", "Benchmark Type", "Model", "Name", "Description", "Type",
       "Access Protocol", "Availability", "RU's", "Integrated Client Storage (TiB)", "Usable Capacity (TiB)",
       "Provisioned Power (W)"]
TRAINING = ["Training - Accelerator Type", "Training - # Client Nodes", "Training - Code", "Training - Logs",
            "Training - # Simulated Accelerators", "Training - Read B/W (GiB/s)"]
CHECKPOINTING = ["Checkpointing - Checkpoint Mode", "Checkpointing - # Client Nodes", "Checkpointing - DP Instances",
                 "Checkpointing - Code", "Checkpointing - Logs", "Checkpointing - Write B/W (GiB/s)",
                 "Checkpointing - Write Duration (secs)", "Checkpointing - Read B/W (GiB/s)",
                 "Checkpointing - Read Duration (secs)"]
VDB_COLS = ["VDB - # Client Nodes", "VDB - Code", "VDB - Logs", "VDB - Vector Count", "VDB - Vector Dimension",
            "VDB - Index Type", "VDB - Queries per Sec", "VDB - Query Latency (ms)", "VDB - Recall Percentage",
            "VDB - Storage IOPs", "VDB - Read B/W (GiB/s)"]
KV_COLS = ["KVCache - # Client Nodes", "KVCache - Code", "KVCache - Logs"] + [
    f"KVCache {g} - {m}" for g in ("llama3.1-8b Storage Only", "llama3.1-8b Storage + Mem", "llama3.1-70b Storage Only")
    for m in ("Throughput (tok/s)", "Read B/W (GiB/s)", "Write B/W (GiB/s)", "P95 Read Latency (ms)")]
REPORTGEN = SUT + TRAINING + CHECKPOINTING + VDB_COLS + KV_COLS


def assemble(tmp_path: Path) -> Path:
    t = tmp_path / "tree"
    shutil.copytree(V3 / "tree", t)
    shutil.copytree(V3 / "kv_cache_FarmGPU" / "open", t / "open")
    shutil.copytree(V3 / "vector_database_TTA" / "closed" / "TTA", t / "closed" / "TTA")
    return t


def report(tree: Path, out: Path, capsys) -> tuple[list[dict], list[str], list[dict]]:
    assert cli.main(["report", str(tree), "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert said.err == "" and "results.csv" in said.out
    with open(out / "results.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        header = reader.fieldnames
    return rows, header, json.loads((out / "results.json").read_text())


@pytest.fixture
def written(tmp_path, capsys):
    return report(assemble(tmp_path), tmp_path / "out", capsys)


def one(rows, benchmark) -> dict:
    [r] = [r for r in rows if r["Benchmark Type"] == benchmark]
    return r


def summary(p: Path) -> dict:
    return json.loads((p / "summary.json").read_text())


def test_the_columns_are_reportgens_in_order_then_ours(written):
    rows, header, doc = written
    assert header == REPORTGEN + ["Verdict", "Findings", "Figures"]
    assert all(list(r) == header for r in doc)
    assert [r["Benchmark Type"] for r in rows] == ["training", "checkpointing", "vector_database", "kv_cache"]
    assert [r["Public ID"] for r in rows] == ["v3.0-0001", "v3.0-0002", "v3.0-0003", "v3.0-0004"]
    # a row fills its own block only
    t = one(rows, "training")
    assert all(t[c] == "" for c in CHECKPOINTING + VDB_COLS + KV_COLS)


def test_training_row_equals_the_published_runs(written):
    rows, _, doc = written
    t = one(rows, "training")
    run = V3 / "tree/closed/Alluxio/results" / TSYS / "training/unet3d/run"
    measured = sorted(run.iterdir())[1:]                      # the lexically earliest run is the warm-up
    assert len(measured) == 5
    mib = [summary(d)["metric"]["train_io_mean_MB_per_second"] for d in measured]
    assert float(t["Training - Read B/W (GiB/s)"]) == pytest.approx(fmean(mib) / 1024, rel=1e-15)
    first = summary(measured[0])
    assert int(t["Training - # Client Nodes"]) == first["num_hosts"]
    assert int(t["Training - # Simulated Accelerators"]) == first["num_accelerators"]
    assert t["Training - Accelerator Type"] == "b200"
    assert (t["Organization"], t["Division"], t["Model"]) == ("Alluxio", "CLOSED", "Unet3D")
    assert (t["Type"], t["Access Protocol"], t["Availability"], t["Usable Capacity (TiB)"]) == \
        ("Shared remote file", "POSIX", "Available", "500.0")
    assert t["Provisioned Power (W)"] == ""                   # a cloud deployment: blank, as reportgen leaves it
    href = f"closed/Alluxio/systems/{TSYS}"
    assert t["Name"] == f'<a href="{href}.yaml">{TSYS}</a>' and t["Description"] == f'<a href="{href}.pdf">PDF</a>'
    code = (run / "20260704_050040" / ".mlps-code-image").read_text().strip().split(":")[1]
    assert t["Training - Code"] == f'<a href="Alluxio/code-{code[:8]}/">code</a>'
    assert (t["Verdict"], t["Findings"]) == ("closed", "3")
    j = doc[0]
    assert j["Training - Read B/W (GiB/s)"] == float(t["Training - Read B/W (GiB/s)"])
    assert j["Name"] == {"text": TSYS, "href": f"{href}.yaml"}
    assert j["Training - # Client Nodes"] == 8 and j["RU's"] == ""


def test_checkpointing_row_equals_the_write_and_read_leaves(written):
    rows, _, _ = written
    c = one(rows, "checkpointing")
    top = V3 / "tree/closed/Alluxio/results" / CSYS / "checkpointing/llama3-8b"
    w, r = (summary(top / ts)["metric"] for ts in ("20260708_064613", "20260708_065100"))
    assert float(c["Checkpointing - Write B/W (GiB/s)"]) == w["save_checkpoint_io_mean_GB_per_second"]
    assert float(c["Checkpointing - Write Duration (secs)"]) == w["save_checkpoint_duration_mean_seconds"]
    assert float(c["Checkpointing - Read B/W (GiB/s)"]) == r["load_checkpoint_io_mean_GB_per_second"]
    assert float(c["Checkpointing - Read Duration (secs)"]) == r["load_checkpoint_duration_mean_seconds"]
    assert (c["Model"], c["Checkpointing - Checkpoint Mode"], c["Checkpointing - DP Instances"]) == ("8B", "Full", "1")
    assert c["Checkpointing - # Client Nodes"] == "1" and c["Verdict"] == "closed"


def test_kv_cache_row_equals_its_summary(written, tmp_path):
    rows, _, doc = written
    k = one(rows, "kv_cache")
    s = summary(V3 / "kv_cache_FarmGPU" / KV)
    assert (k["Division"], k["Organization"], k["Model"], k["KVCache - # Client Nodes"]) == ("OPEN", "FarmGPU", "", "8")
    for opt, group in (("1", "llama3.1-8b Storage Only"), ("2", "llama3.1-8b Storage + Mem"),
                       ("3", "llama3.1-70b Storage Only")):
        o = s["options"][opt]
        assert float(k[f"KVCache {group} - Throughput (tok/s)"]) == o["aggregated_avg_throughput_tokens_per_sec"]
        assert float(k[f"KVCache {group} - Read B/W (GiB/s)"]) == o["aggregated_read_bandwidth_gbps"]
        assert float(k[f"KVCache {group} - Write B/W (GiB/s)"]) == o["aggregated_write_bandwidth_gbps"]
        # the summary predates aggregated_storage_read_p95_ms and the trimmed rank files carry no
        # storage_read_p95_ms: blank, never the per-request P95 (reportgen's R5)
        assert k[f"KVCache {group} - P95 Read Latency (ms)"] == ""
    assert k["Verdict"] == "invalid" and int(k["Findings"]) > 0
    assert doc[3]["KVCache - # Client Nodes"] == 8


def test_vector_database_row_equals_its_summary_and_native_stats(written):
    rows, _, _ = written
    v = one(rows, "vector_database")
    leaf = V3 / "vector_database_TTA" / VDB
    s = summary(leaf)
    native = json.loads((leaf / "vectordb/simple/vdb_multi_node_summary.json").read_text())["disk_io"]
    assert float(v["VDB - Queries per Sec"]) == s["throughput_qps"]
    assert float(v["VDB - Query Latency (ms)"]) == s["p99_latency_ms"]
    assert float(v["VDB - Recall Percentage"]) == s["recall"] * 100
    assert (int(v["VDB - Vector Count"]), int(v["VDB - Vector Dimension"]), v["VDB - Index Type"]) == \
        (s["num_vectors"], s["dimension"], "DISKANN")
    assert int(v["VDB - # Client Nodes"]) == native["host_count"] == 4
    assert float(v["VDB - Read B/W (GiB/s)"]) == native["total_bytes_read_per_sec"] / 2 ** 30
    assert v["VDB - Storage IOPs"] == "" and v["Model"] == ""
    code = (leaf / ".mlps-code-image").read_text().strip().split(":")[1]
    assert v["VDB - Code"] == f'<a href="TTA/code-{code[:8]}/">code</a>'


def test_hostile_names_are_escaped(tmp_path, capsys):
    tree = assemble(tmp_path)
    org = '=cmd|" -C calc"!A0,x'
    (tree / "closed" / "Alluxio").rename(tree / "closed" / org)
    rows, header, doc = report(tree, tmp_path / "out", capsys)
    assert header == REPORTGEN + ["Verdict", "Findings", "Figures"]
    alluxio = [r for r in rows if r["Benchmark Type"] in ("training", "checkpointing")]
    assert len(alluxio) == 2 and all(len(r) == len(header) for r in rows)
    assert {r["Organization"] for r in alluxio} == {"'" + org}          # no formula reaches a spreadsheet
    assert all(r["Name"].startswith('<a href="closed/=cmd|&quot; -C calc&quot;!A0,x/systems/') for r in alluxio)
    assert {d["Organization"] for d in doc if d["Benchmark Type"] == "training"} == {org}   # JSON keeps it as is
