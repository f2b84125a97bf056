"""The change-point detector on synthetic noisy series (Hypothesis): none on stationary noise at and
well past this machine's run-to-run spread (docs/history.md: about 1 % for the short runs here), one
at a planted step of 10 % or more, at the step; the reported interval is compare's Welch interval."""

import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from suite import stats
from suite.history import changepoints

# this machine's run-to-run spread of short runs is about 1 % (docs/history.md); tested up to 3 %
SPREADS = st.sampled_from([0.002, 0.005, 0.01, 0.02, 0.03])


def noisy(seed: int, n: int, cv: float, step_at: int | None = None, step: float = 1.0) -> list[float]:
    rng = random.Random(seed)
    return [400.0 * rng.lognormvariate(0.0, cv) * (step if step_at is not None and i >= step_at else 1.0)
            for i in range(n)]


@settings(max_examples=150, derandomize=True, deadline=None)
@given(seed=st.integers(0, 2 ** 32), n=st.integers(6, 60), cv=SPREADS)
def test_stationary_noise_has_no_change_point(seed, n, cv):
    assert changepoints.find(noisy(seed, n, cv)) == []


@settings(max_examples=150, derandomize=True, deadline=None)
@given(seed=st.integers(0, 2 ** 32), n=st.integers(8, 40), where=st.floats(0.3, 0.7),
       slower=st.sampled_from([0.75, 0.8, 0.9]), cv=st.sampled_from([0.002, 0.005, 0.01]))
def test_a_planted_step_is_found_once_at_the_step(seed, n, where, slower, cv):
    at = max(4, min(n - 4, round(n * where)))
    values = noisy(seed, n, cv, at, slower)
    assert changepoints.find(values) == [at]
    (change,) = changepoints.changes(values)
    iv = stats.ratio_interval(values[:at], values[at:], 0.95)
    assert (change.index, change.low, change.high) == (at, iv.low, iv.high) and change.high < 1.0
    assert abs(change.size_percent - 100 * (slower - 1)) < 3.0


def test_two_steps_are_two_change_points():
    values = noisy(7, 30, 0.005, 10, 0.8)
    values = [v * (1.25 if i >= 20 else 1.0) for i, v in enumerate(values)]
    assert changepoints.find(values) == [10, 20]


def test_a_significant_but_tiny_step_is_not_reported():
    values = [100.0] * 50 + [101.0] * 50                 # 1 %: no noise at all, yet below the least step
    assert changepoints.find(values) == []
    assert changepoints.find([100.0] * 5 + [110.0] * 5) == [5]


def test_a_single_outlier_is_not_a_change_point():
    values = noisy(3, 20, 0.01)
    values[12] *= 0.6
    assert changepoints.find(values) == []


@pytest.mark.parametrize("bad", [[1.0, 0.0, 2.0], [1.0, math.nan], [1.0, -2.0]])
def test_values_that_are_not_positive_and_finite_are_refused(bad):
    with pytest.raises(ValueError):
        changepoints.find(bad)


def test_ten_thousand_values_take_well_under_a_second():
    import time

    values = noisy(1, 10_000, 0.01, 6000, 0.9)
    t0 = time.process_time()      # CPU seconds: another job on the cores stretches the wall clock (1.38 s seen)
    found = changepoints.find(values)
    assert time.process_time() - t0 < 1.0 and found == [6000]


# --- issue 46: the false-alarm rate on each noise shape of benchmarks/changepoint_false_alarms.py, seeded ---

def _bench():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "changepoint_false_alarms.py"
    spec = importlib.util.spec_from_file_location("changepoint_false_alarms", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
SEED = 46           # the benchmark's own: these series are the first of those benchmarks/README.md counts
# independent noise of any shape (docs/history.md, "What the level holds on"): at a 5 % spread (where the least
# step of 3 % does not do the test's work) at most 0.25 % of series of 30 entries flagged, 0.1 % of 100
INDEPENDENT = ["gaussian", "student-t3", "student-t2", "cauchy-outliers", "lognormal", "otava-outliers", "otava-drift"]


@pytest.mark.parametrize("shape", INDEPENDENT)
@pytest.mark.parametrize("n, count, bound", [(30, 400, 0.0025), (100, 60, 0.001)])
def test_independent_noise_of_any_shape_is_flagged_within_the_documented_rate(shape, n, count, bound):
    assert BENCH.measure(shape, n, 0.05, count, None, SEED) <= math.ceil(bound * count)


@pytest.mark.parametrize("shape, n, count, bound", [("ar1-0.9", 30, 200, 0.02), ("ar1-0.5", 30, 200, 0.02),
                                                     ("ar1-0.9", 100, 60, 0.02), ("ar1-0.9", 10, 200, 0.02)])
def test_autocorrelated_noise_is_flagged_within_the_documented_rate(shape, n, count, bound):
    """AR(1) noise at 5 % spread, the slow wander a test on the mean alone takes for a step (the detector of
    issue 46's first round flagged phi 0.9 in 48 % of series of 30 entries): at most 2 % of seeded series
    flagged (docs/history.md gives the measured rates); at this machine's 1 % spread at most 1 in 100."""
    assert BENCH.measure(shape, n, 0.05, count, None, SEED) <= bound * count
    assert BENCH.measure(shape, n, 0.01, 100, None, SEED) <= 1


@pytest.mark.parametrize("shape, n, step, count, least", [("gaussian", 100, 0.1, 60, 0.75),
                                                          ("gaussian", 30, 0.2, 60, 0.85),
                                                          ("ar1-0.9", 30, 0.2, 60, 0.85),
                                                          ("ar1-0.5", 100, 0.2, 40, 0.7)])
def test_a_step_at_a_5_percent_spread_is_still_found(shape, n, step, count, least):
    """The price of allowing for autocorrelation is paid in power at 5 % spread, and it is bounded: a 10 %
    slowdown in 100 Gaussian entries, a 20 % one in 30 (also under AR(1) phi 0.9: its jump is many times
    the noise's innovations), found at the step (within 2 entries) in most seeded series."""
    assert BENCH.measure(shape, n, 0.05, count, step, SEED) >= least * count


@pytest.mark.parametrize("shape", INDEPENDENT + ["ar1-0.5", "ar1-0.9"])
def test_a_real_step_is_still_found_in_every_shape(shape):
    """A 20 % slowdown at 1 % spread, found at the step (within 2 entries) in most series of 30 entries."""
    assert BENCH.measure(shape, 30, 0.01, 40, 0.2, SEED) >= 0.7 * 40
