"""`suite submission add`: a real closed run goes to its place; every kind of wrong input is refused
with one line (file, field, expected, got), exit 2, and the tree left as it was."""

import json
import shutil

import pytest

from submission_helpers import snapshot, spoiled_copy

# the first test here may make the shared real run (datagen + 5 runs, once more if the machine is busy);
# closed_results is made once for all workers (tests/conftest.once)
pytestmark = pytest.mark.timeout(900)


@pytest.fixture
def tree(run_cli, tmp_path):
    root = tmp_path / "sub"
    assert run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")[0] == 0
    return root


def test_runs_and_generation_log_go_to_their_place(run_cli, tree, closed_results):
    code, out, err = run_cli("submission", "add", tree, closed_results, "--system", "box1")
    assert code == 0, err
    bench = tree / "Closed" / "ACME" / "results" / "box1" / "cosmoflow-a100"
    assert sorted(p.name for p in bench.glob("run-*")) == [f"run-{k}" for k in range(1, 6)]
    assert (bench / "mlperf_storage_report.json").is_file() and (bench / "run-3" / "summary.json").is_file()
    gen = tree / "Closed" / "ACME" / "generation_logs" / "box1" / "cosmoflow-a100"
    assert json.loads((gen / "generation_log.json").read_text())["num_files"] == 500
    assert "++workload.workflow.generate_data=True" in (gen / "configs" / "overrides.yaml").read_text()
    assert str(bench) in out


def test_existing_target_is_refused_and_replace_keeps_the_old_copy(run_cli, tree, closed_results):
    run_cli("submission", "add", tree, closed_results, "--system", "box1")
    before = snapshot(tree)
    code, _, err = run_cli("submission", "add", tree, closed_results, "--system", "box1")
    assert code == 2 and "cosmoflow-a100: target: expected a new path" in err and "got an existing directory" in err
    assert snapshot(tree) == before
    code, out, err = run_cli("submission", "add", tree, closed_results, "--system", "box1", "--replace")
    assert code == 0, err
    kept = list((tree.parent / "sub.replaced").glob("*/Closed/ACME/results/box1/cosmoflow-a100/run-1/summary.json"))
    assert len(kept) == 1 and "old copy kept at" in out


BAD = {
    "miniature": (dict(run=2, miniature=True), "run-2/results.json: miniature: expected false"),
    "open run": (dict(run=1, division="open"), "run-1/results.json: division: expected closed"),
    "non-compliant": (dict(run=4, compliance={"compliant": False, "reasons": ["cache drop failed"]}),
                      "compliance.compliant: expected true for the closed division, got false (cache drop failed)"),
    "failed run": (dict(run=5, status="failed", complete=False), "run-5/results.json: status: expected complete"),
    "other system": (dict(run=3, hosts=["elsewhere"]), "hosts: expected hosts of the system description"),
    "workload mix-up": (dict(run=2, workload="unet3d"), "run-2/results.json: workload: expected 'cosmoflow'"),
    "other ruleset": (dict(run=1, ruleset="v2.0"), "ruleset: expected"),
    "unreadable evidence": (dict(run=1, dataset={"data_dir": "/nonexistent/data", "format": "tfrecord",
                                                  "num_files_train": 500, "num_samples_per_file": 1,
                                                  "total_bytes": 1}),
                            "dataset.data_dir: expected one data dir for all runs"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_results_are_refused_and_nothing_changes(run_cli, tree, closed_results, tmp_path, case):
    fields, message = BAD[case]
    bad = spoiled_copy(closed_results, tmp_path / "bad", **fields)
    before = snapshot(tree)
    code, out, err = run_cli("submission", "add", tree, bad, "--system", "box1")
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("suite submission: error: ")
    assert snapshot(tree) == before


def test_fewer_than_five_runs_are_refused_for_closed(run_cli, tree, closed_results, tmp_path):
    bad = spoiled_copy(closed_results, tmp_path / "four")
    shutil.rmtree(bad / "run-5")
    code, _, err = run_cli("submission", "add", tree, bad, "--system", "box1")
    assert code == 2 and "runs: expected at least 5 for the closed division, got 4" in err


def test_missing_generation_log_is_unreadable_evidence(run_cli, tree, closed_results, tmp_path):
    bad = spoiled_copy(closed_results, tmp_path / "nolog")
    data = tmp_path / "data-without-log"
    data.mkdir()
    for run in bad.glob("run-*/results.json"):
        doc = json.loads(run.read_text())
        doc["dataset"]["data_dir"] = str(data)
        run.write_text(json.dumps(doc))
    code, _, err = run_cli("submission", "add", tree, bad, "--system", "box1")
    assert code == 2 and "generation_log.json: file: expected the generation log" in err


def test_unknown_system_and_not_a_results_dir(run_cli, tree, closed_results, tmp_path):
    code, _, err = run_cli("submission", "add", tree, closed_results, "--system", "nobox")
    assert code == 2 and "nobox.json: file: expected the system description of 'nobox'" in err
    code, _, err = run_cli("submission", "add", tree, tmp_path, "--system", "box1")
    assert code == 2 and "runs: expected run-<k>/results.json" in err


def test_a_v2_tree_reads_its_hosts_from_yaml_and_refuses_a_v1_run(run_cli, tmp_path, closed_results):
    root = tmp_path / "v2"
    assert run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box2",
                   "--ruleset", "v2.0")[0] == 0
    code, _, err = run_cli("submission", "add", root, closed_results, "--system", "box2")
    assert code == 2 and "run-1/results.json: ruleset: expected v2.0 (the submission's), got 'v1.0'" in err
    assert not (root / "Closed" / "ACME" / "results" / "box2").exists()


def test_a_corrupt_results_json_is_one_line_naming_it(run_cli, tree, closed_results, tmp_path):
    bad = spoiled_copy(closed_results, tmp_path / "corrupt")
    (bad / "run-3" / "results.json").write_text('{"status": "complete",')
    before = snapshot(tree)
    code, _, err = run_cli("submission", "add", tree, bad, "--system", "box1")
    assert code == 2 and "run-3/results.json: line 1: expected valid JSON" in err
    assert len(err.strip().splitlines()) == 1 and snapshot(tree) == before
