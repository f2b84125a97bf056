"""Report plots as PNG bytes (matplotlib, Agg canvas; no pyplot, no global state, no display): the
figure, the PNG and the palette every kind's plots use (suite/<kind>/page.py, suite.training.plots)."""

import io

COLORS = ["#2f6db5", "#e07b39", "#3a9a5b", "#b5443a", "#7a5cb5", "#8c6d3f", "#d35fa6", "#6f6f6f"]
DPI = 100
# Above this many runs a plot names no run: no per-run tick labels, caps or legend entries (their
# layout is what made 500 runs take a minute); the epochs plot draws all runs as one line each side.
MANY_RUNS = 12


def _figure(width_in=10.0, height_in=3.6, ncols=1):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    for ax in axes:
        ax.grid(True, axis="y", color="#dddddd", linewidth=0.8)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return fig, axes


def _png(fig) -> bytes:
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings():       # layout notes (e.g. axes collapsed by 1e308 values) are not the user's
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)       # numpy overflow notes near the float limit
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def tick_label(*lines) -> str:
    """A tick label of several lines (e.g. a result's letter over its date), one argument a line: each
    escaped (suite.report.escape.terminal: a control character from a result file, a newline included,
    shows as \\xNN), then joined by real newlines, so matplotlib draws them one under the other. Escaping
    the joined label is what drew a literal "A\\x0a2026-11-27T13:53" (issue 38)."""
    from suite.report.escape import terminal

    return "\n".join(terminal(line) for line in lines)
