"""suite.harness.enforced: the one loop of runs, driven by a throwaway kind (no MPI): the results dir
claimed, one cache clear per run, the run set written however the series ends, signals between runs;
and the harness sits below the kinds (it imports none of them, not even inside a function)."""

import ast
import os
import signal
from dataclasses import dataclass
from pathlib import Path

import paths
import pytest

from suite.errors import RunError
from suite.harness import enforced, resultsdir
from suite.harness.enforced import Series, SkippedDrop


@dataclass
class Cleared:
    succeeded: bool = True
    duration_s: float = 0.01
    error: str | None = None


class Toy:
    """A kind: prepare says how many runs; run_once writes run-<k>/ and says how it went."""

    def __init__(self, results_dir, runs=3, statuses=None, no_clear=False, on_run=None):
        self.given, self.runs, self.statuses, self.on_run = results_dir, runs, statuses or {}, on_run
        self.clears, self.drops, self.written, self.claimed = 0, [], [], None
        self.no_clear = no_clear

    def clear(self):
        self.clears += 1
        return Cleared()

    def prepare(self) -> Series:
        return Series(name="toy", results_dir=self.given, runs=self.runs,
                      clear_cache=None if self.no_clear else self.clear,
                      write_run_set=self.written.append, started=self.started)

    def started(self, path):
        self.claimed = Path(path)
        assert os.listdir(path) == [resultsdir.CLAIM_NAME]

    def run_once(self, k, drop):
        self.drops.append(drop)
        (self.claimed / f"run-{k}").mkdir()
        if self.on_run:
            self.on_run(k)
        status = self.statuses.get(k, "complete")
        return {"run": k, "status": status, "error": None if status == "complete" else f"run {k} {status}"}


def test_runs_each_after_one_clear_and_the_run_set_written(tmp_path, capsys):
    toy = Toy(tmp_path / "R")
    series, results = enforced.run(toy)
    assert series.results_dir == tmp_path / "R" == toy.claimed
    assert [r["run"] for r in results] == [1, 2, 3] and toy.clears == 3
    assert toy.written == [results]
    assert sorted(os.listdir(tmp_path / "R")) == ["run-1", "run-2", "run-3"]      # the claim released
    out = capsys.readouterr().out
    assert "[run 1/3] cache drop: done in 0.01 s" in out and "[run 3/3] cache drop" in out


def test_no_cache_drop_is_recorded_as_skipped(tmp_path):
    toy = Toy(tmp_path / "R", runs=1, no_clear=True)
    enforced.run(toy)
    assert toy.drops == [SkippedDrop()] and toy.drops[0].to_dict()["attempted"] is False


def test_a_failed_run_stops_the_series_and_the_run_set_keeps_it(tmp_path):
    toy = Toy(tmp_path / "R", statuses={2: "failed"})
    with pytest.raises(RunError, match=r"run-2: run 2 failed$"):
        enforced.run(toy)
    assert [r["run"] for r in toy.written[0]] == [1, 2] and toy.clears == 2
    assert resultsdir.CLAIM_NAME not in os.listdir(tmp_path / "R")


def test_an_interrupted_run_says_results_json_marks_it(tmp_path):
    toy = Toy(tmp_path / "R", statuses={1: "interrupted"})
    with pytest.raises(RunError, match="run-1: run 1 interrupted; results.json marks the run interrupted"):
        enforced.run(toy)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_between_runs_ends_the_series_and_writes_the_run_set(tmp_path, sig):
    before = signal.getsignal(sig)
    toy = Toy(tmp_path / "R", on_run=lambda k: k == 2 and os.kill(os.getpid(), sig))
    with pytest.raises(RunError, match=rf"interrupted by {sig.name} between runs \(1 of 3 complete\)"):
        enforced.run(toy)
    assert [r["run"] for r in toy.written[0]] == [1]
    assert signal.getsignal(sig) == before       # the handlers restored


def test_a_refusal_in_prepare_claims_nothing(tmp_path):
    class Refused(Toy):
        def prepare(self):
            raise RunError("refused")

    with pytest.raises(RunError, match="refused"):
        enforced.run(Refused(tmp_path / "R"))
    assert not (tmp_path / "R").exists()


def test_the_closed_division_refuses_a_cache_clear_it_may_not_make():
    from suite.errors import RuleError

    denied = lambda: Cleared(succeeded=False, error="not permitted")      # noqa: E731
    with pytest.raises(RuleError, match="cache drop: expected permission .* got not permitted"):
        enforced.refuse_without_clear(denied, "closed", False)
    enforced.refuse_without_clear(denied, "closed", True)
    enforced.refuse_without_clear(denied, "open", False)


def _imported(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_the_harness_sits_below_the_kinds_and_launch_dlio_have_no_cycle():
    above = ("suite.storage", "suite.training.sweep", "suite.tpcx_ai", "suite.cli", "suite.kinds", "suite.commands")
    for path in (paths.REPO / "suite" / "harness").glob("*.py"):
        bad = sorted(m for m in _imported(path) if m.startswith(above))
        assert bad == [], f"{path.name} imports {bad}"
    dlio = _imported(paths.REPO / "suite" / "training" / "run" / "dlio.py")
    assert not {m for m in dlio if m.startswith("suite.training.run.launch")} and "suite.training.run.launch" not in dlio


# --------------------------------------------------------------------------- issue 24: refusals after the claim, full disks

@pytest.mark.parametrize("existing", [False, True], ids=["new-dir", "found-empty-dir"])
def test_a_refusal_after_the_claim_leaves_nothing_half_made(tmp_path, existing):
    from suite.errors import SuiteError

    given = tmp_path / "R"
    if existing:
        given.mkdir()

    def refuse(k):
        (toy.claimed / "run-1" / "plan.json").write_text("{}")
        raise SuiteError("--memory-limit: bytes: expected at least 1048576, got 1024")
    toy = Toy(given, on_run=refuse)
    with pytest.raises(SuiteError, match="memory-limit") as exc:
        enforced.run(toy)
    assert not isinstance(exc.value, RunError) and toy.written == []
    assert (os.listdir(given) == []) if existing else not given.exists()
    series, results = enforced.run(Toy(given, runs=1))          # the corrected command goes
    assert [r["status"] for r in results] == ["complete"]


def test_a_refusal_after_a_complete_run_keeps_that_run(tmp_path):
    from suite.errors import SuiteError

    def refuse(k):
        if k == 2:
            raise SuiteError("a refusal at run 2")
    toy = Toy(tmp_path / "R", on_run=refuse)
    with pytest.raises(SuiteError):
        enforced.run(toy)
    assert [r["run"] for r in toy.written[-1]] == [1] and (tmp_path / "R" / "run-1").is_dir()


@pytest.mark.parametrize("code", [28, 27, 122, 30], ids=["ENOSPC", "EFBIG", "EDQUOT", "EROFS"])
def test_a_resource_error_during_a_run_is_one_line_and_the_run_set_written(tmp_path, code):
    def full(k):
        if k == 2:
            raise OSError(code, os.strerror(code), str(tmp_path / "R" / "run-2" / "steps" / "0.json"))
    toy = Toy(tmp_path / "R", on_run=full)
    with pytest.raises(RunError) as exc:
        enforced.run(toy)
    message = str(exc.value)
    assert "\n" not in message and "run-2/steps/0.json: cannot write" in message and "the run failed" in message
    assert [r["run"] for r in toy.written[-1]] == [1]
    assert resultsdir.CLAIM_NAME not in os.listdir(tmp_path / "R")


def test_a_run_set_that_cannot_be_written_says_so_with_what_ended_the_series(tmp_path):
    import errno

    def full(k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "R" / "run-1" / "x"))

    def cannot(results):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "R" / "run_set.json"))
    toy = Toy(tmp_path / "R", on_run=full)
    toy.written = type("W", (), {"append": staticmethod(cannot)})()
    with pytest.raises(RunError) as exc:
        enforced.run(toy)
    message = str(exc.value)
    assert "run-1/x: cannot write" in message and "run_set.json: cannot write" in message and "incomplete" in message
