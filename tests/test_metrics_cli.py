import json
import re
from pathlib import Path

import pytest
import yaml

from tests.tpcx_ai.test_fdr import DELL, dell_doc, jobs_doc, write

REPO = Path(__file__).resolve().parent.parent


def test_dell_example_prints_published_figures(run_cli):
    code, out, err = run_cli("metrics", DELL)
    assert code == 0 and err == ""
    assert re.search(r"^AIUCpm@10 +425.30 ", out, re.M) and "113.83 USD" in out
    assert "2748.071 s / (80 streams x 10)" in out and "computed - published = -0.01" in out


def test_dell_example_json(run_cli):
    code, out, _ = run_cli("metrics", DELL, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["aiucpm"] == 425.297 and doc["aiucpm_published"] == 425.30
    assert doc["price_per_aiucpm"] == 113.83 and doc["published"]["aiucpm"] == 425.31 and doc["complete"]


@pytest.mark.parametrize("kit,value", [("1.0.2", "300.00"), ("1.0.3", "150.00")])
def test_kit_modes_from_a_csv_with_jobs(run_cli, tmp_path, kit, value):
    code, out, _ = run_cli("metrics", write(tmp_path, "run.csv", jobs_doc(kit)))
    assert code == 0 and re.search(rf"^AIUCpm@1 +{value} ", out, re.M)


def test_subset_prints_phase_times_then_refuses(run_cli, tmp_path):
    doc = dell_doc()
    doc["training_s"] = doc["training_s"][:7]
    code, out, err = run_cli("metrics", write(tmp_path, "subset.yaml", doc))
    assert code == 2
    assert "TPTT" in out and "geomean of 7 training times" in out and re.search(r"^AIUCpm@10 +none ", out, re.M)
    assert err.count("\n") == 1 and "training_s: expected 10 use-case times, got 7" in err


@pytest.mark.parametrize("change,needle", [
    (lambda d: d.update(streams=1), "streams: expected at least 2, got 1"),
    (lambda d: d.update(load_time_s=-1), "load_time_s: expected a positive number, got -1"),
    (lambda d: d.update(load_time_s="2.3 kg"), "load_time_s: expected seconds"),
    (lambda d: d.pop("currency"), "expected key 'currency', got none"),
])
def test_bad_input_is_one_line_exit_2(run_cli, tmp_path, change, needle):
    doc = dell_doc()
    change(doc)
    code, out, err = run_cli("metrics", write(tmp_path, "bad.yaml", doc))
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1
    assert err.startswith("suite metrics: error: ")


def test_unknown_file_kind_and_missing_path(run_cli, tmp_path):
    (tmp_path / "x.xlsx").write_bytes(b"PK")
    code, _, err = run_cli("metrics", tmp_path / "x.xlsx")
    assert code == 2 and "file kind: expected a .yaml, .yml, .json or .csv data file, got '.xlsx'" in err
    code, _, err = run_cli("metrics", tmp_path / "nope")
    assert code == 2 and "path: expected an existing file or directory, got nothing there" in err


def test_bad_format_choice(run_cli):
    code, _, err = run_cli("metrics", DELL, "--format", "xml")
    assert code == 2 and "invalid choice" in err


DATA = Path(__file__).resolve().parent / "data"


def test_storage_text_rounds_to_2_decimals_json_keeps_full_values(run_cli):
    code, out, err = run_cli("metrics", DATA / "storage" / "simplyblock")
    assert code == 0 and err == ""
    # rounded by meaning in text (issue 47: no raw float like 16.875482969390337); json keeps them whole
    assert "samples/s  1778.69 ± 0.16" in out and not re.search(r"\d\.\d{5,}", out)
    code, js, _ = run_cli("metrics", DATA / "storage" / "simplyblock", "--format", "json")
    assert code == 0 and "1778.68841495969" in js
    assert 'MiB/s      194.50 ± 0.02' in out and 'DLIO labels it "MB/s"' in out and "114660.07 B" in out
    assert "accelerators 1, hosts 1: ip-172-31-74-102" in out
    assert re.search(r"^run3 +complete +1 +1 +99\.61 ± 0\.00 +1778\.60 ± 0\.04 +194\.49 ± 0\.00 +claimed$", out, re.M)


def test_storage_json(run_cli):
    code, out, _ = run_cli("metrics", DATA / "suite-run" / "unet3d-h100", "--format", "json")
    doc = json.loads(out)
    (b,) = doc["benchmarks"]
    assert code == 0 and doc["kind"] == "storage" and b["overall"]["num_runs"] == 2
    assert b["overall"]["published"]["au_mean_percentage"] == round(b["overall"]["au_mean_percentage"], 2)


def test_storage_fixture_tree(run_cli, fixtures_dir):
    code, out, _ = run_cli("metrics", fixtures_dir / "mlperf-storage-v0.5")
    assert code == 0 and "unet3d v100" in out and "406.78" in out


def test_directory_without_results(run_cli, tmp_path):
    code, out, err = run_cli("metrics", tmp_path)
    assert code == 2 and out == "" and "expected storage results" in err and err.count("\n") == 1


def test_a_runs_summary_json_names_its_run(run_cli):
    code, out, _ = run_cli("metrics", DATA / "storage" / "simplyblock" / "results" / "resnet-h100" / "runs" / "run2"
                           / "summary.json")
    assert code == 0 and "overall over 1 run(s)" in out and "1778.94" in out


SYNTHETIC = REPO / "submissions" / "examples" / "synthetic-sf1-jobs.csv"


@pytest.mark.parametrize("kit,value", [("1.0.2", "300.00"), ("1.0.3", "150.00")])
def test_synthetic_csv_example_in_both_kit_modes(run_cli, tmp_path, kit, value):
    path = tmp_path / "example.csv"
    path.write_text(SYNTHETIC.read_text().replace("kit_version,,,1.0.2,,", f"kit_version,,,{kit},,"))
    code, out, _ = run_cli("metrics", path)
    assert code == 0 and re.search(rf"^AIUCpm@1 +{value} ", out, re.M)


GOLDEN = DATA / "golden"


@pytest.mark.parametrize("source,golden", [
    (DATA / "storage" / "simplyblock", "metrics-simplyblock.txt"),
    (REPO / "submissions" / "examples" / "dell-sf10-fdr.yaml", "metrics-dell-sf10.txt"),
])
def test_golden_text(run_cli, monkeypatch, source, golden):
    """To update after an intended change: suite metrics SOURCE | sed "s#$PWD#<repo>#g" > tests/data/golden/..."""
    monkeypatch.chdir(REPO)
    code, out, _ = run_cli("metrics", source.relative_to(REPO))
    assert code == 0
    # the text wraps at 100 columns, where depends on the checkout's path: the words and their order are golden
    assert out.replace(str(REPO), "<repo>").split() == (GOLDEN / golden).read_text().split()
