"""suite.harness.resultsdir: the results dir is claimed atomically -- invocations started together
never share one -- and a file or a non-empty directory is refused, one line, exit 2."""

import multiprocessing
import os

import pytest

from suite.errors import SuiteError
from suite.harness import resultsdir

CLAIMS = 6


def _claim(barrier, given, cwd, queue):
    os.chdir(cwd)
    barrier.wait()              # every process claims at the same moment
    try:
        path = resultsdir.claim(given, "race")
        queue.put(("ok", str(path.resolve())))
    except SuiteError as exc:
        queue.put(("refused", str(exc)))


def _race(given, cwd) -> list[tuple[str, str]]:
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(CLAIMS), ctx.Queue()
    procs = [ctx.Process(target=_claim, args=(barrier, given, cwd, queue)) for _ in range(CLAIMS)]
    for p in procs:
        p.start()
    out = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return out


def test_claims_started_together_of_the_default_each_get_their_own_dir(tmp_path):
    got = _race(None, tmp_path)
    paths = [p for how, p in got if how == "ok"]
    assert len(paths) == CLAIMS and len(set(paths)) == CLAIMS, got
    for p in paths:
        assert os.path.dirname(p) == str(tmp_path / "results") and os.path.basename(p).startswith("race-")
        assert os.listdir(p) == [resultsdir.CLAIM_NAME]       # each holds only its own claim


@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing-empty"])
def test_claims_started_together_of_one_given_dir_one_wins(tmp_path, existing):
    given = tmp_path / "R"
    if existing:
        given.mkdir()
    got = _race(str(given), tmp_path)
    assert [how for how, _ in got].count("ok") == 1, got
    for how, text in got:
        if how == "refused":
            assert "--results-dir" in text and str(given) in text and "\n" not in text
    assert os.listdir(given) == [resultsdir.CLAIM_NAME]


def test_release_leaves_the_results_and_a_claimed_dir_is_refused_until_then(tmp_path):
    path = resultsdir.claim(tmp_path / "R", "x")
    with pytest.raises(SuiteError, match="expected a new or empty directory"):
        resultsdir.claim(tmp_path / "R", "x")
    (path / "results.json").write_text("{}")
    resultsdir.release(path)
    assert os.listdir(path) == ["results.json"]
    with pytest.raises(SuiteError, match="expected a new or empty directory, got 1 entries"):
        resultsdir.claim(tmp_path / "R", "x")


def test_abandon_removes_only_a_dir_the_claim_made(tmp_path):
    made = resultsdir.claim(tmp_path / "new", "x")
    resultsdir.abandon(made)
    assert not made.exists()
    found = tmp_path / "found"
    found.mkdir()
    resultsdir.abandon(resultsdir.claim(found, "x"))
    assert found.is_dir() and os.listdir(found) == []


def test_the_default_is_results_name_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = resultsdir.claim(None, "unet3d_h100-1acc")
    assert first.parent == resultsdir.ROOT and first.name.startswith("unet3d_h100-1acc-20")
    other = resultsdir.claim(None, "unet3d_h100-1acc")
    assert other != first


@pytest.mark.parametrize("what", ["file", "non-empty"])
@pytest.mark.parametrize("argv", [
    ["run", "--workload", "unet3d", "--accelerators", "1", "--division", "open", "--no-cache-drop"],
    # v2.0's layout: R is the run's own dir (v3.0 writes a new R/checkpointing/<model>/<ts>/ leaf beside others)
    ["run", "--workload", "llama3-8b", "--accelerators", "8", "--checkpoints-read", "0", "--ruleset", "v2.0"],
    ["run", "--workload", "tpcx-ai", "--scale-factor", "0.01"],
    ["sweep", "--workload", "unet3d", "--accelerators", "1"],
], ids=["training", "checkpointing", "tpcx-ai", "sweep"])
def test_a_file_or_a_non_empty_dir_is_refused_one_line_exit_2(run_cli, tmp_path, what, argv):
    target = tmp_path / "R"
    if what == "file":
        target.write_text("mine")
    else:
        target.mkdir()
        (target / "old.json").write_text("{}")
    code, out, err = run_cli(*argv, "--results-dir", target)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "--results-dir" in err and str(target) in err
    assert "a file" in err if what == "file" else "expected a new or empty directory" in err
    assert (target.read_text() == "mine") if what == "file" else os.listdir(target) == ["old.json"]


def test_abandon_with_what_was_written_removes_only_this_claims_work(tmp_path):
    made = resultsdir.claim(tmp_path / "new", "x")
    (made / "run-1" / "steps").mkdir(parents=True)
    (made / "run-1" / "plan.json").write_text("{}")
    outside = tmp_path / "keep.txt"
    outside.write_text("mine")
    (made / "link").symlink_to(tmp_path)                # a link: removed, never followed
    resultsdir.abandon(made, written=True)
    assert not made.exists() and outside.read_text() == "mine"
    found = tmp_path / "found"
    found.mkdir()
    resultsdir.claim(found, "x")
    (found / "run-1").mkdir()
    resultsdir.abandon(found, written=True)
    assert found.is_dir() and os.listdir(found) == []


def test_abandon_without_our_claim_removes_nothing(tmp_path):
    d = tmp_path / "R"
    (d / "run-1").mkdir(parents=True)
    resultsdir.abandon(d, written=True)                  # no claim file: nothing here is ours
    assert os.listdir(d) == ["run-1"]


def test_the_default_a_prepare_named_is_the_one_claimed(tmp_path, monkeypatch):
    """Issue 46, class 10: the dir a run's prepare names (its fs_separation record, the reason it gives)
    is the dir claimed, whatever second the claim comes in; taken by then, the next free name is."""
    monkeypatch.setattr(resultsdir, "ROOT", tmp_path / "results")
    planned = resultsdir.default("w", "20260101T000000")          # named long before the claim
    assert resultsdir.claim(None, "w", planned=planned) == planned
    again = resultsdir.claim(None, "w", planned=planned)
    assert again == planned.with_name(planned.name + "-2")


def test_a_v3_runs_fs_separation_names_the_results_dir_it_wrote(tmp_path):
    """A real v3.0 run without --results-dir: every leaf's fs_separation.json names the dir claimed."""
    import json
    import subprocess
    import sys

    from suite.training.data import datagen
    from suite.training import workloads
    from tests.ours3_builders import FAST

    datagen.generate(workloads.resolve("retinanet", "b200"), tmp_path / "data", 24, processes=1)
    done = subprocess.run([sys.executable, "-m", "suite", "run", "--workload", "retinanet", "--accelerator-type",
                           "b200", "--accelerators", "1", "--ruleset", "v3.0", "--data-dir", str(tmp_path / "data"),
                           "--division", "open", "--runs", "1", *FAST], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    made = [p for p in (tmp_path / "results").iterdir() if p.is_dir() and p.name != "data"]
    assert len(made) == 1, done.stderr[-2000:]
    recorded = {json.loads(p.read_text())["results_path"] for p in made[0].rglob("fs_separation.json")}
    assert {str((tmp_path / r).resolve()) for r in recorded} == {str(made[0].resolve())}, (recorded, made[0])
