"""`suite submission init`: the ruleset's layout, a schema-valid description with TODOs, refusals."""

import json

import pytest
import yaml

from suite import files
from suite.submission import system

from submission_helpers import snapshot


def test_v1_layout_and_schema_valid_description(run_cli, tmp_path):
    root = tmp_path / "sub"
    code, out, err = run_cli("submission", "init", root, "--org", "ACME", "--division", "closed",
                             "--system", "box1", "--data-dir", tmp_path)
    assert code == 0, err
    org = root / "Closed" / "ACME"
    assert sorted(p.name for p in org.iterdir()) == ["code", "generation_logs", "results", "systems"]
    doc = json.loads((org / "systems" / "box1.json").read_text())
    assert files.schema_errors(doc, "system-v1.0") == []
    assert doc["benchmark_hosts"][0]["node_name"]        # this host, where the runs are made
    assert doc["nodes"][0]["DRAM"]["capacity_MiB"] > 0   # read from /proc/meminfo
    assert doc["storage_system"]["solution_type"]        # the data dir's file-system type
    todo = system.todos(doc)
    assert ("storage_system.vendor_name", "storage vendor") in todo
    assert "TODO storage_system.vendor_name: storage vendor" in out
    assert json.loads((root / "suite-submission.json").read_text())["ruleset"] == "v1.0"


def test_v2_description_is_yaml_valid_against_its_schema(run_cli, tmp_path):
    root = tmp_path / "sub"
    assert run_cli("submission", "init", root, "--org", "ACME", "--division", "open", "--system", "box2",
                   "--ruleset", "v2.0")[0] == 0
    doc = yaml.safe_load((root / "Open" / "ACME" / "systems" / "box2.yaml").read_text())
    assert files.schema_errors(doc, "system-v2.0") == []
    assert doc["System"]["name"] == "box2" and doc["Nodes"]["client"]["hostnames"]


def test_each_todo_is_a_checker_finding(run_cli, tmp_path):
    root = tmp_path / "sub"
    run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")
    found = system.todo_findings(root)
    assert found and {f.rule_id for f in found} == {"submission-system-todo"}
    assert all(f.effect == "closed" and f.severity == "warning" for f in found)   # a note, not a verdict
    f = next(f for f in found if f.field == "storage_system.vendor_name")
    assert f.path == "Closed/ACME/systems/box1.json" and "TODO (storage vendor)" in f.message


def test_a_second_system_joins_the_same_tree(run_cli, tmp_path):
    root = tmp_path / "sub"
    run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")
    assert run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box2")[0] == 0
    assert (root / "Closed" / "ACME" / "systems" / "box2.json").is_file()


@pytest.mark.parametrize("argv, message", [
    (["--org", "ACME", "--division", "closed", "--system", "box1"], "box1.json: file: expected a new system description"),
    (["--org", "Other", "--division", "closed", "--system", "box9"], "org: expected 'Other' (as given), got 'ACME'"),
    (["--org", "ACME", "--division", "open", "--system", "box9"], "division: expected 'open'"),
    (["--org", "ACME", "--division", "closed", "--system", "../x"], "--system: name: expected letters"),
])
def test_refusals_change_nothing(run_cli, tmp_path, argv, message):
    root = tmp_path / "sub"
    run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")
    before = snapshot(root)
    code, out, err = run_cli("submission", "init", root, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert snapshot(root) == before


def test_a_non_empty_directory_that_is_not_a_tree_is_refused(run_cli, tmp_path):
    (tmp_path / "mine.txt").write_text("keep")
    code, _, err = run_cli("submission", "init", tmp_path, "--org", "A", "--division", "closed", "--system", "s")
    assert code == 2 and "expected a new or empty directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_other_subcommands_refuse_a_dir_that_is_not_a_tree(run_cli, tmp_path):
    for argv in (["add", tmp_path, tmp_path, "--system", "s"], ["describe", tmp_path, "--system", "s"],
                 ["package", tmp_path]):
        code, _, err = run_cli("submission", *argv)
        assert code == 2 and "suite-submission.json: expected a submission tree" in err


def test_todo_findings_never_read_through_links(run_cli, tmp_path):
    import os

    root = tmp_path / "sub"
    run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")
    outside = tmp_path / "outside"
    (outside / "systems").mkdir(parents=True)
    (outside / "systems" / "x.json").write_text('{"a": "TODO: secret"}')
    os.symlink(outside, root / "Closed" / "Linked")
    assert all("Linked" not in f.path for f in system.todo_findings(root))
    assert any(f.path.startswith("Closed/ACME/") for f in system.todo_findings(root))
