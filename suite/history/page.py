"""`suite history trend --out DIR`: a figure over time per system as an HTML page (and its Markdown
twin, the points as CSV/parquet) through suite.report's content model and writer. Per series: each
entry a point (the geometric mean of its runs) with a bar from its slowest to its fastest run, the
change points as dashed lines coloured by verdict with their size, and a table of them."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

DPI = 100
MAX_PLOTTED = 12             # series drawn (each ~0.1 s); every series is in the tables
COLORS = {"regression": "#b5443a", "improvement": "#3a9a5b", "not significant": "#6f6f6f"}
CHANGE_HEADER = ["series", "at entry", "when", "before", "after", "change %", "interval", "verdict"]
POINT_COLUMNS = ["series", "system_fp", "id", "when", "value", "lowest_run", "highest_run", "runs", "results_path"]


def _when(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.rstrip("Z"))
    except ValueError:
        return datetime(1970, 1, 1)


def plot(series) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from suite.report.escape import terminal
    from suite.report.plots import _png

    fig = Figure(figsize=(10.0, 3.6), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    xs = [_when(p.entry.when()) for p in series.points]
    ax.vlines(xs, [p.low for p in series.points], [p.high for p in series.points], color="#9db7dc", linewidth=2)
    dots = "o-" if len(xs) <= 300 else "-"           # a thousand markers cost more than they show
    ax.plot(xs, [p.value for p in series.points], dots, color="#2f6db5", markersize=3, linewidth=0.8)
    for ch in series.changes:
        colour = COLORS.get(series.verdict(ch), "#6f6f6f")
        ax.axvline(xs[ch.index], color=colour, linestyle="--", linewidth=1.2)
        ax.annotate(f"{ch.size_percent:+.1f}%", (xs[ch.index], ch.after), color=colour, fontsize=8,
                    xytext=(4, 4), textcoords="offset points")
    ax.set_ylabel(terminal(series.label))
    ax.set_title(terminal(f"{series.name()}: points the mean of each entry's runs, bars its slowest to fastest "
                          f"run, dashed lines change points"), fontsize=9)
    ax.grid(True, axis="y", color="#dddddd", linewidth=0.8)
    fig.autofmt_xdate()
    return _png(fig)          # every text drawn as given: a "$" in a system name is no mathtext (issue 46)


def change_rows(series) -> list[list[str]]:
    from suite.report.content import fmt

    rows = []
    for ch in series.changes:
        entry = series.points[ch.index].entry
        interval = "-" if ch.low is None else f"{fmt(ch.low, 4)} .. {fmt(ch.high, 4)} ({100 * ch.level:g}%)"
        rows.append([series.name(), f"#{entry.id} ({ch.index + 1} of {len(series.points)})", entry.when()[:19],
                     fmt(ch.before, 4), fmt(ch.after, 4), f"{ch.size_percent:+.2f}", interval, series.verdict(ch)])
    return rows


def build(all_series, figure: str, title: str):
    from suite.report import content as c

    head = c.Section("series", "Series")
    head.blocks.append(c.Table(["series", "entries", "first", "last", "change points"],
                               [[s.name(), str(len(s.points)), s.points[0].entry.when()[:19],
                                 s.points[-1].entry.when()[:19], str(len(s.changes))] for s in all_series],
                               numbers_right=False))
    head.blocks.append(c.Text("A series: one kind and identity (workload, accelerator, dataset, round, division: what "
                              "suite compare compares) on one system (its fingerprint). Change "
                              "points: binary segmentation, a pooled t test at a Bonferroni-adjusted 99.9% and a "
                              "step of at least 3%; each with the Welch interval of after/before "
                              "(docs/history.md)."))
    sections = [head]
    changes = [row for s in all_series for row in change_rows(s)]
    if changes:
        sections.append(c.Section("changes", "Change points", [c.Table(CHANGE_HEADER, changes, numbers_right=False)]))
    for i, s in enumerate(sorted(all_series, key=lambda s: -len(s.points))[:MAX_PLOTTED]):
        sections.append(c.Section(f"series-{i + 1}", s.name(), [c.Image(f"trend-{i + 1}", plot(s),
                                                                        f"{s.label} over time, {s.name()}")]))
    page = c.Page(title=title, subtitle=f"{figure}, {sum(len(s.points) for s in all_series)} entries in "
                                        f"{len(all_series)} series", sections=sections)
    page.tables["points"] = (POINT_COLUMNS, [
        {"series": s.name(), "system_fp": s.first.system_fp, "id": p.entry.id, "when": p.entry.when(), "value": p.value,
         "lowest_run": p.low, "highest_run": p.high, "runs": p.runs, "results_path": p.entry.results_path}
        for s in all_series for p in s.points])
    return page


def write(all_series, figure: str, title: str, out: Path, force: bool) -> list:
    """The page into `out`, replaced whole (suite.report.outdir). Matplotlib keeps its own font cache
    (its default config dir, or a temporary one where that is not writable): a throwaway MPLCONFIGDIR
    would rebuild the font list on every call, most of a second."""
    from datetime import timezone

    from suite import __version__
    from suite.report import export
    from suite.report.outdir import report_dir

    with report_dir(Path(out), force=force) as tmp:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        return export.write_report(build(all_series, figure, title), tmp, f"suite {__version__} history, {stamp}")
