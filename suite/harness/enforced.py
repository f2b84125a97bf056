"""The enforced loop of runs every storage kind uses (training, checkpointing, the DLIO engine).

    series, results = enforced.run(kind)

`kind` supplies `prepare() -> Series` (every refusal, nothing written) and `run_once(k, drop) ->
dict` (one run: launch, collect; the run's results.json doc with "status" and "error"). The
harness: removes the memory cgroups a killed earlier run left (enforce.remove_stale), prepares,
claims the results dir (resultsdir.claim: atomic), then per run clears the cache (the kind's
`clear_cache`, the one call site) and calls run_once under SIGINT/SIGTERM handling (the ranks
stopped, the run marked interrupted, RunError); it writes the run set however the series ended
(the kind's `write_run_set`). run_once uses memory_cgroup() and enforced() around mpi.launch.
"""

import contextlib
import os
import signal
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from suite import files
from suite.errors import RuleError, RunError, SuiteError
from suite.harness import resultsdir
from suite.harness.mpi import Interrupted

CGROUP_PREFIX = "suite-run-"        # + <owner pid>-<run>: enforce.remove_stale finds a killed run's by it
STALE_PREFIXES = (CGROUP_PREFIX, "probe-")     # runs' cgroups and enforce.preflight's probes


def say(*parts) -> None:
    print(*parts, flush=True)


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


def run(kind) -> tuple[Series, list[dict]]:
    """Prepare, claim the results dir, make the runs; (the series, each run's doc). A run that did not
    complete, or a signal between runs, raises RunError after the run set is written. A refusal
    after the claim (a SuiteError before any run completed: a limit no cgroup takes, say) abandons
    the claimed dir: nothing half-made is left to block the corrected command. A full disk or a file
    size limit is one line naming the file, the run set written (when it still can be) as failed."""
    remove_stale_cgroups()
    series = kind.prepare()
    series.results_dir = resultsdir.claim(series.results_dir, series.name)
    results: list[dict] = []
    refused = False
    try:
        series.started(series.results_dir)
        with signals_interrupt():       # SIGINT/SIGTERM: the ranks stopped, the run recorded interrupted
            for k in range(1, series.runs + 1):
                result = kind.run_once(k, clear(series, k))
                results.append(result)
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
