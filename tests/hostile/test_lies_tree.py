"""Results that lie (issue 36, round two): published v3.0 trees and submissions. Each case plants one
lie into a copy of the real published tree (tests/data/v3/tree) and asserts the finding that catches
it (rule id, expected, actual) and the verdict / exit code of `suite check`. A fact the checker cannot
compute is a finding, never a skipped rule; figures are re-derived from the evidence."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime as _dt, timedelta as _td
from pathlib import Path

import pytest

from suite import cli
from suite.layouts import manifest
from suite.training.check import checker as training_checker
from tests.ours3_builders import leaves as ours3_leaves, series as ours3_series
from tests.published.test_published_check import (C, CKPT_META, DATA, READ, RUNS, T, WRITE, _set, edit_json,
                                                  result, run_summary)


@pytest.fixture
def tree(tmp_path) -> Path:
    dst = tmp_path / "tree"
    shutil.copytree(DATA, dst)
    return dst


def hits(res, rule_id: str) -> list:
    return [f for f in res.findings if f.rule_id == rule_id]


def caught(t: Path, rule_id: str, capsys=None) -> list:
    """The findings of `rule_id`; the tree no longer compliant and `suite check` exits 1."""
    res = result(t)
    found = hits(res, rule_id)
    assert found, sorted({f.rule_id for f in res.findings})
    assert not res.compliant and res.verdict != "closed"
    assert cli.main(["check", str(t)]) == 1
    if capsys is not None:
        capsys.readouterr()
    return found


def test_the_real_tree_stays_compliant(tree):
    res = result(tree)
    assert res.compliant and res.verdict == "closed"
    assert cli.main(["check", str(tree)]) == 0


# --------------------------------------------------------------------------- AU re-derived


def test_per_epoch_au_at_50_with_the_mean_kept_at_92_6(tree, capsys):
    _set(run_summary(tree, 3), "metric.train_au_percentage", [50.0] * 5)
    f = caught(tree, "3.3.2-trainingAuRederived", capsys)[0]
    assert f.field == "metric.train_au_mean_percentage" and f.actual == "92.777"      # run 3's recorded mean
    assert f.expected.startswith("50.000")
    assert hits(result(tree), "3.3.2-trainingAcceleratorUtilizationCheck")     # 50% < 90%: the AU rule fires


@pytest.mark.parametrize("value", [None, "92.6"])
def test_au_mean_removed_or_a_string_is_a_finding_not_a_skip(tree, capsys, value):
    def plant(d):
        if value is None:
            del d["metric"]["train_au_mean_percentage"]
        else:
            d["metric"]["train_au_mean_percentage"] = value
    edit_json(run_summary(tree, 2), plant)
    f = caught(tree, "3.3.2-trainingAuRederived", capsys)[0]
    assert f.field == "metric.train_au_mean_percentage" and f.actual == ("absent" if value is None else "'92.6'")


def test_per_epoch_au_removed_is_a_finding(tree, capsys):
    edit_json(run_summary(tree, 4), lambda d: d["metric"].pop("train_au_percentage"))
    f = caught(tree, "3.3.2-trainingAuRederived", capsys)[0]
    assert f.field == "metric.train_au_percentage" and f.actual == "absent"


def test_the_published_au_figure_is_the_per_epoch_mean(tree):
    for i in range(1, 6):
        _set(run_summary(tree, i), "metric.train_au_mean_percentage", 99.0)
    row = next(r for r in result(tree).rows if r["benchmark"] == "training")
    assert 92.0 < row["au_pct"] < 93.0


# --------------------------------------------------------------------------- dataset size, closed values


def test_one_thousand_files(tree, capsys):
    for i in range(6):
        _set(run_summary(tree, i), "num_files_train", 1000)
    found = caught(tree, "3.1.2-trainingDatasetSize", capsys)
    assert len(found) == 6
    # 5 x (8 hosts' host_memory_GB, 1478.87 GiB) x 2^30 // 146,600,628 B per file = 54,158 files (the
    # memory rule dictates: 500 steps x 8 accelerators x batch 7 = 28,000)
    assert found[0].actual == "1000" and found[0].expected.startswith(">= 54158 ")


def test_dataset_size_without_a_dlio_config_is_a_finding(tree, capsys):
    for leaf in (T(tree) / "run").iterdir():
        for p in leaf.glob("*_metadata.json"):
            p.unlink()
    found = caught(tree, "3.1.2-trainingDatasetSize", capsys)
    assert "no dlio_config" in found[0].actual


@pytest.mark.parametrize("key, value, expected", [
    ("train.computation_time", 1.62, "0.162"),
    ("reader.batch_size", 1, "7"),
    ("dataset.record_length_bytes", 1024, "146600628"),
])
def test_closed_dlio_config_values_changed(tree, capsys, key, value, expected):
    _set(T(tree) / "run" / RUNS[0] / f"training_{RUNS[0]}_metadata.json", f"parameters.{key}", value)
    f = caught(tree, "3.6.2-trainingClosedParameterValues", capsys)[0]
    assert f.field == f"parameters.{key}" and f.actual == repr(value) and f.expected.startswith(expected)


# --------------------------------------------------------------------------- runs that are not what they say


def test_overlapping_runs(tree, capsys):
    a, b = (json.loads(run_summary(tree, i).read_text()) for i in (2, 3))
    shift = _dt.fromisoformat(a["end"]) - _dt.fromisoformat(b["start"]) - _td(seconds=60)
    for j in range(3, 6):
        def move(d):
            for k in ("start", "end"):
                d[k] = (_dt.fromisoformat(d[k]) + shift).isoformat()
        edit_json(run_summary(tree, j), move)
    f = caught(tree, "2.1.18-runsOverlap", capsys)[0]
    assert f.field == "start" and RUNS[3] in f.path


def test_a_run_from_another_system(tree, capsys):
    _set(run_summary(tree, 4), "hostname", "ip-10-9-9-9")
    f = caught(tree, "2.1.17-trainingRunsOneHost", capsys)[0]
    assert f.actual == "ip-10-9-9-9" and f.expected.startswith("ip-172-31-15-209")


def test_a_duplicated_run(tree, capsys):
    _set(run_summary(tree, 5), "metric", json.loads(run_summary(tree, 1).read_text())["metric"])
    f = caught(tree, "2.1.17-trainingRunsDistinct", capsys)[0]
    assert RUNS[5] in f.path and RUNS[1] in f.actual


def test_fs_separation_paths_contradicting_the_metadata(tree, capsys):
    _set(T(tree) / "run" / RUNS[0] / "fs_separation.json", "data_or_chkpt_path", "/mnt/nvme-local")
    f = caught(tree, "3.4.1-fsSeparationPathsAgree", capsys)[0]
    assert f.actual == "/mnt/alluxio/mlperf/unet3d" and f.expected.startswith("a path under /mnt/nvme-local")


def test_forged_checkpoint_bookends_hiding_a_300_s_gap(tree, capsys):
    """The read moved 300 s after the write; bookends forged to read a 5 s gap between invocations."""
    end = _dt.fromisoformat(json.loads((C(tree) / WRITE / "summary.json").read_text())["end"])
    def move(d):
        start = _dt.fromisoformat(d["start"])
        d["end"] = (end + _td(seconds=300) + (_dt.fromisoformat(d["end"]) - start)).isoformat()
        d["start"] = (end + _td(seconds=300)).isoformat()
    edit_json(C(tree) / READ / "summary.json", move)
    edit_json(C(tree) / WRITE / CKPT_META[WRITE], lambda d: d.update(
        invocation_start_time="2026-07-08T06:46:00", invocation_end_time=(end + _td(seconds=1)).isoformat()))
    edit_json(C(tree) / READ / CKPT_META[READ], lambda d: d.update(
        invocation_start_time=(end + _td(seconds=6)).isoformat(), invocation_end_time="2026-07-08T07:10:00"))
    assert not hits(result(tree), "4.7.1-checkpointCacheFlushValidation")      # the forged gap alone passes
    f = caught(tree, "4.7.1-checkpointBookendsHoldRun", capsys)[0]
    assert f.path.endswith(CKPT_META[READ]) and "an invocation holding" in f.expected


# --------------------------------------------------------------------------- listings, integrity


def test_junk_past_the_listing_cut_cannot_hide_same_filesystem(tree, capsys):
    leaf = T(tree) / "run" / RUNS[2]
    _set(leaf / "fs_separation.json", "same_filesystem", True)
    for i in range(25_000):                      # empty files, made as cheaply as a file is made
        os.close(os.open(f"{leaf}/aaa_{i:05d}", os.O_CREAT | os.O_WRONLY, 0o644))
    f = caught(tree, "TREE-03-listingComplete", capsys)[0]
    assert f.field == "(entries)" and f.expected == "at most 20000"


def test_an_edit_after_packaging_is_caught_by_sha256sums(tree, capsys):
    (tree / manifest.MANIFEST).write_text(manifest.text(tree))
    assert result(tree).compliant
    _set(run_summary(tree, 3), "metric.train_io_mean_MB_per_second", 99999.0)
    f = caught(tree, manifest.RULE_CHANGED, capsys)[0]
    assert f.path.endswith(f"{RUNS[3]}/summary.json") and f.field == "sha256"


# --------------------------------------------------------------------------- mixed trees: the worst of all parts

KV = Path(__file__).resolve().parents[1] / "data" / "v3" / "kv_cache_FarmGPU"
KV_LEAF = KV / "open/FarmGPU/results/potato8-qlc-np6-open-tnf-70b/kv_cache/llama3.1-70b-instruct/run/20260709_215001"
OURS = Path(__file__).resolve().parents[1] / "data" / "suite-run" / "unet3d-h100"     # our miniature: INVALID


def test_our_invalid_run_beside_a_published_tree(tree, capsys):
    shutil.copytree(OURS, tree / "ours")
    assert cli.main(["check", str(tree), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "invalid" and doc["compliant"] is False
    parts = {(r["kind"], r["path"]): r["verdict"] for r in doc["results"]}
    assert parts == {("mlperf-v3-tree", "."): "closed", ("training", "ours"): "invalid"}


def test_every_kv_cache_leaf_of_a_tree_is_checked(tmp_path):
    t = tmp_path / "kv"
    shutil.copytree(KV, t)
    second = KV_LEAF.parent / "20260709_235001"
    shutil.copytree(KV_LEAF, t / second.relative_to(KV))
    from suite.published import check as v3check
    from suite.kinds import tree as kinds_tree
    import argparse
    res = v3check.check(t, kinds_tree.handover(None, argparse.Namespace(format="text", ruleset="auto")))
    assert sorted(Path(d["path"]).name for d in res.delegated) == ["20260709_215001", "20260709_235001"]
    assert {d["kind"] for d in res.delegated} == {"kv_cache"}


def test_an_invalid_result_under_an_unknown_folder_is_checked_not_noted(tree, capsys):
    sysdir = T(tree).parent.parent
    shutil.copytree(KV_LEAF, sysdir / "mystery" / "run" / KV_LEAF.name)
    assert cli.main(["check", str(tree), "--format", "json"]) == 1
    text = capsys.readouterr().out
    doc = json.loads(text)
    assert doc["verdict"] == "invalid" and doc["compliant"] is False
    assert "TREE-01-unrecognisedBenchmark" not in text and "mystery/run/20260709_215001" in text


# --------------------------------------------------------------------------- submissions: what enters, what is packaged

TRAIN = DATA / "closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"


@pytest.fixture
def sub(tmp_path) -> Path:
    from tests.submission.submission_helpers import fill_v3
    root = tmp_path / "sub"
    assert cli.main(["submission", "init", str(root), "--org", "ACME", "--division", "closed", "--system", "box1",
                     "--ruleset", "v3.0", "--data-dir", str(tmp_path)]) == 0
    fill_v3(root)
    (root / "closed/ACME/systems/box1.pdf").write_bytes(b"%PDF-1.4\n")
    return root


def _our_series(tmp_path: Path, plant=None) -> Path:
    src = tmp_path / "ours"
    shutil.copytree(OURS, src)
    (src / "run_set.json").write_text("{}")
    for run in src.glob("run-*"):
        edit_json(run / "results.json", lambda d: d.update(ruleset="v3.0", accelerator="b200"))
    if plant:
        plant(src)
    return src


def test_add_refuses_our_miniature_into_a_closed_submission(sub, tmp_path, capsys):
    src = _our_series(tmp_path)
    assert cli.main(["submission", "add", str(sub), str(src), "--system", "box1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "miniature: expected false" in err and "got True" in err
    assert not (sub / "closed/ACME/results/box1/training").exists()           # nothing entered


def test_add_refuses_a_series_whose_first_run_was_oom_killed(sub, tmp_path, capsys):
    def oom(src):
        edit_json(src / "run-1/results.json", lambda d: d.update(
            miniature=False, compliance={"compliant": True, "reasons": []}, status="failed", complete=False,
            error="rank 0 killed by signal 9 (OOM)"))
        edit_json(src / "run-2/results.json", lambda d: d.update(
            miniature=False, compliance={"compliant": True, "reasons": []}))
    assert cli.main(["submission", "add", str(sub), str(_our_series(tmp_path, oom)), "--system", "box1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "run-1/results.json: status: expected a complete run" in err and "OOM" in err
    assert not (sub / "closed/ACME/results/box1/training").exists()


def test_add_refuses_a_run_that_left_no_record(sub, tmp_path, capsys):
    src = _our_series(tmp_path, lambda s: (s / "run-3").mkdir())
    assert cli.main(["submission", "add", str(sub), str(src), "--system", "box1"]) == 2
    assert "run-3: results.json: expected the run's record" in capsys.readouterr().err


def test_a_miniature_in_the_published_layout_is_never_packaged_closed(sub, tmp_path, capsys):
    """Leaves in the published layout stripped of our evidence: the checker re-derives the dataset size."""
    mini = tmp_path / "unet3d"
    shutil.copytree(TRAIN, mini)
    for s in (mini / "run").glob("*/summary.json"):
        _set(s, "num_files_train", 2077)
    assert cli.main(["submission", "add", str(sub), str(mini), "--system", "box1"]) == 0
    capsys.readouterr()
    assert cli.main(["submission", "package", str(sub), "--out", str(tmp_path / "x.tar.gz")]) == 1
    assert "3.1.2-trainingDatasetSize" in capsys.readouterr().out
    assert not (tmp_path / "x.tar.gz").exists() and not (sub / manifest.MANIFEST).exists()


def test_add_keeps_a_published_leafs_own_code_image(sub, tmp_path):
    assert cli.main(["submission", "add", str(sub), str(TRAIN), "--system", "box1"]) == 0
    leaf = sub / "closed/ACME/results/box1/training/unet3d/run" / RUNS[0]
    assert (leaf / ".mlps-code-image").read_text().strip() == "md5-tree-v2:c5cbafacef71748d5b2ce96f00015437"
    assert not hits(result(sub), "CHECK-01-poolPointerResolution")


def test_add_refuses_our_miniature_leaves_filed_in_the_published_layout(sub, tmp_path, capsys):
    mini = tmp_path / "unet3d"
    for i, run in enumerate(sorted(OURS.glob("run-*"))):
        shutil.copytree(run, mini / "run" / f"20251121_04{i}000")
    assert cli.main(["submission", "add", str(sub), str(mini), "--system", "box1"]) == 2
    assert "results.json: miniature: expected false" in capsys.readouterr().err
    assert not (sub / "closed/ACME/results/box1/training").exists()


# --------------------------------------------------------------------------- our own v3.0 evidence (class 5)

def _ours3(tmp_path: Path) -> Path:
    return ours3_series(tmp_path / "ours3")


def _ours3_caught(root: Path, rule_id: str, capsys) -> list:
    res = training_checker.check(root)
    found = [f for f in res.all_findings() if f.rule_id == rule_id]
    assert found, sorted({f.rule_id for f in res.all_findings()})
    assert cli.main(["check", str(root)]) == 1
    capsys.readouterr()
    return found


def test_our_series_as_made_has_none_of_these_findings(tmp_path):
    ids = {f.rule_id for f in training_checker.check(_ours3(tmp_path)).all_findings()}
    assert not ids & {"2.1.17-trainingWarmupFirst", "2.1.18-runTimestampGap", "3.4.2-fsSeparationDevicesAgree",
                      "2.1.6-codeImageMatchesProvenance", "2.1.17-trainingRunsOneHost"}, ids


def test_the_warmup_flag_moved_to_run_4(tmp_path, capsys):
    root = _ours3(tmp_path)
    runs = ours3_leaves(root)
    edit_json(runs[0] / "results.json", lambda d: d.update(warmup=False))
    edit_json(runs[3] / "results.json", lambda d: d.update(warmup=True))
    f = _ours3_caught(root, "2.1.17-trainingWarmupFirst", capsys)[0]
    assert f.actual == runs[3].name and runs[0].name in f.expected


def test_the_warmup_leaf_renamed_to_sort_last(tmp_path, capsys):
    root = _ours3(tmp_path)
    runs = ours3_leaves(root)
    runs[0].rename(runs[0].parent / "20991231_235959")
    found = _ours3_caught(root, "2.1.17-trainingWarmupFirst", capsys)
    assert any(f.actual == "20991231_235959" for f in found)
    assert any(f.field == "start" and "leaves sort as their runs ran" in f.expected for f in found)


def test_a_600_s_gap_between_runs(tmp_path, capsys):
    root = _ours3(tmp_path)
    for leaf in ours3_leaves(root)[3:]:
        edit_json(leaf / "summary.json", lambda d: d.update(
            {k: (_dt.fromisoformat(d[k]) + _td(seconds=600)).isoformat() for k in ("start", "end")}))
    f = _ours3_caught(root, "2.1.18-runTimestampGap", capsys)[0]      # the reference leaves' rule, ours judged alike
    assert float(f.actual) > 599 and f.field == "end (to the next run's start)"


def test_one_file_system_forged_apart(tmp_path, capsys):
    root = _ours3(tmp_path)
    leaf = ours3_leaves(root)[2]
    edit_json(leaf / "fs_separation.json", lambda d: d.update(separate=True, same_filesystem=False))
    f = _ours3_caught(root, "3.4.2-fsSeparationDevicesAgree", capsys)[0]
    assert f.actual == "separate True, same_filesystem False" and f.expected.startswith("False (device ")


def test_the_code_pointer_changed(tmp_path, capsys):
    root = _ours3(tmp_path)
    leaf = ours3_leaves(root)[2]
    (leaf / ".mlps-code-image").write_text("md5-tree-v2:" + "0" * 32)
    found = _ours3_caught(root, "2.1.6-codeImageMatchesProvenance", capsys)
    assert found[0].actual == "md5-tree-v2:" + "0" * 32 and "(provenance.json)" in found[0].expected
    assert any(f.expected == "one image for every run" for f in found)


def test_a_run_from_another_host(tmp_path, capsys):
    root = _ours3(tmp_path)
    leaf = ours3_leaves(root)[4]
    edit_json(leaf / "results.json", lambda d: d["host"].update(hostname="elsewhere"))
    f = _ours3_caught(root, "2.1.17-trainingRunsOneHost", capsys)[0]
    assert f.actual.startswith("results.json 'elsewhere'") and leaf.name in f.path
