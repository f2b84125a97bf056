"""The host-metrics section every kind's report page carries: per run a picture of the client's CPU
(user, system, iowait %) and its disk MiB/s over time beside the run's own throughput over time, so
"was the client CPU the limit?" is answered by looking; and a table of what each run's host did.

    section("b1-host", [(run name, HostMetrics, (label, [(t_s, value), ...]) or None), ...])

The runs' HostMetrics come from suite.harness.hostmetrics (each kind finds its runs' files);
nothing here knows a kind. Titles and names pass through suite.report.escape where they are drawn.
"""

from suite.harness import hostmetrics
from suite.report.content import Image, Section, Table, Text, fmt
from suite.report.escape import terminal
from suite.report.plots import COLORS, _figure, _png

MAX_PLOTTED_RUNS = 12        # a plot costs ~0.2 s: a page of 500 runs shows the table, not 500 pictures


def figure(hm, throughput=None) -> bytes:
    """One run: CPU % stacked (user, system, iowait), disk read/write MiB/s and, when given, the
    run's throughput (label, [(t_s, value)]) over the same seconds."""
    fig, axes = _figure(width_in=12.0, height_in=3.2, ncols=3 if throughput else 2)
    t = [0.0] + [s.t_s for s in hm.samples]       # each sample covers the span since the one before

    def steps(values):
        return values[:1] + values
    cpu = axes[0]
    cpu.stackplot(t, steps([s.cpu_user_pct for s in hm.samples]), steps([s.cpu_system_pct for s in hm.samples]),
                  steps([s.cpu_iowait_pct for s in hm.samples]), labels=["user", "system", "iowait"],
                  colors=COLORS[:3], step="pre")
    for i, sp in enumerate(hostmetrics.storage_waited_spans(hm)):     # what host-cpu-saturated warns of
        cpu.axvspan(sp["start_s"], sp["end_s"], facecolor="none", edgecolor="red", hatch="//", linewidth=0,
                    label="saturated, storage waiting" if i == 0 else None)
    cpu.set_ylim(0, 100)
    cpu.set_xlabel("seconds since the run started")
    cpu.set_ylabel("CPU % (all CPUs)")
    cpu.set_title(terminal(f"{hm.host}: CPU"), fontsize=10)
    cpu.legend(loc="upper right", fontsize=8)
    rates = hm.rates()
    disk = axes[1]
    disk.step(t, steps([r["disk_read_mib_s"] for r in rates]), where="pre", color=COLORS[0], label="disk read")
    disk.step(t, steps([r["disk_write_mib_s"] for r in rates]), where="pre", color=COLORS[1], label="disk write")
    disk.step(t, steps([r["net_rx_mib_s"] + r["net_tx_mib_s"] for r in rates]), where="pre", color=COLORS[7],
              linestyle=":", label="network rx+tx")
    disk.set_xlabel("seconds since the run started")
    disk.set_ylabel("MiB/s")
    disk.set_title("disk and network", fontsize=10)
    disk.legend(loc="upper right", fontsize=8)
    if throughput:
        label, points = throughput
        ax = axes[2]
        ax.plot([p[0] for p in points], [p[1] for p in points], color=COLORS[2], marker=".")
        ax.set_xlabel("seconds since the run started")
        ax.set_ylabel(terminal(label))
        ax.set_title("the run's throughput", fontsize=10)
        ax.set_xlim(disk.get_xlim())
    return _png(fig)


def offset_s(hm, when: str) -> float | None:
    """Seconds from the sampler's start to `when` (ISO 8601 UTC, with or without a Z), so a run's
    own times go on the host plot's axis; None when either does not parse."""
    from datetime import datetime, timezone

    def parse(text):
        try:
            t = datetime.fromisoformat(str(text).rstrip("Z"))
        except ValueError:
            return None
        return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t
    a, b = parse(hm.started_at), parse(when)
    return None if a is None or b is None else (b - a).total_seconds()


def row(name: str, hm) -> list:
    busy = [s.cpu_user_pct + s.cpu_system_pct for s in hm.samples]
    wait = [s.cpu_iowait_pct for s in hm.samples]
    last = hm.samples[-1] if hm.samples else None
    return [terminal(name), terminal(hm.host), len(hm.samples), fmt(hm.interval_s, 2),
            fmt(max(busy), 1) if busy else "–", fmt(sum(wait) / len(wait), 1) if wait else "–",
            fmt(last.disk_read_bytes / (1 << 20), 1) if last else "–",
            fmt(last.disk_write_bytes / (1 << 20), 1) if last else "–",
            fmt(max(s.page_cache_bytes for s in hm.samples) / (1 << 30), 2) if last else "–",
            fmt(hm.sampler_cpu_s, 3),
            fmt(sum(sp["end_s"] - sp["start_s"] for sp in hostmetrics.storage_waited_spans(hm)), 1)]


HEADER = ["run", "host", "samples", "interval s", "peak user+system %", "mean iowait %", "disk read MiB",
          "disk write MiB", "peak page cache GiB", "sampling CPU s", "CPU saturated s"]


def section(sid: str, runs: list, title: str = "Host metrics") -> Section | None:
    """The section: a table of every run's host figures and a plot per run and host (a run across
    hosts is one entry per host; the first MAX_PLOTTED_RUNS entries); None when no run has host metrics."""
    runs = [(name, hm, tp) for name, hm, tp in runs if hm is not None]
    if not runs:
        return None
    out = Section(sid, title)
    scopes = sorted({hm.scope for _, hm, _ in runs})
    out.blocks.append(Table(HEADER, [row(name, hm) for name, hm, _ in runs],
                            "From each run's host_metrics.json (sampled from /proc by suite run; "
                            f"hosts sampled: {terminal('; '.join(scopes))}). Sampling CPU s: what the sampling cost. "
                            "CPU saturated s: the spans suite check warns of (host-cpu-saturated: user+system "
                            f">= {hostmetrics.BUSY_PCT:g}% for {hostmetrics.MIN_SPAN_S:g} s or more with iowait "
                            f"below {hostmetrics.IOWAIT_PCT:g}%), hatched red on the CPU plot."))
    for i, (name, hm, tp) in enumerate(runs[:MAX_PLOTTED_RUNS]):
        if not hm.samples:       # a host of a run across hosts whose sampler failed (the file's warnings say why)
            out.blocks.append(Text(f"{terminal(name)}: host {terminal(hm.host)}: no samples (see the warnings "
                                   f"in its {hostmetrics.FILE})."))
            continue
        try:
            out.blocks.append(Image(f"{sid}-{i + 1}", figure(hm, tp),
                                    f"{name}: host {hm.host}: CPU and disk over time"))
        except (OverflowError, ValueError) as exc:
            out.blocks.append(Text(f"{terminal(name)}: not plotted: the values are beyond what a plot can show "
                                   f"({type(exc).__name__})."))
    if len(runs) > MAX_PLOTTED_RUNS:
        out.blocks.append(Text(f"Plots are drawn for the first {MAX_PLOTTED_RUNS} runs; every run is in the table."))
    return out
