"""Faults: a use case that raises or is killed, a missed threshold, a corrupted model file."""

import subprocess
import sys

import pytest
import tpcx_toy

from suite.tpcx_ai import driver

from suite.tpcx_ai import job

from suite.tpcx_ai import leaf as result

SF = 0.02


def run_subset(tmp, use_cases, streams=2, **kw):
    reg = tpcx_toy.registry(tmp, use_cases=use_cases, **kw)
    opts = driver.Options(scale_factor=SF, data_dir=tmp / "data", results_dir=tmp / "res", streams=streams,
                          use_cases=tuple(use_cases), processes=1, registry=reg, launcher="fork", out=lambda s: None)
    run = driver.Driver(opts).execute()
    doc = result.to_doc(run)
    result.write(opts.results_dir, doc)
    return run, doc


def test_failing_use_cases_are_named_and_the_others_finish(tmp_path):
    run, doc = run_subset(tmp_path, [1, 2, 4], faults={1: {"fail": "raise"}, 2: {"fail": "kill", "fail_stage": "serve"}})
    assert run.status == "complete" and run.failed == {1, 2} and not doc["valid"]
    assert "uc01 train: ValueError: toy use case asked to fail" in run.errors
    assert any(e.startswith("uc02 serve: killed by SIGKILL (out of memory?") for e in run.errors)
    assert all("\n" not in e for e in run.errors)
    assert "Traceback" in (tmp_path / "res" / "logs" / "uc01-training.traceback").read_text()
    ok = {(j.phase, j.use_case) for j in run.jobs if j.status == "ok"}
    assert {("training", 4), ("serving_1", 4), ("scoring", 4), ("throughput", 4), ("training", 2)} <= ok
    assert not any(j.use_case == 1 and j.phase != "training" for j in run.jobs)   # no model: not run again
    assert run.quality[4]["passed"] and run.metric is None
    assert any("use case(s) 1,2 failed" in r for r in run.reasons)
    assert any("only use cases 1,2,4 ran" in r for r in run.reasons)


def test_missed_threshold_invalidates_with_its_rule_id(tmp_path):
    run, doc = run_subset(tmp_path, [1, 2], streams=1, strict=(2,))
    assert run.quality[2]["passed"] is False and run.quality[1]["passed"] is True
    assert any("tpcxai-uc02-quality" in r for r in run.reasons) and run.metric is None
    assert any("streams: expected at least 2 for AIUCpm, got 1" in r for r in run.reasons)
    assert doc["quality"]["uc2"]["rule_id"] == "tpcxai-uc02-quality" and not doc["valid"]
    assert len(doc["stream_runs"]) == 1


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("model")
    run, _ = run_subset(tmp, [1], streams=1)
    return tmp, run


@pytest.mark.parametrize("damage,needle", [
    (lambda b: b[:-7], "size: expected"),
    (lambda b: b[:-3] + bytes(x ^ 0xFF for x in b[-3:]), "sha256: expected"),
    (lambda b: b"not a model", "header: expected a suite TPCx-AI model"),
])
def test_corrupt_model_file_fails_in_one_line(trained, tmp_path, damage, needle):
    tmp, run = trained
    model = tmp / "res" / "models" / "uc01.model"
    bad = tmp_path / "uc01.model"
    bad.write_bytes(damage(model.read_bytes()))
    reg = run.options.registry
    argv = [sys.executable, "-m", "suite.tpcx_ai.job", "--stage", "serve", "--use-case", "1", "--module",
            reg.usecase_module(1), "--workload", str(reg.workload_file(1)), "--data", str(tmp / "data" / "serving"),
            "--model", str(bad), "--output", str(tmp_path / "out"), f"--path={tpcx_toy.HERE}"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and p.stderr.count("\n") == 1
    assert p.stderr.startswith(f"uc01 serve: ModelError: model file {bad}: ") and needle in p.stderr
    assert not (tmp_path / "out").exists()
    with pytest.raises(job.ModelError, match=needle):
        job.load_model(bad, 1)
    assert job.load_model(model, 1)["cut"] is not None


def test_exec_launcher_runs_a_job_process_and_names_its_failure(trained, tmp_path):
    from suite.tpcx_ai.launch import Launcher

    tmp, run = trained
    reg = run.options.registry
    base = ["--stage", "serve", "--use-case", "1", "--module", reg.usecase_module(1), "--workload",
            str(reg.workload_file(1)), "--data", str(tmp / "data" / "serving"), "--output", str(tmp_path / "out"),
            f"--path={tpcx_toy.HERE}"]
    launcher = Launcher("exec")
    ok = launcher.run(base + ["--model", str(tmp / "res" / "models" / "uc01.model")], tmp_path / "ok.err", "uc01 serve")
    assert ok.ok and ok.error is None and ok.end_s > ok.start_s >= 0
    assert (tmp_path / "out" / "predictions.parquet").is_file()
    bad = launcher.run(base + ["--model", str(tmp_path / "missing.model")], tmp_path / "bad.err", "uc01 serve")
    assert bad.returncode == 1 and bad.error.startswith("uc01 serve: ModelError: model file ") and "cannot read" in bad.error
