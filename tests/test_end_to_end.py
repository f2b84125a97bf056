"""The product end to end, for real: datagen -> closed `suite run` (real cache drops, a real
memory cgroup, MPI) -> `suite check` passes it -> one edited AU value makes it fail with an
integrity finding naming the file, the field and both values -> `suite metrics`/`suite report`."""

import json
import re

import pytest

from suite.enforce import detect


@pytest.fixture(scope="module")
def fresh_run(tmp_path_factory):
    from suite import cli

    if detect.detect_cgroup().version is None:
        pytest.skip("no memory cgroup on this machine")
    root = tmp_path_factory.mktemp("e2e")
    data, results = root / "data", root / "results"
    # cosmoflow a100, 1 accelerator, 256 MiB host memory: the rules need 500 files (500-step rule). a100's
    # 5.51 ms step (h100's: 3.5 ms) keeps the AU over the 70% threshold with another job on the 2 cores
    # (at h100 a loaded CI machine measured 63.7%); one more try where a burst of load still pushed it under.
    assert cli.main(["datagen", "--workload", "cosmoflow", "--accelerator-type", "a100", "--accelerators", "1",
                     "--host-memory", "256MiB", "--data-dir", str(data), "--processes", "2"]) == 0
    for attempt in (1, 2):
        results = root / ("results" if attempt == 1 else f"results-{attempt}")
        code = cli.main(["run", "--workload", "cosmoflow", "--accelerator-type", "a100", "--accelerators", "1",
                         "--data-dir", str(data), "--results-dir", str(results), "--memory-limit", "256MiB"])
        if code == 0:
            return results
    pytest.fail(f"two closed cosmoflow a100 runs were not compliant (exit {code}): see {results}")


def test_fresh_closed_run_is_compliant(fresh_run, run_cli):
    code, out, err = run_cli("check", fresh_run, "--format", "json")
    doc = json.loads(out)
    assert code == 0, out + err
    assert [b["verdict"] for b in doc["benchmarks"]] == ["closed"]
    runs = sorted(p.name for p in fresh_run.iterdir() if p.name.startswith("run-"))
    assert runs == [f"run-{k}" for k in range(1, 6)]
    for run in runs:
        res = json.loads((fresh_run / run / "results.json").read_text())
        assert res["complete"] and res["enforcement"]["cache_drop"]["succeeded"]
        assert res["enforcement"]["memory_limit"]["applied_bytes"] == 256 * 1024**2
        assert res["enforcement"]["memory_limit"]["removed"] is True


def test_one_edited_au_value_is_an_integrity_finding(fresh_run, run_cli, tmp_path):
    import shutil

    tampered = tmp_path / "tampered"
    shutil.copytree(fresh_run, tampered)
    summary = tampered / "run-3" / "summary.json"
    doc = json.loads(summary.read_text())
    original = doc["metric"]["train_au_percentage"][2]
    doc["metric"]["train_au_percentage"][2] = original - 1.5
    summary.write_text(json.dumps(doc, indent=4))
    code, out, _ = run_cli("check", tampered)
    assert code == 1
    line = next(l for l in out.splitlines() if "train_au_percentage[2]" in l)
    assert "run-3/summary.json" in line and "integrity" in line
    numbers = [float(x) for x in re.findall(r"(?:expected|got) ([0-9.]+)", line)]
    assert pytest.approx(original) in numbers and pytest.approx(original - 1.5) in numbers


def test_metrics_and_report_of_the_fresh_run(fresh_run, run_cli, tmp_path):
    code, out, _ = run_cli("metrics", fresh_run, "--format", "json")
    assert code == 0
    code, out, err = run_cli("report", fresh_run, "--out", tmp_path / "report")
    assert code == 0, err
    page = (tmp_path / "report" / "index.html").read_text()
    assert "closed" in page.lower() and "data:image/png;base64," in page


def test_closed_run_with_three_runs_is_not_compliant_in_run_as_in_check(fresh_run, run_cli):
    """Issue 24 (class 8): a closed run with 3 runs once printed "compliant" while `check` said INVALID;
    the run's last line and its exit code are now the checker's."""
    results = fresh_run.parent / "three"
    code, out, err = run_cli("run", "--workload", "cosmoflow", "--accelerator-type", "a100", "--accelerators", "1",
                             "--data-dir",
                             fresh_run.parent / "data", "--results-dir", results, "--memory-limit", "256MiB",
                             "--runs", "3")
    *_, said, last = out.strip().splitlines()
    check_code, check_out, _ = run_cli("check", results)
    assert code == check_code == 1, out + err
    assert last == check_out.strip().splitlines()[-1] == "verdict: INVALID NOT PUBLISHABLE (not compliant)"   # issue 38
    assert "suite check verdict: INVALID" in said and "structure-run-count" in said
    assert "; compliant" not in said and "INVALID" in check_out
