"""The training kind's pages: `suite report`'s storage page (build: per benchmark its headline numbers
under suite check's verdict, its runs, the evidence `suite run` recorded; an overview above several)
and `suite metrics`' terminal text (text). Pure: a summary (suite.training.aggregate) in, a Page or
a str out; the plots are suite.training.plots'.
"""

from suite.numbers import CLAIMED, RECOMPUTED, source_label
from suite.report import rounding
from suite.report.content import Figures, Image, Page, Section, Table, Text, Verdict, fmt
from suite.rules.verdict import headline
from suite.report.text import table
from suite.training import aggregate
from suite.training import plots

MAX_PLOTTED_BENCHMARKS = 8    # two plots per benchmark cost ~0.3 s each: 400 benchmarks would take minutes


def _pm(mean, std) -> str:
    return "–" if mean is None else f"{mean:,.2f} ± {std or 0.0:,.2f}"


def _flatten(doc, prefix="") -> list:
    """Nested evidence dicts as (dotted key, value) pairs, lists joined."""
    out = []
    if isinstance(doc, dict):
        for k in sorted(doc):
            out += _flatten(doc[k], f"{prefix}{k}.")
    elif isinstance(doc, list):
        out.append((prefix[:-1], ", ".join(str(x) for x in doc) if doc else "[]"))
    else:
        out.append((prefix[:-1], fmt(doc, 4) if isinstance(doc, (float, bool)) else ("–" if doc is None else str(doc))))
    return out


def _human(key: str, value: str) -> str:
    """Byte counts also in MiB/GiB, so evidence reads at a glance."""
    if "bytes" in key.rsplit(".", 1)[-1] and value.isdigit():
        n = int(value)
        unit, div = ("GiB", 1024 ** 3) if n >= 1024 ** 3 else ("MiB", 1024 ** 2)
        return f"{n} ({n / div:,.1f} {unit})"
    return value


def build(summary: dict, check) -> Page:
    """The storage report: per benchmark its headline numbers, suite check's verdict (`check`,
    a CheckResult), its runs and the evidence `suite run` recorded; an overview above several."""
    benches = summary["benchmarks"]
    title = (f"{benches[0]['workload'] or '?'} {benches[0]['accelerator'] or '?'} storage benchmark"
             if len(benches) == 1 else f"{len(benches)} storage benchmarks")
    sections = []
    verdicts = _verdicts(check)
    plotted = len(benches) <= MAX_PLOTTED_BENCHMARKS
    voice = check.voice() if hasattr(check, "voice") else None
    own = voice is None or len(benches) > 1      # one benchmark under the page's voice: that is its verdict
    for i, b in enumerate(benches):
        sid = f"b{i + 1}"
        sections += [_headline(b, sid, verdicts.get(_norm(b["path"])), own),
                     _compliance(b, sid, verdicts.get(_norm(b["path"]))), _runs(b, sid, plotted)]
        evidence = _evidence(b, sid)
        if evidence:
            sections.append(evidence)
        objects = _object_storage(b, sid)
        if objects:
            sections.append(objects)
        bound = _storage_bound(b, sid)
        if bound:
            sections.append(bound)
    if len(benches) > 1:
        sections.insert(0, _overview(benches, verdicts))
    tree = verdicts.get("(tree)")
    if tree and tree[1]:
        t = Section("tree", "Submission tree")
        t.blocks.append(Verdict(tree[0], f"suite check, findings outside any benchmark: {len(tree[1])}"))
        t.blocks.append(Table(["rule", "severity", "effect", "where", "message"],
                              [[f["rule_id"], f["severity"], f["effect"], f["path"], rounding.rounded(f["message"])]
                               for f in tree[1]]))
        sections.append(t)
    labels = voice.labels() if voice else ()
    page = Page(title=headline(title, labels), subtitle=summary["path"], sections=sections, labels=labels)
    if voice and sections:
        sections[0].blocks.insert(0, Verdict(voice.verdict, voice.line()))    # the first section says it too
    page.tables["runs"] = (list(aggregate.RUN_TABLE_COLUMNS), aggregate.run_table(summary))
    return page


SPREAD_RULE = "replicability-within-5-percent"   # the rules' run-to-run stability limit (rules/v1.0/common.yaml)


def _spread(b: dict) -> list:
    """The run-to-run spread: coefficient of variation (sample stdev / mean) of the runs' samples/s
    and AU (suite.stats, as `suite compare` computes it); nothing with fewer than 2 runs."""
    from suite.stats import cv_percent

    runs = [r for r in b["runs"] if r["samples_per_second"] is not None and r["status"] == "complete"]
    cv = cv_percent([r["samples_per_second"] for r in runs])
    if cv is None:
        return []
    au = cv_percent([r["au_mean_percentage"] for r in runs if r["au_mean_percentage"] is not None])
    return [("Run-to-run spread", f"CV {cv:.2f} %",
             f"samples/s over {len(runs)} runs (sample stdev / mean)" + (f"; AU CV {au:.2f} %" if au is not None else ""))]


def _headline(b: dict, sid: str, verdict=None, own: bool = True) -> Section:
    """The headline numbers, under suite check's verdict (a number is never shown without it): the
    benchmark's own (`own`) or, for the one benchmark of a page, the page's, said once above it.
    A warning beside the numbers is a finding, never a second verdict."""
    hostnames = sorted({h for r in b["runs"] for h in r["hosts"]})
    who = " / ".join(x for x in (b["org"], b["system"]) if x) or (
        f"system not named (hosts {', '.join(hostnames)})" if hostnames else "system not named")
    o = b["overall"]
    head = Section(f"{sid}-headline", f"{b['workload'] or '?'} {b['accelerator'] or '?'} — {who}")
    head.blocks.append(Text(f"{b['division'] or 'division not stated'}, ruleset {b['ruleset']}; {b['path']}"))
    v = verdict[0] if verdict else "unknown"
    if own:
        head.blocks.append(Verdict(v, f"suite check: {v.upper()}" + (
            f", {len(verdict[1])} finding(s)" if verdict else ", no verdict found for this benchmark")))
    if not o:
        head.blocks.append(Text("No run has usable numbers."))
        return head
    rl = next((r["record_length_bytes"] for r in b["runs"] if r["record_length_bytes"]), None)
    src = o.get("source") or CLAIMED
    head.blocks.append(Figures([
        (source_label("Throughput", src), f"{o['published']['samples_per_second']:,.2f} samples/s",
         f"± {o['published']['samples_per_second_stdev']:,.2f} over {o['num_runs']} runs (population stdev)"),
        (source_label("I/O throughput", src), f"{o['published']['mib_per_second']:,.2f} MiB/s",
         f"± {o['published']['mib_per_second_stdev']:,.2f}; DLIO's \"MB/s\""
         + (f" = samples/s × {rl:,.0f} B / 1024²" if rl else "")),
        (source_label("Accelerator utilisation", src), f"{o['published']['au_mean_percentage']:.2f} %",
         f"± {o['published']['au_stdev_percentage']:.2f} over runs"),
        ("Accelerators / hosts", f"{o['num_accelerators']} / {o['num_hosts']}",
         ", ".join(o["hostnames"]) or ""),
        *_spread(b),
    ]))
    lines = provenance_lines(b)
    if lines:
        head.blocks.append(Text(lines[0] + "."))
    for line in lines[1:]:                # a claim the records contradict: shown beside the figure it claims
        head.blocks.append(Verdict("invalid", line))
    spread = [f for f in (verdict[1] if verdict else []) if f["rule_id"] == SPREAD_RULE]
    for f in spread:     # the rules' stability limit, as suite check found it: a finding beside the spread
        head.blocks.append(Text(f"finding {f['rule_id']} ({f['severity']}): {rounding.rounded(f['message'])}"))
    c = b["claimed"]
    if c and c["samples_per_second"] is not None:
        diff = o["samples_per_second"] - c["samples_per_second"]
        agree = ("they agree" if abs(diff) <= 1e-6 * max(1.0, abs(c["samples_per_second"]))
                 else f"difference {diff:+,.2f}")
        head.blocks.append(Text(f"mlperf_storage_report.json claims {c['samples_per_second']:,.2f} samples/s; "
                                f"the runs' figures ({'re-derived from their per-rank records' if o.get('source') == RECOMPUTED else 'their summary.json claims'}): {o['samples_per_second']:,.2f} "
                                f"({agree})."))
    return head


def _compliance(b: dict, sid: str, verdict) -> Section:
    comp = Section(f"{sid}-compliance", "Compliance")
    if verdict is None:
        comp.blocks.append(Text("suite check found no verdict for this benchmark"))
    else:
        v, findings = verdict
        comp.blocks.append(Text(f"suite check: {len(findings)} finding(s)"))
        if findings:
            from suite.report.findings import group, repeat_note
            comp.blocks.append(Table(["rule", "severity", "effect", "where", "message"],
                                     [[f["rule_id"], f["severity"], f["effect"], f["path"],
                                       rounding.rounded(f["message"]) + (f" ({repeat_note(f, more)})" if more else "")]
                                      for f, more in group(findings)],
                                     "Paths are relative to the checked directory; effect says what the "
                                     "result still qualifies for when the rule fails."))
    reasons = [(r["name"], reason) for r in b["runs"] for reason in (r.get("evidence") or {}).get(
        "compliance", {}).get("reasons", [])]
    if reasons:
        comp.blocks.append(Table(["run", "recorded by suite run"], [list(x) for x in reasons]))
    if b["problems"]:
        comp.blocks.append(Table(["problem"], [[p] for p in b["problems"]]))
    return comp


def _runs(b: dict, sid: str, plotted: bool = True) -> Section:
    runs = Section(f"{sid}-runs", "Runs")
    runs.blocks.append(Table(
        ["run", "status", "accelerators", "hosts", "epochs", "AU % (stdev)", "samples/s (stdev)", "MiB/s (stdev)",
         "AU ok"],
        [[r["name"], r["status"] + (" (miniature)" if r["miniature"] else ""), fmt(r["num_accelerators"]),
          fmt(r["num_hosts"]), fmt(r["epochs"]), _pm(r["au_mean_percentage"], r["au_stdev_percentage"]),
          _pm(r["samples_per_second"], r["samples_per_second_stdev"]),
          _pm(r["mib_per_second"], r["mib_per_second_stdev"]), fmt(r["au_meets_threshold"])]
         for r in b["runs"]],
        "Per run: mean and population stdev over its epochs. Full values are in runs.csv / runs.parquet."))
    if b["overall"] and not plotted:
        runs.blocks.append(Text(f"Plots are drawn for at most {MAX_PLOTTED_BENCHMARKS} benchmarks; "
                                "every number is in the tables and runs.csv."))
    elif b["overall"]:
        _plot(runs, f"{sid}-runs", plots.storage_runs, b, "per-run throughput and AU")
        if any(r["au_per_epoch"] for r in b["runs"]):
            _plot(runs, f"{sid}-epochs", plots.storage_epochs, b, "per-epoch AU and throughput")
    return runs


def _plot(section: Section, name: str, draw, b: dict, alt: str) -> None:
    """An Image, or a line saying why not: values near the float limit (1e308 samples/s) have no
    axis matplotlib can draw."""
    try:
        section.blocks.append(Image(name, draw(b), alt))
    except (OverflowError, ValueError) as exc:
        section.blocks.append(Text(f"Not plotted ({alt}): the values are beyond what a plot can show "
                                   f"({type(exc).__name__})."))


def _evidence(b: dict, sid: str) -> Section | None:
    evidence = [(r["name"], r["evidence"]) for r in b["runs"] if r.get("evidence")]
    if not evidence:
        return None
    ev = Section(f"{sid}-evidence", "Host and enforcement evidence")
    per_run = [dict(_flatten({k: e[k] for k in ("host", "enforcement", "versions") if k in e}))
               for _, e in evidence]
    keys = sorted({k for d in per_run for k in d})
    rows = [[k] + [_human(k, d.get(k, "–")) for d in per_run] for k in keys]
    minis = [name for name, e in evidence if e.get("miniature")]
    ev.blocks.append(Table(["recorded by suite run"] + [name for name, _ in evidence], rows,
                           ("Miniature runs (not valid for submission): " + ", ".join(minis) + ". ")
                           * bool(minis) + "From each run's results.json.", numbers_right=False))
    return ev


OBJECT_ROWS = (("endpoint (host:port)", ("endpoint_host",)), ("bucket", ("bucket",)), ("prefix", ("prefix",)),
               ("client library", ("library", "name")), ("library version", ("library", "version")),
               ("LIST per run (launcher + ranks)", None), ("GET", ("requests", "requests", "GET")),
               ("PUT", ("requests", "requests", "PUT")), ("HEAD", ("requests", "requests", "HEAD")),
               ("retries", ("requests", "retries_total")), ("bytes read", ("requests", "bytes_read")),
               ("GET latency p50 ms", ("requests", "latency", "GET", "p50_ms")),
               ("GET latency p90 ms", ("requests", "latency", "GET", "p90_ms")),
               ("GET latency p99 ms", ("requests", "latency", "GET", "p99_ms")),
               ("prefetch window (files in flight per rank)", ("prefetch_window_files_per_rank",)),
               ("cache clear", ("cache_clear",)))


def _dig(doc, keys):
    for key in keys:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _object_storage(b: dict, sid: str) -> Section | None:
    """Object-storage runs: where the data was (host, bucket, prefix; never a key), the client, the
    requests by kind, retries, bytes, GET latency percentiles, and what the cache clear meant."""
    runs = [(r["name"], r["evidence"]["object_storage"]) for r in b["runs"]
            if isinstance((r.get("evidence") or {}).get("object_storage"), dict)]
    if not runs:
        return None
    sec = Section(f"{sid}-object-storage", "Object storage")
    rows = []
    for label, keys in OBJECT_ROWS:
        if keys is None:
            cells = [f"{fmt(_dig(o, ('list_requests_launcher',)))} + {fmt(_dig(o, ('list_requests_ranks',)))}"
                     for _, o in runs]
        else:
            cells = [fmt(_dig(o, keys)) if _dig(o, keys) is not None else "–" for _, o in runs]
        rows.append([label, *cells])
    sec.blocks.append(Table(["recorded by suite run"] + [name for name, _ in runs], rows,
                            "From each run's results.json object_storage: the ranks' requests summed; the "
                            "launcher's one listing at prepare.", numbers_right=False))
    return sec


def _storage_bound(b: dict, sid: str) -> Section | None:
    """Parquet runs: is the AU the storage's? Per run the readers' decode share (step_decode_s over
    step_io_s + step_decode_s), bytes, requests and columns read, beside the AU the same run reaches
    from the page cache (the ceiling measured before the series: suite.training.run.storagebound)."""
    runs = [(r["name"], r["evidence"]) for r in b["runs"]
            if isinstance((r.get("evidence") or {}).get("reads"), dict)]
    if not runs:
        return None
    sec = Section(f"{sid}-storage-bound", "Storage-bound? Decode share and the page-cache ceiling")
    rows = [["decode share of the readers' time %", *[fmt(e["reads"]["decode_share_percent"]) for _, e in runs]],
            ["I/O s (threads summed)", *[fmt(e["reads"]["io_s"]) for _, e in runs]],
            ["decode s (threads summed)", *[fmt(e["reads"]["decode_s"]) for _, e in runs]],
            ["bytes read", *[fmt(e["reads"]["bytes_read"]) for _, e in runs]],
            ["requests", *[fmt(e["reads"]["requests"]) for _, e in runs]],
            ["columns read", *[str(len(e["reads"]["columns_read"])) for _, e in runs]],
            ["ceiling AU % (page cache)", *[fmt(_dig(e, ("ceiling", "au_percentage"))) if _dig(e, ("ceiling",
                                            "au_percentage")) is not None else "–" for _, e in runs]]]
    sec.blocks.append(Table(["recorded by suite run"] + [name for name, _ in runs], rows,
                            "From each run's results.json reads and ceiling. Above half the readers' time in "
                            "decoding, the AU is the CPU's, not the storage's (suite check: parquet-storage-bound); "
                            "the ceiling is the same run with its files in the page cache.", numbers_right=False))
    return sec


def _overview(benches: list, verdicts: dict) -> Section:
    overview = Section("overview", "Overview")
    rows = []
    for b in benches:
        o = b["overall"] or {}
        v = verdicts.get(_norm(b["path"]))
        rows.append([f"{b['workload'] or '?'} {b['accelerator'] or '?'}",
                     " / ".join(x for x in (b["org"], b["system"]) if x) or "–",
                     v[0] if v else "–", fmt(o.get("num_runs")), fmt(o.get("num_accelerators")),
                     fmt(o.get("samples_per_second")), fmt(o.get("mib_per_second")),
                     fmt(o.get("au_mean_percentage"))])
    overview.blocks.append(Table(["benchmark", "system", "verdict", "runs", "accelerators", "samples/s", "MiB/s",
                                  "AU %"], rows, "Means over runs; details per benchmark below."))
    return overview


def _norm(path) -> str:
    import os
    return os.path.realpath(str(path))


def _verdicts(check):
    """{benchmark path: (verdict, [finding dicts])} from a checker result.

    Reads the CheckResult duck-typed (attributes or keys), so the report only depends on
    `benchmarks[*].path/verdict/findings` and each finding's rule_id/severity/effect/path/message.
    """
    def get(obj, name, default=None):
        return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)

    def finding(f) -> dict:
        return {k: (str(get(f, k)) if get(f, k) is not None else None)
                for k in ("rule_id", "severity", "effect", "path", "field", "actual", "message")}

    out = {}
    for b in get(check, "benchmarks", []) or []:
        bench = get(b, "benchmark")
        path = get(bench, "path") if bench is not None else get(b, "path")
        verdict = str(get(b, "verdict", "unknown")) + (", fix required" if get(b, "fix_required", False) else "")
        out[_norm(path)] = (verdict, [finding(f) for f in get(b, "findings", []) or []])
    out["(tree)"] = (str(get(check, "verdict", "unknown")), [finding(f) for f in get(check, "findings", []) or []])
    return out


# --------------------------------------------------------------------------- where the figures come from

CLAIM_NAMES = (("samples_per_second", "samples/s"), ("mib_per_second", "MiB/s"), ("au_mean_percentage", "AU %"))


def provenance_lines(b: dict) -> list[str]:
    """Where a benchmark's figures come from (re-derived from the ranks' records, or the summaries' claims),
    and each run whose claims are not what its records give (issue 46, class 2)."""
    o = b["overall"] or {}
    used = [r for r in b["runs"] if r.get("source")]
    if not used:
        return []
    claimed = [r["name"] for r in used if r["source"] == CLAIMED]
    if not claimed:
        out = [f"figures: re-derived from each run's per-rank records ({used[0]['rederived_from']})"]
    elif len(claimed) == len(used):
        out = ["figures: CLAIMED: the runs' summary.json, not re-derived (no per-rank records to re-derive them from)"]
    else:
        out = [f"figures: CLAIMED for {', '.join(claimed)} (no per-rank records); re-derived for the others"
               + (" (the overall figures are claimed)" if o.get("source") == CLAIMED else "")]
    for r in used:
        if r["claims_differ"]:
            said = ", ".join(f"{label} {fmt(r['claimed'][k], 2)}" for k, label in CLAIM_NAMES if k in r["claims_differ"])
            got = ", ".join(f"{label} {fmt(r[k], 2)}" for k, label in CLAIM_NAMES if k in r["claims_differ"])
            out.append(f"{r['name']}: summary.json claims {said}; re-derived from {r['rederived_from']}: {got} "
                       f"(the claim is not what the run's records give)")
    return out


# --------------------------------------------------------------------------- suite metrics


def _pm_text(mean, std, places=2) -> str:
    return "-" if mean is None else f"{mean:.{places}f} ± {std or 0.0:.{places}f}"


def text(summary: dict) -> str:
    """Per run and overall numbers of every benchmark found, in 2-decimal figures (--format json: full values)."""
    blocks = []
    for b in summary["benchmarks"]:
        who = " / ".join(x for x in (b["org"], b["system"]) if x)
        head = "  ".join(x for x in (f"{b['workload'] or '?'} {b['accelerator'] or '?'}", who,
                                      f"{b['division'] or ''} {b['ruleset']}".strip(), f"({b['path']})") if x)
        head = headline(head, b.get("labels") or ())       # MINIATURE, OPEN, INVALID, NOT PUBLISHABLE
        rows = [[r["name"], r["status"] + (" (miniature)" if r["miniature"] else ""), str(r["num_accelerators"] or "-"), str(r["num_hosts"] or "-"),
                 _pm_text(r["au_mean_percentage"], r["au_stdev_percentage"]),
                 _pm_text(r["samples_per_second"], r["samples_per_second_stdev"]),
                 _pm_text(r["mib_per_second"], r["mib_per_second_stdev"]), r["source"] or "-"] for r in b["runs"]]
        if b.get("verdict"):
            head += f"\nsuite check: {b['verdict']}"
        lines = [head, table(rows, ["run", "status", "accel", "hosts", "AU % (stdev)", "samples/s (stdev)",
                                    "MiB/s (stdev)", "figures"]), *provenance_lines(b)]
        o = b["overall"]
        if o is None:
            lines.append("overall: no run with usable numbers")
        else:
            rl = next((r["record_length_bytes"] for r in b["runs"] if r["record_length_bytes"]), None)
            how = f'samples/s x {rl:.10g} B / 1024^2, DLIO labels it "MB/s"' if rl else 'DLIO "MB/s"'
            lines += [      # rounded by meaning (issue 47); --format json keeps the full values
                f"overall over {o['num_runs']} run(s), population stdev (2 decimals; --format json: full values):",
                f"  samples/s  {_pm_text(o['samples_per_second'], o['samples_per_second_stdev'])}",
                f"  MiB/s      {_pm_text(o['mib_per_second'], o['mib_per_second_stdev'])}  ({how})",
                f"  AU %       {_pm_text(o['au_mean_percentage'], o['au_stdev_percentage'])}",
                f"  accelerators {o['num_accelerators']}, hosts {o['num_hosts']}"
                + (f": {', '.join(o['hostnames'])}" if o["hostnames"] else ""),
            ]
            c = b["claimed"]
            if c and c["samples_per_second"] is not None:
                diff = o["samples_per_second"] - c["samples_per_second"]
                lines.append(f"  mlperf_storage_report.json claims {c['samples_per_second']:.2f} samples/s"
                             + (f", {c['mib_per_second']:.2f} MB/s" if c["mib_per_second"] is not None else "")
                             + f" over {c['num_runs']:g} runs; the runs' figures ({o.get('source') or CLAIMED}) - "
                             f"the report's = {diff:+,.2f} samples/s")
        for p in b["problems"]:
            lines.append(f"  problem: {p}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _throughput(hm, doc: dict):
    """The run's samples/s per epoch (its results.json `doc`) on this host's sampling clock, or None."""
    from suite.report import hostplots

    off = hostplots.offset_s(hm, doc.get("start", ""))
    epochs = [e for e in (doc.get("epochs") or []) if isinstance(e, dict)] if off is not None else []
    points = [(off + e[k], e["throughput_samples_per_second"]) for e in epochs for k in ("start_s", "end_s")
              if all(isinstance(e.get(x), (int, float)) for x in (k, "throughput_samples_per_second"))]
    return ("samples/s per epoch", points) if points else None


def host_sections(summary: dict) -> list:
    """Per benchmark, its runs' host metrics (host_metrics.json in the run's directory, or in its
    rank-0 host's across hosts) beside each run's samples/s per epoch (results.json's epochs, on the
    same clock); none where no run has them. Reads the runs' files (the rest of the page is pure)."""
    from pathlib import Path

    from suite import files
    from suite.errors import ResultError
    from suite.harness import hostmetrics
    from suite.report import hostplots

    out = []
    for i, b in enumerate(summary["benchmarks"]):
        runs = []
        for r in b["runs"]:
            where = [Path(r["path"])] + [Path(r["path"]) / h for h in r.get("hosts") or [] if isinstance(h, str)]
            rec = next((m for m in (hostmetrics.find(w) for w in where if (w / hostmetrics.FILE).is_file()) if m), None)
            if rec is None:
                continue
            res = next((w / "results.json" for w in where if (w / "results.json").is_file()), None)
            doc = {}
            if res is not None:
                try:
                    doc = files.load_json(res, error=ResultError)
                except ResultError:
                    doc = {}
            for hm in rec.hosts:          # across hosts: every host's series, beside the run's throughput
                runs.append((r["name"], hm, _throughput(hm, doc if isinstance(doc, dict) else {})))
        section = hostplots.section(f"b{i + 1}-host", runs, "Host metrics (client CPU, disk, network)")
        if section is not None:
            out.append(section)
    return out
