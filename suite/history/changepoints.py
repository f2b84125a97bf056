"""Where a series of results changed level: binary segmentation on the logarithms, robust to heavy tails.

A series is one value per entry (the geometric mean of its runs), oldest first. The detector:
1. In a segment, every split leaving at least MIN_SIZE entries a side is a candidate; the scan takes
   the one with the largest two-sample t (pooled variance: "no change" means one variance) of the
   segment's logs winsorised at its median +- WINSOR_C robust spreads (an outlier does not choose).
2. It is a change point only when both hold (`_passes`):
   - the step between the two sides' median logs is at least MIN_EFFECT (3 %): a true but tiny drift
     is not reported, and one or two outliers cannot make a step;
   - its t passes Student's critical value at the Bonferroni-adjusted level 1 - (1 - level) / (2
     candidates): half the segment's false-alarm budget, the other half the stretch's of step 3. From
     RANK_MIN entries on the t is of the normal scores of the ranks, distribution-free on independent
     values (heavy tails, skew, outliers); below it, of the logs (no rank test reaches 1 in 1,000 on so
     few). The t is that of the step in a least-squares fit of level + step + AR(1) noise (`_gls_t`) at
     the residuals' lag-1 autocorrelation, bias-corrected and widened (`_rho`): 0 on independent noise
     most of the time (the pooled t), and a slow wander of autocorrelated runs is not taken for a step.
3. Both sides are searched again (binary segmentation), so a series with two steps gets two.
   Where no single split passes, a stretch at another level that came back (a slowdown later
   fixed: one split sees two sides of about the same mean) is looked for as a pair of change
   points, under the same conditions, the level adjusted for every pair.
Each change point is reported with the Welch interval of after/before (suite.stats.ratio_interval,
the one `suite compare` uses) at the stated level, on the entries between it and its neighbouring
change points: what `suite compare` would say of those two groups. docs/history.md gives the false-alarm
rate measured per noise shape (benchmarks/changepoint_false_alarms.py): independent noise of any shape
held near 1 in 1,000, AR(1) noise (phi 0.5, 0.9) at 1 % or under.

The scan keeps sums of the winsorised logs and of their squares as prefix sums, so one scan of a segment
is linear after a sort (10,000 entries: well under a second).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from suite import stats

LEVEL = 0.999           # detection level before the Bonferroni adjustment: a false step in 1,000 series
MIN_SIZE = 3            # entries on each side of a change point
MIN_EFFECT = 0.03       # the smallest step reported, as a fraction
MAX_DIP_SEGMENT = 300   # the longest segment searched for a stretch that came back (quadratic)
REPORT_LEVEL = 0.95     # the level of the interval shown with each change point (suite compare's default)
RANK_MIN = 20           # a segment this long is tested on the normal scores of its ranks (distribution-free)
WINSOR_C = 3.0          # the scan's logs held within the segment's median +- this many robust spreads
RHO_MAX = 0.95          # the largest lag-1 autocorrelation the test allows for
RHO_WIDEN = 4.0         # the residuals' lag-1 autocorrelation is widened by 1 + this / sqrt(run length)


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
    found: list[int] = []
    todo = [(0, len(vals))]
    while todo:
        lo, hi = todo.pop()
        if hi - lo < 2 * min_size:
            continue
        seg = logs[lo:hi]
        z = _scores(seg) if hi - lo >= RANK_MIN else seg
        sums = _Sums(_winsorised(seg))
        k = _split(seg, sums, z, level, min_size, min_effect)
        if k is not None:
            found.append(lo + k)
            todo += [(lo, lo + k), (lo + k, hi)]
            continue
        ij = _dip(seg, sums, z, level, min_size, min_effect)
        if ij is not None:
            found += [lo + ij[0], lo + ij[1]]
            todo += [(lo, lo + ij[0]), (lo + ij[0], lo + ij[1]), (lo + ij[1], hi)]
    return sorted(found)


def _split(logs, sums, z, level, min_size, min_effect) -> int | None:
    """The split of a segment with the largest pooled t of its winsorised logs (`sums`), if it passes
    `_passes` on `z` (its logs, or their normal scores) at the level adjusted for every candidate (half
    the segment's false-alarm budget: the other half is the stretch's, `_dip`)."""
    n = len(z)
    candidates = range(min_size, n - min_size + 1)
    if not candidates:
        return None
    k = max(candidates, key=lambda k: (_t(sums, 0, k, n), -abs(k - n / 2)))
    if not _passes(logs, z, [[(0, k)], [(k, n)]], 2 * len(candidates), level, min_effect):
        return None
    return k


def _dip(logs, sums, z, level, min_size, min_effect) -> tuple[int, int] | None:
    """A stretch [i, j) at another level than the rest of its segment, which came back (a slowdown
    fixed later): one split cannot see it, its two sides have about the same mean. The pair with the
    largest pooled t of the winsorised logs (`sums`), tested by `_passes` at a level adjusted for every pair (and for the split
    tested before it); segments up to MAX_DIP_SEGMENT only (the search is quadratic)."""
    n = len(z)
    if n > MAX_DIP_SEGMENT or n < 3 * min_size:
        return None
    best, pair = 0.0, None
    total_s, total_q = sums.s[n], sums.q[n]
    pairs = 0
    for i in range(min_size, n - 2 * min_size + 1):
        for j in range(i + min_size, n - min_size + 1):
            pairs += 1
            nin, nout = j - i, n - (j - i)
            s_in, q_in = sums.s[j] - sums.s[i], sums.q[j] - sums.q[i]
            m_in, m_out = s_in / nin, (total_s - s_in) / nout
            ss = (q_in - nin * m_in * m_in) + (total_q - q_in - nout * m_out * m_out)
            se = math.sqrt(max(0.0, ss / (n - 2)) * (1.0 / nin + 1.0 / nout))
            t = math.inf if se == 0.0 and m_in != m_out else (abs(m_in - m_out) / se if se else 0.0)
            if t > best:
                best, pair = t, (i, j)
    if pair is None:
        return None
    i, j = pair
    if not _passes(logs, z, [[(0, i), (j, n)], [(i, j)]], 2 * pairs, level, min_effect):
        return None
    return pair


def _passes(logs, z, sides, tests: int, level: float, min_effect: float) -> bool:
    """Whether two groups of a segment differ, each group a list of runs [a, b) of consecutive entries:
    - the difference of the groups' median logs is at least log(1 + min_effect) (a median, so that an
      outlier or two cannot make a step);
    - the t of the step in `z` (its logs, or their normal scores) passes Student's critical value at
      1 - (1 - level) / (2 tests), the t of the least-squares fit of the step under AR(1) noise at the
      lag-1 autocorrelation `_rho` gives (`_gls_t`; 0: the pooled two-sample t). On normal scores rho is
      the larger of theirs and the winsorised logs', and where it is above 0 the fit is of the winsorised
      logs: ranks keep no magnitude, so a clear step's t of ranks sits at its ceiling, which any rho
      would take under the critical value."""
    med = [_median([x for a, b in runs for x in logs[a:b]]) for runs in sides]
    if abs(med[1] - med[0]) < math.log1p(min_effect):
        return False
    rho = _rho(z, sides)
    if z is not logs:
        w = _winsorised(logs)
        rho = max(rho, _rho(w, sides))
        if rho > 0.0:
            z = w
    t = _gls_t(z, sides[1], rho)
    return t > stats.t_quantile(1.0 - (1.0 - level) / (2 * tests), max(1, len(z) - 3))


def _rho(z, sides) -> float:
    """The lag-1 autocorrelation the test allows for: r, that of the residuals (each run of consecutive
    entries less its group's mean), corrected for its downward bias in runs of mean length m
    ((1 + 3 r) / m, Marriott and Pope), then widened by the factor 1 + RHO_WIDEN / sqrt(m), within
    [0, RHO_MAX]. Widened because r is of the residuals of the best of many splits, which absorbs part of
    a slow wander: AR(1) phi 0.9 in 30 entries gives r 0.5 at the median and under 0.3 one time in ten,
    and the fewer entries, the less r says. The factor (2 at 30 entries, 1.6 at 100) was chosen on
    simulated series (benchmarks/changepoint_false_alarms.py): at 30 entries phi 0.9 is flagged in about
    1 % of series, while independent noise's r (about -1 / m) leaves rho 0 or small, so a real step's
    test is about the pooled t."""
    resid = []
    for runs in sides:
        flat = [x for a, b in runs for x in z[a:b]]
        mean = math.fsum(flat) / len(flat)
        resid += [[x - mean for x in z[a:b]] for a, b in runs]
    ss = math.fsum(e * e for p in resid for e in p)
    if ss == 0.0:
        return 0.0
    r = math.fsum(a * b for p in resid for a, b in zip(p, p[1:])) / ss
    m = len(z) / len(resid)
    return min(RHO_MAX, max(0.0, (1.0 + RHO_WIDEN / math.sqrt(m)) * (r + (1.0 + 3.0 * r) / m)))


def _gls_t(z, runs, rho: float) -> float:
    """The t of the step (1 on `runs`, 0 elsewhere) in the least-squares fit of `z` = level + step + AR(1)
    noise at `rho` (Prais-Winsten: each value less rho times the one before, the first scaled by
    sqrt(1 - rho^2), so that the noise is independent). At rho 0 the pooled two-sample t. Under AR(1)
    the step is seen in its jump, which the noise's innovations hardly make, and in the level after it,
    weighted by 1 - rho: a slow wander is not taken for a step."""
    n = len(z)
    mean = math.fsum(z) / n
    y = [x - mean for x in z]
    s = [0.0] * n
    for a, b in runs:
        s[a:b] = [1.0] * (b - a)
    w = math.sqrt(1.0 - rho * rho)
    rows = [(w, w * s[0], w * y[0])] + [(1.0 - rho, s[i] - rho * s[i - 1], y[i] - rho * y[i - 1])
                                         for i in range(1, n)]
    cc, cs, ss = (math.fsum(r[0] * r[0] for r in rows), math.fsum(r[0] * r[1] for r in rows),
                  math.fsum(r[1] * r[1] for r in rows))
    cy, sy, yy = (math.fsum(r[0] * r[2] for r in rows), math.fsum(r[1] * r[2] for r in rows),
                  math.fsum(r[2] * r[2] for r in rows))
    det = cc * ss - cs * cs
    if det <= 0.0:
        return 0.0
    level, step = (ss * cy - cs * sy) / det, (cc * sy - cs * cy) / det
    rss = max(0.0, yy - level * cy - step * sy)
    if rss <= 1e-24 * max(yy, 1e-300):
        return math.inf if abs(step) > 0.0 else 0.0
    return abs(step) / math.sqrt(rss / (n - 2) * cc / det)


def _scores(xs: list[float]) -> list[float]:
    """The normal scores of xs' ranks (van der Waerden: the normal quantile of rank / (n + 1), ties
    sharing their mean rank): on independent values of any one distribution, a fixed set of numbers in
    random order, whatever the tails. A t of them is held to its level on heavy tails, skew and outliers."""
    from statistics import NormalDist

    order = sorted(range(len(xs)), key=xs.__getitem__)
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    q = NormalDist().inv_cdf
    return [q(r / (len(xs) + 1)) for r in ranks]


def _winsorised(xs: list[float]) -> list[float]:
    """xs held within their median +- WINSOR_C robust spreads (1.4826 x the median absolute deviation):
    the scan's statistic, so that an outlier does not choose the candidate a real step should."""
    med = _median(xs)
    c = WINSOR_C * 1.4826 * _median([abs(x - med) for x in xs])
    if c == 0.0:            # more than half the values alike: clipping would hide every other one
        return list(xs)
    return [min(max(x, med - c), med + c) for x in xs]


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    h = len(s) // 2
    return s[h] if len(s) % 2 else 0.5 * (s[h - 1] + s[h])


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
