"""The enforced loop of runs every storage kind uses (training, checkpointing, the DLIO engine).

    series, results = enforced.run(kind)

`kind` supplies `prepare() -> Series` (every refusal, nothing written) and `run_once(k, drop) ->
dict` (one run: launch, collect; the run's results.json doc with "status" and "error"). The
harness: removes the memory cgroups a killed earlier run left (enforce.remove_stale), prepares,
claims the results dir (resultsdir.claim: atomic), then per run clears the cache (the kind's
`clear_cache`, the one call site) and calls run_once under SIGINT/SIGTERM handling (the ranks
stopped, the run marked interrupted, RunError); it writes the run set however the series ended
(the kind's `write_run_set`). run_once uses memory_cgroup() and enforced() around mpi.launch.
Each run is sampled (suite.harness.hostmetrics: each host's CPU, memory, disk and network at 1 s;
across hosts every host of the run, suite.harness.hostsampling) and its host_metrics.json written
beside its provenance, however the run ended.
"""

import contextlib
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from suite import files, terminal
from suite.errors import RuleError, RunError, SuiteError
from suite.harness import hostsampling, provenance, resultsdir
from suite.harness.mpi import Interrupted

CGROUP_PREFIX = "suite-run-"        # + <owner pid>-<run>: enforce.remove_stale finds a killed run's by it
STALE_PREFIXES = (CGROUP_PREFIX, "probe-")     # runs' cgroups and enforce.preflight's probes


def say(*parts) -> None:
    """One flushed line (wrapped at suite.terminal.WIDTH columns)."""
    terminal.say(*parts)


@dataclass(frozen=True)
class SkippedDrop:
    """--no-cache-drop: the evidence says no drop was attempted (the run is non-compliant)."""

    attempted: bool = False
    succeeded: bool = False
    duration_s: float = 0.0
    error: str = "not attempted: --no-cache-drop"
    method: str = "none"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Series:
    """What the harness needs of a prepared invocation (the kind's prepare returns it)."""

    name: str                           # the default results dir: ./results/<name>-<UTC time>
    results_dir: str | Path | None      # --results-dir as given (None: the default); the claimed one after
    runs: int
    clear_cache: Callable[[], object] | None       # before each run -> its evidence (.succeeded, .duration_s,
    #                                                .error, .to_dict()); None: --no-cache-drop (SkippedDrop)
    write_run_set: Callable[[list], None]          # the runs so far, however the series ended
    started: Callable[[Path], None] = field(default=lambda path: None)   # the dir claimed, before run 1
    run_dir: Callable[[int], Path | None] | None = None   # run k's directory (default R/run-<k>): provenance goes there
    gap_shorter_than_run: bool = False     # v3.0: each gap between runs (the clear included) shorter than the run before
    closed: bool = True                    # a broken gap rule stops the series (closed) or is recorded (open)
    provenance: dict | None = None         # the code image of this invocation (set by run(), before run 1)
    host_metrics_cluster: object = None    # a hosts.Cluster: every host of the run sampled through its launcher
    planned: Path | None = None            # the default dir prepare probed and named (fs_separation), claimed first
    host_metrics_dir: Callable[[int], Path | None] | None = None   # where run k's goes (default: run_dir's)


def run(kind) -> tuple[Series, list[dict]]:
    """Prepare, claim the results dir, make the runs; (the series, each run's doc). A run that did not
    complete, or a signal between runs, raises RunError after the run set is written. A refusal
    after the claim (a SuiteError before any run completed: a limit no cgroup takes, say) abandons
    the claimed dir: nothing half-made is left to block the corrected command. A full disk or a file
    size limit is one line naming the file, the run set written (when it still can be) as failed."""
    remove_stale_cgroups()
    series = kind.prepare()
    series.results_dir = resultsdir.claim(series.results_dir, series.name, planned=series.planned)
    results: list[dict] = []
    refused = False
    try:
        series.started(series.results_dir)
        series.provenance = provenance.for_run()
        timing = _Timing()
        with signals_interrupt():       # SIGINT/SIGTERM: the ranks stopped, the run recorded interrupted
            for k in range(1, series.runs + 1):
                drop = timing.between(series, k, clear(series, k))
                with sampled(series, k):
                    result = kind.run_once(k, drop)
                timing.ended()
                results.append(result)
                record_provenance(series, k)
                if result["status"] == "interrupted":
                    raise RunError(f"{Path(series.results_dir) / f'run-{k}'}: {result['error']}; "
                                   f"results.json marks the run interrupted")
                if result["status"] != "complete":
                    raise RunError(f"{Path(series.results_dir) / f'run-{k}'}: {result['error']}")
    except Interrupted as exc:
        raise RunError(f"{series.results_dir}: interrupted by {exc.signame} between runs "
                       f"({len(results)} of {series.runs} complete)") from None
    except OSError as exc:
        if not files.is_resource_error(exc):
            raise
        raise RunError(f"{files.write_error(exc.filename or series.results_dir, exc)}; the run failed "
                       f"({len(results)} of {series.runs} complete)") from None
    except files.WriteError as exc:
        raise RunError(f"{exc}; the run failed ({len(results)} of {series.runs} complete)") from None
    except SuiteError as exc:
        refused = not isinstance(exc, RunError) and not results
        raise
    finally:
        if refused:
            resultsdir.abandon(series.results_dir, written=True)
        else:
            _finish(series, results, sys.exc_info()[1])
    return series, results


class _Timing:
    """The series' clock: each run's duration (run_once, as the harness sees it) and the gap before
    the next (from the end of one run to the start of the next: its cache clear included)."""

    def __init__(self):
        self.last_start = self.last_end = None

    def between(self, series: Series, k: int, drop):
        """The drop evidence with the measured gap (GapRecorded); refused (RuleError) when the series
        demands gaps shorter than the run before and this one is not."""
        now = time.time()
        gap = duration = problem = None
        if self.last_end is not None:
            gap, duration = now - self.last_end, self.last_end - self.last_start
            if series.gap_shorter_than_run and gap >= duration:
                problem = (f"run {k}: gap between runs: expected shorter than run {k - 1} ({duration:.3f} s), got "
                           f"{gap:.3f} s (the cache clear took {getattr(drop, 'duration_s', 0.0):.3f} s)")
                if series.closed:
                    raise RuleError(f"{series.results_dir}: {problem}; the series breaks the back-to-back rule")
        self.last_start = time.time()
        return drop if gap is None else GapRecorded(drop, gap, duration, problem)

    def ended(self) -> None:
        self.last_end = time.time()


class GapRecorded:
    """A cache clear's evidence with the gap before the run beside it (results.json's cache_drop)."""

    def __init__(self, drop, gap_s: float | None, previous_run_s: float | None, problem: str | None = None):
        self.drop, self.gap_s, self.previous_run_s, self.gap_problem = drop, gap_s, previous_run_s, problem

    def __getattr__(self, name):
        return getattr(self.drop, name)

    def to_dict(self) -> dict:
        out = self.drop.to_dict()
        if self.gap_s is not None:
            out.update(gap_since_previous_run_s=round(self.gap_s, 6), previous_run_duration_s=round(self.previous_run_s, 6))
        return out


def _where(series: Series, k: int) -> Path | None:
    """Run k's directory (the kind's run_dir(k), else R/run-<k>), when the run made one."""
    where = series.run_dir(k) if series.run_dir else Path(series.results_dir) / f"run-{k}"
    return Path(where) if where is not None and Path(where).is_dir() else None


def sampled(series: Series, k: int):
    """Run k under the host sampler (this host's, or every host's of the series' cluster); its
    host_metrics.json written in its directory however it ended."""
    where = (lambda: series.host_metrics_dir(k)) if series.host_metrics_dir else (lambda: _where(series, k))
    return hostsampling.sampling(where, series.host_metrics_cluster)


def record_provenance(series: Series, k: int) -> None:
    """Run k's code image: `.mlps-code-image` (one line, md5-tree-v2:<hash>) and provenance.json in its
    directory (the kind's run_dir(k), else R/run-<k>), when the run made one."""
    where = _where(series, k)
    if where is None:
        return
    provenance.record(where, series.provenance)


def _finish(series: Series, results: list[dict], ended_by: BaseException | None) -> None:
    """The run set written however the series ended (a full disk: one line, naming what ended the
    series too), the claim released."""
    try:
        series.write_run_set(results)
    except (OSError, files.WriteError) as exc:
        if isinstance(exc, OSError) and not files.is_resource_error(exc):
            raise
        why = exc if isinstance(exc, files.WriteError) else files.write_error(exc.filename or series.results_dir, exc)
        first = f"{ended_by}; then " if isinstance(ended_by, SuiteError) else ""
        raise RunError(f"{first}{why}; the run set could not be written: the results dir is incomplete") from None
    finally:
        resultsdir.release(series.results_dir)


def remove_stale_cgroups() -> list[str]:
    """The cgroups a killed earlier run left (its runs' and preflight's probes; owner pid dead), removed."""
    from suite.enforce import cgroup

    removed = [path for prefix in STALE_PREFIXES for path in cgroup.remove_stale(prefix)]
    if removed:
        say(f"removed {len(removed)} stale memory cgroup(s) of a killed run: {', '.join(removed)}")
    return removed


def clear(series: Series, k: int):
    """The cache clear before run k (the only place a run's clear is made), and its line."""
    drop = SkippedDrop() if series.clear_cache is None else series.clear_cache()
    say(f"[run {k}/{series.runs}] cache drop: "
        + (f"done in {drop.duration_s:.2f} s" if drop.succeeded else f"NOT done ({drop.error})"))
    return drop


def drop_page_cache():
    """This host's cache clear (enforce's drop of the page cache): what a kind passes as clear_cache
    for local storage (the storage backend's clear_cache takes its place)."""
    from suite.enforce import cache

    return cache.drop_caches()


def refuse_without_clear(clear_cache: Callable[[], object], division: str, allowed: bool) -> None:
    """The closed division clears the cache before every run: refused up front when it may not
    (one clear as the probe), unless --allow-no-cache-drop."""
    if division != "closed" or allowed:
        return
    probe = clear_cache()
    if not probe.succeeded:
        raise RuleError(f"cache drop: expected permission to drop the page cache before each run "
                        f"(closed division), got {probe.error} (use --allow-no-cache-drop or "
                        f"--division open; either makes the run non-compliant)")


@contextlib.contextmanager
def signals_interrupt():
    """SIGINT and SIGTERM raise Interrupted while the runs are under way (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum, frame):
        raise Interrupted(signal.Signals(signum).name)

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def cgroup_name(k: int) -> str:
    """Run k's memory cgroup name: remove_stale finds it by the prefix and the owner pid."""
    return f"{CGROUP_PREFIX}{os.getpid()}-{k}"


def memory_cgroup(limit: int | None, k: int):
    """Run k's memory cgroup on this host around mpiexec and its ranks (None without a limit)."""
    from suite.enforce.cgroup import MemoryCgroup

    return MemoryCgroup(limit, cgroup_name(k)) if limit else None


def enforced(cgroup, go, failure, join: bool = True) -> tuple[str, str | None, dict | None]:
    """Run the ranks inside `cgroup` (None: no limit) and say how it went: (status, error, the
    cgroup's evidence). `go(start)` starts mpiexec and returns its exit status; `start` is what
    puts the child into the cgroup (None without one; go() takes no argument when join=False:
    the ranks join themselves). The evidence is read even when the ranks failed or were stopped."""
    status, error, evidence = "complete", None, None
    try:
        if cgroup is None:
            rc = go(None) if join else go()
        else:
            with cgroup:
                rc = go(cgroup.start) if join else go()
        if rc != 0:
            status, error = "failed", failure(rc)
    except Interrupted as exc:
        status, error = "interrupted", f"interrupted by {exc.signame}"
    finally:
        try:
            evidence = cgroup.evidence() if cgroup is not None else None
        except Exception as exc:  # noqa: BLE001 - evidence must not hide the run's own error
            evidence = {"error": str(exc)}
    if status == "failed" and evidence and evidence.get("oom_kills"):
        error += (f"; the memory cgroup OOM-killed {evidence['oom_kills']} process(es) at "
                  f"{evidence.get('applied_bytes')} bytes: raise --memory-limit")
    return status, error, evidence
