"""The v3.0 leaves `suite run --ruleset v3.0` writes (R/training/<model>/{datasize,datagen,run}/<ts>/)
read the same way as a published v3.0 leaf (tests/data/v3/training_alluxio, real), and the v3.0
refusals made before any data is touched: a dataset that does not match the datasize step, a
results dir holding an earlier series. Real mpiexec, real files."""

import json
import re
from pathlib import Path

import paths
from suite import files
from suite.layouts.benchdirs import tree as layout
from suite.training.data import datagen
from suite.training import workloads
from suite.training.run.prepare import miniature_data_dir
from tests.training.run.test_v3_series import open_retinanet_run

PUBLISHED = paths.DATA / "v3" / "training_alluxio"
FAST = ["--param", "train.epochs=1", "--param", "train.computation_time=0.001", "--param", "reader.read_threads=2"]
POINTER = re.compile(r"md5-tree-v2:[0-9a-f]{32}\n?")


def _read(root: Path) -> tuple:
    (bench,) = layout.discover_tree(root).benchmarks
    run = (bench.runs + ([bench.warmup] if bench.warmup else []))[0]
    return bench, run.hosts[0]


def test_our_leaves_read_as_the_published_ones_do(run_cli, tmp_path):
    data, res, out = open_retinanet_run(run_cli, tmp_path)
    theirs_bench, theirs = _read(PUBLISHED)
    ours_bench, ours = _read(res)
    assert {"summary", "per_epoch", "overrides", "config"} <= set(theirs.files) <= set(ours.files)
    assert theirs.files["per_epoch"].name == ours.files["per_epoch"].name == "0_per_epoch_stats.json"
    assert [p.parent.name for p in (theirs.files["overrides"], ours.files["overrides"])] == ["dlio_config"] * 2
    for bench, model in ((theirs_bench, "unet3d"), (ours_bench, "retinanet")):
        assert (bench.workload, bench.accelerator) == (model, "b200")
        assert bench.detected_from["workload"].startswith("overrides.yaml")
        assert all(re.fullmatch(r"\d{8}_\d{6}", r.name) for r in bench.runs)
    leaves = sorted((res / "training" / "retinanet" / "run").iterdir())
    assert len(leaves) == 2 and ours_bench.warmup.path == leaves[0]
    published_leaf = theirs.path
    for name in ("fs_separation.json", ".mlps-code-image"):
        assert (leaves[1] / name).is_file()
    want = set(json.loads((published_leaf / "fs_separation.json").read_text()))
    got = json.loads((leaves[1] / "fs_separation.json").read_text())
    assert want <= set(got) and got["same_filesystem"] is (not got["separate"])
    assert POINTER.fullmatch((published_leaf / ".mlps-code-image").read_text())
    assert POINTER.fullmatch((leaves[1] / ".mlps-code-image").read_text())
    meta = files.load_json(leaves[1] / f"training_{leaves[1].name}_metadata.json", schema="training-metadata")
    assert meta["command"] == "run" and meta["run_datetime"] == leaves[1].name and meta["accelerator"] == "b200"
    assert "mpiexec" in meta["executed_command"] and "suite.training.run.rank" in meta["executed_command"] and meta["parameters"]["dataset"]["num_files_train"] == "24"   # overridden: its text, as mlpstorage records it
    assert meta["provenance"]["algorithm"] == "md5-tree-v2" and meta["warmup"] is False
    (size,) = (res / "training" / "retinanet" / "datasize").iterdir()
    assert files.load_json(size / f"training_{size.name}_metadata.json", schema="training-metadata")["command"] == "datasize"
    assert not (res / "training" / "retinanet" / "datagen").exists()      # the data was not made by this run
    run_set = files.load_json(res / "run_set.json", schema="run-set")
    assert [r["path"] for r in run_set["runs"]] == [f"training/retinanet/run/{p.name}/results.json" for p in leaves]


def test_a_dataset_not_matching_the_datasize_step_is_refused_before_it_is_read(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    wl = workloads.resolve("retinanet", "b200")
    data = miniature_data_dir(wl, 779)       # what --memory-limit 48MiB sizes (779 files), one file more
    datagen.generate(wl, data, 780, processes=2)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in (data / "train").iterdir())
    code, out, err = run_cli("run", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1,
                             "--ruleset", "v3.0", "--results-dir", "R", "--memory-limit", "48MiB")
    assert code == 2, out
    assert "\n" not in err.strip() and "Traceback" not in err
    assert "files: expected exactly 779 (the datasize step), got 780" in err and str(data) in err
    assert not Path("R").exists() and "[run" not in out
    assert sorted((p.name, p.stat().st_mtime_ns) for p in (data / "train").iterdir()) == before


def test_a_results_dir_holding_an_earlier_series_is_refused(run_cli, tmp_path):
    res = tmp_path / "R"
    old = res / "training" / "retinanet" / "run" / "20260101_000000"
    old.mkdir(parents=True)
    (old / "summary.json").write_text("{}")
    code, out, err = run_cli("run", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1,
                             "--ruleset", "v3.0", "--data-dir", tmp_path / "nodata", "--results-dir", res)
    assert code == 2 and "\n" not in err.strip()
    assert "expected a new or empty directory" in err and "'training'" in err
    assert sorted(p.name for p in res.rglob("*")) == ["20260101_000000", "retinanet", "run", "summary.json", "training"]
