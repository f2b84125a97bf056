"""`suite check` / `metrics` / `report` on a published v3.0 tree (tests/data/v3/tree: real leaves of
mlcommons/storage_results_v3.0): the figures recomputed by hand, the near-misses of the real data left
alone. Each rule of rules/v3.0/tree/ planted one at a time: tests/published/test_rules_v3.py."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from suite import cli
from suite.published import check as v3check

DATA = Path(__file__).resolve().parents[1] / "data" / "v3" / "tree"
TSYS = "aws_c5n18xlarge_i3en24xlarge_8c_10s_8a"
CSYS = "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h"
RUNS = ["20260704_050040", "20260704_052047", "20260704_054120", "20260704_060141", "20260704_062150",
        "20260704_064222"]
WRITE, READ = "20260708_064613", "20260708_065100"


def _div(t: Path) -> str:
    return "open" if (t / "open/Alluxio").is_dir() else "closed"


def T(t: Path) -> Path:
    return t / _div(t) / "Alluxio/results" / TSYS / "training/unet3d"


def C(t: Path) -> Path:
    return t / _div(t) / "Alluxio/results" / CSYS / "checkpointing/llama3-8b"


def S(t: Path) -> Path:
    return t / _div(t) / "Alluxio/systems"


def edit_json(p: Path, fn) -> None:
    doc = json.loads(p.read_text())
    fn(doc)
    p.write_text(json.dumps(doc))


def run_summary(t, i) -> Path:
    return T(t) / "run" / RUNS[i] / "summary.json"


def shift(doc: dict, seconds: float, keys=("start", "end")) -> None:
    for k in keys:
        doc[k] = (datetime.fromisoformat(doc[k]) + timedelta(seconds=seconds)).isoformat()


@pytest.fixture
def tree(tmp_path) -> Path:
    dst = tmp_path / "tree"
    shutil.copytree(DATA, dst)
    return dst


def result(t: Path):
    return v3check.check(t)


def ids(res) -> set:
    return {f.rule_id for f in res.findings}


# --------------------------------------------------------------------------- the real tree


def test_clean_tree_checks_compliant_with_the_staffs_advisory_findings():
    res = result(DATA)
    assert res.compliant and res.verdict == "closed"
    assert res.counts() == {"error": 0, "warning": 1, "info": 3}
    assert ids(res) == {"4.3.1-checkpointDataSizeRatio", "2.1.19-prunedPlaceholder"}
    sev = {f.rule_id: f.severity for f in res.findings}
    assert sev == {"4.3.1-checkpointDataSizeRatio": "warning", "2.1.19-prunedPlaceholder": "info"}


def test_training_figures_recomputed_by_hand_from_the_summaries():
    # train_io_mean_MB_per_second of the five measured runs (the warm-up 20260704_050040 left out)
    io = [44703.8281756063, 44745.04781130569, 44803.34259342569, 44729.63821067894, 44679.16580465829]
    au = [92.57183134394707, 92.6575812128684, 92.77746605877164, 92.62434158654806, 92.52086959676566]
    sps = [319.7487075776002, 320.0435352417977, 320.4604946388356, 319.933316495758, 319.57230744458593]
    row = next(r for r in result(DATA).rows if r["benchmark"] == "training")
    assert row["read_gib_s"] == pytest.approx(sum(io) / 5 / 1024, rel=1e-12)
    assert round(row["read_gib_s"], 2) == 43.68
    assert row["au_pct"] == pytest.approx(sum(au) / 5, rel=1e-12)
    assert row["samples_per_s"] == pytest.approx(sum(sps) / 5, rel=1e-12)
    assert (row["runs"], row["runs_found"], row["accelerator"], row["accelerators"]) == (5, 6, "b200", 8)


def test_checkpoint_figures_and_the_system_columns():
    res = result(DATA)
    row = next(r for r in res.rows if r["benchmark"] == "checkpointing")
    assert row["write_gib_s"] == 4.643973844563218 and row["read_gib_s"] == 5.67713748443572
    assert (row["processes"], row["mode"], row["availability"], row["usable_capacity_tib"]) == (8, "full", "available", 25.5)
    assert row["provisioned_power_w"] is None and row["rack_units"] is None          # cloud: blank, as published
    galax = next(s for s in res.systems if s["system"] == "GalaxSphere-1Tier0")
    assert (galax["provisioned_power_w"], galax["rack_units"]) == (1600, 1)          # the published 1.6 kW, 1 RU
    inspur = next(s for s in res.systems if s["org"] == "InspurData")
    assert (inspur["provisioned_power_w"], inspur["rack_units"], inspur["usable_capacity_tib"]) == (8000, 2, 176.1)


def test_cli_check_metrics_report(tmp_path, capsys):
    assert cli.main(["check", str(DATA), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "mlperf-v3-tree" and doc["ruleset"] == "v3.0" and doc["compliant"] is True
    assert {b["benchmark"] for b in doc["benchmarks"]} == {"training", "checkpointing"}
    assert cli.main(["metrics", str(T(DATA) / "run" / RUNS[2])]) == 0
    out = capsys.readouterr().out
    assert "Read B/W 43.68 GiB/s" in out and "AU 92.63%" in out
    assert cli.main(["metrics", str(DATA / "closed/Suzhou_Zishan_Longlin"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["systems"][0]["provisioned_power_w"] == 1600
    assert cli.main(["report", str(DATA), "--out", str(tmp_path / "rep")]) == 0
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "Provisioned Power (W)" in html and "43.68" in html and "4.64" in html
    csv = (tmp_path / "rep" / "benchmarks.csv")
    assert not csv.exists() or "read_gib_s" in csv.read_text()


# --------------------------------------------------------------------------- planted violations


def _set(path: Path, key: str, value):
    def fn(doc):
        d = doc
        parts = key.split(".")
        for k in parts[:-1]:
            d = d[k]
        d[parts[-1]] = value
    edit_json(path, fn)


def set_au(path: Path, pct: float, epochs: int = 5):
    """A run's AU: its per-epoch figures and their mean, consistent (the checker re-derives the mean)."""
    edit_json(path, lambda d: d["metric"].update(train_au_percentage=[pct] * epochs, train_au_mean_percentage=pct))


def _shift_runs_from(t, i, seconds):
    for j in range(i, len(RUNS)):
        edit_json(run_summary(t, j), lambda d: shift(d, seconds))


def _yaml_replace(p: Path, old: str, new: str):
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new))


CKPT_META = {WRITE: f"checkpointing_{WRITE}_metadata.json", READ: f"checkpointing_{READ}_metadata.json"}


def _both_meta(t, fn):
    for ts, name in CKPT_META.items():
        edit_json(C(t) / ts / name, fn)


def _read_start_after_write_end(t, seconds):
    end = json.loads((C(t) / WRITE / "summary.json").read_text())["end"]
    start = datetime.fromisoformat(end) + timedelta(seconds=seconds)
    _set(C(t) / READ / "summary.json", "start", start.isoformat())


# --------------------------------------------------------------------------- near misses stay quiet


def test_long_but_legal_gap_is_not_flagged(tree):
    s2 = json.loads(run_summary(tree, 2).read_text())
    duration = (datetime.fromisoformat(s2["end"]) - datetime.fromisoformat(s2["start"])).total_seconds()
    gap = (datetime.fromisoformat(json.loads(run_summary(tree, 3).read_text())["start"])
           - datetime.fromisoformat(s2["end"])).total_seconds()
    _shift_runs_from(tree, 3, duration - gap - 1)         # one second shorter than the run before it
    assert "2.1.18-runTimestampGap" not in ids(result(tree))
    _shift_runs_from(tree, 3, 2)                          # one second longer
    assert "2.1.18-runTimestampGap" in ids(result(tree))


def test_au_just_above_threshold_is_not_flagged(tree):
    set_au(run_summary(tree, 3), 90.01)
    assert "3.3.2-trainingAcceleratorUtilizationCheck" not in ids(result(tree))
    set_au(run_summary(tree, 0), 50.0)     # the warm-up does not count
    assert "3.3.2-trainingAcceleratorUtilizationCheck" not in ids(result(tree))


def test_read_window_near_miss_and_read_speed_near_miss(tree):
    _read_start_after_write_end(tree, 29)
    _set(C(tree) / READ / "summary.json", "metric.load_checkpoint_io_mean_GB_per_second", 9.0)   # 1.94x the write
    found = ids(result(tree))
    assert "4.7.1-checkpointCacheFlushValidation" not in found and "EVID-01-checkpointReadFromPageCache" not in found


def test_evidence_finding_names_the_numbers(tree):
    _set(C(tree) / READ / "summary.json", "metric.load_checkpoint_io_mean_GB_per_second", 25.0)
    f = next(f for f in result(tree).findings if f.rule_id == "EVID-01-checkpointReadFromPageCache")
    assert "read 25.00 GiB/s vs write 4.64 GiB/s" in f.message and "MemTotal 747.9 GiB" in f.message


def test_retinanet_threshold_is_85(tree):
    for i in range(6):
        set_au(run_summary(tree, i), 86.0)
    assert "3.3.2-trainingAcceleratorUtilizationCheck" in ids(result(tree))        # unet3d: 90
    (T(tree).parent / "retinanet").mkdir()
    shutil.move(str(T(tree)), str(T(tree).parent / "retinanet" / "x"))
    for sub in ("run", "datasize", "datagen"):
        shutil.move(str(T(tree).parent / "retinanet" / "x" / sub), str(T(tree).parent / "retinanet" / sub))
    edit_json(T(tree).parent / "retinanet/run" / RUNS[0] / f"training_{RUNS[0]}_metadata.json",
              lambda d: d.update(model="retinanet"))
    assert "3.3.2-trainingAcceleratorUtilizationCheck" not in ids(result(tree))


def test_a_folder_of_another_kind_is_handed_over_or_listed(tree, capsys):
    leaf = T(tree).parent.parent / "kv_cache/llama3.1-8b/run/20260627_194318"
    leaf.mkdir(parents=True)
    (leaf / "summary.json").write_text("{}")
    code = cli.main(["check", str(tree), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    listed = [f for f in doc["findings"] if f["rule_id"] == "TREE-01-unrecognisedBenchmark"]
    assert listed or doc["delegated"], "neither handed over nor listed"
    if listed:
        assert listed[0]["severity"] == "info" and code == 0


def test_a_result_copied_out_of_its_tree_is_still_read_as_v3(tmp_path, capsys):
    shutil.copytree(T(DATA), tmp_path / "unet3d")
    shutil.copytree(C(DATA), tmp_path / "checkpointing" / "llama3-8b")
    for path in (tmp_path / "unet3d", tmp_path / "unet3d/run" / RUNS[3], tmp_path / "checkpointing/llama3-8b",
                 tmp_path / "checkpointing/llama3-8b" / READ):
        assert cli.main(["check", str(path)]) == 0, capsys.readouterr().out
        out = capsys.readouterr().out
        assert "ruleset v3.0" in out and "CLOSED (compliant)" in out
    assert cli.main(["metrics", str(tmp_path / "checkpointing/llama3-8b" / READ)]) == 0
    assert "Write B/W 4.64 GiB/s  Read B/W 5.68 GiB/s" in capsys.readouterr().out


def test_read_window_uses_the_invocation_bookends_when_recorded(tree):
    edit_json(C(tree) / WRITE / CKPT_META[WRITE], lambda d: d.update(invocation_end_time="2026-07-08T06:51:00Z"))
    edit_json(C(tree) / READ / CKPT_META[READ], lambda d: d.update(invocation_start_time="2026-07-08T06:51:45Z"))
    assert "4.7.1-checkpointCacheFlushValidation" in ids(result(tree))     # 45 s, though the timed sections are 16 s apart
    edit_json(C(tree) / READ / CKPT_META[READ], lambda d: d.update(invocation_start_time="2026-07-08T06:51:20Z"))
    assert "4.7.1-checkpointCacheFlushValidation" not in ids(result(tree))
