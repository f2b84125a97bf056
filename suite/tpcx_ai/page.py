"""The TPCx-AI kind's pages: `suite report`'s page (build: its first screen the answer -- `suite check`'s
verdict, AIUCpm@SF, $/AIUCpm and each use case's times --, then the use cases, compliance, the metric's
components, the job times, and the long re-derivation table last; its plots) and `suite metrics`'
terminal text (text). Pure: an FDR (suite.tpcx_ai.fdr) and its figures in, a Page or a str out.
Use cases read UC01 .. UC10 and sort so (never UC1, UC10, UC2).
"""

from suite.report.content import Figures, Image, Page, Section, Table, Text, Verdict, fmt
from suite.report.plots import COLORS, _figure, _png
from suite.report.text import table
from suite.tpcx_ai import figures as metric
from suite.tpcx_ai.rederive import natural
from suite.report import rounding


REDERIVED = "rederived"          # the re-derivation section's id: the page's last (kind.report_page keeps it so)


def uc_name(n: int) -> str:
    return f"UC{n:02d}"


def build(data, result, assessment=None) -> Page:
    """The TPCx-AI report. First screen: the verdict (`suite check`'s, an assess.Assessment), AIUCpm@SF,
    $/AIUCpm, each use case's times; then the use cases' quality and plot, compliance findings, the
    metric's components, job times; the re-derivation table (figure by figure) last."""
    sf = f"{result.scale_factor:g}"
    title = f"TPCx-AI SF{sf} — {data.doc.get('sponsor') or 'unnamed sponsor'}"
    if assessment is not None:
        from suite.rules.verdict import headline

        title = headline(title, assessment.voice().labels())
    sections = [_headline(data, result, title, assessment)]
    if assessment is not None:
        sections[0].blocks.insert(0, Verdict(assessment.voice().verdict, assessment.voice().line()))
    sections.append(_use_cases(data))
    if assessment is not None:
        sections.append(_compliance(assessment))
    sections.append(_phases(data, result))
    if data.jobs:
        sections.append(_jobs(data))
    if assessment is not None and assessment.statements:
        sections.append(_rederived(assessment))
    page = Page(title=title, subtitle=str(data.path), sections=sections,
                labels=assessment.voice().labels() if assessment is not None else ())
    page.tables.update(_tables(data, result))
    return page


def _compliance(a) -> Section:
    comp = Section("compliance", "Compliance")
    comp.blocks.append(Text(f"suite check: {a.label()}; {len(a.findings)} finding(s)"))   # the verdict: above, once
    if a.findings:
        comp.blocks.append(Table(["rule", "severity", "effect", "where", "message"],
                                 [[f.rule_id, f.severity, f.effect, f.path, rounding.finding(f)] for f in a.findings],
                                 "Effect says what the result still qualifies for when the rule fails."))
    if a.statements:
        counts = {}
        for x in a.statements:
            counts[x["status"]] = counts.get(x["status"], 0) + 1
        comp.blocks.append(Text(f"{len(a.statements)} figures re-derived from their evidence: "
                                + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
                                + " (figure by figure at the end of the page)."))
    return comp


def _rederived(a) -> Section:
    """Every figure re-derived from the evidence below it, or why it could not be (the long table)."""
    section = Section(REDERIVED, "Re-derivation, figure by figure")
    rows = sorted(a.statements, key=lambda x: natural(x["figure"]))
    section.blocks.append(Table(["figure", "from", "status", "claimed", "derived"],
                                [[x["figure"], x["from"], x["status"], fmt(x["claimed"], 4), fmt(x["derived"], 4)]
                                 for x in rows],
                                "Each figure re-derived from the evidence below it, or why it could not be.",
                                numbers_right=False))
    return section


def _headline(data, result, title: str, assessment=None) -> Section:
    sf = f"{result.scale_factor:g}"
    name = assessment.metric_name(result.scale_factor) if assessment is not None else f"AIUCpm@{sf}"
    head = Section("headline", title)
    head.blocks.append(Text(f"{data.doc['kind']}, kit {data.doc['kit_version']}, {result.streams} throughput "
                            f"streams; {data.path}"))
    note = assessment.note() if assessment is not None else ""
    if note:       # a note beside the verdict the page says once (issue 47), not a second one
        head.blocks.append(Text(f"{name}{note}"))
    for line in assessment.notes() if assessment is not None else []:
        head.blocks.append(Text(line))
    if result.complete:
        value = f"{result.aiucpm_published:.2f}" + (f" — {assessment.label()}" if note else "")
        figs = [(name, value, f"kit value {result.aiucpm:.3f}")]
        if result.price_per_aiucpm is not None:
            figs.append(("Price-performance", f"{result.price_per_aiucpm:,.2f} {result.currency or ''}/AIUCpm",
                         f"{result.total_price:,.0f} {result.currency or ''} / {result.aiucpm_published:.2f}"))
        else:
            figs.append(("Price-performance", "none", "no total price stated"))
    else:
        figs = [(name, "none", result.why_incomplete("this result").split(": ", 1)[1]),
                ("Price-performance", "none", f"no {name}")]
    avail = data.doc.get("availability_date") or "not stated"
    figs.append(("Availability", avail, f"total price {result.total_price:,.0f} {result.currency or ''}"
                 if result.total_price else ""))
    head.blocks.append(Figures(figs))
    pub = data.published
    if pub and result.complete and "aiucpm" in pub:
        diff = result.aiucpm_published - pub["aiucpm"]
        text = f"Published: {pub['aiucpm']:.2f} AIUCpm@{sf}"
        if "price_per_aiucpm" in pub:
            text += f", {pub['price_per_aiucpm']:.2f} {result.currency or ''}/AIUCpm"
        head.blocks.append(Text(text + f". Recomputed − published = {diff:+.2f} AIUCpm."))
    if data.doc.get("notes"):
        head.blocks.append(Text(data.doc["notes"]))
    return head


def _phases(data, result) -> Section:
    phases = Section("phases", "Metric components")
    phases.blocks.append(Table(["component", "seconds", "what"], [
        ["TLD", f"{result.tld_s:.3f}", "load time" + (f" (kit {data.kit_mode}, from jobs)" if data.jobs else "")],
        ["TPTT", f"{result.tptt_s:.3f}", "geometric mean of the training times"],
        ["TPST1", f"{result.tpst1_s:.3f}", "geometric mean of serving run 1"],
        ["TPST2", f"{result.tpst2_s:.3f}", "geometric mean of serving run 2"],
        ["TPST", f"{result.tpst_s:.3f}", "max(TPST1, TPST2)"],
        ["TTT", f"{result.ttt_s:.4f}", f"{result.throughput_elapsed_s:.3f} s / ({result.streams} streams × 10)"],
    ], "AIUCpm@SF = 60 · SF · 10 / (TLD · TPTT · TPST · TTT)^¼; every component weighs the same."))
    phases.blocks.append(Image("components", _components_png(result), "metric components"))
    return phases


PERFECT = {"accuracy_score": 1.0, "f1_score": 1.0, "matthews_corrcoef": 1.0, "word_error_rate": 0.0,
           "mean_squared_log_error": 0.0, "median_absolute_error": 0.0}  # a score no real data reaches


def _use_cases(data) -> Section:
    ucs = Section("use-cases", "Use cases: times and quality")
    inp = data.inputs
    rows, perfect = [], []
    for uc in metric.USE_CASES:
        q = data.quality.get(uc, {})
        quality = "–"
        if q:
            quality = f"{q['metric']} {q['value']:g}"
            if q["value"] == PERFECT.get(q["metric"]):
                quality += " (perfect: see below)"
                perfect.append(uc_name(uc))
            if "threshold" in q:
                hib = q.get("higher_is_better")
                ok = None if hib is None else (q["value"] >= q["threshold"] if hib else q["value"] <= q["threshold"])
                quality += f" (threshold {q['threshold']:g}{'' if ok is None else ', pass' if ok else ', FAIL'})"
        rows.append([uc_name(uc), fmt(inp.training_s.get(uc), 3), fmt(inp.serving_1_s.get(uc), 3),
                     fmt(inp.serving_2_s.get(uc), 3), quality])
    ucs.blocks.append(Table(["use case", "training s", "serving 1 s", "serving 2 s", "quality"], rows))
    if perfect:
        ucs.blocks.append(Text(f"Remark: {', '.join(perfect)} scored perfectly. Real data does not allow "
                               "that (the kit's own best figures are well short of it): a label may be leaking "
                               "through a key or the rows' layout, or the data be far easier than the kit's. "
                               "Look before trusting the result."))
    ucs.blocks.append(Image("use-cases", _use_cases_png(inp), "per-use-case times"))
    return ucs


def _jobs(data) -> Section:
    jobs = Section("jobs", "Per-job times")
    by_stream = {}
    for j in data.jobs:
        if j.phase == "throughput":
            by_stream.setdefault(j.stream, []).append(j)
    jobs.blocks.append(Table(["stream", "jobs", "summed durations s", "span s"], [
        [str(s), str(len(js)), f"{sum(j.duration_s for j in js):.3f}",
         f"{max(j.end_s for j in js) - min(j.start_s for j in js):.3f}"] for s, js in sorted(by_stream.items())],
        f"Kit 1.0.2 takes the largest summed durations, kit 1.0.3 the wall-clock span of all streams; "
        f"this result uses kit {data.kit_mode}."))
    throughput = [j for s in by_stream.values() for j in s if j.use_case is not None and j.stream is not None]
    if throughput:
        jobs.blocks.append(Image("throughput-timeline", _timeline_png(throughput), "throughput-test timeline"))
    return jobs


def _tables(data, result) -> dict:
    """The exports: runs (the result's numbers) and use_cases (times and quality per use case)."""
    inp = data.inputs
    row = {"source": str(data.path), "kind": data.doc["kind"], "kit_version": data.doc["kit_version"],
           **result.to_dict()}
    row.pop("missing_use_cases")
    uc_cols = ["use_case", "training_s", "serving_1_s", "serving_2_s", "quality_metric", "quality_value",
               "quality_threshold"]
    return {"runs": (list(row), [row]), "use_cases": (uc_cols, [
        {"use_case": uc, "training_s": inp.training_s.get(uc), "serving_1_s": inp.serving_1_s.get(uc),
         "serving_2_s": inp.serving_2_s.get(uc), "quality_metric": data.quality.get(uc, {}).get("metric"),
         "quality_value": data.quality.get(uc, {}).get("value"),
         "quality_threshold": data.quality.get(uc, {}).get("threshold")} for uc in metric.USE_CASES])}


# --------------------------------------------------------------------------- plots


def _use_cases_png(inputs) -> bytes:
    """Training and both serving runs per use case, log scale (times span three orders of magnitude)."""
    fig, (ax,) = _figure(height_in=3.8)
    width = 0.27
    for k, (name, times) in enumerate((("training", inputs.training_s), ("serving 1", inputs.serving_1_s),
                                       ("serving 2", inputs.serving_2_s))):
        xs = [uc + (k - 1) * width for uc in metric.USE_CASES if uc in times]
        ax.bar(xs, [times[uc] for uc in metric.USE_CASES if uc in times], width=width, color=COLORS[k], label=name)
    ax.set_yscale("log")
    ax.set_xticks(list(metric.USE_CASES), [uc_name(uc) for uc in metric.USE_CASES])
    ax.set_ylabel("seconds (log scale)")
    ax.set_title("Time per use case", fontsize=11)
    ax.legend(fontsize=8)
    return _png(fig)


def _components_png(result) -> bytes:
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


def _timeline_png(jobs) -> bytes:
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


# --------------------------------------------------------------------------- suite metrics


def money(value: float, currency: str | None) -> str:
    return f"{value:,.2f} {currency or ''}".rstrip()


def text(fdr, result, assessment=None) -> str:
    """The TPCx-AI figures: phase times, AIUCpm@SF, $/AIUCpm@SF, and the published figures beside them.
    With an assessment (suite.tpcx_ai.assess) the headline carries its verdict, and its findings follow."""
    sf = f"{result.scale_factor:g}"
    name = assessment.metric_name(result.scale_factor) if assessment is not None else f"AIUCpm@{sf}"
    head = [f"TPCx-AI  {fdr.doc.get('sponsor', '')}  SF {sf}  streams {result.streams}  "
            f"kit {fdr.doc.get('kit_version')}  ({fdr.path})".replace("    ", "  ")]
    if assessment is not None:
        shown = f"{result.aiucpm_published:.2f}" if result.complete else "none"
        head.append(f"{name} {shown}{assessment.note() or ' — ' + assessment.label()}")
        head += assessment.notes()
        head += [f"  {f.effect:<7} {f.message}" for f in assessment.findings]
    n_train = 10 - len(result.missing.get("training_s", []))
    rows = [
        ["TLD", f"{result.tld_s:.3f} s", "load time"],
        ["TPTT", f"{result.tptt_s:.3f} s", f"geomean of {n_train} training times"],
        ["TPST1", f"{result.tpst1_s:.3f} s", "geomean of serving run 1"],
        ["TPST2", f"{result.tpst2_s:.3f} s", "geomean of serving run 2"],
        ["TPST", f"{result.tpst_s:.3f} s", "max(TPST1, TPST2)"],
        ["TTT", f"{result.ttt_s:.3f} s",
         f"{result.throughput_elapsed_s:.3f} s / ({result.streams} streams x 10)"],
    ]
    if result.complete:
        rows.append([name, f"{result.aiucpm_published:.2f}", f"published to 2 decimals from the kit value {result.aiucpm:.3f}"])
        if result.price_per_aiucpm is not None:
            rows.append([f"$/{name}", money(result.price_per_aiucpm, result.currency),
                         f"{money(result.total_price, result.currency)} / {result.aiucpm_published:.2f}"])
    else:
        rows.append([name, "none", "needs all 10 use cases in every power phase"])
    published = fdr.published
    if published and result.complete:
        if "aiucpm" in published:
            diff = result.aiucpm_published - published["aiucpm"]
            rows.append(["published", f"{published['aiucpm']:.2f}", f"AIUCpm; computed - published = {diff:+.2f}"])
        if "price_per_aiucpm" in published and result.price_per_aiucpm is not None:
            diff = result.price_per_aiucpm - published["price_per_aiucpm"]
            rows.append(["published", money(published["price_per_aiucpm"], result.currency),
                         f"per AIUCpm; computed - published = {diff:+.2f}"])
    return "\n".join(head + [table(rows, ["figure", "value", "how"])])


def host_section(path):
    """The runs' host metrics (every host_metrics.json under the result: suite run samples each run)
    as suite.report.hostplots' section; None where there are none."""
    from pathlib import Path

    from suite.harness import hostmetrics
    from suite.report import hostplots

    return hostplots.section("host", [(name, hm, None) for name, hm in hostmetrics.below(Path(path))],
                             "Host metrics (client CPU, disk, network)")
