"""suite.stats: Student's t against scipy, the Welch ratio interval, the CV and the sweep's
sequential test; Hypothesis on every number path."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from suite import stats


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995, 0.9999, 0.025])
@pytest.mark.parametrize("df", [1, 2, 3.7, 4, 10, 30, 1000])
def test_t_quantile_matches_scipy(p, df):
    scipy_stats = pytest.importorskip("scipy.stats")
    assert stats.t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-8)


def test_ratio_interval_matches_welch_on_logs():
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = [100, 102, 98, 101, 99], [110, 111, 108, 109, 112]
    iv = stats.ratio_interval(a, b, 0.95)
    la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    res = scipy_stats.ttest_ind(lb, la, equal_var=False)
    ci = res.confidence_interval(0.95)
    assert (iv.low, iv.high) == pytest.approx((math.exp(ci.low), math.exp(ci.high)), rel=1e-9)
    assert iv.df == pytest.approx(res.df)


def test_one_value_a_side_has_no_interval_and_equal_values_a_point():
    assert stats.ratio_interval([2.0], [4.0], 0.95).low is None
    iv = stats.ratio_interval([2.0, 2.0], [4.0, 4.0], 0.95)
    assert iv.low == iv.high == iv.estimate == pytest.approx(2.0)
    assert stats.cv_percent([1.0]) is None and stats.cv_percent([1.0, 3.0]) == pytest.approx(100 * math.sqrt(2) / 2)


def test_sequential_verdict():
    v = stats.sequential_verdict
    assert v([99.8, 99.7, 99.9, 99.8], 90.0, 0.95, looks=4, epochs=2) is True
    assert v([99.8, 99.7, 99.9, 99.8], 90.0, 0.95, looks=4, epochs=1) is None       # never before two epochs
    assert v([60.1, 60.4, 59.9, 60.2], 90.0, 0.95, looks=4, epochs=2) is False
    assert v([91.0, 89.0, 90.5, 89.5], 90.0, 0.95, looks=4, epochs=3) is None
    assert v([99.0, 99.0, 99.0], 90.0, 0.95, looks=4, epochs=3) is None            # too few values


def test_interval_au_splits_the_steps_after_the_first():
    ends = [float(i) for i in range(1, 13)]          # 12 steps of 1 s, 0.5 s of compute each
    parts = stats.interval_au(ends, [0.5] * 12, intervals=8)
    assert [w for _, w in parts] == [2.0, 2.0, 2.0, 2.0, 3.0]     # 11 steps: 4 x 2 and a tail of 3
    assert sum(c for c, _ in parts) == 5.5 and stats.interval_au([1.0], [0.5]) == []


positive = st.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(positive, min_size=1, max_size=12), st.lists(positive, min_size=1, max_size=12),
       st.floats(min_value=0.5, max_value=0.999))
def test_ratio_interval_holds_its_estimate(a, b, level):
    iv = stats.ratio_interval(a, b, level)
    assert math.isfinite(iv.estimate) and iv.estimate > 0
    if iv.low is not None:
        assert iv.low <= iv.estimate * (1 + 1e-9) and iv.high >= iv.estimate * (1 - 1e-9)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=0, max_size=10), st.floats(0, 100),
       st.integers(1, 10))
def test_sequential_verdict_never_fails(values, threshold, looks):
    assert stats.sequential_verdict(values, threshold, 0.95, looks, epochs=looks) in (True, False, None)
