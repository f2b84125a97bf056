"""Report plots as PNG bytes (matplotlib, Agg canvas; no pyplot, no global state, no display)."""

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


def au_axis(values: list, threshold: float | None) -> tuple[float, float]:
    """AU % axis limits around the values and the threshold line (cosmoflow's runs at its 70%
    threshold, not a fixed 85-100 % band), a margin each side, never below 0 or far above 100."""
    pts = [v for v in values if v is not None] + ([threshold] if threshold is not None else [])
    if not pts:
        return 0.0, 100.5
    low, high = min(pts), max(pts)
    pad = max(3.0, 0.15 * (high - low))
    return max(0.0, low - pad), min(high + pad, 100.5 if high <= 100 else high + pad)


def storage_runs(bench: dict) -> bytes:
    """Per run: samples/s with its stdev over epochs, and AU % (mean ± stdev)."""
    return _png(storage_runs_figure(bench))


def storage_runs_figure(bench: dict):
    from suite.report.escape import terminal

    runs = [r for r in bench["runs"] if r["samples_per_second"] is not None]
    names = [terminal(r["name"]) for r in runs]     # a non-UTF-8 byte in a dir name: no glyph for it
    many = len(runs) > MANY_RUNS
    cap = 0 if many else 4
    fig, (ax1, ax2) = _figure(ncols=2)
    x = range(len(runs))
    ax1.bar(x, [r["samples_per_second"] for r in runs], yerr=[r["samples_per_second_stdev"] or 0 for r in runs],
            color=COLORS[0], capsize=cap)
    o = bench["overall"]
    if o:
        ax1.axhline(o["samples_per_second"], color="#333333", linewidth=1, linestyle="--",
                    label=f"mean {o['samples_per_second']:,.2f}")
        ax1.legend(loc="lower right", fontsize=8)
    ax1.set_title("Throughput per run", fontsize=11)
    ax1.set_ylabel("samples/s")
    au = [r["au_mean_percentage"] for r in runs]
    ax2.errorbar(list(x), au, yerr=[r["au_stdev_percentage"] or 0 for r in runs], fmt="o", color=COLORS[1],
                 capsize=cap, markersize=2 if many else 6)
    ax2.set_title("Accelerator utilisation per run", fontsize=11)
    ax2.set_ylabel("AU %")
    for ax in (ax1, ax2):
        if many:
            ax.set_xlabel(f"run (1 to {len(runs)}, in order)")
            ax.xaxis.get_major_locator().set_params(integer=True)
        else:
            ax.set_xticks(list(x), names)
    for ax in (ax1, ax2):
        ax.set_xlim(-0.6, len(runs) - 0.4)
    threshold = bench.get("au_threshold_percentage")
    stdev = [r["au_stdev_percentage"] or 0 for r in runs]
    ax2.set_ylim(*au_axis([a - s for a, s in zip(au, stdev) if a is not None]
                          + [a + s for a, s in zip(au, stdev) if a is not None], threshold))
    if threshold:
        ax2.axhline(threshold, color="#b5443a", linewidth=1, linestyle=":", label=f"threshold {threshold:g} %")
        ax2.legend(loc="lower right", fontsize=8)
    return fig


def _all_runs_line(ax, lists, color) -> None:
    """Every run's per-epoch values as one polyline broken by NaN: one artist, whatever the count."""
    xs, ys = [], []
    for values in lists:
        xs += list(range(1, len(values) + 1)) + [float("nan")]
        ys += list(values) + [float("nan")]
    ax.plot(xs, ys, color=color, linewidth=0.6, alpha=0.5, marker="o", markersize=1.5)


def storage_epochs(bench: dict) -> bytes:
    """Per epoch of each run: AU % and samples/s."""
    from suite.report.escape import terminal

    fig, (ax1, ax2) = _figure(ncols=2)
    many = len(bench["runs"]) > MANY_RUNS
    if many:
        _all_runs_line(ax1, [r["au_per_epoch"] for r in bench["runs"] if r["au_per_epoch"]], COLORS[0])
        _all_runs_line(ax2, [r["samples_per_second_per_epoch"] for r in bench["runs"]
                             if r["samples_per_second_per_epoch"]], COLORS[1])
    for i, r in enumerate([] if many else bench["runs"]):
        color = COLORS[i % len(COLORS)]
        if r["au_per_epoch"]:
            ax1.plot(range(1, len(r["au_per_epoch"]) + 1), r["au_per_epoch"], marker="o", color=color,
                     label=terminal(r["name"]))
        if r["samples_per_second_per_epoch"]:
            ax2.plot(range(1, len(r["samples_per_second_per_epoch"]) + 1), r["samples_per_second_per_epoch"],
                     marker="o", color=color, label=terminal(r["name"]))
    ax1.set_title("AU per epoch", fontsize=11)
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("AU %")
    ax2.set_title("Throughput per epoch", fontsize=11)
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("samples/s")
    for ax in (ax1, ax2):
        ax.xaxis.get_major_locator().set_params(integer=True)
        if many:
            ax.set_title(f"{ax.get_title()} ({len(bench['runs'])} runs)", fontsize=11)
        else:
            ax.legend(fontsize=8, ncols=2)
    return _png(fig)


def tpcxai_use_cases(inputs) -> bytes:
    """Training and both serving runs per use case, log scale (times span three orders of magnitude)."""
    from suite.tpcx_ai.figures import USE_CASES

    fig, (ax,) = _figure(height_in=3.8)
    width = 0.27
    for k, (name, times) in enumerate((("training", inputs.training_s), ("serving 1", inputs.serving_1_s),
                                       ("serving 2", inputs.serving_2_s))):
        xs = [uc + (k - 1) * width for uc in USE_CASES if uc in times]
        ax.bar(xs, [times[uc] for uc in USE_CASES if uc in times], width=width, color=COLORS[k], label=name)
    ax.set_yscale("log")
    ax.set_xticks(list(USE_CASES), [f"UC{uc}" for uc in USE_CASES])
    ax.set_ylabel("seconds (log scale)")
    ax.set_title("Time per use case", fontsize=11)
    ax.legend(fontsize=8)
    return _png(fig)


def tpcxai_components(result) -> bytes:
    """The four components of AIUCpm (each weighs a quarter, in logs)."""
    fig, (ax,) = _figure(height_in=2.8)
    names = ["TLD", "TPTT", "TPST", "TTT"]
    values = [result.tld_s, result.tptt_s, result.tpst_s, result.ttt_s]
    bars = ax.barh(names, values, color=[COLORS[i] for i in range(4)])
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.8)
    ax.set_xlabel("seconds (log scale)")
    ax.set_title("Metric components: AIUCpm = 60·SF·10 / (TLD·TPTT·TPST·TTT)^¼", fontsize=11)
    for bar, v in zip(bars, values):
        ax.text(bar.get_width() * 1.05, bar.get_y() + bar.get_height() / 2, f"{v:,.3f} s", va="center", fontsize=9)
    ax.set_xlim(min(values) / 2, max(values) * 4)
    return _png(fig)


def tpcxai_timeline(jobs) -> bytes:
    """The throughput test: one row per stream, one bar per use case, on the run's clock."""
    streams = sorted({j.stream for j in jobs})
    t0 = min(j.start_s for j in jobs)
    fig, (ax,) = _figure(height_in=1.2 + 0.45 * len(streams))
    for row, stream in enumerate(streams):
        for j in (j for j in jobs if j.stream == stream):
            width = max(j.end_s - j.start_s, 1e-6)
            ax.broken_barh([(j.start_s - t0, width)], (row - 0.4, 0.8), color=COLORS[(j.use_case - 1) % len(COLORS)],
                           edgecolor="white", linewidth=0.6)
            ax.text(j.start_s - t0 + width / 2, row, str(j.use_case), ha="center", va="center", fontsize=7,
                    color="white")
    ax.set_yticks(range(len(streams)), [f"stream {s}" for s in streams])
    ax.invert_yaxis()
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.8)
    ax.set_xlabel("seconds from the start of the throughput test")
    ax.set_title("Throughput test: each stream's servings (bar label = use case)", fontsize=11)
    return _png(fig)
