"""Report plots as PNG bytes (matplotlib, Agg canvas; no pyplot, no global state, no display): the
figure, the PNG and the palette every kind's plots use (suite/<kind>/page.py, suite.training.plots,
suite.history.page, suite.compare.page).

Every text a plot draws is drawn as the characters given (issue 46): `_png` passes the figure's
titles, axis labels, legends, annotations and text tick labels through `plain` before it draws, so
a "$" in a workload, system, host or run name is a dollar sign, never mathtext (a name "$x^2$"
drew x squared; "run $^$" raised ValueError, which dropped the report's plots and crashed
`suite history trend --out`). Plot code passes names as they are: escaping "$" again is wrong.
Numeric tick labels keep their formatter's own mathtext (a log axis's 10^2).
"""

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


def plain(text) -> str:
    """`text` for matplotlib, drawn as the characters given: newlines kept (a label of several lines),
    every other control character shown as \\xNN (suite.report.escape.terminal), each "$" escaped so
    no part of it is parsed as mathtext."""
    from suite.report.escape import terminal

    return "\n".join(terminal(line) for line in str(text).split("\n")).replace("$", r"\$")


def _texts(artist):
    """Every Text under `artist` that plot code wrote: not the tick labels nor an axis's offset (their
    formatters write those at draw time; see _plain_ticks)."""
    from matplotlib.axis import Axis, Tick
    from matplotlib.text import Text

    if isinstance(artist, Tick):
        return
    if isinstance(artist, Axis):
        yield artist.label
        return
    if isinstance(artist, Text):
        yield artist
    for child in artist.get_children():
        yield from _texts(child)


def _text_formatter(formatter) -> bool:
    """A formatter whose labels are given text (set_xticks(..., labels), category names), not numbers."""
    from matplotlib import category, ticker

    return isinstance(formatter, (ticker.FixedFormatter, ticker.FuncFormatter, category.StrCategoryFormatter))


def _plain_ticks(axis) -> None:
    from matplotlib import ticker

    class Plain(ticker.Formatter):
        """The text formatter's labels through `plain`, whenever matplotlib asks for them."""

        def __init__(self, inner):
            self.inner = inner

        def set_axis(self, axis):
            self.axis = axis
            self.inner.set_axis(axis)

        def set_locs(self, locs):
            self.inner.set_locs(locs)

        def __call__(self, x, pos=None):
            return plain(self.inner(x, pos))

        def format_ticks(self, values):
            return [plain(v) for v in self.inner.format_ticks(values)]

    if _text_formatter(axis.get_major_formatter()):
        axis.set_major_formatter(Plain(axis.get_major_formatter()))
    if _text_formatter(axis.get_minor_formatter()):
        axis.set_minor_formatter(Plain(axis.get_minor_formatter()))


def _plain(fig) -> None:
    """Every text of `fig` through `plain`, once (before it is drawn)."""
    if getattr(fig, "_suite_plain", False):
        return
    fig._suite_plain = True
    for text in list(_texts(fig)):
        text.set_usetex(False)          # a user's matplotlibrc saying text.usetex: never LaTeX for a name
        if text.get_text():
            text.set_text(plain(text.get_text()))
    for ax in fig.axes:
        _plain_ticks(ax.xaxis)
        _plain_ticks(ax.yaxis)


def _png(fig) -> bytes:
    """The figure as PNG bytes, the bytes savefig(format="png", dpi=DPI, metadata={"Software": None}) writes, in
    one draw: the layout engine runs inside it, and matplotlib's imsave writes the canvas's pixels as savefig's
    Agg PNG writer does. savefig drew a figure with a layout engine twice (once with drawing off, to lay it
    out): a fifth of each plot's CPU, over the hundreds of plots reports draw (issue 47: the busy machine)."""
    import warnings

    from matplotlib.image import imsave

    _plain(fig)
    fig.set_dpi(DPI)
    buf = io.BytesIO()
    with warnings.catch_warnings():       # layout notes (e.g. axes collapsed by 1e308 values) are not the user's
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)       # numpy overflow notes near the float limit
        fig.canvas.draw()
    imsave(buf, fig.canvas.buffer_rgba(), format="png", origin="upper", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def tick_label(*lines) -> str:
    """A tick label of several lines (e.g. a result's letter over its date), one argument a line: each
    escaped (suite.report.escape.terminal: a control character from a result file, a newline included,
    shows as \\xNN), then joined by real newlines, so matplotlib draws them one under the other. Escaping
    the joined label is what drew a literal "A\\x0a2026-11-27T13:53" (issue 38). ("$" is left to _png.)"""
    from suite.report.escape import terminal

    return "\n".join(terminal(line) for line in lines)
