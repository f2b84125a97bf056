"""`suite run --ruleset v3.0`: the six-run series (the first a warm-up, marked and left out of the
figures), fs_separation.json per run, and the closed refusal when data and results share a file system.
Real mpiexec, real cache drops, a real tmpfs for the results (root only)."""

import json
import os
import subprocess

import pytest

from suite import files
from suite.training.data import datagen
from suite.training import workloads

def leaves(res, model="retinanet") -> list:
    """The run leaves of a v3.0 series, R/training/<model>/run/<YYYYMMDD_HHMMSS>/, in run order."""
    return sorted((res / "training" / model / "run").iterdir())


FAST = ["--param", "train.epochs=1", "--param", "train.computation_time=0.001", "--param", "reader.read_threads=2"]


@pytest.fixture
def tmpfs(tmp_path):
    """A tmpfs mounted for the results (another file system than tmp_path's)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_retinanet_b200_miniature_series_six_runs_warmup_left_out(run_cli, tmp_path, tmpfs, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = tmpfs / "R"
    code, out, err = run_cli("run", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1,
                             "--ruleset", "v3.0", "--results-dir", res, "--memory-limit", "48MiB",
                             "--division", "open", *FAST)
    assert code == 1, err            # a miniature is never compliant
    assert "miniature dataset: generating 779 jpeg files" in out and "[run 6/6]" in out and "[run 7/" not in out
    assert "after 1 warm-up run(s) left out" in out
    assert len(leaves(res)) == 6
    docs = [files.load_json(d / "results.json", schema="results") for d in leaves(res)]
    assert [d["warmup"] for d in docs] == [True] + [False] * 5
    assert all(d["status"] == "complete" and d["ruleset"] == "v3.0" and d["miniature"] for d in docs)
    for leaf, d in zip(leaves(res), docs):
        fs = json.loads((leaf / "fs_separation.json").read_text())
        assert fs["separate"] is True and fs["results"]["fs_type"] == "tmpfs"
        assert fs["results"]["real_path"] == os.path.realpath(res) and fs["data"]["mount_point"] != fs["results"]["mount_point"]
        assert fs["data"]["device_id"] != fs["results"]["device_id"] and fs["probed_at"]
        assert d["enforcement"]["fs_separation"] == {"file": "fs_separation.json", "separate": True}
        assert not any("file systems" in r for r in d["compliance"]["reasons"])
    run_set = files.load_json(res / "run_set.json", schema="run-set")
    assert run_set["runs_requested"] == 6 and run_set["warmup_runs"] == 1 and run_set["complete"] is True
    assert [r["warmup"] for r in run_set["runs"]] == [True] + [False] * 5
    measured = [d["metric"]["train_throughput_mean_samples_per_second"] for d in docs[1:]]
    assert run_set["overall"]["num_benchmark_runs"] == 5
    assert run_set["overall"]["train_throughput_mean_samples_per_second"] == pytest.approx(sum(measured) / 5)
    report = json.loads((res / "mlperf_storage_report.json").read_text())
    assert "run1" not in json.dumps(report) and "run6" in json.dumps(report)


def test_closed_refuses_data_and_results_on_one_file_system_before_touching_data(run_cli, tmp_path):
    wl = workloads.resolve("retinanet", "b200")
    data = tmp_path / "data"
    datagen.generate(wl, data, 2, processes=1)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in (data / "train").iterdir())
    res = tmp_path / "res"
    code, out, err = run_cli("run", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1,
                             "--ruleset", "v3.0", "--data-dir", data, "--results-dir", res, "--allow-no-cache-drop")
    assert code == 2
    line = err.strip()
    assert "\n" not in line and "Traceback" not in err
    assert "file systems: expected different ones" in line and str(data) in line and str(res) in line
    assert not res.exists() and "[run" not in out
    assert sorted((p.name, p.stat().st_mtime_ns) for p in (data / "train").iterdir()) == before


def open_retinanet_run(run_cli, tmp_path) -> tuple:
    """A 24-file retinanet b200 dataset and one open v3.0 run of it (warm-up + 1), data and results on
    one file system: (data, res, out); the run exits 1 (open, shared file system)."""
    wl = workloads.resolve("retinanet", "b200")
    data = tmp_path / "data"
    datagen.generate(wl, data, 24, processes=1)
    res = tmp_path / "res"
    code, out, err = run_cli("run", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1,
                             "--ruleset", "v3.0", "--data-dir", data, "--results-dir", res, "--division", "open",
                             "--runs", 1, *FAST)
    assert code == 1, err
    return data, res, out


def test_open_division_records_a_shared_file_system_and_goes_on(run_cli, tmp_path):
    data, res, out = open_retinanet_run(run_cli, tmp_path)
    docs = [files.load_json(d / "results.json", schema="results") for d in leaves(res)]
    assert [d["warmup"] for d in docs] == [True, False]        # --runs 1: one measured run after the warm-up
    fs = json.loads((leaves(res)[1] / "fs_separation.json").read_text())
    assert fs["separate"] is False and fs["data"]["device_id"] == fs["results"]["device_id"]
    assert any("file systems: expected different ones" in r for r in docs[1]["compliance"]["reasons"])


def test_v2_series_is_unchanged_no_warmup_run_no_fs_separation(run_cli, tmp_path):
    wl = workloads.resolve("unet3d", "h100", workloads.parse_params(["dataset.record_length=20000",
                                                                      "dataset.record_length_stdev=0"]))
    data = tmp_path / "data"
    datagen.generate(wl, data, 7, processes=1)
    res = tmp_path / "res"
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--ruleset", "v2.0", "--data-dir", data,
                             "--results-dir", res, "--division", "open", "--runs", 1, *FAST,
                             "--param", "dataset.record_length=20000", "--param", "dataset.record_length_stdev=0",
                             "--param", f"checkpoint.checkpoint_folder={tmp_path / 'ck'}")
    assert code == 1, err
    doc = files.load_json(res / "run-1" / "results.json", schema="results")
    assert doc["warmup"] is False and not (res / "run-2").exists() and not (res / "run-1" / "fs_separation.json").exists()


def test_unet3d_b200_miniature_series_six_runs(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerator-type", "b200", "--accelerators", 1,
                             "--ruleset", "v3.0", "--results-dir", "R", "--memory-limit", "48MiB", "--division", "open",
                             *FAST, "--param", "dataset.record_length=1000000", "--param", "dataset.record_length_stdev=0",
                             "--param", f"checkpoint.checkpoint_folder={tmp_path / 'ck'}")
    assert code == 1, err
    docs = [files.load_json(d / "results.json", schema="results") for d in leaves(tmp_path / "R", "unet3d")]
    assert [d["warmup"] for d in docs] == [True] + [False] * 5 and len(docs) == 6
    assert {d["dlio_workload"] for d in docs} == {"unet3d_b200"}
    run_set = files.load_json(tmp_path / "R" / "run_set.json", schema="run-set")
    assert run_set["overall"]["num_benchmark_runs"] == 5 and run_set["complete"] is True


def test_suite_check_reads_a_v3_series_warmup_recognised_structure_clean(run_cli, tmp_path):
    """Our checker on a v3.0 series: the ruleset from results.json, five runs after the warm-up, no
    structure finding (retinanet_b200 is a known <model>_<accelerator>); the findings left are the
    measurement's own (dataset size, AU, the --param overrides). The series: a copy of the session's (a
    24-file retinanet b200 dataset, `suite run --ruleset v3.0 --division open` with these FAST params, made
    once: tests/ours3_builders.py)."""
    from tests.ours3_builders import series

    res = series(tmp_path / "res")
    code, out, err = run_cli("check", res, "--format", "json")
    (bench,) = json.loads(out)["benchmarks"]
    assert bench["ruleset"] == "v3.0" and bench["workload"] == "retinanet" and bench["accelerator"] == "b200"
    assert bench["aggregate"]["overall"]["num_benchmark_runs"] == 5
    ids = {f["rule_id"] for f in bench["findings"]}
    assert not {i for i in ids if i.startswith("structure-") or i == "warmup-run"}, ids
    # the miniature-sized measurement's own findings, by the reference leaves' rules (one rule per clause)
    assert {"3.1.2-trainingDatasetSize", "3.3.2-trainingAcceleratorUtilizationCheck"} <= ids
