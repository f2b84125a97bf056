"""`suite compare` on real runs of ours (a known difference: the runner's read delay with one reader
thread), on the same setting twice, on published v1.0 results with their systems side by side;
refusals as one line and exit 2; the HTML page in headless Chromium."""

import json
import shutil

import pytest

from tests.report.test_report import assert_real_screenshot, chromium_render
from tests.training.run.test_runner import make_data

TINY = ["dataset.num_samples_per_file=20", "dataset.record_length=1000", "dataset.record_length_stdev=0",
        "reader.batch_size=8", "reader.read_threads=1", "train.epochs=3", "train.computation_time=0.02"]
V1 = "mlperf-storage-v1.0/Closed/Micron/results/{}/resnet50/h100"
GEN5, GEN4 = V1.format("Micron_9550_Gen5_Performance_NVMe"), V1.format("Micron_9400_Gen4_Performance_NVMe")


def run_args(tmp, data, out, runs, *extra):
    argv = ["run", "--workload", "resnet50", "--accelerators", 1, "--data-dir", data, "--results-dir", out,
            "--division", "open", "--runs", runs, "--allow-no-cache-drop", *extra]
    for p in TINY + [f"checkpoint.checkpoint_folder={tmp / 'ckpt'}"]:
        argv += ["--param", p]
    return argv


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """Three result dirs of 3 runs each, one rank: A and A2 the same setting, SLOW with a 0.1 s read
    delay per file (one reader thread: 1.2 s more per epoch). Made once a session across xdist's workers
    (tests/conftest.py `once`: this module's two tests on two workers made them twice); read only."""
    from tests.conftest import once

    return once(tmp_path_factory, "compare-three", _three)


def _three(tmp_path_factory):
    from suite import cli

    tmp = tmp_path_factory.mktemp("compare")
    data = make_data(tmp / "data", "resnet50", TINY, 12)
    out = {}
    # A and A2 back to back: the same setting, as little drift of a shared machine between them as can be
    for name, extra in (("a", ()), ("a2", ()), ("slow", ("--debug-read-delay", "0.1"))):
        out[name] = tmp / name
        assert cli.main([str(x) for x in run_args(tmp, data, out[name], 3, *extra)]) in (0, 1)
    return out


def figures(stdout):
    doc = json.loads(stdout)
    return {f["figure"]: f for f in doc["comparisons"][0]["figures"]}, doc


@pytest.mark.timeout(240)
def test_a_slowed_run_is_significantly_slower_and_the_same_setting_is_not(run_cli, three):
    code, out, err = run_cli("compare", three["a"], three["slow"], "--format", "json")
    assert code == 0, err
    f, doc = figures(out)
    s = f["samples_per_second"]
    assert s["verdict"] == "slower" and s["high"] < 1.0 and s["basis"] == "per run (3 vs 3)"
    assert f["mib_per_second"]["verdict"] == "slower"
    assert doc["differences"] == [] and doc["results"][0]["identity"]["dataset_size"] == "12 files x 20 samples"
    code, out, err = run_cli("compare", three["a"], three["a2"], "--format", "json", "--level", "0.99")
    assert code == 0, err
    f, _ = figures(out)
    assert f["samples_per_second"]["verdict"] == "not significant"
    assert f["samples_per_second"]["low"] < 1.0 < f["samples_per_second"]["high"]
    # the params differ (the read delay is not a param, so params match), the hosts do not
    code, out, err = run_cli("compare", three["a"], three["slow"])
    assert code == 0 and "slower" in out and "per run (3 vs 3)" in out and "Systems (differences first" in out


@pytest.mark.timeout(240)
def test_one_run_a_side_uses_the_epochs_and_says_so(run_cli, three, tmp_path):
    one_a, one_b = tmp_path / "one-a", tmp_path / "one-b"
    for src, dst in ((three["a"], one_a), (three["slow"], one_b)):
        dst.mkdir()
        shutil.copytree(src / "run-1", dst / "run-1")
    code, out, err = run_cli("compare", one_a, one_b, "--format", "json")
    assert code == 0, err
    f, _ = figures(out)
    assert f["samples_per_second"]["basis"].startswith("per epoch (3 vs 3 epochs of 1 vs 1 runs; runs are few")
    assert f["samples_per_second"]["verdict"] == "slower"


def test_published_v1_results_side_by_side(run_cli, fixtures_dir):
    a, b = fixtures_dir / GEN5, fixtures_dir / GEN4
    code, out, err = run_cli("compare", a, b)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "dataset size: expected 9581 files x 1251 samples" in err and "got 12629 files" in err
    code, out, err = run_cli("compare", a, b, "--allow-different", "--format", "json")
    assert code == 0, err
    f, doc = figures(out)
    assert doc["differences"] == ["dataset size: A 9581 files x 1251 samples, B 12629 files x 1251 samples"]
    assert f["samples_per_second"]["verdict"] == "slower" and f["samples_per_second"]["basis"] == "per run (5 vs 5)"
    assert f["samples_per_second"]["ratio"] == pytest.approx(61509.76 / 93464.02, rel=1e-3)
    systems = {s["key"]: s for s in doc["systems"]}
    cpu = systems["system.nodes.0.CPU.vendor_and_model_name"]
    assert cpu["values"] == ["AMD EPYC 9654", "AMD EPYC 74F3"] and cpu["differs"]
    assert not systems["system.nodes.0.drives.0.interface"]["differs"]
    code, out, err = run_cli("compare", a, b, "--allow-different", "--format", "markdown")
    assert code == 0 and "| \\* | system.nodes.0.CPU.vendor\\_and\\_model\\_name |" in out or "AMD EPYC 74F3" in out


@pytest.mark.parametrize("workload_dir, needle", [
    ("resnet50/a100", "accelerator type: expected h100"),
    ("cosmoflow/h100", "workload: expected resnet50"),
])
def test_refusals_are_one_line_exit_2(run_cli, fixtures_dir, workload_dir, needle):
    a = fixtures_dir / GEN5
    b = fixtures_dir / GEN5.replace("resnet50/h100", workload_dir)
    code, out, err = run_cli("compare", a, b)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and out == ""
    assert "--allow-different compares them anyway" in err


@pytest.mark.parametrize("argv, needle", [
    (["--level", "2"], "expected a confidence level between 0.5 and 0.999, got '2'"),
    (["--figure", "nope"], "--figure: expected one of au_percentage, samples_per_second, mib_per_second, got 'nope'"),
])
def test_bad_options_are_one_line_exit_2(run_cli, fixtures_dir, argv, needle):
    code, out, err = run_cli("compare", fixtures_dir / GEN5, fixtures_dir / GEN5, *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_one_result_or_a_missing_path_is_refused(run_cli, fixtures_dir, tmp_path):
    code, _, err = run_cli("compare", fixtures_dir / GEN5)
    assert code == 2 and "expected at least two to compare, got 1" in err
    code, _, err = run_cli("compare", fixtures_dir / GEN5, tmp_path / "nothing")
    assert code == 2 and "expected an existing file or directory" in err


@pytest.mark.timeout(300)
def test_many_results_sorted_and_the_page_in_headless_chromium(run_cli, fixtures_dir, tmp_path):
    paths = [fixtures_dir / V1.format(s) for s in ("Micron_9400_Gen4_Performance_NVMe", "Micron_9550_Gen5_Performance_NVMe",
                                                    "Micron_6500_Gen4_High_Capacity_NVMe")]
    paths = [p for p in paths if p.is_dir()]
    out = tmp_path / "page"
    code, stdout, err = run_cli("compare", *paths, "--allow-different", "--out", out, "--format", "json")
    assert code == 0, err
    doc = json.loads(stdout)
    means = [r["mean"] for r in doc["ranking"]]
    assert means == sorted(means, reverse=True) and len(means) == len(paths)
    assert json.loads((out / "compare.json").read_text()) == doc
    assert {p.name for p in (out / "plots").iterdir()} == {f"ratio-{x}.png" for x in "BC"[: len(paths) - 1]} | {"across.png"}
    shot, log, dom = chromium_render(out / "index.html", tmp_path)
    assert_real_screenshot(shot)
    assert "CONSOLE" not in log and 'data-broken="0"' in dom and f'data-images="{len(paths)}"' in dom
    assert "Systems side by side" in dom


def test_every_orgs_unet3d_in_a_tree_sorted(run_cli, fixtures_dir):
    tree = fixtures_dir / "mlperf-storage-v1.0"
    code, out, err = run_cli("compare", tree, "--only", "workload=unet3d", "--only", "accelerator=h100")
    assert code == 2 and "dataset size: expected" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli("compare", tree, "--only", "workload=unet3d", "--only", "accelerator=h100",
                             "--allow-different", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert {r["identity"]["workload"] for r in doc["results"]} == {"unet3d"} and len(doc["results"]) >= 3
    means = [r["mean"] for r in doc["ranking"]]
    assert means == sorted(means, reverse=True)
    code, _, err = run_cli("compare", tree, "--only", "colour=red")
    assert code == 2 and "expected FIELD=VALUE with FIELD one of workload" in err


def test_a_hostile_system_description_is_shown_escaped(run_cli, fixtures_dir, tmp_path):
    """Control characters and a deep nesting in a systems/*.json: shown escaped and cut, never raw."""
    for name in ("Micron_9550_Gen5_Performance_NVMe", "Micron_9400_Gen4_Performance_NVMe"):
        shutil.copytree(fixtures_dir / V1.format(name), tmp_path / "Micron" / "results" / name / "resnet50" / "h100")
    deep = "x"
    for _ in range(200):
        deep = {"d": deep}
    (tmp_path / "Micron" / "systems").mkdir()
    (tmp_path / "Micron" / "systems" / "Micron_9550_Gen5_Performance_NVMe.json").write_text(
        json.dumps({"name": "evil\x1b[31m\x07 | *md*", "deep": deep}))
    a, b = (tmp_path / "Micron" / "results" / n / "resnet50" / "h100" for n in
            ("Micron_9550_Gen5_Performance_NVMe", "Micron_9400_Gen4_Performance_NVMe"))
    for form in ("text", "markdown", "json"):
        code, out, err = run_cli("compare", a, b, "--allow-different", "--format", form)
        assert code == 0, err
        assert "\x1b" not in out and "\x07" not in out
    assert "(nested too deep to show)" in out
