"""`suite compare --out DIR`: the comparison as an HTML page (and its Markdown twin, compare.json and
the tables as CSV/parquet), through suite.report's content model and writer; the plots: per
comparison each figure's ratio with its interval, and one figure across every result (over time
when the results say when they ran, else in the order given)."""

from __future__ import annotations

import math
from pathlib import Path

from suite import stats
from suite.compare import render

DPI = 100
COLORS = {"faster": "#3a9a5b", "slower": "#b5443a", "not significant": "#6f6f6f", "no interval": "#b0b0b0"}


def _figure(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def _png(fig) -> bytes:
    """suite.report.plots' PNG: every text drawn as given (a "$" in a label is no mathtext, issue 46)."""
    from suite.report.plots import _png as png

    return png(fig)


def ratio_plot(pair: dict, level: float) -> bytes:
    """Each figure's B/A as a point with its interval as a bar, the line at 1 (no difference)."""
    from suite.report.escape import terminal

    figs = pair["figures"]
    fig, ax = _figure(8.0, 0.6 + 0.5 * len(figs))
    for y, c in enumerate(figs):
        colour = COLORS.get(c["verdict"], "#2f6db5")
        if c["low"] is not None:
            ax.plot([c["low"], c["high"]], [y, y], color=colour, linewidth=3, solid_capstyle="butt")
        ax.plot([c["ratio"]], [y], "o", color=colour, markersize=7)
    ax.axvline(1.0, color="#333333", linewidth=1, linestyle="--")
    ax.set_yticks(range(len(figs)), [terminal(f"{c['label']} ({c['verdict']})") for c in figs])
    ax.invert_yaxis()
    ax.set_xlabel(f"{pair['result']} / A (point: ratio; bar: {100 * level:g}% interval)")
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.8)
    return _png(fig)


def across_labels(results, order: list, dated: bool) -> list:
    """The across plot's tick labels: each result's letter, over its start time when the results are dated
    (two lines: suite.report.plots.tick_label)."""
    from suite.report.plots import tick_label

    return [tick_label(render.comparable.letter(i + 1), *([results[i].when[:16]] if dated else [])) for i in order]


def across_plot(doc: dict, results) -> bytes:
    """The chosen figure of every result: its runs as dots, the mean as a bar."""
    from suite.report.escape import terminal

    name = doc["figure"]
    order = list(range(len(results)))
    dated = all(r.when for r in results)
    if dated:
        order.sort(key=lambda i: results[i].when)
    fig, ax = _figure(10.0, 3.8)
    for x, i in enumerate(order):
        s = next(f for f in results[i].figures if f.name == name)
        vals = [v for v in s.per_run if math.isfinite(v)]
        ax.bar([x], [stats.mean(vals) if vals else 0.0], color="#2f6db5", alpha=0.35, width=0.6)
        ax.plot([x] * len(vals), vals, "o", color="#2f6db5", markersize=4)
    ax.set_xticks(range(len(order)), across_labels(results, order, dated), fontsize=8)
    label = next(f.label for f in results[0].figures if f.name == name)
    ax.set_ylabel(terminal(label))
    ax.set_title(terminal(f"{label} per result ({'over time' if dated else 'in the order given'}): bars the mean, "
                          f"dots the runs"), fontsize=10)
    ax.grid(True, axis="y", color="#dddddd", linewidth=0.8)
    return _png(fig)


def build(doc: dict, results):
    from suite.report import content as c

    sections = []
    head = c.Section("results", "Results")
    head.blocks.append(c.Table(["", "result", "path"], [[r["result"], r["label"], r["path"]] for r in doc["results"]],
                               numbers_right=False))
    if doc["differences"]:
        head.blocks.append(c.Verdict("invalid", "NOT LIKE FOR LIKE (--allow-different): " + "; ".join(doc["differences"])))
    head.blocks.append(c.Text(f"At {100 * doc['level']:g}%: {doc['method']}."))
    sections.append(head)
    for pair in doc["comparisons"]:
        s = c.Section(f"vs-{pair['result']}", f"{pair['result']} against A")
        s.blocks.append(c.Table(render.FIGURE_HEADER, render.figure_rows(pair)))
        s.blocks.append(c.Image(f"ratio-{pair['result']}", ratio_plot(pair, doc["level"]),
                                f"{pair['result']}/A per figure with its interval"))
        sections.append(s)
    across = c.Section("across", f"Sorted by {doc['figure']}")
    across.blocks.append(c.Table(render.RANKING_HEADER, render.ranking_rows(doc)))
    across.blocks.append(c.Image("across", across_plot(doc, results), f"{doc['figure']} of every result"))
    fe = render.first_epoch_rows(doc)
    if fe:
        across.blocks.append(c.Table(render.FIRST_HEADER, fe,
                                     caption="first epoch / later epochs, mean over runs (not in the verdicts)"))
    sections.append(across)
    systems = c.Section("systems", "Systems side by side (differences first, marked *)")
    systems.blocks.append(c.Table(["", "key", *[r["result"] for r in doc["results"]]],
                                  render.system_rows(doc, limit=400), numbers_right=False))
    sections.append(systems)
    page = c.Page(title="suite compare: " + " vs ".join(r["result"] for r in doc["results"][:8]),
                  subtitle=", ".join(f"{r['result']} = {r['label']}" for r in doc["results"][:8]), sections=sections)
    rows = [{"against": "A", "result": p["result"], **f} for p in doc["comparisons"] for f in p["figures"]]
    cols = ["against", "result", "figure", "label", "a_mean", "b_mean", "ratio", "low", "high", "level", "verdict",
            "basis", "a_cv_percent", "b_cv_percent", "a_first_to_later", "b_first_to_later", "source"]
    page.tables["comparisons"] = (cols, rows)
    return page


def write(doc: dict, results, out: Path, force: bool, inputs) -> list:
    """The page into `out` (never inside or over an input), replaced whole."""
    import os
    import shutil
    import sys
    from datetime import datetime, timezone

    from suite import __version__, files, output
    from suite.report import export
    from suite.report.outdir import report_dir

    out = output.outside(out, "--out", [Path(p) for p in inputs])
    with report_dir(out, force=force) as tmp:
        mpl_dir = None
        if "matplotlib" not in sys.modules and "MPLCONFIGDIR" not in os.environ:
            mpl_dir = tmp / ".matplotlib"
            os.environ["MPLCONFIGDIR"] = str(mpl_dir)
        try:
            stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            written = export.write_report(build(doc, results), tmp, f"suite {__version__} compare, {stamp}")
            files.write_atomic(tmp / "compare.json", render.json_text(doc).encode())
            written.append(tmp / "compare.json")
        finally:
            if mpl_dir:
                os.environ.pop("MPLCONFIGDIR", None)
                shutil.rmtree(mpl_dir, ignore_errors=True)
    return written
