"""The change-point detector's false-alarm rate and power on synthetic series (issue 46).

docs/history.md states that a series with no change is flagged at most once in 1,000. This measures it
on many seeded synthetic no-change series of each noise shape, at the lengths history series have, and
the detection rate on the same noise with a real step (a slowdown from the middle on). The shapes are
Gaussian, heavy-tailed (Student-t with 3 and 2 degrees of freedom, Gaussian with 5 % Cauchy outliers,
a skewed lognormal with its tail on the slow side), autocorrelated (AR(1), phi 0.5 and 0.9, the
marginal spread held) and Apache Otava's synthetic patterns (constant with rare slow outliers, a small
drift under the least step reported). Each value is 400 x (1 + spread x z), z the shape's noise of unit
scale (floored at 5 % of 400: a throughput is positive).

    python benchmarks/changepoint_false_alarms.py [--series 3000] [--power-series 300]
        [--lengths 10 30 100] [--spreads 0.01 0.05] [--steps 0.05 0.1 0.2] [--shapes gaussian ar1-0.9 ...]

A false alarm is any change point in a no-change series; a detection is a change point within 2 entries
of the step. The rate's upper 95 % bound (Clopper-Pearson, one-sided) is printed beside it: 0 in 3,000
series bounds the rate under 1 in 1,000. The targets (docs/history.md): independent noise of any shape
flagged about 1 in 1,000, AR(1) noise at most 2 in 100.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite.history import changepoints  # noqa: E402

BASE = 400.0
FLOOR = 0.05


def _t(rng: random.Random, df: float) -> float:
    return rng.gauss(0.0, 1.0) / math.sqrt(rng.gammavariate(df / 2.0, 2.0) / df)


def _ar(phi: float):
    def noise(rng: random.Random, n: int) -> list[float]:
        z, out = rng.gauss(0.0, 1.0), []
        for _ in range(n):
            out.append(z)
            z = phi * z + math.sqrt(1.0 - phi * phi) * rng.gauss(0.0, 1.0)
        return out
    return noise


def _iid(draw):
    return lambda rng, n: [draw(rng) for _ in range(n)]


_LN_MEAN, _LN_SD = math.exp(0.5), math.sqrt((math.e - 1.0) * math.e)

SHAPES = {
    "gaussian": _iid(lambda r: r.gauss(0.0, 1.0)),
    "student-t3": _iid(lambda r: _t(r, 3.0)),
    "student-t2": _iid(lambda r: _t(r, 2.0)),
    "cauchy-outliers": _iid(lambda r: 3.0 * math.tan(math.pi * (r.random() - 0.5)) if r.random() < 0.05
                            else r.gauss(0.0, 1.0)),
    "lognormal": _iid(lambda r: -(r.lognormvariate(0.0, 1.0) - _LN_MEAN) / _LN_SD),   # slow runs are the tail
    "ar1-0.5": _ar(0.5),
    "ar1-0.9": _ar(0.9),
}


def otava_outliers(rng: random.Random, n: int, spread: float) -> list[float]:
    """Otava's "constant with rare outliers": the noise, and 3 % of the runs 20-50 % slow (a neighbour's burst)."""
    return [BASE * max(FLOOR, 1.0 + spread * rng.gauss(0.0, 1.0)) * (rng.uniform(0.5, 0.8) if rng.random() < 0.03
                                                                    else 1.0) for _ in range(n)]


def otava_drift(rng: random.Random, n: int, spread: float) -> list[float]:
    """Otava's small drift: 2 % over the whole series (under the 3 % least step), with the noise."""
    return [BASE * (1.0 - 0.02 * i / max(1, n - 1)) * max(FLOOR, 1.0 + spread * rng.gauss(0.0, 1.0))
            for i in range(n)]


def series(shape: str, rng: random.Random, n: int, spread: float) -> list[float]:
    if shape == "otava-outliers":
        return otava_outliers(rng, n, spread)
    if shape == "otava-drift":
        return otava_drift(rng, n, spread)
    return [BASE * max(FLOOR, 1.0 + spread * z) for z in SHAPES[shape](rng, n)]


ALL_SHAPES = [*SHAPES, "otava-outliers", "otava-drift"]


def upper95(k: int, n: int) -> float:
    """One-sided 95 % Clopper-Pearson upper bound of a rate seen k times in n (bisection on the binomial tail)."""
    if k >= n:
        return 1.0
    lo, hi = k / n, 1.0
    for _ in range(60):
        p = (lo + hi) / 2
        tail = sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                            + i * math.log(p) + (n - i) * math.log1p(-p)) for i in range(k + 1))
        lo, hi = (p, hi) if tail > 0.05 else (lo, p)
    return hi


def measure(shape: str, n: int, spread: float, count: int, step: float | None, seed: int) -> int:
    """How many of `count` seeded series are flagged (step None: any change point) or have the step found
    (a change point within 2 entries of the middle, where the values become (1 - step) as fast)."""
    hits = 0
    at = n // 2
    for i in range(count):
        rng = random.Random(f"{seed}:{shape}:{n}:{spread}:{step}:{i}")
        values = series(shape, rng, n, spread)
        if step is not None:
            values = [v * (1.0 - step) if j >= at else v for j, v in enumerate(values)]
        found = changepoints.find(values)
        hits += bool(found) if step is None else any(abs(k - at) <= 2 for k in found)
    return hits


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--series", type=int, default=3000, help="no-change series per shape, length and spread")
    p.add_argument("--power-series", type=int, default=300, help="series with a step per shape, length, spread, step")
    p.add_argument("--lengths", type=int, nargs="+", default=[10, 30, 100])
    p.add_argument("--spreads", type=float, nargs="+", default=[0.01, 0.05])
    p.add_argument("--steps", type=float, nargs="+", default=[0.05, 0.1, 0.2])
    p.add_argument("--shapes", nargs="+", choices=ALL_SHAPES, default=ALL_SHAPES)
    p.add_argument("--seed", type=int, default=46)
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    print(f"{'shape':<16} {'n':>4} {'spread':>6}  {'false alarms':>14} {'rate':>7} {'<=95%':>7}  "
          + "  ".join(f"{'found ' + format(s, '.0%') + ' step':>15}" for s in a.steps))
    worst = {"independent": 0.0, "AR(1)": 0.0}
    for shape in a.shapes:
        for n in a.lengths:
            for spread in a.spreads:
                fa = measure(shape, n, spread, a.series, None, a.seed)
                which = "AR(1)" if shape.startswith("ar1") else "independent"
                worst[which] = max(worst[which], fa / a.series)
                found = [measure(shape, n, spread, a.power_series, s, a.seed) for s in a.steps]
                print(f"{shape:<16} {n:>4} {spread:>6.0%}  {fa:>6}/{a.series:<7} {fa / a.series:>7.4f} "
                      f"{upper95(fa, a.series):>7.4f}  "
                      + "  ".join(f"{k:>6}/{a.power_series:<4} {k / a.power_series:>4.0%}" for k in found),
                      flush=True)
    print(f"worst false-alarm rate: independent noise {worst['independent']:.4f} (docs/history.md: about 0.001), "
          f"AR(1) {worst['AR(1)']:.4f} (at most 0.02); {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
