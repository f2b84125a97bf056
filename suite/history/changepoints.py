"""Where a series of results changed level: binary segmentation with Welch's test on the logarithms.

A series is one value per entry (the geometric mean of its runs), oldest first. The detector:
1. In a segment, every split leaving at least MIN_SIZE entries a side is a candidate; the one
   with the largest two-sample t (on the logs: a ratio, symmetric in faster and slower; the
   variance pooled, as "no change" means one variance) is tested.
2. It is a change point only when both hold:
   - its t passes Student's critical value at a Bonferroni-adjusted level 1 - (1 - level) /
     candidates: the best of many splits is tested as strictly as if every one had been, so
     stationary noise is flagged with probability below 1 - level per segment tested, whatever
     its spread (the test scales with the spread it measures);
   - the step is at least MIN_EFFECT (3 %): with many entries a side a true but tiny drift is
     "significant"; a step a person would not act on is not a change point.
3. Both sides are searched again (binary segmentation), so a series with two steps gets two.
   Where no single split passes, a stretch at another level that came back (a slowdown later
   fixed: one split sees two sides of about the same mean) is looked for as a pair of change
   points, under the same two conditions, the level adjusted for every pair.
Each change point is reported with the Welch interval of after/before (suite.stats.ratio_interval,
the one `suite compare` uses) at the stated level, on the entries between it and its neighbouring
change points: what `suite compare` would say of those two groups. docs/history.md says why this does not cry wolf on this machine's noise.

Sums of logs and of their squares are kept as prefix sums, so one scan of a segment is linear
(10,000 entries: milliseconds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from suite import stats

LEVEL = 0.999           # detection level before the Bonferroni adjustment: a false step in 1,000 series at most
MIN_SIZE = 3            # entries on each side of a change point
MIN_EFFECT = 0.03       # the smallest step reported, as a fraction
MAX_DIP_SEGMENT = 300   # the longest segment searched for a stretch that came back (quadratic)
REPORT_LEVEL = 0.95     # the level of the interval shown with each change point (suite compare's default)


@dataclass(frozen=True)
class Change:
    index: int                      # the first entry of the new level (0-based in the series)
    before: float                   # geometric means of the entries around it
    after: float
    ratio: float                    # after / before
    low: float | None               # Welch interval of the ratio at `level`
    high: float | None
    level: float
    n_before: int
    n_after: int

    @property
    def size_percent(self) -> float:
        return 100.0 * (self.ratio - 1.0)


class _Sums:
    def __init__(self, logs: list[float]):
        self.s, self.q = [0.0], [0.0]
        for x in logs:
            self.s.append(self.s[-1] + x)
            self.q.append(self.q[-1] + x * x)

    def mean_var(self, lo: int, hi: int) -> tuple[float, float]:
        n = hi - lo
        m = (self.s[hi] - self.s[lo]) / n
        var = max(0.0, (self.q[hi] - self.q[lo] - n * m * m) / (n - 1)) if n > 1 else 0.0
        return m, var


def _t(sums: _Sums, lo: int, k: int, hi: int) -> float:
    """Student's t of the split at k, the variance pooled: under "no change" both sides share it, and
    the pooled estimate does not collapse when three values a side happen to lie close (Welch's
    would: the largest of many Welch t's is then far out in its tail)."""
    na, nb = k - lo, hi - k
    ma, va = sums.mean_var(lo, k)
    mb, vb = sums.mean_var(k, hi)
    pooled = ((na - 1) * va + (nb - 1) * vb) / (na + nb - 2)
    se = math.sqrt(pooled * (1.0 / na + 1.0 / nb))
    if se == 0.0:
        return math.inf if ma != mb else 0.0
    return abs(mb - ma) / se


def find(values, level: float = LEVEL, min_size: int = MIN_SIZE, min_effect: float = MIN_EFFECT) -> list[int]:
    """The change points of `values` (positive numbers, oldest first): each the index of the first
    value of a new level, ascending."""
    vals = [float(v) for v in values]
    if any(not (math.isfinite(v) and v > 0) for v in vals):
        raise ValueError("changepoints.find: expected positive finite values")
    logs = [math.log(v) for v in vals]
    sums = _Sums(logs)
    found: list[int] = []
    todo = [(0, len(vals))]
    while todo:
        lo, hi = todo.pop()
        k = _split(vals, sums, lo, hi, level, min_size, min_effect)
        if k is not None:
            found.append(k)
            todo += [(lo, k), (k, hi)]
            continue
        ij = _dip(sums, lo, hi, level, min_size, min_effect)
        if ij is not None:
            found += list(ij)
            todo += [(lo, ij[0]), (ij[0], ij[1]), (ij[1], hi)]
    return sorted(found)


def _split(vals, sums, lo, hi, level, min_size, min_effect) -> int | None:
    candidates = range(lo + min_size, hi - min_size + 1)
    if not candidates:
        return None
    best = max(candidates, key=lambda k: (_t(sums, lo, k, hi), -abs(k - (lo + hi) / 2)))
    critical = stats.t_quantile(1.0 - (1.0 - level) / (2 * len(candidates)), hi - lo - 2)
    if _t(sums, lo, best, hi) <= critical:
        return None
    step = (sums.s[hi] - sums.s[best]) / (hi - best) - (sums.s[best] - sums.s[lo]) / (best - lo)
    if abs(step) < math.log1p(min_effect):
        return None
    return best


def _dip(sums, lo, hi, level, min_size, min_effect) -> tuple[int, int] | None:
    """A stretch [i, j) at another level than the rest of its segment, which came back (a slowdown
    fixed later): one split cannot see it, its two sides have about the same mean. The pair with the
    largest pooled t, tested at a level adjusted for every pair; segments up to MAX_DIP_SEGMENT only
    (the search is quadratic)."""
    n = hi - lo
    if n > MAX_DIP_SEGMENT or n < 3 * min_size:
        return None
    best, pair = 0.0, None
    total_s, total_q = sums.s[hi] - sums.s[lo], sums.q[hi] - sums.q[lo]
    pairs = 0
    for i in range(lo + min_size, hi - 2 * min_size + 1):
        for j in range(i + min_size, hi - min_size + 1):
            pairs += 1
            nin, nout = j - i, n - (j - i)
            s_in, q_in = sums.s[j] - sums.s[i], sums.q[j] - sums.q[i]
            m_in, m_out = s_in / nin, (total_s - s_in) / nout
            ss = (q_in - nin * m_in * m_in) + (total_q - q_in - nout * m_out * m_out)
            se = math.sqrt(max(0.0, ss / (n - 2)) * (1.0 / nin + 1.0 / nout))
            t = math.inf if se == 0.0 and m_in != m_out else (abs(m_in - m_out) / se if se else 0.0)
            if t > best and abs(m_in - m_out) >= math.log1p(min_effect):
                best, pair = t, (i, j)
    if pair is None or best <= stats.t_quantile(1.0 - (1.0 - level) / (2 * pairs), n - 2):
        return None
    return pair


def changes(values, level: float = REPORT_LEVEL, **detect) -> list[Change]:
    """The change points with their size and the Welch interval at `level` of after/before, each on
    the values between it and its neighbours."""
    vals = [float(v) for v in values]
    points = find(vals, **detect)
    bounds = [0, *points, len(vals)]
    out = []
    for i, k in enumerate(points):
        before, after = vals[bounds[i]:k], vals[k:bounds[i + 2]]
        iv = stats.ratio_interval(before, after, level)
        out.append(Change(index=k, before=_gmean(before), after=_gmean(after), ratio=iv.estimate, low=iv.low,
                          high=iv.high, level=level, n_before=len(before), n_after=len(after)))
    return out


def _gmean(xs) -> float:
    return math.exp(math.fsum(math.log(x) for x in xs) / len(xs))
