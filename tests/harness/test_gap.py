"""The v3.0 back-to-back rule in the harness: each gap between runs (the cache clear included) is
measured and recorded beside the clear's evidence; a gap not shorter than the run before stops a
closed series (one line, exit 2 from the CLI), and is a recorded reason in the open division."""

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from suite.errors import RuleError
from suite.harness import enforced
from suite.harness.enforced import Series


@dataclass
class Clear:
    seconds: float
    succeeded: bool = True
    error: str | None = None

    @property
    def duration_s(self):
        return self.seconds

    def to_dict(self):
        return {"succeeded": True, "duration_s": self.seconds}


class Timed:
    """Runs of `run_s` seconds, cache clears of `clear_s` (real sleeps, a real clock)."""

    def __init__(self, results_dir, run_s, clear_s, closed=True, runs=3):
        self.results_dir, self.run_s, self.clear_s, self.closed, self.runs = results_dir, run_s, clear_s, closed, runs
        self.drops = []

    def clear(self):
        time.sleep(self.clear_s)
        return Clear(self.clear_s)

    def prepare(self):
        return Series(name="gap", results_dir=self.results_dir, runs=self.runs, clear_cache=self.clear,
                      write_run_set=lambda results: None, started=lambda path: None,
                      gap_shorter_than_run=True, closed=self.closed)

    def run_once(self, k, drop):
        self.drops.append(drop)
        time.sleep(self.run_s)
        return {"status": "complete"}


def test_gaps_shorter_than_the_runs_are_measured_and_recorded(tmp_path):
    kind = Timed(tmp_path / "R", run_s=0.6, clear_s=0.01)   # margins that a loaded machine's late wake-ups keep
    enforced.run(kind)
    assert "gap_since_previous_run_s" not in kind.drops[0].to_dict()
    for drop in kind.drops[1:]:
        d = drop.to_dict()
        assert 0.01 <= d["gap_since_previous_run_s"] < d["previous_run_duration_s"] and d["succeeded"]
        assert drop.gap_problem is None


def test_a_closed_series_with_a_gap_longer_than_a_run_stops_before_the_next_run(tmp_path):
    kind = Timed(tmp_path / "R", run_s=0.05, clear_s=1.0)
    with pytest.raises(RuleError, match=r"run 2: gap between runs: expected shorter than run 1 \(0\.\d+ s\), "
                                        r"got 1\.\d* s .*back-to-back") as e:
        enforced.run(kind)
    assert "\n" not in str(e.value) and len(kind.drops) == 1


def test_the_open_division_records_the_broken_gap_and_goes_on(tmp_path):
    kind = Timed(tmp_path / "R", run_s=0.05, clear_s=1.0, closed=False)
    enforced.run(kind)
    assert len(kind.drops) == 3 and all("gap between runs" in d.gap_problem for d in kind.drops[1:])
