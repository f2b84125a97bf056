"""A sweep's plots as PNG bytes: MiB/s and AU against the accelerator count (storage and the
page-cache ceiling on the same axes, the threshold line, the knee marked), and the first epoch
against the later ones per N. Same canvas as report/plots.py (Agg, no pyplot)."""

from suite.report.plots import COLORS, _figure, _png
from suite.training.plots import au_axis

STORAGE, CEILING, DEMAND, THRESHOLD, KNEE = COLORS[0], COLORS[1], "#6f6f6f", "#b5443a", "#7a5cb5"


def _series(doc: dict, kind: str, key: str) -> tuple[list, list]:
    xs, ys = [], []
    for p in doc["points"]:
        v = (p.get(kind) or {}).get(key)
        if v is not None:
            xs.append(p["accelerators"])
            ys.append(v)
    return xs, ys


def _knee(ax, doc: dict) -> None:
    k = doc.get("knee")
    if k:
        ax.axvline(k["accelerators"], color=KNEE, linewidth=1.2, linestyle="--",
                   label=f"storage departs: N={k['accelerators']}")


def _xticks(ax, doc: dict) -> None:
    ns = [p["accelerators"] for p in doc["points"]]
    if ns and len(ns) <= 16:
        ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("simulated accelerators (N)")


def versus_n(doc: dict) -> bytes:
    """Left: MiB/s vs N (storage, ceiling, analytic demand). Right: AU % vs N with the threshold."""
    fig, (ax1, ax2) = _figure(ncols=2, height_in=4.0)
    for kind, color, label in (("storage", STORAGE, "storage"), ("ceiling", CEILING, "page-cache ceiling (open)")):
        xs, ys = _series(doc, kind, "mib_per_second")
        if xs:
            ax1.plot(xs, ys, marker="o", color=color, label=label)
    ns = [p["accelerators"] for p in doc["points"]]
    demand = doc["demand_mib_per_second_per_accelerator"]
    if ns and demand is not None:
        ax1.plot([0, max(ns)], [0, max(ns) * demand], color=DEMAND, linewidth=1, linestyle=":",
                 label=f"demand: N x {demand:,.3g} MiB/s")
    ax1.set_ylabel("MiB/s (samples/s × record length)")
    ax1.set_ylim(bottom=0)
    ax1.set_title("Throughput vs accelerators", fontsize=11)
    aus = []
    for kind, color, label in (("storage", STORAGE, "storage"), ("ceiling", CEILING, "page-cache ceiling (open)")):
        xs, ys = _series(doc, kind, "au_percentage")
        aus += ys
        if xs:
            ax2.plot(xs, ys, marker="o", color=color, label=label)
    threshold = doc["au_threshold_percentage"]
    ax2.axhline(threshold, color=THRESHOLD, linewidth=1, linestyle=":", label=f"threshold {threshold:g} %")
    ax2.set_ylim(*au_axis(aus, threshold))
    ax2.set_ylabel("AU %")
    ax2.set_title("Accelerator utilisation vs accelerators", fontsize=11)
    for ax in (ax1, ax2):
        _knee(ax, doc)
        _xticks(ax, doc)
        ax.legend(fontsize=8, loc="best")
    return _png(fig)


def epochs(doc: dict) -> bytes:
    """Per N: the first epoch's samples/s beside the later epochs' mean, storage (and ceiling)."""
    fig, (ax,) = _figure(height_in=3.6)
    kinds = [k for k in ("storage", "ceiling") if any(p.get(k) for p in doc["points"])]
    width = 0.8 / (2 * max(1, len(kinds)))
    ns = [p["accelerators"] for p in doc["points"]]
    i = 0
    for kind in kinds:
        for key, label, alpha in (("first_epoch_samples_per_second", "first epoch", 1.0),
                                  ("later_epochs_samples_per_second", "later epochs", 0.55)):
            vals = [((p.get(kind) or {}).get(key) or 0.0) for p in doc["points"]]
            xs = [j + (i - (2 * len(kinds) - 1) / 2) * width for j in range(len(ns))]
            ax.bar(xs, vals, width=width, color=STORAGE if kind == "storage" else CEILING, alpha=alpha,
                   label=f"{kind}: {label}")
            i += 1
    ax.set_xticks(range(len(ns)), [str(n) for n in ns])
    ax.set_xlabel("simulated accelerators (N)")
    ax.set_ylabel("samples/s")
    ax.set_title("First epoch vs later epochs", fontsize=11)
    ax.legend(fontsize=8, ncols=2)
    return _png(fig)
