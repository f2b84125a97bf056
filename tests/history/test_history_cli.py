"""`suite history` on real runs: eight short runs of one setting, the runner's hidden per-file read
delay planted from run 5 on, each recording itself; regressions finds one change point at run 5;
trend writes its page; show flags results changed after recording; gc forgets what is gone; rerun
runs the recorded command again; --no-history records nothing; no credential reaches the store."""

import argparse
import json
import shutil

import pytest

from suite.history import db, record
from tests.compare.test_compare import run_args
from tests.training.run.test_runner import make_data

from tests.compare.test_compare import TINY

RUNS, PLANTED_FROM, DELAY_S = 8, 5, 0.08       # 12 files x 0.08 s of reads per epoch of 0.6 s compute: ~37 % slower


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    from suite import cli

    tmp = tmp_path_factory.mktemp("series")
    data = make_data(tmp / "data", "resnet50", TINY, 12)
    store = tmp / "history.sqlite"
    for k in range(1, RUNS + 1):
        extra = ("--debug-read-delay", str(DELAY_S)) if k >= PLANTED_FROM else ()
        argv = run_args(tmp, data, tmp / f"r{k}", 1, *extra, "--history", store)
        assert cli.main([str(x) for x in argv]) in (0, 1)
    return {"tmp": tmp, "data": data, "store": store}


@pytest.mark.timeout(300)
def test_every_run_recorded_itself_with_its_figures(series, run_cli):
    with db.open_store(str(series["store"])) as s:
        got = s.entries()
    assert len(got) == RUNS and {e.status for e in got} == {"ok"} and {e.source for e in got} == {"run"}
    assert len({e.system_fp for e in got}) == 1 and {e.workload for e in got} == {"resnet50"}
    assert all(e.figure("samples_per_second").per_run for e in got)
    assert got[0].command[:4] == ("suite", "run", "--workload", "resnet50") and got[0].verdict in ("compliant",
                                                                                                   "non-compliant")
    code, out, err = run_cli("history", "list", "--history", series["store"], "--workload", "resnet50")
    assert code == 0 and out.strip().splitlines()[-1] == f"{RUNS} entries"


@pytest.mark.timeout(300)
def test_the_planted_slowdown_is_one_regression_at_run_5(series, run_cli):
    code, out, err = run_cli("history", "regressions", "--history", series["store"], "--figure",
                             "samples_per_second", "--format", "json")
    found = json.loads(out)
    assert code == 1, err
    assert [(d["position"], d["verdict"]) for d in found] == [(PLANTED_FROM, "regression")]
    assert found[0]["high"] < 1.0 and found[0]["change_percent"] < -20
    code, out, err = run_cli("history", "trend", "--history", series["store"], "--workload", "resnet50",
                             "--out", series["tmp"] / "page")
    assert code == 0 and "1 change point(s)" in out and "REGRESSION" in out
    html = (series["tmp"] / "page" / "index.html").read_text()
    assert "Change points" in html and "regression" in html and (series["tmp"] / "page" / "plots" / "trend-1.png").is_file()


@pytest.mark.timeout(300)
def test_compare_with_the_history_baseline_sees_the_slowdown(series, run_cli):
    code, out, err = run_cli("compare", series["tmp"] / "r1", "--baseline", "history", "--history", series["store"],
                             "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    figs = {f["figure"]: f for f in doc["comparisons"][0]["figures"]}
    assert figs["samples_per_second"]["verdict"] == "faster"     # r1 against the series' current (slowed) level


@pytest.mark.timeout(300)
def test_show_flags_tampered_results_and_gc_forgets_gone_ones(series, run_cli, tmp_path):
    store = tmp_path / "h.sqlite"
    copy = tmp_path / "r2"
    shutil.copytree(series["tmp"] / "r2", copy)
    code, out, err = run_cli("history", "import", copy, "--history", store)
    assert code == 0 and "1 recorded" in out
    code, out, err = run_cli("history", "import", copy, "--history", store)
    assert code == 0 and "0 recorded, 1 already there" in out
    code, out, err = run_cli("history", "show", "1", "--history", store)
    assert code == 0 and "unchanged since recorded" in out
    summary = copy / "run-1" / "summary.json"
    summary.write_text(summary.read_text().replace("\"", "\"", 1) + " ")
    code, out, err = run_cli("history", "show", "1", "--history", store)
    assert code == 1 and "TAMPERED" in out
    shutil.rmtree(copy)
    code, out, err = run_cli("history", "gc", "--history", store)
    assert code == 0 and "1 entry forgotten" in out
    code, out, err = run_cli("history", "show", "1", "--history", store)
    assert code == 2 and "got 1 (none)" in err


@pytest.mark.timeout(300)
def test_rerun_runs_the_recorded_command_into_a_new_dir_and_no_history_records_nothing(series, run_cli, tmp_path):
    from suite import cli

    store = tmp_path / "h.sqlite"
    argv = run_args(series["tmp"], series["data"], tmp_path / "once", 1, "--history", store)
    assert cli.main([str(x) for x in argv]) in (0, 1)
    code, out, err = run_cli("history", "rerun", "1", "--yes", "--history", store, "--results-dir", tmp_path / "again")
    assert code in (0, 1) and (tmp_path / "again" / "run-1").is_dir()
    argv = run_args(series["tmp"], series["data"], tmp_path / "quiet", 1, "--history", store, "--no-history")
    assert cli.main([str(x) for x in argv]) in (0, 1)
    with db.open_store(str(store)) as s:
        got = s.entries()
    assert [e.results_path.rsplit("/", 1)[-1] for e in got] == ["once", "again"]
    assert got[1].command[got[1].command.index("--results-dir") + 1] == str(tmp_path / "again")


SECRETS = ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "tok-123-secret", "hunter2")


def test_no_credential_reaches_the_store(series, tmp_path):
    """A run's record with credentials in its command line: the store's files hold none of them."""
    store = tmp_path / "h.sqlite"
    args = argparse.Namespace(history=str(store), results_dir=str(series["tmp"] / "r3"), workload="resnet50",
                              argv=["run", "--workload", "resnet50", "--param", f"storage.access_key_id={SECRETS[0]}",
                                    "--param", f"storage.secret_access_key={SECRETS[1]}", f"--token={SECRETS[2]}",
                                    "--s3-password", SECRETS[3], "--data-dir", f"s3://me:{SECRETS[3]}@bucket/x",
                                    f"AWS_SESSION_TOKEN={SECRETS[2]}", f"--note={SECRETS[0]}"])
    record.RunRecord(args).finish(0, "ok")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("h.sqlite*"))
    assert raw and not [s for s in SECRETS if s.encode() in raw]
    with db.open_store(str(store)) as s:
        (e,) = s.entries()
    assert "--s3-password" in e.command and sum("REDACTED" in a for a in e.command) >= 7 and "resnet50" in e.command
