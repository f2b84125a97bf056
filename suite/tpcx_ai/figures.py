"""The TPCx-AI primary metric AIUCpm@SF and price-performance, as pure functions (no I/O).

    AIUCpm@SF = 60 * SF * N / (TLD * TPTT * TPST * TTT) ** (1/4),  N = 10 use cases
    TPTT = geometric mean of the 10 training times
    TPST = max(geomean of serving run 1, geomean of serving run 2)
    TTT  = throughput-test time / (streams * N)
    $/AIUCpm@SF = total price / AIUCpm@SF as published (2 decimals), to cents

Every input time is in seconds, rounded to milliseconds (the kit times each job and rounds to
3 decimals); TTT is not rounded again. AIUCpm is rounded to 3 decimals, and published with 2.

Kit modes, when per-job start/end times are given:
- "1.0.2": TLD = sum of the load jobs' durations; throughput time = the largest per-stream sum of
  that stream's job durations;
- "1.0.3": TLD and throughput time are wall-clock spans (last end - first start) of their jobs.
"""

import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from suite.errors import ResultError, expected_got

N_USE_CASES = 10
USE_CASES = tuple(range(1, N_USE_CASES + 1))
KIT_VERSIONS = ("1.0.2", "1.0.3")
PHASES = ("load", "training", "serving_1", "serving_2", "throughput")
PER_USE_CASE = ("training_s", "serving_1_s", "serving_2_s")


def round_ms(seconds: float) -> float:
    return round(float(seconds), 3)


def publish(value: float, places: int) -> float:
    """Round half up to `places` decimals, from the value's shortest decimal repr."""
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP))


def geomean(values) -> float:
    values = [float(v) for v in values]
    if not values:
        raise ValueError("geomean of no values")
    if any(v <= 0 for v in values):
        raise ValueError("geomean of a non-positive value")
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def aiucpm(scale_factor: float, tld_s: float, tptt_s: float, tpst_s: float, ttt_s: float,
           n: int = N_USE_CASES) -> float:
    """The formula itself, unrounded."""
    return 60.0 * scale_factor * n / (tld_s * tptt_s * tpst_s * ttt_s) ** 0.25


def price_per_aiucpm(total_price: float, aiucpm_value: float) -> float:
    """Price-performance from the published (2-decimal) AIUCpm, to cents."""
    return publish(total_price / publish(aiucpm_value, 2), 2)


# --------------------------------------------------------------------------- per-job times


@dataclass(frozen=True)
class Job:
    """One timed job of a run: a load step, or one use case in a phase (and stream)."""

    phase: str
    start_s: float
    end_s: float
    use_case: int | None = None
    stream: int | None = None

    @property
    def duration_s(self) -> float:
        return round_ms(self.end_s - self.start_s)


def _span(jobs) -> float:
    return round_ms(max(j.end_s for j in jobs) - min(j.start_s for j in jobs))


def _check_kit(kit: str, where: str) -> None:
    if kit not in KIT_VERSIONS:
        raise ResultError(expected_got(where, "kit_version", f"one of {', '.join(KIT_VERSIONS)}", repr(kit)))


def check_jobs(jobs, where: str = "jobs") -> None:
    """Refuse jobs a metric cannot be computed from, naming the job."""
    for i, j in enumerate(jobs):
        at = f"{where}[{i}]"
        if j.phase not in PHASES:
            raise ResultError(expected_got(at, "phase", f"one of {', '.join(PHASES)}", repr(j.phase)))
        for name in ("start_s", "end_s"):
            value = getattr(j, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ResultError(expected_got(at, name, "a finite number of seconds", repr(value)))
        if j.duration_s <= 0:
            raise ResultError(expected_got(at, "end_s", f"after start_s {j.start_s}", j.end_s))
        if j.phase != "load" and j.use_case not in USE_CASES:
            raise ResultError(expected_got(at, "use_case", "1..10", repr(j.use_case)))
        if j.phase == "throughput" and (not isinstance(j.stream, int) or j.stream < 1):
            raise ResultError(expected_got(at, "stream", "a stream number >= 1", repr(j.stream)))


def load_time_s(jobs, kit: str) -> float:
    """TLD from the load jobs: their summed durations (1.0.2) or their wall-clock span (1.0.3)."""
    _check_kit(kit, "jobs")
    load = [j for j in jobs if j.phase == "load"]
    if not load:
        raise ResultError("jobs: phase: expected at least one load job, got none")
    if kit == "1.0.2":
        return round_ms(math.fsum(j.duration_s for j in load))
    return _span(load)


def incomplete_streams(jobs) -> dict[int, list[int]]:
    """{stream: the use cases it ran} for each throughput stream that did not run 1..10 once each."""
    per_stream = {}
    for j in jobs:
        if j.phase == "throughput":
            per_stream.setdefault(j.stream, []).append(j.use_case)
    return {s: ucs for s, ucs in sorted(per_stream.items()) if sorted(ucs) != list(USE_CASES)}


def throughput_time_s(jobs, kit: str, complete: bool = True) -> float:
    """Throughput-test time: the longest stream's summed durations (1.0.2) or the span (1.0.3).

    With complete (published data), every stream must run each use case once; without (a run of a
    subset of use cases), the time of the jobs there is, and Inputs.missing_throughput says what is not.
    """
    _check_kit(kit, "jobs")
    tput = [j for j in jobs if j.phase == "throughput"]
    if not tput:
        raise ResultError("jobs: phase: expected throughput jobs, got none")
    for stream, ucs in incomplete_streams(tput).items() if complete else ():
        raise ResultError(expected_got("jobs", f"throughput stream {stream}",
                                       "one job for each of use cases 1..10", f"use cases {sorted(ucs)}"))
    if kit == "1.0.2":
        sums = {}
        for j in tput:
            sums[j.stream] = sums.get(j.stream, 0.0) + j.duration_s
        return round_ms(max(sums.values()))
    return _span(tput)


def streams_reported(jobs) -> int:
    return len({j.stream for j in jobs if j.phase == "throughput"})


def use_case_times(jobs, phase: str, where: str = "jobs") -> dict[int, float]:
    """{use case: duration} of one power phase; a use case timed twice is refused."""
    times = {}
    for j in jobs:
        if j.phase == phase:
            if j.use_case in times:
                raise ResultError(expected_got(where, f"{phase} use_case {j.use_case}", "one job", "two or more"))
            times[j.use_case] = j.duration_s
    return times


# --------------------------------------------------------------------------- the metric


@dataclass(frozen=True)
class Inputs:
    """What the metric needs. Per-use-case times are {use case 1..10: seconds}."""

    scale_factor: float
    load_time_s: float
    training_s: dict
    serving_1_s: dict
    serving_2_s: dict
    throughput_elapsed_s: float
    streams: int
    reported_streams: int | None = None
    total_price: float | None = None
    currency: str | None = None
    missing_throughput: tuple = ()        # use cases some stream did not run (a subset run)

    @classmethod
    def from_jobs(cls, jobs, kit: str, scale_factor: float, streams: int, **price) -> "Inputs":
        """Every time from per-job start/end times, in the given kit mode."""
        check_jobs(jobs)
        _check_kit(kit, "jobs")
        return cls(scale_factor=scale_factor, load_time_s=load_time_s(jobs, kit),
                   training_s=use_case_times(jobs, "training"),
                   serving_1_s=use_case_times(jobs, "serving_1"),
                   serving_2_s=use_case_times(jobs, "serving_2"),
                   throughput_elapsed_s=throughput_time_s(jobs, kit), streams=streams,
                   reported_streams=streams_reported(jobs), **price)


@dataclass(frozen=True)
class Result:
    scale_factor: float
    streams: int
    tld_s: float
    tptt_s: float
    tpst1_s: float
    tpst2_s: float
    tpst_s: float
    ttt_s: float
    throughput_elapsed_s: float
    aiucpm: float | None                  # 3 decimals; None without all 10 use cases
    aiucpm_unrounded: float | None
    aiucpm_published: float | None        # 2 decimals, as FDRs print it
    price_per_aiucpm: float | None        # total price / published AIUCpm, to cents
    total_price: float | None = None
    currency: str | None = None
    missing: dict = field(default_factory=dict)   # {"training_s": [use cases], ...}

    @property
    def complete(self) -> bool:
        return self.aiucpm is not None

    def why_incomplete(self, where: str = "input") -> str:
        parts = [f"{name}: expected {N_USE_CASES} use-case times, got {N_USE_CASES - len(ucs)} "
                 f"(missing use case {', '.join(map(str, ucs))})" for name, ucs in self.missing.items()]
        return f"{where}: " + "; ".join(parts) + "; phase times only, no AIUCpm"

    def to_dict(self) -> dict:
        keys = ("scale_factor", "streams", "tld_s", "tptt_s", "tpst1_s", "tpst2_s", "tpst_s", "ttt_s",
                "throughput_elapsed_s", "aiucpm", "aiucpm_unrounded", "aiucpm_published",
                "price_per_aiucpm", "total_price", "currency")
        doc = {k: getattr(self, k) for k in keys}
        doc["complete"] = self.complete
        doc["missing_use_cases"] = {k: list(v) for k, v in self.missing.items()}
        return doc


MAX_NUMBER = 1e12   # seconds (31,000 years), scale factors, prices: beyond it a figure is an error
MAX_STREAMS = 10_000  # the kit defines 200 stream permutations


def finite_positive(value, where: str, name: str, maximum: float = MAX_NUMBER) -> float:
    """`value` as a float; a one-line ResultError unless it is a finite number in (0, maximum]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ResultError(expected_got(where, name, "a number", f"{type(value).__name__} {str(value)[:40]!r}"))
    if isinstance(value, int) and abs(value) > maximum:  # before float(): a 400-digit int overflows it
        raise ResultError(expected_got(where, name, f"a number up to {maximum:g}", f"a {len(str(abs(value)))}-digit integer"))
    if not math.isfinite(value):
        raise ResultError(expected_got(where, name, "a finite number", repr(value)))
    if value <= 0:
        raise ResultError(expected_got(where, name, "a positive number", repr(value)))
    if value > maximum:
        raise ResultError(expected_got(where, name, f"a number up to {maximum:g}", repr(value)))
    return float(value)


def _use_cases(times: dict, where: str, name: str) -> dict[int, float]:
    out = {}
    for uc, t in times.items():
        if uc not in USE_CASES:
            raise ResultError(expected_got(where, f"{name}", "use cases 1..10", repr(uc)))
        out[uc] = round_ms(finite_positive(t, where, f"{name}.uc{uc}"))
    if not out:
        raise ResultError(expected_got(where, name, "at least one use-case time", "none"))
    return out


def compute(inputs: Inputs, where: str = "input") -> Result:
    """AIUCpm@SF and $/AIUCpm from the phase times; refuses what the kit would refuse.

    Fewer than 10 use cases in a power phase gives the phase times and no AIUCpm
    (Result.aiucpm is None, Result.missing says which); everything else that is wrong raises.
    """
    sf = finite_positive(inputs.scale_factor, where, "scale_factor")
    tld = round_ms(finite_positive(inputs.load_time_s, where, "load_time_s"))
    elapsed = round_ms(finite_positive(inputs.throughput_elapsed_s, where, "throughput_elapsed_s"))
    streams = inputs.streams
    if isinstance(streams, bool) or not isinstance(streams, int):
        raise ResultError(expected_got(where, "streams", "an integer", repr(streams)))
    if streams < 2:
        shown = streams if abs(streams) < 10**12 else f"a {len(str(abs(streams)))}-digit negative integer"
        raise ResultError(expected_got(where, "streams", "at least 2", shown))
    if streams > MAX_STREAMS:
        shown = streams if streams < 10**12 else f"a {len(str(streams))}-digit integer"
        raise ResultError(expected_got(where, "streams", f"at most {MAX_STREAMS}", shown))
    if inputs.reported_streams is not None and inputs.reported_streams != streams:
        raise ResultError(expected_got(where, "streams", f"the {inputs.reported_streams} streams that reported",
                                       streams))
    for t in (tld, elapsed):
        if t <= 0:  # positive, but below a millisecond
            raise ResultError(expected_got(where, "times", "at least 0.001 s after rounding", t))
    phases = {name: _use_cases(getattr(inputs, name), where, name) for name in PER_USE_CASE}
    for name, times in phases.items():
        if any(t <= 0 for t in times.values()):
            raise ResultError(expected_got(where, name, "times of at least 0.001 s after rounding", "0.0"))
    tptt = geomean(phases["training_s"].values())
    tpst1 = geomean(phases["serving_1_s"].values())
    tpst2 = geomean(phases["serving_2_s"].values())
    tpst = max(tpst1, tpst2)
    ttt = elapsed / (streams * N_USE_CASES)
    missing = {name: [uc for uc in USE_CASES if uc not in times] for name, times in phases.items()}
    missing = {k: v for k, v in missing.items() if v}
    if inputs.missing_throughput:
        missing["throughput"] = sorted(inputs.missing_throughput)
    price = inputs.total_price
    if price is not None:
        price = finite_positive(price, where, "total_price")
    value = rounded = published = per = None
    if not missing:
        value = aiucpm(sf, tld, tptt, tpst, ttt)
        rounded = round(value, 3)
        published = publish(rounded, 2)
        if published <= 0:  # $/AIUCpm would divide by zero
            raise ResultError(expected_got(where, "AIUCpm", "at least 0.005 (published with 2 decimals)",
                                           f"{value:.3g} from these times and scale factor"))
        per = price_per_aiucpm(price, rounded) if price is not None else None
    return Result(scale_factor=sf, streams=streams, tld_s=tld, tptt_s=tptt, tpst1_s=tpst1, tpst2_s=tpst2,
                  tpst_s=tpst, ttt_s=ttt, throughput_elapsed_s=elapsed, aiucpm=rounded, aiucpm_unrounded=value,
                  aiucpm_published=published, price_per_aiucpm=per, total_price=price,
                  currency=inputs.currency, missing=missing)
