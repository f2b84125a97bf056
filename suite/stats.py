"""The statistics `suite compare`, `suite report` and `suite sweep --find-max` share (standard
library only: a plain install has no scipy).

- `ratio_interval(a, b, level)`: B/A as the ratio of geometric means, with a Welch t interval
  computed on the logarithms (unequal variances, Welch-Satterthwaite degrees of freedom). Why
  Welch on logs rather than a bootstrap: with 5 runs a side a percentile bootstrap has only 126
  distinct resamples and covers well under its stated level; the t interval widens honestly
  as n falls, and logs make a ratio's interval symmetric (a 2x and a 0.5x are equally far).
- `mean_interval(values, level)`: a one-sample t interval (the sweep's sequential test).
- `cv_percent(values)`: the coefficient of variation, sample stdev / mean x 100.
- `t_quantile(p, df)`: Student's t quantile from the regularised incomplete beta function
  (a continued fraction, Lentz's method) and bisection; checked against scipy in the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t value with P(T <= t) = p for `df` degrees of freedom (0 < p < 1, df > 0)."""
    if not (0.0 < p < 1.0) or not df > 0:
        raise ValueError(f"t_quantile: expected 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def mean_var(values) -> tuple[float, float]:
    """Mean and sample variance (n - 1); the variance is 0 for one value. Scaled by the largest
    magnitude first, so values near the float limit neither overflow nor lose the variance (a
    variance past the float limit is inf)."""
    vals = list(values)
    n = len(vals)
    scale = max(abs(v) for v in vals) or 1.0
    z = [v / scale for v in vals]
    m = math.fsum(z) / n
    var = math.fsum((x - m) ** 2 for x in z) / (n - 1) if n > 1 else 0.0
    return m * scale, (var * scale * scale if var == 0.0 or scale < 1e154 else _big(var, scale))


def _big(var: float, scale: float) -> float:
    try:
        return var * scale * scale
    except OverflowError:
        return math.inf


def mean(values) -> float:
    return mean_var(values)[0]


def _exp(x: float) -> float:
    return math.exp(x) if x < 709.0 else math.inf


def cv_percent(values) -> float | None:
    """Coefficient of variation (sample stdev / mean, %); None for fewer than 2 values or a zero mean."""
    vals = list(values)
    if len(vals) < 2:
        return None
    m, v = mean_var(vals)
    if m == 0 or not math.isfinite(v):
        return None
    return 100.0 * (math.sqrt(v) / abs(m))


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float | None          # None: no interval (too few values)
    high: float | None
    df: float | None
    level: float


def mean_interval(values, level: float) -> Interval:
    """The mean of `values` with its two-sided t interval at `level` (None bounds for one value)."""
    vals = list(values)
    m, v = mean_var(vals)
    if len(vals) < 2:
        return Interval(m, None, None, None, level)
    half = t_quantile(0.5 + level / 2.0, len(vals) - 1) * math.sqrt(v / len(vals))
    return Interval(m, m - half, m + half, len(vals) - 1, level)


def ratio_interval(a, b, level: float) -> Interval:
    """B/A (geometric means) with a Welch interval on the logs. Values must be positive. With one
    value on a side, or none varying at all, the interval is None or the point itself."""
    la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    ma, va = mean_var(la)
    mb, vb = mean_var(lb)
    est = _exp(mb - ma)
    if len(la) < 2 or len(lb) < 2:
        return Interval(est, None, None, None, level)
    sa, sb = va / len(la), vb / len(lb)
    se = math.sqrt(sa + sb)
    if se == 0.0:
        return Interval(est, est, est, math.inf, level)
    df = (sa + sb) ** 2 / ((sa * sa / (len(la) - 1) if sa else 0.0) + (sb * sb / (len(lb) - 1) if sb else 0.0))
    half = t_quantile(0.5 + level / 2.0, df) * se
    return Interval(est, _exp(mb - ma - half), _exp(mb - ma + half), df, level)



def sequential_verdict(values, threshold: float, level: float, looks: int, epochs: int = 2,
                       min_epochs: int = 2, min_values: int = 4) -> bool | None:
    """The sweep's sequential test: is the mean of `values` (per-interval AU of the epochs so far)
    clearly at or above `threshold` (True), clearly below (False), or not yet clear (None)?

    A t interval at a Bonferroni-adjusted level, 1 - (1 - level) / looks (the test is asked up to
    `looks` times, so the chance of any wrong early stop stays within 1 - level). Never on fewer
    than `min_values` values nor before `min_epochs` epochs (two: a first epoch is often slower
    than the rest, and the sweep reports first against later epochs per point)."""
    vals = [v for v in values if math.isfinite(v)]
    if len(vals) < max(2, min_values) or epochs < min_epochs:
        return None
    iv = mean_interval(vals, 1.0 - (1.0 - level) / max(1, looks))
    if iv.low is not None and iv.low >= threshold:
        return True
    if iv.high is not None and iv.high < threshold:
        return False
    return None


def interval_au(step_ends_s, step_compute_s, intervals: int = 8) -> list[tuple[float, float]]:
    """An epoch's steps after the first (DLIO's AU leaves it out) in up to `intervals` runs of
    consecutive steps (a short tail joins the last): (compute seconds, wall seconds) of each, the
    wall time from the end of the step before. The sweep sums them over ranks: AU = 100 x compute / wall."""
    n = len(step_compute_s)
    if n < 2:
        return []
    size = max(1, -(-(n - 1) // intervals))
    bounds = list(range(1, n, size)) + [n]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] < size:
        del bounds[-2]
    return [(math.fsum(step_compute_s[lo:hi]), step_ends_s[hi - 1] - step_ends_s[lo - 1])
            for lo, hi in zip(bounds, bounds[1:])]
