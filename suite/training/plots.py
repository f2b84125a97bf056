"""The training kind's plots as PNG bytes (suite.report.plots' figure and palette): per run, per
epoch, and the AU axis the sweep plots share."""

from suite.report.plots import COLORS, MANY_RUNS, _figure, _png


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
