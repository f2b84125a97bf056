"""Per figure, B against A: the ratio B/A, its interval at the stated level and a verdict.

Which values (docs/compare.md): with at least MIN_RUNS runs a side, the per-run values the rules
count (a run is the unit the rules publish and what varies between tries); with fewer, every
counted epoch of every run (pooled; the interval then covers epoch-to-epoch noise only, and the
basis says so); with one value a side, no interval and no verdict. The interval is Welch's on the
logarithms (suite.stats.ratio_interval). The first epoch against the later ones is shown per
result, beside the comparison, never folded into it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from suite import stats
from suite.benchmark import Measured, Samples
from suite.numbers import CLAIMED, RECOMPUTED

MIN_RUNS = 3            # fewer runs on either side: per-epoch values

FASTER, SLOWER, NOT_SIGNIFICANT, NO_INTERVAL = "faster", "slower", "not significant", "no interval"


@dataclass(frozen=True)
class Comparison:
    figure: str
    label: str
    a_mean: float
    b_mean: float
    ratio: float                     # B/A of the geometric means of the values used
    low: float | None
    high: float | None
    level: float
    basis: str                       # "per run (5 vs 5)" | "per epoch (10 vs 10; runs are few) ..."
    verdict: str                     # faster | slower | not significant | no interval
    a_cv_percent: float | None       # run-to-run (or epoch-to-epoch) spread of the values used
    b_cv_percent: float | None
    a_first_to_later: float | None   # mean first-epoch / later-epochs ratio over the runs
    b_first_to_later: float | None
    source: str = RECOMPUTED         # claimed where either side's values are claims, not re-derived (suite.numbers)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def values(s: Samples, per_epoch: bool) -> list[float]:
    vals = [x for e in s.per_epoch for x in e] if per_epoch else list(s.per_run)
    return [x for x in vals if isinstance(x, float | int) and math.isfinite(x) and x > 0]


def compare_figure(a: Samples, b: Samples, level: float) -> Comparison | None:
    few = min(len(a.per_run), len(b.per_run)) < MIN_RUNS
    per_epoch = few and len(values(a, True)) >= 2 and len(values(b, True)) >= 2
    va, vb = values(a, per_epoch), values(b, per_epoch)
    if not va or not vb:
        va, vb = values(a, False), values(b, False)
        per_epoch = False
    if not va or not vb:                  # no positive finite value on a side: nothing to compare
        return None
    iv = stats.ratio_interval(va, vb, level)
    if per_epoch:
        basis = (f"per epoch ({len(va)} vs {len(vb)} epochs of {len(a.per_run)} vs {len(b.per_run)} runs; "
                 f"runs are few: the interval covers epoch-to-epoch noise, not run-to-run)")
    else:
        basis = f"per run ({len(va)} vs {len(vb)})"
    source = RECOMPUTED if a.source == b.source == RECOMPUTED else CLAIMED
    return Comparison(
        figure=a.name, label=a.label if a.source == source else b.label, source=source, a_mean=stats.mean(va), b_mean=stats.mean(vb), ratio=iv.estimate,
        low=iv.low, high=iv.high, level=level, basis=basis, verdict=verdict(iv, a.higher_is_better),
        a_cv_percent=stats.cv_percent(va), b_cv_percent=stats.cv_percent(vb),
        a_first_to_later=_mean(a.first_to_later), b_first_to_later=_mean(b.first_to_later))


def verdict(iv: stats.Interval, higher_is_better: bool) -> str:
    if iv.low is None or iv.high is None:
        return NO_INTERVAL
    if iv.low > 1.0:
        return FASTER if higher_is_better else SLOWER
    if iv.high < 1.0:
        return SLOWER if higher_is_better else FASTER
    return NOT_SIGNIFICANT


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return stats.mean(xs) if xs else None


def compare(a: Measured, b: Measured, level: float) -> list[Comparison]:
    """Every figure the two results both have (with a positive value on each side), in A's order."""
    theirs = {f.name: f for f in b.figures}
    found = [compare_figure(f, theirs[f.name], level) for f in a.figures if f.name in theirs]
    return [c for c in found if c is not None]


def figure_names(results: list[Measured]) -> list[str]:
    """The figures every result has, in the first one's order."""
    names = [f.name for f in results[0].figures]
    return [n for n in names if all(any(f.name == n for f in r.figures) for r in results)]
