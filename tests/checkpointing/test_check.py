"""`suite check` on checkpointing trees built by tests/checkpoint_builders.py: verdicts, exit codes,
hostile input (links, broken files) as one-line bad input."""

import json

from checkpoint_builders import checkpoint_tree, edit_set


def test_compliant_pair_exit_0_and_wrong_closed_count_exit_1(run_cli, tmp_path):
    root = checkpoint_tree(tmp_path)
    code, out, err = run_cli("check", root)
    assert code == 0 and "CLOSED   R" in out and "CLOSED   W" in out, out + err
    # a closed pair run with 16 processes (8 in Table 2): open. (Issue 24: the run set relabelled alone,
    # processes=64 over runs of 8, now also contradicts its runs: checkpoint-run-set-recomputed, invalid.)
    root = checkpoint_tree(tmp_path / "p16", processes=16)
    code, out, err = run_cli("check", root, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "open" and doc["compliant"] is False
    found = [f for b in doc["benchmarks"] for f in b["findings"]]
    assert sorted((f["rule_id"], f["expected"], f["actual"], f["path"]) for f in found) == [
        ("checkpoint-closed-processes", 8, 16, "R/checkpoint_run_set.json"),
        ("checkpoint-closed-processes", 8, 16, "W/checkpoint_run_set.json")]
    edit_set("W", lambda d: d.update(processes=64))(root)
    code, out, err = run_cli("check", root, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "invalid" and any(
        (f["rule_id"], f["expected"], f["actual"]) == ("checkpoint-run-set-recomputed", 16, 64)
        for b in doc["benchmarks"] for f in b["findings"])


def test_open_division_more_processes_is_compliant(run_cli, tmp_path):
    root = checkpoint_tree(tmp_path, division="open", processes=16)
    code, out, err = run_cli("check", root)
    assert code == 0, out


def test_a_linked_or_broken_result_is_bad_input(run_cli, tmp_path):
    root = checkpoint_tree(tmp_path, runs=2)
    target = root / "R" / "run-2" / "results.json"
    outside = tmp_path / "elsewhere.json"
    target.rename(outside)
    target.symlink_to(outside)
    code, out, err = run_cli("check", root)
    assert code == 2 and "symbolic link" in err and len(err.strip().splitlines()) == 1
    target.unlink()
    target.write_text('{"kind": "checkpointing", ')
    code, out, err = run_cli("check", root)
    assert code == 2 and "R/run-2/results.json" in err and "expected valid JSON" in err
    target.write_text(json.dumps({**json.loads(outside.read_text()), "processes": -1}))
    code, out, err = run_cli("check", root)
    assert code == 2 and "processes" in err
    good = json.loads(outside.read_text())
    good["checkpoints"][0]["duration_s"] = float("nan")
    target.write_text(json.dumps(good))
    code, out, err = run_cli("check", root)
    assert code == 2 and "checkpoints[0].duration_s: expected a finite number, got NaN" in err


def test_ruleset_other_than_v2_is_refused(run_cli, tmp_path):
    code, out, err = run_cli("check", checkpoint_tree(tmp_path, runs=1), "--ruleset", "v1.0")
    assert code == 2 and "expected v2.0" in err
