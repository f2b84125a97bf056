"""host-cpu-saturated: the one warning, for every kind, that a host's CPUs were saturated while the
storage waited (issue 37). Each kind's check hands it the directories its results sit in; every
host_metrics.json below them (suite.harness.hostmetrics: what `suite run` samples for each run) is
read, and each span hostmetrics.storage_waited_spans finds becomes a finding:

    rule_id  host-cpu-saturated, severity warning, effect closed (a note: the verdict is unchanged)
    path     the host_metrics.json, relative to the checked tree
    field    samples[i..j].cpu_user_pct+cpu_system_pct
    expected below 95% of all CPUs (user+system) ...
    actual   98.5% of all CPUs over 12.0-27.0 s (15.0 s), iowait 0.2%, disk 1.2 MiB/s (run's peak 80.1), ...

The definition and why the thresholds are what they are: docs/checker.md ("Host CPU saturation").
A host_metrics.json that cannot be read is bad input (ResultError, one line, exit 2), as every
other file a check reads.
"""

from __future__ import annotations

from pathlib import Path

from suite.harness import hostmetrics
from suite.rules.findings import Finding, make

RULE = "host-cpu-saturated"
RULES = {RULE: f"no host's CPUs were saturated (user+system >= {hostmetrics.BUSY_PCT:g}% of all CPUs for "
               f"{hostmetrics.MIN_SPAN_S:g} s or more) while the storage waited (iowait below "
               f"{hostmetrics.IOWAIT_PCT:g}%): where they were, the client's CPU, not the storage, set the pace"}
EXPECTED = (f"below {hostmetrics.BUSY_PCT:g}% of all CPUs (user+system) in any {hostmetrics.MIN_SPAN_S:g} s "
            f"with iowait below {hostmetrics.IOWAIT_PCT:g}% (at {hostmetrics.BUSY_PCT:g}% the client has no "
            f"CPU left to ask the storage for more)")
SHOWN = 3                     # spans spelled out per file; the rest counted


def findings(dirs, root) -> list[Finding]:
    """One warning per host_metrics.json at or below each of `dirs` with a saturated span while the
    storage waited; paths relative to `root` (None: as `dirs` name them). A file reached from two
    dirs is read once."""
    root, seen, out = (Path(root) if root is not None else None), set(), []
    for d in dirs:
        d = Path(d)
        found = hostmetrics.below(d) if d.is_dir() else []
        for rel, hm in found:
            path = (d / rel / hostmetrics.FILE).resolve()
            if path not in seen:
                seen.add(path)
                out += of(hm, _shown(d / rel / hostmetrics.FILE, root))
    return out


def of(hm: hostmetrics.HostMetrics, path: str) -> list[Finding]:
    """The warning for one host's metrics (none where no span qualifies)."""
    spans = hostmetrics.storage_waited_spans(hm)
    if not spans:
        return []
    first, last = spans[0]["samples"][0], spans[-1]["samples"][1]
    said = "; ".join(_span(sp) for sp in spans[:SHOWN])
    more = f"; and {len(spans) - SHOWN} more span(s)" if len(spans) > SHOWN else ""
    return [make(RULE, "warning", "closed", path, f"samples[{first}..{last}].cpu_user_pct+cpu_system_pct",
                 EXPECTED, said + more, f"host {hm.host}, {hm.scope}")]


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
