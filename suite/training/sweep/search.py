"""`suite sweep`: `suite run` once per accelerator count N, in this process (storage.run.launch),
into one sweep dir: N<n>-storage/ (cache dropped before each run, the memory cgroup as
configured), N<n>-ceiling/ with --ceiling (suite.training.sweep.ceiling), N<n>-confirm/ for --find-max's
answer, and sweep.json (suite.training.sweep.result), rewritten after every point so an interrupted sweep
keeps what it measured.

--find-max: doubling from --start while every run of a probe meets the AU threshold, then
bisection between the last N that met it and the first that did not; each probe is recorded; the
answer is run again with the round's runs.count runs (what the rules need for a submission) and stepped down by one
when those do not all meet the threshold.
"""

import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from suite.errors import RunError, SuiteError
from suite.harness import resultsdir
from suite.training.sweep import result

SEQUENTIAL_LEVEL = 0.95    # find-max's probes: stop once AU vs the threshold is clear at this confidence
SEQUENTIAL_MIN_EPOCHS = 2  # never decide on fewer epochs (the first one alone says least)
GUESS_BAND_POINTS = 10.0   # interpolate AU only when the failing end is within this many points of the threshold
CONFIRM_ATTEMPTS = 3        # step down at most this many times when the confirmation misses the threshold


@dataclass
class SweepOptions:
    workload: str
    accelerator_type: str = "h100"
    accelerators: list | None = None      # the N to run; None with find_max
    find_max: bool = False
    ceiling: bool = False
    data_dir: str | None = None
    results_dir: str | None = None
    runs: int = 1                         # runs per point (probes too)
    start: int = 1                        # find-max's first probe
    max_accelerators: int = 64            # find-max never probes past this
    confirm_runs: int | None = None       # None: the ruleset's runs.count (the answer is a submittable benchmark)
    memory_limit: int | None = None
    division: str = "closed"
    ruleset: str | None = None
    params: list = field(default_factory=list)
    allow_no_cache_drop: bool = False
    sequential: bool = True               # find-max: stop a probe's run once AU vs the threshold is clear
    level: float = SEQUENTIAL_LEVEL       # the sequential test's confidence (over all its looks)


def say(*parts) -> None:
    """A sweep's line, wrapped at 100 columns (suite.terminal.say) like every run's."""
    from suite import terminal

    terminal.say(*parts)


def find_max(probe, start: int, limit: int, guess=None, first: int | None = None, floor=None) -> int:
    """The largest N in 1..limit with probe(N, phase) true, assuming it holds up to some N and
    fails past it. 0 when even N = 1 fails. Without `first`: doubling from `start`, then bisection.
    With `first` (the sweep's bracket, known before any probe): N = first is probed first, then
    galloping away from it (up: first+1, +2, +4, ... while they meet; down: first-1, -2, -4, ...
    while they miss, or straight to `floor(bad)` where that says an N: the sweep's after a miss far
    below the threshold, where the storage's measured rate would meet it, then steps from 1 again;
    up from the first that meets), then bisection. Either way the search ends on a
    good N whose N+1 failed (or the limit), so both find the same N where AU falls with N.
    `guess(good, bad)`, when given, picks the next N of the bisection from what the probes measured
    (the sweep: AU interpolated to the threshold; None: halve); it is kept at least a third of the
    gap from either end, so the gap still shrinks by a third or more per probe."""
    if first is None:
        good, bad = _doubling(probe, max(1, min(start, limit)), limit)
    else:
        good, bad = _gallop(probe, max(1, min(first, limit)), limit, floor)
    if bad is None:
        return good
    while bad - good > 1:
        mid = (good + bad) // 2
        if guess is not None and bad - good > 3:
            q = (bad - good) // 3
            g = guess(good, bad)
            mid = mid if g is None else min(max(g, good + q), bad - q)
        if probe(mid, "bisection"):
            good = mid
        else:
            bad = mid
    return good


def _doubling(probe, n: int, limit: int) -> tuple[int, int | None]:
    """(last N that met, first that missed; None: the limit met)."""
    good = 0
    while probe(n, "doubling"):
        good = n
        if n >= limit:
            return good, None
        n = min(2 * n, limit)
    return good, n


def _gallop(probe, n: int, limit: int, floor) -> tuple[int, int | None]:
    """From the bracket N outwards with steps 1, 2, 4, ... until the verdict flips: (good, bad). A
    miss far below the threshold jumps to `floor(bad)` (when it says an N below bad) instead of
    stepping, and the gallop turns up from there."""
    if probe(n, "bracket"):
        return _up(probe, n, limit, None)
    bad, step = n, 1
    while bad > 1:
        low = floor(bad) if floor is not None else None
        jump = low is not None and 1 <= low < bad
        m = low if jump else max(bad - step, 1)
        if probe(m, "gallop"):
            return _up(probe, m, bad - 1, bad)
        bad, step = m, 1 if jump else 2 * step      # after a jump the answer is near it: steps from 1 again
    return 0, bad


def _up(probe, good: int, top: int, bad: int | None) -> tuple[int, int | None]:
    """Upwards from a good N with steps 1, 2, 4, ... up to `top` (its failing neighbour `bad`, or
    None at the limit): (good, bad)."""
    step = 1
    while good < top:
        m = min(good + step, top)
        if not probe(m, "gallop"):
            return good, m
        good, step = m, 2 * step
    return good, bad


class Sweep:
    """One sweep dir and its sweep.json, filled point by point."""

    def __init__(self, opts: SweepOptions):
        from suite.training import workloads

        self.opts = opts
        self.workload = workloads.resolve(opts.workload, opts.accelerator_type, workloads.parse_params(opts.params))
        self.dir = Path(opts.results_dir or resultsdir.default(self.name))    # claimed by run()
        self.points: dict[int, dict] = {}
        self.probes: list[dict] = []
        self.confirmations: list[dict] = []
        self.answer = None
        self.scan_memo: dict = {}     # the dataset scanned once for every run (prepare.scanned: while unchanged)
        self._data = None             # --data-dir resolved once for every run (select.DataLocation): `data`
        self.t0 = time.time()
        self.load0 = list(os.getloadavg())

    @property
    def name(self) -> str:
        """The default sweep dir's name (suite.harness.resultsdir adds the UTC time)."""
        return f"{self.workload.dlio_name}-sweep"

    # ------------------------------------------------------------------ runs

    @property
    def sequential(self) -> dict | None:
        """sweep.json's `sequential` (and what a probe's plan carries): None when probes run in full."""
        if not (self.opts.find_max and self.opts.sequential):
            return None
        return {"level": self.opts.level, "min_epochs": SEQUENTIAL_MIN_EPOCHS}

    @property
    def data(self):
        """The sweep's data location and backend, resolved on first use and passed to every run (None:
        no --data-dir, each N's miniature)."""
        from suite.storage.backend.select import resolve

        if self._data is None and self.opts.data_dir:
            self._data = resolve(self.opts.data_dir, self.workload)
        return self._data

    def run_options(self, n: int, results_dir: Path, runs: int, ceiling: bool, probe: bool = False):
        """One `suite run`'s options; a find-max probe (storage or ceiling, never the confirmation)
        stops once its AU against the threshold is clear (sequential testing, suite.stats)."""
        from suite.training.run.prepare import Options

        o = self.opts
        stop = None
        if probe and self.sequential:
            stop = {"threshold_percentage": self.threshold, **self.sequential}
        return Options(workload=o.workload, accelerators=n, accelerator_type=o.accelerator_type,
                       data_dir=o.data_dir, results_dir=str(results_dir), runs=runs, memory_limit=o.memory_limit,
                       division="open" if ceiling else o.division, ruleset=o.ruleset, params=list(o.params),
                       allow_no_cache_drop=o.allow_no_cache_drop, no_cache_drop=ceiling, stop_when_clear=stop,
                       scan_memo=self.scan_memo, data=self.data)

    def measure(self, n: int, kind: str, runs: int) -> dict:
        """One `suite run` at N into N<n>-<kind>[-k]/; its point (with an error when it failed)."""
        from suite.training.run import launch
        from suite.enforce.cache import preread
        from suite.training.sweep import ceiling as cache

        rdir = self.dir / f"N{n}-{kind}"
        k = 2
        while rdir.exists():                   # a second confirmation at the same N
            rdir, k = self.dir / f"N{n}-{kind}-{k}", k + 1
        t0, error, warmed = time.time(), None, None
        if kind == "ceiling":
            paths = cache.plan_files(self.dir / f"N{n}-storage")
            nbytes, secs = preread(paths)
            warmed = {"bytes": nbytes, "duration_s": secs, "resident_fraction": cache.resident_fraction(paths)}
            say(f"sweep: N={n} ceiling: {nbytes / 1024**3:.2f} GiB pre-read into the page cache in {secs:.1f} s")
        say(f"sweep: N={n} {kind}: {runs} run(s) -> {rdir}")
        try:
            launch.run(self.run_options(n, rdir, runs, kind == "ceiling", probe=kind != "confirm"))
        except RunError as exc:                # a run that failed (OOM, a rank died): recorded, the sweep goes on
            if "interrupted" in str(exc):      # SIGINT/SIGTERM: the user stops the sweep, not one point
                self.save()
                raise
            error = str(exc)
        except SuiteError as exc:              # refused at this N (a dataset too small for it): a miss
            if not self.opts.find_max or n == self.opts.start:
                raise
            error = str(exc)
        pt = result.point(rdir, self.dir) if rdir.is_dir() else result.empty_point(rdir, self.dir)
        if warmed is not None:    # still cached after the run? a cache drop elsewhere makes it a storage run
            warmed["resident_fraction_after"] = cache.resident_fraction(paths)
            low = [f for f in (warmed["resident_fraction"], warmed["resident_fraction_after"]) if f is not None and f < 0.95]
            if low:
                say(f"sweep: N={n} ceiling: NOTE: only {100 * min(low):.0f}% of the dataset was in the page cache "
                    f"(a cache drop by another process, or memory pressure): this ceiling read from storage too")
        pt.update(kind=kind, duration_s=time.time() - t0, error=error, load_average=os.getloadavg()[0],
                  throughput_to_demand=self.to_demand(n, pt["samples_per_second"]))
        if warmed is not None:
            pt["preread"] = warmed
        say(f"sweep: N={n} {kind}: " + describe(pt, self.threshold))
        return pt

    def to_demand(self, n: int, samples_per_second):
        """samples/s over what N accelerators consume at 100% AU (N x batch / compute time): the
        utilisation the throughput shows, first steps included (AU excludes each epoch's first)."""
        wl = self.workload
        if samples_per_second is None or wl.computation_time_s <= 0:
            return None
        return samples_per_second / (n * wl.batch_size / wl.computation_time_s)

    @property
    def threshold(self) -> float:
        return 100.0 * self.workload.au_threshold

    def point(self, n: int) -> dict:
        """Storage (and ceiling) at N, recorded in sweep.json."""
        entry = self.points.setdefault(n, {"accelerators": n, "storage": None, "ceiling": None,
                                           "storage_to_ceiling": None})
        entry["storage"] = self.measure(n, "storage", self.opts.runs)
        if self.opts.ceiling and entry["storage"]["runs"]:     # a refused N has no files to pre-read
            entry["ceiling"] = self.measure(n, "ceiling", self.opts.runs)
        entry["storage_to_ceiling"] = result.storage_to_ceiling(entry["storage"], entry["ceiling"])
        self.save()
        return entry

    def guess(self, good: int, bad: int) -> int | None:
        """The N where the AU measured at `good` and `bad` crosses the threshold (linear between the
        two): earlier probes' knowledge for the next one. None without both AUs."""
        au = [(self.points.get(n) or {}).get("storage") or {} for n in (good, bad)]
        a, b = (x.get("au_percentage") for x in au)
        if good < 1 or a is None or b is None or not a > self.threshold > b:
            return None
        if b < self.threshold - GUESS_BAND_POINTS:     # a cliff (one step per epoch, a failed run): halve
            return None
        return round(good + (a - self.threshold) / (a - b) * (bad - good))

    def bracket(self) -> int | None:
        """find-max's first probe, known before any run: the largest N (at most --max-accelerators)
        whose epochs keep a step after the first, from the dataset's samples (the one scan of the
        sweep, prepare.scanned). AU leaves each epoch's first step out; past that N an epoch has one
        step and AU is that step's own wait for data and compute (resnet50 on 40 files: N = 62, and
        ~14% at 63). None (doubling from --start) with --full-probes, another --start, or no local
        --data-dir (the miniature is sized per N)."""
        from suite.training.run import prepare

        o, wl = self.opts, self.workload
        if not (o.find_max and o.sequential and o.start == 1 and o.data_dir) or self.data.is_object:
            return None
        files_ = prepare.scanned(self.scan_memo, self.data, wl)[0]
        samples = min(len(files_), wl.num_files_train or len(files_)) * wl.num_samples_per_file
        n = min(o.max_accelerators, samples // (2 * wl.batch_size))
        return n if n >= 1 else None

    def floor(self, bad: int) -> int | None:
        """After a miss far below the threshold (more than GUESS_BAND_POINTS), where to look next:
        the N at which the AU measured there would reach the threshold were the storage's rate the
        limit (AU = rate / (N x demand per accelerator), so AU x N stays put: N x AU / threshold).
        With many steps an epoch that is the N the measured samples/s feeds at the threshold; with
        few, AU hides the first step's wait and this N is nearer the answer than the rate's. None
        after a near miss (the answer is near: step down) or without an AU."""
        au = ((self.points.get(bad) or {}).get("storage") or {}).get("au_percentage")
        if au is None or au >= self.threshold - GUESS_BAND_POINTS:
            return None
        return int(bad * au / self.threshold)

    def probe(self, n: int, phase: str) -> bool:
        entry = self.point(n)
        s = entry["storage"]
        self.probes.append({"accelerators": n, "phase": phase, "au_percentage": s["au_percentage"],
                            "meets_threshold": s["meets_threshold"], "results_dir": s["results_dir"],
                            "error": s["error"]})
        self.save()
        return s["meets_threshold"]

    def confirm(self, best: int) -> None:
        """The round's runs.count runs at the answer; one step down (at most CONFIRM_ATTEMPTS times) while they miss."""
        n = best
        for _ in range(CONFIRM_ATTEMPTS):
            if n < 1:
                break
            pt = self.measure(n, "confirm", self.opts.confirm_runs)
            self.confirmations.append({"accelerators": n, **pt})
            if pt["meets_threshold"]:
                self.answer = {"accelerators": n, "confirmed": True, "confirm_runs": pt["runs"],
                               "au_per_run": pt["au_per_run"], "results_dir": pt["results_dir"],
                               "compliant": pt["compliant"], "found_by_probes": best}
                break
            n -= 1
        if self.answer is None:
            self.answer = {"accelerators": max(n, 0), "confirmed": False, "confirm_runs": self.opts.confirm_runs,
                           "au_per_run": [], "results_dir": None, "compliant": False, "found_by_probes": best}
        self.save()

    # ------------------------------------------------------------------ sweep.json

    def doc(self) -> dict:
        from suite import __version__
        wl = self.workload
        points = [self.points[n] for n in sorted(self.points)]
        from suite.training.sweep.sizing import demand_mib_s

        demand = demand_mib_s(wl)
        return {
            "schema_version": 1, "suite_version": __version__, "workload": wl.name, "dlio_workload": wl.dlio_name,
            "accelerator": wl.accelerator, "mode": "find-max" if self.opts.find_max else "list",
            "division": self.opts.division, "miniature": not self.opts.data_dir, "params": list(self.opts.params), "runs_per_point": self.opts.runs,
            "au_threshold_percentage": self.threshold, "batch_size": wl.batch_size,
            "record_length_bytes": wl.record_length_bytes, "computation_time_s": wl.computation_time_s,
            "demand_mib_per_second_per_accelerator": demand,
            "sequential": self.sequential,
            "ceiling": self.opts.ceiling, "ceiling_note": result.CEILING_NOTE if self.opts.ceiling else None,
            "points": points, "knee": result.knee(points), "probes": self.probes,
            "confirmations": self.confirmations, "max_accelerators": self.answer,
            "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.t0)), "duration_s": time.time() - self.t0,
            "host": {"hostname": socket.gethostname(), "cpu_count": os.cpu_count() or 1,
                     "load_average_start": self.load0, "load_average_end": list(os.getloadavg())},
        }

    def save(self) -> None:
        result.write(self.dir, self.doc())


def storage_read_ceilings(doc: dict) -> list[tuple[int, float]]:
    """(N, % of the dataset cached at its lowest) of each ceiling run that was not all in the page cache."""
    out = []
    for p in doc["points"]:
        pre = (p.get("ceiling") or {}).get("preread") or {}
        low = [f for f in (pre.get("resident_fraction"), pre.get("resident_fraction_after")) if f is not None]
        if low and min(low) < 0.95:
            out.append((p["accelerators"], 100 * min(low)))
    return out


def describe(pt: dict, threshold: float) -> str:
    def f(x, spec):
        return "-" if x is None else format(x, spec)
    ok = "meets" if pt["meets_threshold"] else "BELOW"
    text = (f"AU {f(pt['au_percentage'], '.2f')}% ({ok} {threshold:g}%), {f(pt['samples_per_second'], ',.1f')} "
            f"samples/s, {f(pt['mib_per_second'], ',.1f')} MiB/s; first/later epoch "
            f"{f(pt['first_to_later_ratio'], '.3f')}; throughput / demand {f(pt['throughput_to_demand'], '.2f')}; "
            f"{pt['steps_per_epoch']} steps/epoch; {pt['duration_s']:.1f} s")
    if pt["steps_per_epoch"] is not None and pt["steps_per_epoch"] < result.FEW_STEPS:
        text += (f"; NOTE: {pt['steps_per_epoch']} steps per epoch: AU leaves out each epoch's first step, so it "
                 f"hides the wait for data; a larger dataset makes it mean more")
    return text + (f"; FAILED: {pt['error']}" if pt.get("error") else "")


def run(opts: SweepOptions) -> int:
    """The whole `suite sweep`; returns the exit code (0: every point measured; with --find-max,
    an answer confirmed)."""
    from suite.errors import ExitCode
    from suite.training.run import launch

    if opts.confirm_runs is None:            # the round's runs.count: the confirmed answer is a submittable benchmark
        from dataclasses import replace

        from suite.rules import rulesets

        opts = replace(opts, confirm_runs=rulesets.run_count(opts.ruleset))
    sweep = Sweep(opts)
    resultsdir.check(sweep.dir)
    first = opts.start if opts.find_max else opts.accelerators[0]
    launch.refuse(sweep.run_options(first, sweep.dir / "probe", opts.runs, False))   # bad input before any run
    sweep.dir = resultsdir.claim(opts.results_dir, sweep.name)
    refused = False
    try:
        doc = sweep_all(sweep, opts)
    except SuiteError as exc:    # a refusal before any point was saved: nothing half-made left behind
        refused = not isinstance(exc, RunError) and not (Path(sweep.dir) / result.SWEEP_FILE).exists()
        raise
    finally:
        if refused:
            resultsdir.abandon(sweep.dir, written=True)
        else:
            resultsdir.release(sweep.dir)
    failed = any((p[k] or {}).get("error") for p in doc["points"] for k in ("storage", "ceiling"))
    if opts.find_max and not (doc["max_accelerators"] or {}).get("confirmed"):
        failed = True
    return ExitCode.FAILED if failed else ExitCode.OK


def sweep_all(sweep: Sweep, opts: SweepOptions) -> dict:
    """Every point (or the find-max probes and the confirmation) into the claimed sweep dir; sweep.json's doc."""
    say(f"suite sweep: {sweep.workload.name} on {sweep.workload.accelerator}, "
        + (f"find-max from N={opts.start} (at most {opts.max_accelerators})" if opts.find_max
           else f"N = {', '.join(map(str, opts.accelerators))}")
        + (", with the page-cache ceiling" if opts.ceiling else "") + f" -> {sweep.dir}")
    if opts.find_max:
        first = sweep.bracket()
        if first is not None:
            say(f"sweep: bracket: N={first} is the largest N whose epochs keep a step after the first "
                f"({sweep.workload.batch_size} samples a step); probing it first")
        best = find_max(sweep.probe, opts.start, opts.max_accelerators, sweep.guess if opts.sequential else None,
                        first=first, floor=sweep.floor)
        say(f"sweep: the probes say N={best}; confirming with {opts.confirm_runs} runs")
        sweep.confirm(best)
    else:
        for n in opts.accelerators:
            sweep.point(n)
    sweep.save()
    doc = sweep.doc()
    summary(doc, sweep.dir)
    return doc


def summary(doc: dict, sweep_dir: Path) -> None:
    ans = doc["max_accelerators"]
    if ans:
        say(f"sweep: maximum N at AU >= {doc['au_threshold_percentage']:g}%: {ans['accelerators']} "
            + (f"(confirmed by {ans['confirm_runs']} runs: AU " + ", ".join(f"{a:.2f}%" for a in ans["au_per_run"]) + ")"
               if ans["confirmed"] else "(NOT confirmed)"))
    if doc["knee"]:
        say(f"sweep: storage departs at N={doc['knee']['accelerators']}: {doc['knee']['reason']}")
    cold = storage_read_ceilings(doc)
    if cold:        # in the main output, not only a note mid-run: these are no ceiling (issue 47)
        say(f"sweep: CEILING NOT MEASURED at N={', '.join(str(n) for n, _ in cold)}: only "
            f"{min(f for _, f in cold):.0f}% of the dataset stayed in the page cache, so those ceiling runs read "
            "from storage (a miniature's cgroup or memory pressure evicts it); their figures are storage's")
    say(f"sweep: {len(doc['points'])} point(s), {len(doc['probes'])} probe(s) in {doc['duration_s']:.0f} s; "
        f"load average {doc['host']['load_average_end'][0]:.2f}; {sweep_dir / result.SWEEP_FILE} "
        f"(suite report {sweep_dir} --out DIR draws it)")
