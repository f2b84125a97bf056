import os
from pathlib import Path

import pytest

from check_builders import dlio_benchmark, dlio_run, ours_results, write_yaml
from suite.layouts.benchdirs import identify, tree as layout
from suite.errors import ResultError

import paths

DATA = paths.DATA / "check"
REAL = DATA / "real"


def test_parse_workload_name():
    assert identify.parse_workload_name("unet3d_h100") == ("unet3d", "h100")
    assert identify.parse_workload_name("resnet-a100") == ("resnet50", "a100")
    assert identify.parse_workload_name("unet3d") == ("unet3d", None)
    assert identify.parse_workload_name("10hosts@13GPUs") == (None, None)


def test_overrides_dict():
    ov = identify.overrides_dict(["workload=unet3d_h100", "++workload.reader.read_threads=8", "junk"])
    assert ov == {"workload": "unet3d_h100", "reader.read_threads": "8"}


def test_real_v05_host_dirs():
    (b,) = layout.discover(REAL / "v0.5")
    assert (b.ruleset, b.workload, b.accelerator, b.division, b.org) == ("v0.5", "unet3d", "v100", "closed", "DDN")
    assert [r.name for r in b.runs] == ["run-1", "run-2", "run-3", "run-4", "run-5"]
    assert all(r.hosts[0].name == "host-1" for r in b.runs)
    assert b.report["overall"]["num_benchmark_runs"] == 5
    assert b.runs[0].per_epoch is not None and b.runs[1].per_epoch is None
    assert b.runs[4].overrides[0] == "workload=unet3d"


def test_real_ddn_runs_host_layout_and_report_in_runs_dir():
    tree = layout.discover_tree(REAL / "v1.0" / "Closed" / "DDN")
    (b,) = tree.benchmarks
    assert (b.workload, b.accelerator, b.ruleset) == ("unet3d", "h100", "v1.0")
    assert b.system == "AI400X2T_24x14TiB_nvme_8xNDR200_18clients"
    assert len(b.runs) == 5 and all(r.hosts[0].name == "c008" for r in b.runs)
    assert b.report_path.parent.name == "runs"
    assert tree.submission and len(tree.systems) == 1 and len(b.generation_logs) == 1


def test_real_simplyblock_no_system_dir():
    tree = layout.discover_tree(REAL / "v1.0" / "Closed" / "simplyblock")
    (b,) = tree.benchmarks
    assert b.system is None and b.org == "simplyblock"
    assert (b.workload, b.accelerator) == ("resnet50", "h100")
    assert b.runs[0].config["dataset"]["num_samples_per_file"] == 1251


@pytest.mark.parametrize("parts,run_name", [
    (("Micron", "results", "sys", "unet3d", "h100"), "run_{k}"),          # Micron
    (("WEKA", "results", "sys", "unet3d-h100"), "run{k}"),                # WEKA
    (("HPE", "results", "sys", "unet3d_h100"), "run-{k}"),                # HPE
    (("IEI", "results", "sys", "unet3d-h100", "10hosts@13GPUs"), "run{k}"),  # IEI
    (("simplyblock", "results", "resnet-h100", "runs"), "run{k}"),
])
def test_synthetic_layouts(tmp_path, parts, run_name):
    bench = tmp_path.joinpath(*parts)
    dlio_benchmark(bench, run_name=run_name)
    (b,) = layout.discover(tmp_path)
    assert (b.workload, b.accelerator, b.ruleset) == ("unet3d", "h100", "v1.0")
    assert len(b.runs) == 5 and b.runs[0].summary["num_files_train"] == 3500
    assert b.org == parts[0]


def test_detects_from_files_not_names(tmp_path):
    dlio_benchmark(tmp_path / "mystery", workload="cosmoflow", accel="a100", au=(75, 76), tp=(10, 11))
    (b,) = layout.discover(tmp_path)
    assert (b.workload, b.accelerator) == ("cosmoflow", "a100")
    assert b.detected_from["workload"].startswith("overrides.yaml")


def test_accelerator_from_compute_time_when_overrides_missing(tmp_path):
    run = dlio_run(tmp_path / "x" / "run1", workload="unet3d", accel="a100")
    (run / "configs" / "overrides.yaml").unlink()
    (b,) = layout.discover(tmp_path)
    assert (b.workload, b.accelerator) == ("unet3d", "a100")


def test_v05_multi_host_keeps_every_host(tmp_path):
    for k in (1, 2):
        for h in (1, 2, 3):
            dlio_run(tmp_path / "unet3d" / f"run-{k}" / f"host-{h}", v05=True, accel="v100")
    (b,) = layout.discover(tmp_path)
    assert b.ruleset == "v0.5" and b.accelerator == "v100"
    assert [len(r.hosts) for r in b.runs] == [3, 3] and len(b.runs[0].summaries) == 3


def test_ours_single_run_and_results_dir(tmp_path):
    ours_results(tmp_path / "R", runs=2)
    (b,) = layout.discover(tmp_path / "R")
    assert b.path == (tmp_path / "R").resolve() and [r.name for r in b.runs] == ["run-1", "run-2"]
    assert b.runs[0].results["complete"] is True and sorted(b.runs[0].rank_steps) == [0, 1]
    (one,) = layout.discover(tmp_path / "R" / "run-2")
    assert one.single_run and len(one.runs) == 1


def test_datagen_dirs_are_generation_logs_not_runs(tmp_path):
    dlio_benchmark(tmp_path / "org" / "results" / "sys" / "unet3d-h100", runs=1)
    write_yaml(tmp_path / "org" / "results" / "sys" / "unet3d-h100" / "datagen" / "configs" / "overrides.yaml",
               ["workload=unet3d_h100", "++workload.workflow.generate_data=True", "++workload.workflow.train=False"])
    tree = layout.discover_tree(tmp_path)
    (b,) = tree.benchmarks
    assert len(b.runs) == 1 and len(tree.generation_logs) == 1 and len(b.generation_logs) == 1


def test_warmup_run_is_separate(tmp_path):
    dlio_benchmark(tmp_path / "b", runs=5)
    dlio_run(tmp_path / "b" / "warmup")
    (b,) = layout.discover(tmp_path)
    assert b.warmup is not None and len(b.runs) == 5 and b.ruleset == "v2.0"


def test_symlink_outside_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    dlio_run(outside / "run1")
    root = tmp_path / "root"
    dlio_benchmark(root / "b", runs=1)
    (root / "b" / "run1" / "summary.json").unlink()
    os.symlink(outside / "run1" / "summary.json", root / "b" / "run1" / "summary.json")
    os.symlink(outside, root / "b" / "escape")
    os.symlink(root / "b" / "loop1", root / "b" / "loop2")
    os.symlink(root / "b" / "loop2", root / "b" / "loop1")
    tree = layout.discover_tree(root)
    (b,) = tree.benchmarks
    assert b.runs[0].summary is None
    kinds = sorted(p.kind for p in b.problems)
    assert kinds == ["loop", "loop", "outside", "outside"]


def test_missing_path_and_file_path(tmp_path):
    with pytest.raises(ResultError, match="expected an existing"):
        layout.discover(tmp_path / "nope")
    f = tmp_path / "f.txt"
    f.write_text("x")
    with pytest.raises(ResultError, match="expected a directory"):
        layout.discover(f)


def test_every_fixture_benchmark_parses(fixtures_dir):
    tree = layout.discover_tree(fixtures_dir)
    assert len(tree.benchmarks) >= 29
    for b in tree.benchmarks:
        assert b.workload in ("unet3d", "resnet50", "cosmoflow") and b.accelerator in ("h100", "a100", "v100")
        assert b.ruleset in ("v0.5", "v1.0")
    weka = [b for b in tree.benchmarks if b.path.name == "unet3d-a100" and b.org == "WEKA"][0]
    assert len(weka.runs[0].rank_outputs) == 24
