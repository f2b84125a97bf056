"""What `suite metrics`, `suite check` and `suite report` show of vector_database leaves: per run QPS,
latency percentiles, recall and I/O per query; per benchmark (<engine>/<INDEX>) the mean over runs;
the report's QPS-vs-recall plot, latency CDF per run and I/O per query."""

from __future__ import annotations

import statistics
from pathlib import Path

from suite.numbers import CLAIMED, RECOMPUTED
from suite.rules.verdict import Voice
from suite.vector_database import check as vcheck
from suite.report import rounding

RUN_COLUMNS = ("throughput_qps", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "recall",
               "bytes_read_per_query", "read_ops_per_query", "cached_fraction_before", "mean_io_bytes",
               "warm_read_ops_per_query", "search_value", "dram_percent")


def summarise(path: Path, ruleset: str | None = None) -> dict:
    from suite.rules import engine as rules

    recs, found, root = vcheck.load_and_check(path, ruleset)
    name = vcheck.round_of(recs, ruleset)
    params = rules.load_layers(name, vcheck.RULE_FILES).params
    benches = []
    for bdir, group in vcheck.benchmarks(recs).items():
        runs = [r for r in group if r.phase == "run"]
        mean = {}
        for key in RUN_COLUMNS:
            vals = [getattr(r, key) for r in runs if getattr(r, key) is not None]
            mean[key] = statistics.fmean(vals) if vals else None
        benches.append({"path": vcheck._rel(bdir, root), "engine": group[0].engine, "index_type": group[0].index_type,
                        "source": group[0].source, "runs": [r.to_dict() for r in runs],
                        "datagen": [r.to_dict() for r in group if r.phase == "datagen"],
                        "mean_over_runs": mean, "num_runs": len(runs), **headline_qps(runs, mean, params),
                        "engine_version": next((r.engine_version for r in runs if r.engine_version), None)})
    mine = [f for f in found]
    runs = [r for r in recs if r.phase == "run"]
    said = Voice(vcheck.verdict(mine), any(r.miniature for r in runs),
                 "open" if runs and all(r.division == "open" for r in runs) else "closed")
    return {"schema_version": 1, "kind": "vector_database", "root": str(root), "ruleset": name, "benchmarks": benches,
            "verdict": said.verdict, "findings": [f.to_dict() for f in mine], "miniature": said.miniature,
            "division": said.division, "compliant": said.compliant, "labels": list(said.labels()),
            "verdict_line": said.line()}


def headline_qps(runs: list, mean: dict, params: dict) -> dict:
    """The headline: QPS at recall@k >= the floor (the round's, or our workload's where higher). The mean QPS
    over the runs when their mean recall (re-derived, else claimed) meets the floor; None when it does not."""
    floors = [f for r in runs if (f := vcheck.claimed_floor(r, params)) is not None]
    floor = max(floors) if floors else vcheck.round_floor(params)
    recalls = [v for r in runs if (v := vcheck.claimed_recall(r)) is not None]
    recall = statistics.fmean(recalls) if recalls else None
    ok = recall is not None and recall >= floor and mean.get("throughput_qps") is not None
    return {"recall_floor": floor, "headline_recall": recall, "headline_qps": mean["throughput_qps"] if ok else None}


def _headline(b: dict) -> str:
    if b.get("headline_qps") is not None:
        return f"{b['headline_qps']:,.1f} QPS at recall@10 {b['headline_recall']:.4f} >= {b['recall_floor']:g}"
    got = f"{b['headline_recall']:.4f}" if b.get("headline_recall") is not None else "none"
    return f"none: recall@10 {got} under the floor {b.get('recall_floor', 0.9):g}"


def _f(v, places=2) -> str:
    if v is None:
        return "-"
    return f"{v:,.{places}f}"


def text(summary: dict) -> str:
    from suite.rules.verdict import headline

    lines = [headline(f"vector_database results under {summary['root']}", summary["labels"]), ""]
    for b in summary["benchmarks"]:
        m = b["mean_over_runs"]
        lines += [f"{b['path']}: {b['engine']} {b['index_type']} ({b['source']}; {b['num_runs']} run(s); "
                  f"{b['engine_version'] or 'engine version not recorded'})",
                  f"  headline: {_headline(b)}",
                  f"  mean over runs: {_f(m['throughput_qps'], 1)} QPS, p99 {_f(m['p99_latency_ms'])} ms, "
                  f"recall {_f(m['recall'], 4)}, {_f((m['bytes_read_per_query'] or 0) / 1024, 1) if m['bytes_read_per_query'] is not None else '-'} "
                  f"KiB read per query",
                  "  run              QPS      p50 ms    p95 ms    p99 ms   recall   KiB/query  reads/query  cached before"]
        for r in b["runs"]:
            kib = r["bytes_read_per_query"] / 1024 if r["bytes_read_per_query"] is not None else None
            cached = f"{100 * r['cached_fraction_before']:.1f}%" if r["cached_fraction_before"] is not None else "-"
            lines.append(f"  {r['ts']}  {_f(r['throughput_qps'], 1):>9} {_f(r['p50_latency_ms']):>9} "
                         f"{_f(r['p95_latency_ms']):>9} {_f(r['p99_latency_ms']):>9} {_f(r['recall'], 4):>8} "
                         f"{_f(kib, 1):>11} {_f(r['read_ops_per_query'], 1):>12}  {cached}")
            if r.get("not_rederivable"):
                claimed = ", ".join(f"{k} {r['claimed'].get(k)}" for k in r["not_rederivable"])
                lines.append(f"    claimed, not re-derivable (counted in no verdict): {claimed}")
        lines.append("")
    lines += curve_lines(summary)
    lines.append(f"rules/{summary['ruleset']}/vector_database.yaml: {len(summary['findings'])} finding(s)")
    lines += [f"  {f['effect']:<7} {f['severity']:<7} {f['message']}" for f in summary["findings"][:50]]
    lines.append(summary["verdict_line"])      # the last line: the one verdict line (suite.rules.verdict)
    return "\n".join(lines) + "\n"


def curve_lines(summary: dict) -> list[str]:
    """A sweep's or DRAM ratios' points (several benchmarks of one dir): the headline read off the curve."""
    from suite.vector_database import curves, sweep

    pts = [p for p in curves.points(summary) if p["param"] and p["dram_percent"] is None]
    if len({p["value"] for p in pts}) < 2:
        return []
    floor = max((p["floor"] for p in pts if p["floor"] is not None), default=0.9)
    h = sweep.headline(pts, floor)
    return [f"recall–QPS curve over {len(pts)} {pts[0]['param']} points: " +
            (f"{h['throughput_qps']:,.1f} QPS at recall@10 {h['recall']:.4f} >= {floor:g} ({h['point']})" if h
             else f"no point reaches recall@10 {floor:g}"), ""]


def headline_figures(summary: dict) -> list:
    """Beside the verdict: QPS at recall@10 >= the floor, read off the curve for a sweep, else per benchmark
    (the first three)."""
    from suite.report import content as c
    from suite.vector_database import curves, sweep

    pts = [p for p in curves.points(summary) if p["param"] and p["dram_percent"] is None]
    if len({p["value"] for p in pts}) >= 2:
        floor = max((p["floor"] for p in pts if p["floor"] is not None), default=0.9)
        h = sweep.headline(pts, floor)
        return [(f"QPS at recall@10 >= {floor:g} (off the curve)", c.fmt(h["throughput_qps"], 1) if h else "none",
                 f"{pts[0]['param']} {h and next(p['value'] for p in pts if p['label'] == h['point']):g}, recall "
                 f"{h['recall']:.4f}" if h else "no point reaches the floor")]
    return [(f"{b['engine']} {b['index_type']}: QPS at recall@10 >= {b['recall_floor']:g}",
             c.fmt(b["headline_qps"], 1) if b["headline_qps"] is not None else "none",
             f"recall {b['headline_recall']:.4f}" if b["headline_recall"] is not None else "recall not recorded")
            for b in summary["benchmarks"][:3]]


def page(summary: dict):
    """The report page: the headline per benchmark, the runs, QPS vs recall, latency CDF, I/O per query."""
    from suite.report import content as c
    from suite.vector_database import curves

    sections = []
    for i, b in enumerate(summary["benchmarks"]):
        sid = f"vdb{i}"
        m = b["mean_over_runs"]
        s = c.Section(sid, f"{b['engine']} {b['index_type']} ({b['path']})", [
            c.Figures([(f"QPS at recall@10 >= {b['recall_floor']:g}", c.fmt(b["headline_qps"], 1)
                        if b["headline_qps"] is not None else "none: recall under the floor", ""),
                       ("QPS (mean over runs)", c.fmt(m["throughput_qps"], 1), ""),
                       ("p99 latency", f"{c.fmt(m['p99_latency_ms'])} ms", ""),
                       ("recall", c.fmt(m["recall"], 4), ""),
                       ("read per query", f"{c.fmt((m['bytes_read_per_query'] or 0) / 1024, 1)} KiB"
                        if m["bytes_read_per_query"] is not None else "not recorded", "")]),
            c.Table(["run", "QPS", "p50 ms", "p95 ms", "p99 ms", "recall", "KiB/query", "reads/query"],
                    [[r["ts"], c.fmt(r["throughput_qps"], 1), c.fmt(r["p50_latency_ms"]), c.fmt(r["p95_latency_ms"]),
                      c.fmt(r["p99_latency_ms"]), c.fmt(r["recall"], 4),
                      c.fmt(r["bytes_read_per_query"] / 1024 if r["bytes_read_per_query"] is not None else None, 1),
                      c.fmt(r["read_ops_per_query"], 1)] for r in b["runs"]])])
        if b["runs"]:
            s.blocks.append(c.Image(f"{sid}-qps-recall-cdf", plot(b), "QPS vs recall, latency CDF and I/O per query per run"))
        sections.append(s)
    verdict = c.Section("verdict", f"Rules (rules/{summary['ruleset']}/vector_database.yaml)", [
        c.Verdict(summary["verdict"], f"{summary['verdict_line']}: {len(summary['findings'])} finding(s)"),
        c.Figures(headline_figures(summary)),
        c.Table(["rule", "effect", "path", "message"],
                [[f["rule_id"], f["effect"], f["path"], rounding.finding(f)] for f in summary["findings"][:200]],
                numbers_right=False)])
    from suite.rules.verdict import headline

    return c.Page(headline(f"vector_database (MLPerf Storage {summary['ruleset']})", summary["labels"]), summary["root"],
                  labels=tuple(summary["labels"]), sections=[verdict, *curves.sections(summary), *sections],
                  tables={"vdb_runs": (["benchmark", "run", *RUN_COLUMNS, "claimed_not_rederivable"],
                                       [{"benchmark": b["path"], "run": r["ts"], **{k: r[k] for k in RUN_COLUMNS},
                                         "claimed_not_rederivable": " ".join(r.get("not_rederivable") or [])}
                                        for b in summary["benchmarks"] for r in b["runs"]])})


def plot(b: dict) -> bytes:
    from suite.report import plots

    fig, (a1, a2, a3) = plots._figure(12.0, 3.6, 3)
    runs = b["runs"]
    for i, r in enumerate(runs):
        color = plots.COLORS[i % len(plots.COLORS)]
        if r["recall"] is not None and r["throughput_qps"] is not None:
            a1.scatter([r["recall"]], [r["throughput_qps"]], color=color, label=r["ts"])
        if r.get("cdf"):
            a2.plot(r["cdf"]["latency_ms"], [p / 100 for p in r["cdf"]["percentile"]], color=color, label=r["ts"])
        elif r["p50_latency_ms"] is not None:
            pts = [(r[k], q) for k, q in (("p50_latency_ms", .5), ("p95_latency_ms", .95), ("p99_latency_ms", .99),
                                          ("p999_latency_ms", .999)) if r[k] is not None]
            a2.plot([p for p, _ in pts], [q for _, q in pts], marker="o", color=color, label=r["ts"])
    a1.set_xlabel("recall@k")
    a1.set_ylabel("QPS")
    a1.set_title("QPS vs recall")
    if all(v > 0 for r in runs for v in ((r.get("cdf") or {}).get("latency_ms") or [1])[1:]):
        a2.set_xscale("log")
    a2.set_xlabel("latency (ms)")
    a2.set_ylabel("fraction of queries")
    a2.set_title("latency CDF per run")
    kib = [(r["ts"][-6:], r["bytes_read_per_query"] / 1024) for r in runs if r["bytes_read_per_query"] is not None]
    if kib:
        a3.bar([k for k, _ in kib], [v for _, v in kib], color=plots.COLORS[0])
    a3.set_title("KiB read from the index per query" if kib else "I/O per query: not recorded")
    if len(runs) <= plots.MANY_RUNS and a1.get_legend_handles_labels()[0]:     # none: no run re-derives both
        a1.legend(fontsize=7)
    return plots._png(fig)


def table_rows(path: Path) -> list[tuple[str, dict]]:
    """The published vector_database results table's row of each benchmark (<engine>/<INDEX>) under
    `path`, with our verdict and its findings. The columns as mlpstorage's reportgen names them (PR
    #826): # Client Nodes (disk_io.host_count; 1 where no run records one), Vector Count and Dimension,
    Index Type, Queries per Sec, Query Latency (ms) (p99), Recall Percentage (recall x 100), Storage
    IOPs (not measured: blank), Read B/W (GiB/s) (disk_io.total_bytes_read_per_sec / 2^30). Ours are
    the means over the benchmark's runs (reportgen publishes one run leaf's figures); a figure no record
    re-derives is the claimed one here (`suite metrics` labels it "claimed, not re-derivable")."""
    recs, found, root = vcheck.load_and_check(path)
    out = []
    for bdir, group in vcheck.benchmarks(recs).items():
        runs = sorted((r for r in group if r.phase == "run"), key=lambda r: r.ts)

        def mean(key, scale=1.0):
            vals = [v for r in runs if (v := _shown(r, key)) is not None]
            return statistics.fmean(vals) * scale if vals and len(vals) == len(runs) else None

        first = lambda key: next((getattr(r, key) for r in runs + group if getattr(r, key) is not None), None)  # noqa: E731
        rel = vcheck._rel(bdir, root)
        mine = [f for f in found if f.path == rel or f.path.startswith(rel.rstrip("/") + "/") or rel == "."]
        out.append(("vector_database", {
            "# Client Nodes": first("client_hosts") or (1 if runs else None), "Vector Count": first("num_vectors"),
            "Vector Dimension": first("dimension"), "Index Type": first("summary_index_type") or group[0].index_type,
            "Queries per Sec": mean("throughput_qps"), "Query Latency (ms)": mean("p99_latency_ms"),
            "Recall Percentage": mean("recall", 100.0), "Storage IOPs": None,
            "Read B/W (GiB/s)": mean("read_bytes_per_s", 1 / (1 << 30)),
            "verdict": vcheck.verdict(mine), "findings": len(mine), "path": runs[0].path if runs else bdir,
            "figures": CLAIMED if any(k in r.not_rederivable for r in runs for k in ("throughput_qps", "p99_latency_ms",
                                                                                  "recall", "read_bytes_per_s"))
            or not runs else RECOMPUTED}))
    return out


def _shown(r, key: str):
    """A run's figure for the published table: re-derived, else (a figure its records cannot give) the claimed
    one, as the table it replicates published it; the verdict beside it never counts a claimed figure."""
    v = getattr(r, key)
    if v is None and key in r.not_rederivable:
        c = r.claimed.get(key)
        return c if isinstance(c, (int, float)) and not isinstance(c, bool) else None
    return v


def host_section(path):
    """The runs' host metrics (every host_metrics.json under the result: suite run samples each query run)
    as suite.report.hostplots' section; None where there are none."""
    from pathlib import Path

    from suite.harness import hostmetrics
    from suite.report import hostplots

    return hostplots.section("host", [(name, hm, None) for name, hm in hostmetrics.below(Path(path))],
                             "Host metrics (client CPU, disk, network)")
