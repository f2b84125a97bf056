"""A run's host_metrics.json re-checked against the run it claims to describe (issue 46), for every kind.

Each kind's check says what its run's own results record, as one `Run` per run: where its file is,
its timed window (start and end, Unix seconds, from the run's results: training's and checkpointing's
results.json, kv_cache's trial in its metadata, vector_database's summary.json, TPCx-AI's started_at
and phases) and the hosts it ran on. suite.check.hostcpu.findings reads each file once and `of` checks
it against its Run:

    host-metrics-window   each host's series covers the run's timed window: it starts no later and
                          ends no earlier than the run, within GRACE_INTERVALS sampling intervals (and
                          the precision of the run's recorded times); the host, the field, the window
                          expected and the one the series has (error, invalid)
    host-metrics-hosts    a series for every host the run records and none for a host it does not
                          have (a renamed, dropped or added host; a series emptied with no warning of
                          the run's saying why) (error, invalid)
    host-metrics-cpu      each sample's CPU percentages add up to 100% of all CPUs (user, system,
                          iowait, steal, idle; a file from before steal and idle were recorded: at
                          most 100%), within TOTAL_TOL_PCT of rounding (error, invalid)
    host-metrics-missing  a run without host_metrics.json where another run of the same result has
                          one: the runs were sampled alike, so its file was removed (error, invalid)
    host-metrics-gap      a gap inside a series longer than GAP_INTERVALS intervals (and a second more
                          than one): a sampler held up on a loaded host, a stretch nobody saw
                          (warning, closed: a note)

Evidence that contradicts the run's own record is a finding, not bad input: the file loads (it is
well formed), and what it says does not fit the run. Samples out of time order and percentages
outside 0..100 are refused by the loader (suite.harness.hostmetrics.load: one line, exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from suite.harness import hostmetrics
from suite.rules.findings import Finding, make

WINDOW, HOSTS, CPU, MISSING, GAP = ("host-metrics-window", "host-metrics-hosts", "host-metrics-cpu",
                                    "host-metrics-missing", "host-metrics-gap")
GRACE_INTERVALS = 2.0         # a series may start or end this many sampling intervals short of the run
CLOCK_S = 0.25                # and this much more: the run's clock and the sampler's are read apart
TOTAL_TOL_PCT = 0.5           # five percentages rounded to 0.001 each: far within this
GAP_INTERVALS = 3.0
RULES = {WINDOW: "each host's series covers the run's timed window (as the run's results record it), within "
                 f"{GRACE_INTERVALS:g} sampling intervals",
         HOSTS: "a series for every host the run records, none for a host it does not have, and none emptied "
                "without the run's warning saying why",
         CPU: "each sample's CPU percentages (user, system, iowait, steal, idle) add up to 100% of all CPUs",
         MISSING: "every run of a result sampled alike has its host_metrics.json",
         GAP: f"no gap in a host's series longer than {GAP_INTERVALS:g} sampling intervals"}


@dataclass(frozen=True)
class Run:
    """What one run's results record, for its host_metrics.json to be checked against."""
    dirs: tuple                          # where its host_metrics.json may be (the first that has it)
    start_unix_s: float | None = None    # its timed window as its results record it (None: not recorded)
    end_unix_s: float | None = None
    hosts: tuple = ()                    # the hosts it records ((): not recorded)
    all_hosts: bool = True               # hosts is every host (False: at least these; a dask cluster's others unnamed)
    source: str = ""                     # which file and fields say so, for the findings
    precision_s: float = 0.0             # how coarse the recorded times are (a start in whole seconds: 1.0)


def run(dirs, start=None, end=None, hosts=(), source: str = "", all_hosts: bool = True,
        precision_s: float = 0.0) -> Run:
    """A Run from what a kind's results hold: `start`, `end` Unix seconds or ISO times (a time with no
    zone is UTC, as DLIO and our results write it); anything else (missing, not a time) is not recorded."""
    dirs = (dirs,) if isinstance(dirs, (str, Path)) else tuple(dirs)
    names = tuple(h for h in hosts if isinstance(h, str)) if isinstance(hosts, (list, tuple)) else ()
    return Run(tuple(Path(d) for d in dirs), unix_s(start), unix_s(end), names, all_hosts, source, precision_s)


def unix_s(value) -> float | None:
    """Unix seconds from a number or an ISO 8601 time (no zone: UTC); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value == value and abs(value) < 1e11 else None
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def missing(r: Run, path: str, other: str) -> Finding:
    """The finding for a run with no host_metrics.json where `other` (another run's) exists."""
    return make(MISSING, "error", "invalid", path, hostmetrics.FILE,
                f"a {hostmetrics.FILE}, as {other} (the same result's runs are sampled alike)", "none")


def of(rec: hostmetrics.HostSet, r: Run, path: str) -> list[Finding]:
    """Every finding of one host_metrics.json (`path`, as shown) against its run `r`."""
    out = _hosts(rec, r, path)
    for i, hm in enumerate(rec.hosts):
        if hm.samples:
            out += _window(hm, r, path, rec.at(i)) + _cpu(hm, path, rec.at(i)) + _gaps(hm, path, rec.at(i))
    return out


def _hosts(rec: hostmetrics.HostSet, r: Run, path: str) -> list[Finding]:
    named = [hm.host for hm in rec.hosts]
    out = []
    if rec.schema_version == 2:
        for i, hm in enumerate(rec.hosts):      # an empty series is a host whose sampler failed: the run says why
            if not hm.samples and not any(w.startswith(f"host {hm.host}:") for w in rec.warnings):
                out.append(make(HOSTS, "error", "invalid", path, f"{rec.at(i)}samples",
                                "a series of samples over the run, or the run's warning (warnings[]) why none",
                                f"host {hm.host}: no samples and no warning"))
    if not r.hosts or rec.schema_version == 1:     # schema 1 names no host of a run across hosts
        return out
    absent = [h for h in r.hosts if h not in named]
    extra = [h for h in named if h not in r.hosts] if r.all_hosts else []
    if absent or extra:
        said = "; ".join(p for p in (f"no series for {', '.join(absent)}" if absent else "",
                                     f"a series for {', '.join(extra)}, not a host of the run" if extra else "") if p)
        out.append(make(HOSTS, "error", "invalid", path, "hosts[].host",
                        f"one series per host of the run: {', '.join(r.hosts)} ({r.source})",
                        f"{', '.join(named) or 'none'}: {said}"))
    return out


def _window(hm: hostmetrics.HostMetrics, r: Run, path: str, at: str) -> list[Finding]:
    """The series' window [its first sample's span start, its last sample] against the run's."""
    if r.start_unix_s is None or r.end_unix_s is None:
        return []
    field = f"{at}started_at+samples[0..{len(hm.samples) - 1}].t_s"
    expected = f"a series covering {_iso(r.start_unix_s)} .. {_iso(r.end_unix_s)} (the run's timed window, {r.source})"
    t0 = unix_s(hm.started_at) if hm.started_at else None
    if t0 is None:
        return [make(WINDOW, "error", "invalid", path, field, expected,
                     f"host {hm.host}: started_at {hm.started_at!r}, no time: the series cannot be placed")]
    tol = GRACE_INTERVALS * hm.interval_s + r.precision_s + CLOCK_S
    first, last = t0 + max(0.0, hm.samples[0].t_s - hm.interval_s), t0 + hm.samples[-1].t_s
    short = [f"starts {first - r.start_unix_s:.3f} s after the run started" if first - r.start_unix_s > tol else "",
             f"ends {r.end_unix_s - last:.3f} s before the run ended" if r.end_unix_s - last > tol else ""]
    if not any(short):
        return []
    return [make(WINDOW, "error", "invalid", path, field, expected + f", within {tol:.3f} s",
                 f"host {hm.host}: {_iso(first)} .. {_iso(last)}: " + ", ".join(s for s in short if s))]


def cpu_total_problem(s: hostmetrics.Sample) -> float | None:
    """The sample's CPU total where it is not what the percentages must add up to (None: it is): all
    five recorded, 100 (or 0: a span with no tick counted); a file from before steal and idle, at most 100."""
    parts = [getattr(s, k) for k in hostmetrics.CPU_PCTS]
    total = sum(p for p in parts if p is not None)
    if None in parts:
        return total if total > 100.0 + TOTAL_TOL_PCT else None
    return None if abs(total - 100.0) <= TOTAL_TOL_PCT or total == 0.0 else total


def _cpu(hm: hostmetrics.HostMetrics, path: str, at: str) -> list[Finding]:
    bad = [(i, t) for i, s in enumerate(hm.samples) if (t := cpu_total_problem(s)) is not None]
    if not bad:
        return []
    i, total = bad[0]
    recorded = [k for k in hostmetrics.CPU_PCTS if getattr(hm.samples[i], k) is not None]
    expected = ("100% of all CPUs" if len(recorded) == len(hostmetrics.CPU_PCTS) else "at most 100% of all CPUs")
    return [make(CPU, "error", "invalid", path, f"{at}samples[{i}].{'+'.join(recorded)}",
                 f"{expected} (within {TOTAL_TOL_PCT:g})",
                 f"host {hm.host}: {round(total, 3):g}%" + (f" (and {len(bad) - 1} more sample(s))" if len(bad) > 1 else ""))]


def _gaps(hm: hostmetrics.HostMetrics, path: str, at: str) -> list[Finding]:
    limit = max(GAP_INTERVALS * hm.interval_s, hm.interval_s + 1.0)
    prev, gaps = 0.0, []
    for i, s in enumerate(hm.samples):
        if s.t_s - prev > limit:
            gaps.append((s.t_s - prev, i, prev))
        prev = s.t_s
    if not gaps:
        return []
    span, i, since = max(gaps)
    return [make(GAP, "warning", "closed", path, f"{at}samples[{i}].t_s",
                 f"a sample every {hm.interval_s:g} s (a gap of at most {limit:g} s)",
                 f"host {hm.host}: {span:.3f} s without a sample after {since:.3f} s"
                 + (f" (and {len(gaps) - 1} more gap(s))" if len(gaps) > 1 else ""))]


def _iso(t: float) -> str:
    try:
        return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    except (OverflowError, ValueError, OSError):      # a time no calendar holds (a tampered started_at)
        return f"{t:.3f} (Unix s)"
