"""kv_cache results for humans: `suite metrics` text and the `suite report` page (per-option
table, latency CDF per option, tier occupancy over time), from suite.kv_cache.check.metrics' doc.
The reference's figures first, the suite's (per-operation device latency with eviction I/O, bytes
per wall second) beside them under their own names."""

from __future__ import annotations

from suite.report import content
from suite.report.content import Figures, Image, Section, Table, Text, Verdict, fmt
from suite.rules.verdict import headline
from suite.report import rounding

HEADER = ["option", "tokens/s", "read GiB/s", "write GiB/s", "P95 ms (per request)", "storage tokens/s",
          "trials", "ranks", "suite: device read P95 ms", "suite: device write P95 ms", "suite: read GiB/wall s",
          "suite: write GiB/wall s"]
NAMES = {"1": "1 (storage only)", "2": "2 (storage + CPU memory)", "3": "3 (large model)"}   # closed: 8B, 8B, 70B


def name(doc: dict, o: str) -> str:
    """The option's row name; FAILED where a trial of it failed (its figures are no result)."""
    failed = (doc["options"].get(o) or {}).get("valid") is False
    return NAMES.get(o, o) + (" FAILED (no result)" if failed else "")


def failures(doc: dict) -> list[str]:
    return [f"  option {o} FAILED: {why}" for o, f in sorted(doc["options"].items()) for why in f.get("failed_trials", [])[:5]]


def rows(doc: dict) -> list:
    out = []
    for o, f in sorted(doc["options"].items()):
        s = f.get("suite_figures", {})
        out.append([name(doc, o), fmt(f["aggregated_avg_throughput_tokens_per_sec"], 1),
                    fmt(f["aggregated_read_bandwidth_gbps"], 3), fmt(f["aggregated_write_bandwidth_gbps"], 3),
                    fmt(f["aggregated_p95_latency_ms"], 1), fmt(f["aggregated_storage_throughput_tokens_per_sec"], 1),
                    f["trial_count"], f["rank_count"], fmt(s.get("device_read_p95_ms"), 1),
                    fmt(s.get("device_write_p95_ms"), 1), fmt(s.get("read_gib_per_wall_s"), 3),
                    fmt(s.get("write_gib_per_wall_s"), 3)])
    return out


def claimed_rows(doc: dict) -> list:
    out = []
    for o, c in sorted(doc["claimed"].items()):
        if isinstance(c, dict):
            out.append([name(doc, o), fmt(c.get("aggregated_avg_throughput_tokens_per_sec"), 1),
                        fmt(c.get("aggregated_read_bandwidth_gbps"), 3), fmt(c.get("aggregated_write_bandwidth_gbps"), 3),
                        fmt(c.get("aggregated_p95_latency_ms"), 1), fmt(c.get("aggregated_storage_throughput_tokens_per_sec"), 1),
                        c.get("trial_count"), c.get("rank_count")])
    return out


SPLIT_HEADER = ["option", "where", "storage requests", "P95 total ms", "P95 device ms", "P95 queue ms",
                "device share", "queue share", "still queued at the end (longest wait s)"]
SPLIT_NOTE = ("Per storage request (one operation on the storage tier): total = queue + device, where queue is its "
              "wait before it was issued (an allocation slot, the evictions before it) and device its own service "
              "time from issue to completion; each column is the P95 of its own series, so the P95s do not add; the "
              "shares are of the summed total. From the per-request records (kvcache_requests_*.csv). Prefill "
              "writes still waiting for an allocation slot when the trial ended were never issued: counted apart.")
BREAK_HEADER = ["option", "model", "read us/token", "prefill us/token", "reading beats recomputing from (tokens)",
                "at 8,192 tokens: read s", "recompute s", "faster"]
MAX_RANK_ROWS = 24


def split_rows(doc: dict) -> list:
    out, queued = [], doc.get("queued_at_end", {})
    for o, d in sorted(doc.get("p95_split", {}).items()):
        mine = [q for k, q in queued.items() if k.startswith(f"option_{o}/")]
        every = (f"{sum(q['count'] for q in mine)} ({fmt(max(q['max_wait_s'] for q in mine), 3)})" if mine else "")
        for where, s in [("all ranks and trials", d["overall"]), *sorted(d["ranks"].items())[:MAX_RANK_ROWS]]:
            q = queued.get(where)
            out.append([name(doc, o), where, s["requests"], fmt(s["total_p95_ms"], 3), fmt(s["device_p95_ms"], 3),
                        fmt(s["queue_p95_ms"], 3), fmt(s["device_share"], 3), fmt(s["queue_share"], 3),
                        every if q is None and where.startswith("all") else
                        f"{q['count']} ({fmt(q['max_wait_s'], 3)})" if q else ""])
    return out


def break_rows(doc: dict) -> list:
    out = []
    for o, d in sorted(doc.get("break_even", {}).items()):
        for model, m in d["models"].items():
            L, at = m["read_beats_recompute_from_tokens"], m["at_context_tokens"]["8192"]
            out.append([name(doc, o), model + (" (this option)" if m["own_model"] else ""),
                        fmt(m["read_s_per_token"] * 1e6, 2), fmt(m["prefill_s_per_token"] * 1e6, 2),
                        "never (up to 1,048,576)" if L is None else f"{L:,}", fmt(at["read_s"], 3),
                        fmt(at["prefill_s"], 3), at["faster"]])
    return out


def text(doc: dict) -> str:
    from suite.report.text import table

    label = "MINIATURE (not valid for submission) " if doc["miniature"] else ""
    lines = [headline(f"kv_cache {doc['path']}", doc["labels"]), f"{label}division {doc['division']}, {doc['rank_files']} rank files"
             + (f"; reduced: {'; '.join(doc['reduced'])}" if doc["reduced"] else ""), "",
             "From the rank files (the reference's formulas: per trial the sum over ranks, per option the mean "
             "over trials, P95 the max over ranks and trials; suite: per-operation device latency incl. eviction, "
             "GiB per wall second):",
             table(rows(doc), HEADER)]
    if failures(doc):
        lines += ["", "Failed trials (their options' figures are not a result):", *failures(doc)]
    if doc.get("p95_split"):
        lines += ["", "P95 split. " + SPLIT_NOTE, table(split_rows(doc), SPLIT_HEADER)]
    if doc.get("break_even"):
        from suite.kv_cache import breakeven

        lines += ["", "Break-even: reading the cached prefix from storage (read = fixed + bytes / bandwidth, fitted to "
                      "the option's reads) against recomputing it (the model's prefill on its simulated accelerator, "
                      "workloads/kv-cache.yaml):"]
        lines += [x for o, d in sorted(doc["break_even"].items()) for x in breakeven.said(o, d)]
    if doc["claimed"]:
        lines += ["", "summary.json says:", table(claimed_rows(doc), HEADER[:8])]
    bad = [s for s in doc["rederived"] if s["status"] != "rederived"]
    counts = {k: sum(1 for s in doc["rederived"] if s["status"] == k) for k in ("rederived", "mismatch", "not-rederivable")}
    lines += ["", f"re-derived: {counts['rederived']}; mismatch: {counts['mismatch']}; not re-derivable: "
                  f"{counts['not-rederivable']} (rank files present: {doc['rank_files']}, ranks expected per trial: "
                  f"{doc['expected_ranks']})"]
    lines += [f"  {s['status']:<15} {s.get('rank', '')} {s['figure']}: claimed {fmt(s['claimed'], 4)}, derived "
              f"{fmt(s['derived'], 4)}" for s in bad[:20]]
    lines += ["", f"{len(doc['findings'])} finding(s)"]
    lines += [f"  {f['effect']:<7} {f['message']}" for f in doc["findings"][:20]]
    lines.append(doc["verdict_line"])          # the last line: the one verdict line (suite.rules.verdict)
    return "\n".join(lines)


def build(doc: dict):
    head = Section("headline", f"KV-cache offload (MLPerf Storage {doc['ruleset']} kv_cache)")
    head.blocks.append(Text(("MINIATURE — not valid for submission. " if doc["miniature"] else "")
                            + f"{doc['path']}; division {doc['division']}"
                            + (f"; reduced: {'; '.join(doc['reduced'])}" if doc["reduced"] else "")))
    head.blocks.append(Verdict(doc["verdict"], f"suite check: {doc['verdict_line']}; {len(doc['findings'])} finding(s)"))
    head.blocks.append(Figures([(f"option {o} tokens/s", fmt(f["aggregated_avg_throughput_tokens_per_sec"], 1),
                                 f"P95 {fmt(f['aggregated_p95_latency_ms'], 1)} ms")
                                for o, f in sorted(doc["options"].items())]))
    table = Section("options", "Per option")
    table.blocks.append(Table(HEADER, rows(doc), "Reference figures from the rank files; suite: columns are the "
                              "figures the reference's users asked for (eviction I/O included)."))
    if failures(doc):
        table.blocks.append(Text("Failed trials (their options' figures are not a result): " + "; ".join(
            x.strip() for x in failures(doc))))
    if doc["claimed"]:
        table.blocks.append(Table(HEADER[:8], claimed_rows(doc), "What summary.json claims."))
    if doc["findings"]:
        table.blocks.append(Table(["rule", "effect", "message"],
                                  [[f["rule_id"], f["effect"], rounding.finding(f)] for f in doc["findings"]], numbers_right=False))
    if doc.get("p95_split"):
        table.blocks.append(Table(SPLIT_HEADER, split_rows(doc), "P95 split into device and queueing time. " + SPLIT_NOTE))
    if doc.get("break_even"):
        table.blocks.append(Table(BREAK_HEADER, break_rows(doc), "Break-even per option and model: the storage read "
                                  "seconds per cached token (the option's reads, fitted: a fixed cost per read plus the "
                                  "bytes over the bandwidth) against the prefill seconds per token of the simulated "
                                  "accelerator (workloads/kv-cache.yaml, with the source of each figure); reading wins "
                                  "from the context length shown on, recomputing below it.", numbers_right=False))
    plots = Section("plots", "Latency and tier occupancy")
    if doc["latencies_s"]:
        plots.blocks.append(Image("kvcache-latency-cdf", latency_cdf(doc["latencies_s"]),
                                  "per-request storage latency CDF per option"))
    if any(doc["occupancy"].values()):
        plots.blocks.append(Image("kvcache-occupancy", occupancy(doc["occupancy"]), "tier occupancy over time"))
    return content.Page(title=headline(f"kv_cache (MLPerf Storage {doc['ruleset']})", doc["labels"]), subtitle=doc["path"], sections=[head, table, plots],
                        labels=tuple(doc["labels"]),
                        tables={"kvcache_options": (EXPORT, export_rows(doc)),
                                **({"kvcache_p95_split": (SPLIT_EXPORT, split_export(doc)),
                                    "kvcache_break_even": (BREAK_EXPORT, break_export(doc))} if doc.get("p95_split") else {})})


SPLIT_EXPORT = ["option", "where", "requests", "total_p95_ms", "device_p95_ms", "queue_p95_ms", "device_share", "queue_share"]
BREAK_EXPORT = ["option", "model", "own_model", "bytes_per_token", "read_fixed_s", "read_s_per_token", "prefill_s_per_token",
                "prefill_s_per_token_squared", "read_beats_recompute_from_tokens"]


def split_export(doc: dict) -> list[dict]:
    return [{"option": int(o), "where": where, **{k: s[k] for k in SPLIT_EXPORT[2:]}}
            for o, d in sorted(doc.get("p95_split", {}).items())
            for where, s in [("all", d["overall"]), *sorted(d["ranks"].items())]]


def break_export(doc: dict) -> list[dict]:
    return [{"option": int(o), "model": name, "read_fixed_s": d["read_fixed_s"],
             **{k: m[k] for k in BREAK_EXPORT if k in m}} for o, d in sorted(doc.get("break_even", {}).items())
            for name, m in d["models"].items()]


EXPORT = ["option", *(k for k in ("aggregated_avg_throughput_tokens_per_sec", "aggregated_read_bandwidth_gbps",
                                  "aggregated_write_bandwidth_gbps", "aggregated_p95_latency_ms",
                                  "aggregated_storage_throughput_tokens_per_sec", "trial_count", "rank_count")),
          "suite_device_read_p95_ms", "suite_device_write_p95_ms", "suite_read_gib_per_wall_s", "suite_write_gib_per_wall_s"]


def export_rows(doc: dict) -> list[dict]:
    """The per-option table as CSV/parquet rows (the reference's key names, the suite's prefixed suite_)."""
    out = []
    for o, f in sorted(doc["options"].items()):
        row = {"option": int(o), **{k: f.get(k) for k in EXPORT[1:8]}}
        row.update({f"suite_{k}": v for k, v in f.get("suite_figures", {}).items()})
        out.append(row)
    return out


def latency_cdf(latencies: dict) -> bytes:
    from suite.report.plots import _png

    return _png(latency_figure(latencies))


LOG_SPAN = 100.0       # a log x axis only over two decades or more: within one it has no labelled tick


def latency_figure(latencies: dict):
    """The per-request storage latency CDF per option, its x axis labelled whatever the span: linear
    where the latencies span less than LOG_SPAN (a log axis within a decade showed no label)."""
    from suite.report.plots import COLORS, _figure

    fig, (ax,) = _figure(height_in=3.6)
    shown = []
    for k, (o, values) in enumerate(sorted(latencies.items())):
        xs = sorted(v * 1000.0 for v in values)
        if xs:
            shown += [xs[0], xs[-1]]
            ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))], color=COLORS[k % len(COLORS)],
                    label=f"option {NAMES.get(o, o)}")
    low = min((x for x in shown if x > 0), default=0.0)
    if low > 0 and max(shown) / low >= LOG_SPAN:
        ax.set_xscale("log")
    ax.set_xlabel("per-request storage latency (ms)")
    ax.set_ylabel("fraction of requests")
    ax.legend(fontsize=8)
    return fig


def occupancy(timelines: dict) -> bytes:
    from suite.report.plots import _png

    return _png(occupancy_figure(timelines))


def occupancy_figure(timelines: dict):
    """GiB held per tier over each trial, named as the run names it ("option 1 trial 1/1 rank 0")."""
    from suite.report.plots import COLORS, _figure

    fig, (ax,) = _figure(height_in=3.6)
    for k, (name, samples) in enumerate(sorted(timelines.items())[:12]):
        ts = [s.get("t_s", 0) for s in samples]
        for tier, style in (("storage", "-"), ("cpu", "--"), ("gpu", ":")):
            ys = [s.get(f"{tier}_bytes") for s in samples]
            if any(ys):
                ax.plot(ts, [y / 2**30 for y in ys], style, color=COLORS[k % len(COLORS)], label=f"{name} {tier}")
    ax.set_xlabel("seconds into the trial")
    ax.set_ylabel("GiB held")
    ax.legend(fontsize=6)
    return fig


def host_section(path):
    """The runs' host metrics (every host_metrics.json under the result: suite run samples each trial)
    as suite.report.hostplots' section; None where there are none."""
    from pathlib import Path

    from suite.harness import hostmetrics
    from suite.report import hostplots

    return hostplots.section("host", [(name, hm, None) for name, hm in hostmetrics.below(Path(path))],
                             "Host metrics (client CPU, disk, network)")
