import json
import math
from pathlib import Path

import pytest

from suite.training import aggregate
from suite.training import figures as metrics

import paths

DATA = paths.DATA
MIB = 1024 ** 2


def dlio_run(d: Path, samples_per_epoch, au_per_epoch, accelerators=1, hostname="h1", record_length=MIB,
             config=True):
    d.mkdir(parents=True)
    (d / "configs").mkdir()
    (d / "configs" / "overrides.yaml").write_text("- workload=unet3d_h100\n")
    if config:
        (d / "configs" / "config.yaml").write_text(f"workload:\n  dataset:\n    record_length: {record_length}\n")
    m = metrics.run_metric(au_per_epoch, samples_per_epoch, record_length, 0.9)
    (d / "summary.json").write_text(json.dumps({"num_accelerators": accelerators, "hostname": hostname,
                                                "metric": m, "epochs": len(au_per_epoch)}))


def test_hand_computed_two_runs(tmp_path):
    # run 1: samples 10 (both epochs), run 2: 20 -> mean 15, population stdev 5; 1 MiB records -> same in MiB/s
    b = tmp_path / "unet3d-h100"
    dlio_run(b / "run1", [10, 10], [92, 94])
    dlio_run(b / "run2", [20, 20], [96, 98])
    (bench,) = aggregate.summarise(tmp_path)["benchmarks"]
    o = bench["overall"]
    assert o["num_runs"] == 2 and o["samples_per_second"] == 15 and o["samples_per_second_stdev"] == 5
    assert o["mib_per_second"] == 15 and o["mib_per_second_stdev"] == 5
    assert o["au_mean_percentage"] == 95 and o["au_stdev_percentage"] == 2
    assert bench["runs"][0]["au_per_epoch"] == [92, 94] and bench["runs"][0]["au_stdev_percentage"] == 1
    assert o["num_accelerators"] == 1 and o["hostnames"] == ["h1"]


def test_mib_uses_record_length_over_1024_squared(tmp_path):
    b = tmp_path / "unet3d-h100"
    dlio_run(b / "run1", [3.0], [99], record_length=146600628)
    (bench,) = aggregate.summarise(tmp_path)["benchmarks"]
    assert bench["runs"][0]["mib_per_second"] == pytest.approx(3.0 * 146600628 / MIB)
    assert bench["runs"][0]["record_length_from"].startswith("config.yaml dataset.record_length")


def test_record_length_falls_back_to_the_workload_file(tmp_path):
    dlio_run(tmp_path / "unet3d-h100" / "run1", [2.0], [99], config=False, record_length=1)
    (bench,) = aggregate.summarise(tmp_path)["benchmarks"]
    assert bench["runs"][0]["mib_per_second"] == pytest.approx(2.0 * 146600628 / MIB)
    assert bench["runs"][0]["record_length_from"] == "workloads/unet3d.yaml"


def test_multi_host_run_sums_hosts(tmp_path):
    # v0.5 layout: one directory per host; samples/s and accelerators add up, AU averages
    run = tmp_path / "unet3d" / "run-1"
    dlio_run(run / "host-1", [4, 4], [90, 92], accelerators=2, hostname="a")
    dlio_run(run / "host-2", [6, 6], [94, 96], accelerators=2, hostname="b")
    (bench,) = aggregate.summarise(tmp_path)["benchmarks"]
    (r,) = bench["runs"]
    assert r["samples_per_second"] == 10 and r["num_accelerators"] == 4 and r["num_hosts"] == 2
    assert r["au_mean_percentage"] == 93 and r["hosts"] == ["a", "b"]
    assert r["samples_per_second_per_epoch"] == [10, 10] and r["au_per_epoch"] == [92, 94]


def test_unusable_run_is_listed_not_counted(tmp_path):
    b = tmp_path / "unet3d-h100"
    dlio_run(b / "run1", [10], [95])
    dlio_run(b / "run2", [10], [95])
    doc = json.loads((b / "run2" / "summary.json").read_text())
    doc["metric"]["train_throughput_mean_samples_per_second"] = "NaN"
    (b / "run2" / "summary.json").write_text(json.dumps(doc))
    (bench,) = aggregate.summarise(tmp_path)["benchmarks"]
    assert bench["overall"]["num_runs"] == 1
    assert bench["runs"][1]["status"] == "unusable summary.json"
    assert "metric.train_throughput_mean_samples_per_second: expected a finite number, got 'NaN'" in \
        bench["problems"][0]


def test_no_results_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(Exception, match="expected storage results"):
        aggregate.summarise(tmp_path / "empty")


def test_simplyblock_copy_matches_its_report():
    (bench,) = aggregate.summarise(DATA / "storage" / "simplyblock")["benchmarks"]
    o, claimed = bench["overall"], bench["claimed"]
    assert o["num_runs"] == 5 and o["num_accelerators"] == 1
    assert math.isclose(o["samples_per_second"], claimed["samples_per_second"], rel_tol=1e-12)
    assert math.isclose(o["mib_per_second"], claimed["mib_per_second"], rel_tol=1e-12)
    assert o["published"]["samples_per_second"] == 1778.69 and o["published"]["mib_per_second"] == 194.5
    assert bench["runs"][2]["published"]["samples_per_second"] == 1778.6 and \
        bench["runs"][2]["samples_per_second"] == pytest.approx(1778.6025925517383)


def test_our_run_shape(tmp_path):
    (bench,) = aggregate.summarise(DATA / "suite-run" / "unet3d-h100")["benchmarks"]
    assert [r["name"] for r in bench["runs"]] == ["run-1", "run-2"]
    assert all(r["miniature"] and r["compliant"] is False for r in bench["runs"])
    assert bench["overall"]["num_runs"] == 2 and bench["workload"] == "unet3d"


def test_every_published_fixture_agrees_with_its_report(fixtures_dir):
    summary = aggregate.summarise(fixtures_dir)
    checked = 0
    for b in summary["benchmarks"]:
        if b["overall"] and b["claimed"] and b["claimed"]["samples_per_second"]:
            assert math.isclose(b["overall"]["samples_per_second"], b["claimed"]["samples_per_second"],
                                rel_tol=1e-9), b["path"]
            assert math.isclose(b["overall"]["mib_per_second"], b["claimed"]["mib_per_second"], rel_tol=1e-6), b["path"]
            checked += 1
    assert checked >= 20


def test_run_table_rows(tmp_path):
    rows = aggregate.run_table(aggregate.summarise(DATA / "storage" / "simplyblock"))
    assert len(rows) == 5 and list(rows[0]) == list(aggregate.RUN_TABLE_COLUMNS)


def test_unreadable_files_are_listed_as_problems(tmp_path):
    b = tmp_path / "unet3d-h100"
    dlio_run(b / "run1", [10], [95])
    (b / "run1" / "configs" / "config.yaml").write_text("workload: [1\n")
    (bench,) = aggregate.summarise(tmp_path)["benchmarks"]
    assert any("config.yaml" in p for p in bench["problems"])
    assert bench["runs"][0]["record_length_from"] == "workloads/unet3d.yaml"
