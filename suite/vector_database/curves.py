"""The report's curves over several benchmarks of one engine and index (a `suite run --sweep` or
`--dram-ratios` results dir, each point its own <engine>/<INDEX> series): the recall–QPS Pareto front with
the headline read off it (the highest QPS at recall@10 >= the floor), and the DRAM:index ratios, one table
line each, with I/Os and bytes per query against the ratio."""

from __future__ import annotations

from suite.vector_database import sweep


def points(summary: dict) -> list[dict]:
    """One point per benchmark: its axis (search list / ef, or DRAM %) and mean figures over its runs."""
    out = []
    for b in summary["benchmarks"]:
        runs = b["runs"]
        if not runs:
            continue
        m = b["mean_over_runs"]
        first = runs[0]
        out.append({"label": b["path"], "engine": b["engine"], "index": b["index_type"], "param": first.get("search_param"),
                    "value": first.get("search_value"), "dram_percent": first.get("dram_percent"),
                    "throughput_qps": m.get("throughput_qps"), "recall": b.get("headline_recall"),
                    "read_ops_per_query": m.get("read_ops_per_query"), "bytes_read_per_query": m.get("bytes_read_per_query"),
                    "mean_io_bytes": m.get("mean_io_bytes"), "warm_read_ops_per_query": m.get("warm_read_ops_per_query"),
                    "floor": b.get("recall_floor")})
    return out


def sections(summary: dict) -> list:
    """The sweep's and the DRAM ratios' sections (none where the dir holds fewer than two such points)."""
    from suite.report import content as c

    pts = points(summary)
    out = []
    swept = sorted((p for p in pts if p["param"] and p["dram_percent"] is None), key=lambda p: p["value"] or 0)
    if len({p["value"] for p in swept}) >= 2:
        floor = max((p["floor"] for p in swept if p["floor"] is not None), default=0.9)
        front = sweep.pareto(swept)
        h = sweep.headline(swept, floor)
        out.append(c.Section("vdb-sweep", f"Recall–QPS curve ({swept[0]['param']} ladder)", [
            c.Figures([(f"QPS at recall@10 >= {floor:g} (read off the curve)",
                        c.fmt(h["throughput_qps"], 1) if h else "none: no point reaches the floor",
                        f"{h['point']}, recall {h['recall']:.4f}" if h else "")]),
            c.Table([swept[0]["param"], "QPS", "recall@10", "I/Os/query", "KiB/query", "Pareto front"],
                    [[c.fmt(p["value"], 0), c.fmt(p["throughput_qps"], 1), c.fmt(p["recall"], 4), c.fmt(p["read_ops_per_query"], 1),
                      c.fmt(p["bytes_read_per_query"] / 1024 if p["bytes_read_per_query"] is not None else None, 1),
                      "yes" if p["label"] in front else ""] for p in swept]),
            c.Image("vdb-sweep-curve", plot_sweep(swept, front, floor, h), "recall–QPS Pareto curve and I/Os per query")]))
    dram = sorted((p for p in pts if p["dram_percent"] is not None), key=lambda p: p["dram_percent"])
    if len({p["dram_percent"] for p in dram}) >= 2:
        out.append(c.Section("vdb-dram", "DRAM:index ratios (a memory cgroup per run)", [
            c.Table(["DRAM:index", "QPS", "recall@10", "I/Os/query cold", "I/Os/query warm", "KiB/query", "bytes/I-O"],
                    [[f"{p['dram_percent']:g} %", c.fmt(p["throughput_qps"], 1), c.fmt(p["recall"], 4),
                      c.fmt(p["read_ops_per_query"], 2), c.fmt(p["warm_read_ops_per_query"], 2),
                      c.fmt(p["bytes_read_per_query"] / 1024 if p["bytes_read_per_query"] is not None else None, 1),
                      c.fmt(p["mean_io_bytes"], 0)] for p in dram]),
            c.Image("vdb-dram-curve", plot_dram(dram), "I/Os and QPS per query against the DRAM:index ratio")]))
    return out


def plot_sweep(pts: list, front: list, floor: float, h: dict | None) -> bytes:
    from suite.report import plots

    fig, (a1, a2) = plots._figure(10.0, 3.6, 2)
    xs, ys = [p["recall"] for p in pts], [p["throughput_qps"] for p in pts]
    a1.scatter(xs, ys, color=plots.COLORS[1], label="points")
    f = [p for p in pts if p["label"] in front]
    a1.plot([p["recall"] for p in f], [p["throughput_qps"] for p in f], color=plots.COLORS[0], marker="o", label="Pareto front")
    a1.axvline(floor, color="grey", linestyle="--", label=f"floor {floor:g}")
    if h:
        a1.scatter([h["recall"]], [h["throughput_qps"]], color="red", zorder=5, label="headline")
    a1.set_xlabel("recall@10")
    a1.set_ylabel("QPS")
    a1.set_yscale("log")
    a1.set_title("recall–QPS")
    a1.legend(fontsize=7)
    a2.plot([p["value"] for p in pts], [p["read_ops_per_query"] or 0 for p in pts], marker="o", color=plots.COLORS[0])
    a2.set_xlabel(pts[0]["param"])
    a2.set_ylabel("I/Os per query")
    a2.set_title("storage reads per query")
    return plots._png(fig)


def plot_dram(pts: list) -> bytes:
    from suite.report import plots

    fig, (a1, a2) = plots._figure(10.0, 3.6, 2)
    x = [p["dram_percent"] for p in pts]
    a1.plot(x, [p["read_ops_per_query"] or 0 for p in pts], marker="o", color=plots.COLORS[0], label="cold")
    a1.plot(x, [p["warm_read_ops_per_query"] or 0 for p in pts], marker="s", color=plots.COLORS[1], label="warm")
    a1.set_xlabel("DRAM:index (%)")
    a1.set_ylabel("I/Os per query")
    a1.set_title("reads per query")
    a1.legend(fontsize=7)
    a2.plot(x, [p["throughput_qps"] or 0 for p in pts], marker="o", color=plots.COLORS[2 % len(plots.COLORS)])
    a2.set_xlabel("DRAM:index (%)")
    a2.set_ylabel("QPS")
    a2.set_title("QPS")
    return plots._png(fig)
