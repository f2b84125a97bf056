"""A failed kv_cache trial is never a result (issue 36, class 11), on real runs: the cache dir a 2 MiB
tmpfs, so a rank hits ENOSPC (--kv-storage-capacity-gb 1: the tier thinks it has room) or every
allocation is refused (the default capacity, the dir's free space: requests served from no tier), and
a trial too short for any request to complete (no error anywhere). Each run exits 1 with an INVALID
verdict line; its leaf says failed with the reason (metadata, summary.json); `suite check` gives a
kvcache-trials-complete error that counts; `metrics` shows no figure for the option; `compare` leaves
the trial out; `submission add` refuses the leaf. Then forged leaves (the metadata edited to
"complete", the logs emptied, a good run's rank file zeroed): the check re-derives the failure from
the rank outputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

COMMON = ("--option", "1", "--trials", "1", "--inter-option-delay", "0", "--accelerators", "1", "--allow-no-cache-drop",
          "--division", "open")


def _mounted(where: Path, size: str = "2m") -> Path:
    where.mkdir(parents=True)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    return where


def _run(where: Path, *extra) -> tuple[Path, int, str]:
    """One kv-cache run, its cache dir a fresh 2 MiB tmpfs (unmounted after): (leaf, exit code, output)."""
    from suite import cli

    cache = _mounted(where / "cache")
    out = where / "stdout.txt"
    try:
        with open(out, "w") as fh:
            import contextlib

            with contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
                try:
                    code = cli.main([str(a) for a in ("run", "--workload", "kv-cache", "--cache-dir", cache,
                                                      "--results-dir", where / "R", *COMMON, *extra)])
                except SystemExit as exc:
                    code = exc.code
    finally:
        subprocess.run(["umount", str(cache)], check=False)
    leaf, = (where / "R").glob("kv_cache/*/run/*")
    return leaf, code, out.read_text()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("failed")
    return {"enospc": _run(base / "enospc", "--duration", 2, "--kv-users", 4, "--kv-storage-capacity-gb", 1),
            "refused": _run(base / "refused", "--duration", 2, "--kv-users", 4),
            "no_request": _run(base / "none", "--duration", 0.05, "--kv-users", 1)}


@pytest.fixture
def leaf_of(runs, tmp_path):
    def copy(name: str) -> Path:
        src = runs[name][0]
        dest = tmp_path / name / src.relative_to(src.parents[3])
        shutil.copytree(src, dest)
        return dest
    return copy


def jedit(path: Path, fn) -> None:
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def _meta(leaf: Path) -> Path:
    return next(leaf.glob("kv_cache_*_metadata.json"))


def checked(run_cli, leaf) -> tuple[int, dict]:
    code, out, err = run_cli("check", leaf, "--format", "json")
    assert err == "" or "Traceback" not in err
    return code, json.loads(out)


def failed_findings(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["rule_id"] == "kvcache-trials-complete"]


REASONS = {"enospc": "No space left on device", "refused": "no entry written to any tier",
           "no_request": "requests_completed 0 over 1 rank(s)"}


@pytest.mark.parametrize("name", sorted(REASONS))
def test_the_run_fails_and_its_leaf_says_why(runs, name):
    leaf, code, out = runs[name]
    lines = out.strip().splitlines()
    flat = " ".join(out.split())          # the reason as said, whichever line the 100-column wrap broke
    assert code == 1 and "suite run: kv-cache FAILED" in out and REASONS[name] in flat
    assert lines[-1] == "verdict: INVALID NOT PUBLISHABLE (not compliant)" and "Traceback" not in out
    trial, = json.loads(_meta(leaf).read_text())["suite"]["trials"]
    assert trial["status"] == "failed" and REASONS[name] in trial["error"]
    summary = json.loads((leaf / "summary.json").read_text())
    assert summary["partial_failure"] is True and REASONS[name] in summary["trial_failures"]["option_1/trial_0"]
    option = summary["options"]["1"]
    assert option["valid"] is False and option["aggregated_avg_throughput_tokens_per_sec"] is None


@pytest.mark.parametrize("name", sorted(REASONS))
def test_check_gives_an_error_that_counts(runs, run_cli, name):
    code, doc = checked(run_cli, runs[name][0])
    hit = failed_findings(doc)
    assert hit and all(f["effect"] == "invalid" and f["severity"] == "error" for f in hit)
    assert (code, doc["verdict"], doc["compliant"]) == (1, "invalid", False)
    assert doc["options"]["1"]["aggregated_avg_throughput_tokens_per_sec"] is None


@pytest.mark.parametrize("name", sorted(REASONS))
def test_metrics_shows_no_valid_figure(runs, run_cli, name):
    leaf = runs[name][0]
    code, out, _ = run_cli("metrics", leaf, "--format", "json")
    doc = json.loads(out)
    option = doc["options"]["1"]
    assert option["valid"] is False and option["failed_trials"]
    assert all(option[k] is None for k in ("aggregated_avg_throughput_tokens_per_sec", "aggregated_p95_latency_ms",
                                           "aggregated_read_bandwidth_gbps", "aggregated_write_bandwidth_gbps"))
    assert doc["verdict"] == "invalid"
    code, out, _ = run_cli("metrics", leaf)
    row = next(x for x in out.splitlines() if x.startswith("1 (storage only)"))
    assert "FAILED (no result)" in row and "0.0" not in row
    assert "option 1 FAILED:" in out and out.strip().splitlines()[-1].startswith("verdict: INVALID")


def test_compare_leaves_the_failed_trial_out(runs):
    from suite.kv_cache import compared

    for name in REASONS:
        m, = compared.measured(runs[name][0])
        assert m.figures == () and any("left out (failed" in n for n in m.notes), (name, m.notes)


@pytest.mark.parametrize("name", sorted(REASONS))
def test_submission_add_refuses_it(runs, run_cli, tmp_path, name):
    tree = tmp_path / "S"
    code, _, err = run_cli("submission", "init", "--org", "Org", "--division", "open", "--system", "sys",
                           "--ruleset", "v3.0", tree)
    assert code == 0, err
    leaf = runs[name][0]
    for given in (leaf.parents[1], leaf.parents[3]):          # kv_cache/<model>/, the results dir
        code, out, err = run_cli("submission", "add", "--system", "sys", tree, given)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not list(tree.rglob("kvcache_results_*.json"))


def test_forged_complete_with_the_enospc_in_the_rank_log(leaf_of, run_cli):
    leaf = leaf_of("enospc")
    jedit(_meta(leaf), lambda d: d["suite"]["trials"][0].update(status="complete", error=None))
    jedit(leaf / "summary.json", lambda d: d.update(trial_failures={}, partial_failure=False))
    code, doc = checked(run_cli, leaf)
    hit = [f for f in failed_findings(doc) if " log " in f["field"]]
    assert hit and hit[0]["expected"] == "no traceback or I/O error" and "No space left on device" in hit[0]["actual"]
    assert (code, doc["verdict"]) == (1, "invalid")


@pytest.mark.parametrize("name, field", [("refused", "summary.cache_stats.prefill_writes"),
                                         ("no_request", "requests_completed")])
def test_forged_complete_with_clean_logs_is_caught_from_the_rank_files(leaf_of, run_cli, name, field):
    leaf = leaf_of(name)
    jedit(_meta(leaf), lambda d: d["suite"]["trials"][0].update(status="complete", error=None))
    for log in leaf.glob("*.std*.log"):
        log.write_text("")
    jedit(leaf / "summary.json", lambda d: d.update(trial_failures={}, partial_failure=False))
    code, doc = checked(run_cli, leaf)
    hit = failed_findings(doc)
    assert [f["actual"] for f in hit if field in f["field"]] == [0]
    assert (code, doc["verdict"]) == (1, "invalid")
    _, out, _ = run_cli("metrics", leaf, "--format", "json")
    assert json.loads(out)["options"]["1"]["aggregated_avg_throughput_tokens_per_sec"] is None


def test_a_good_runs_rank_file_zeroed_is_caught(run_cli, tmp_path, monkeypatch):
    """The miniature (its cache dir ./results/kvcache-data/, tiny entries: requests in a second); its
    tokens zeroed in the rank file (with the tokens/s that follow): the trial served nothing."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("run", "--workload", "kv-cache", "--results-dir", tmp_path / "R", *COMMON,
                             "--duration", 1)
    leaf, = (tmp_path / "R").glob("kv_cache/*/run/*")
    code, doc = checked(run_cli, leaf)
    assert failed_findings(doc) == [] and doc["options"]["1"]["aggregated_avg_throughput_tokens_per_sec"] > 0
    rank = next(leaf.glob("option_1/trial_0/rank_0/kvcache_results_*.json"))

    def zero(d):
        d["total_tokens_generated"] = 0
        d["summary"].update(total_tokens=0, avg_throughput_tokens_per_sec=0.0, storage_throughput_tokens_per_sec=0.0)
    jedit(rank, zero)
    code, doc = checked(run_cli, leaf)
    assert {f["field"].split()[-1] for f in failed_findings(doc)} >= {"total_tokens_generated"}
    assert (code, doc["verdict"]) == (1, "invalid")


def test_the_report_shows_the_failure_not_a_figure(runs, run_cli, tmp_path):
    code, out, err = run_cli("report", runs["enospc"][0], "--out", tmp_path / "rep")
    assert code in (0, 1) and "Traceback" not in err, err
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "FAILED (no result)" in html and "No space left on device" in html and "INVALID" in html
    row = (tmp_path / "rep" / "kvcache_options.csv").read_text().splitlines()[1]
    assert row.startswith("1,") and "0.0" not in row
