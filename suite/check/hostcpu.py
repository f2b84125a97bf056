"""host-cpu-saturated: the one warning, for every kind, that a host's CPUs were saturated while the
storage waited (issue 37). Each kind's check hands it the directories its runs were sampled in; the
host_metrics.json in each (suite.harness.hostmetrics: what `suite run` samples for each run, on
every host of a run across hosts) is read, and the spans hostmetrics.storage_waited_spans finds in
each host's series become a finding naming that host:

    rule_id  host-cpu-saturated, severity warning, effect closed (a note: the verdict is unchanged)
    path     the host_metrics.json, relative to the checked tree
    field    hosts[h].samples[i..j].cpu_user_pct+cpu_system_pct+cpu_steal_pct (a file from before steal was
             recorded: ...cpu_user_pct+cpu_system_pct; a single-host file of schema 1: samples[i..j]...)
    expected below 95% of all CPUs (user+system+steal) ...
    actual   host suite-h2: 98.5% of all CPUs over 12.0-27.0 s (15.0 s), iowait 0.2%, disk 1.2 MiB/s (run's peak 80.1), ...

A host in the file with no samples (its sampler failed; the file's warnings say why) is the other
warning, host-unsampled (effect closed): its CPU was not seen.

The same pass re-checks each file against what its run's results record (suite.check.hostrun: the
run's window and hosts, each sample's CPU total, a run's file removed; issue 46): each kind hands a
hostrun.Run per run, a plain directory where its results record nothing.

The definition and why the thresholds are what they are: docs/checker.md ("Host CPU saturation").
A host_metrics.json that cannot be read is bad input (ResultError, one line, exit 2), as every
other file a check reads.
"""

from __future__ import annotations

from pathlib import Path

from suite.check import hostrun
from suite.harness import hostmetrics
from suite.rules.findings import Finding, make

RULE = "host-cpu-saturated"
UNSAMPLED = "host-unsampled"
RULES = {RULE: f"no host's CPUs were saturated (user+system+steal >= {hostmetrics.BUSY_PCT:g}% of all CPUs for "
               f"{hostmetrics.MIN_SPAN_S:g} s or more) while the storage waited (iowait below "
               f"{hostmetrics.IOWAIT_PCT:g}%): where they were, the client's CPU, not the storage, set the pace",
         UNSAMPLED: "every host of the run was sampled: a host with no series is a host whose CPU nobody saw, so "
                    "whether it set the pace is not known", **hostrun.RULES}
EXPECTED = (f"below {hostmetrics.BUSY_PCT:g}% of all CPUs (user+system+steal) in any {hostmetrics.MIN_SPAN_S:g} s "
            f"with iowait below {hostmetrics.IOWAIT_PCT:g}% (at {hostmetrics.BUSY_PCT:g}% the client has no "
            f"CPU left to ask the storage for more)")
SHOWN = 3                     # spans spelled out per file; the rest counted


def findings(runs, root) -> list[Finding]:
    """Every host finding of the runs' host_metrics.json, each read once: host-cpu-saturated (one warning
    per host with a saturated span while the storage waited), host-unsampled, and where a run is a
    suite.check.hostrun.Run (what its results record: its window, its hosts), the file re-checked against
    it (hostrun.of) and a run without the file its siblings have (hostrun.missing). A plain directory is
    a Run with nothing recorded. Each file is directly in one of a run's dirs (nothing is walked, so a
    run never gets another's file); paths relative to `root` (None: as the dirs name them). A file
    named twice is read once."""
    root, seen, out = (Path(root) if root is not None else None), set(), []
    runs = [r if isinstance(r, hostrun.Run) else hostrun.run(r) for r in runs]
    found = [next((Path(d) / hostmetrics.FILE for d in r.dirs if (Path(d) / hostmetrics.FILE).is_file()), None)
             for r in runs]
    have = next((p for p in found if p is not None), None)
    for r, path in zip(runs, found):
        if path is None:
            if have is not None and r.dirs and r.start_unix_s is not None:    # a timed run the kind recorded
                out.append(hostrun.missing(r, _shown(r.dirs[0] / hostmetrics.FILE, root), _shown(have, root)))
            continue
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
        rec = hostmetrics.load(path, root=path.parent)       # never through a link out of its directory
        shown = _shown(path, root)
        for i, hm in enumerate(rec.hosts):
            out += of(hm, shown, rec.at(i)) if hm.samples else [unsampled(rec, i, shown)]
        out += hostrun.of(rec, r, shown)
    return out


def unsampled(rec: hostmetrics.HostSet, i: int, path: str) -> Finding:
    """The warning for host i of `rec`, which has no series (its sampler failed: the file's warning says why)."""
    hm = rec.hosts[i]
    why = next((w for w in rec.warnings if w.startswith(f"host {hm.host}:")), "the file says no more")
    return make(UNSAMPLED, "warning", "closed", path, f"{rec.at(i)}samples", "a series of samples over the run",
                f"host {hm.host}: none ({why[:300]})", hm.scope)


def of(hm: hostmetrics.HostMetrics, path: str, at: str = "") -> list[Finding]:
    """The warning for one host's metrics (none where no span qualifies); `at`: where the host's
    series is in the file (hosts[i].)."""
    spans = hostmetrics.storage_waited_spans(hm)
    if not spans:
        return []
    first, last = spans[0]["samples"][0], spans[-1]["samples"][1]
    said = "; ".join(_span(sp) for sp in spans[:SHOWN])
    more = f"; and {len(spans) - SHOWN} more span(s)" if len(spans) > SHOWN else ""
    busy = "cpu_user_pct+cpu_system_pct" + ("+cpu_steal_pct" if hm.samples[first].cpu_steal_pct is not None else "")
    return [make(RULE, "warning", "closed", path, f"{at}samples[{first}..{last}].{busy}",
                 EXPECTED, f"host {hm.host}: " + said + more, hm.scope)]


def _span(sp: dict) -> str:
    return (f"{sp['busy_mean_pct']:.1f}% of all CPUs over {sp['start_s']:.1f}-{sp['end_s']:.1f} s "
            f"({sp['end_s'] - sp['start_s']:.1f} s), iowait {sp['iowait_mean_pct']:.1f}%, "
            f"disk {sp['disk_mean_mib_s']:.1f} MiB/s (run's peak {sp['disk_peak_mib_s']:.1f}), "
            f"network {sp['net_mean_mib_s']:.1f} MiB/s (run's peak {sp['net_peak_mib_s']:.1f})")


def _shown(path: Path, root: Path | None) -> str:
    if root is None:
        return str(path)
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
