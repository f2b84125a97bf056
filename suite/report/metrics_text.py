"""Terminal text for `suite metrics`. Pure functions: results in, str out."""

from suite.report.text import table


def money(value: float, currency: str | None) -> str:
    return f"{value:,.2f} {currency or ''}".rstrip()


def tpcxai(fdr, result, assessment=None) -> str:
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


def _pm(mean, std, places=2) -> str:
    return "-" if mean is None else f"{mean:.{places}f} ± {std or 0.0:.{places}f}"


def storage(summary: dict) -> str:
    """Per run and overall numbers of every benchmark found, 2-decimal figures with full values beside."""
    blocks = []
    for b in summary["benchmarks"]:
        who = " / ".join(x for x in (b["org"], b["system"]) if x)
        head = "  ".join(x for x in (f"{b['workload'] or '?'} {b['accelerator'] or '?'}", who,
                                      f"{b['division'] or ''} {b['ruleset']}".strip(), f"({b['path']})") if x)
        rows = [[r["name"], r["status"] + (" (miniature)" if r["miniature"] else ""), str(r["num_accelerators"] or "-"), str(r["num_hosts"] or "-"),
                 _pm(r["au_mean_percentage"], r["au_stdev_percentage"]),
                 _pm(r["samples_per_second"], r["samples_per_second_stdev"]),
                 _pm(r["mib_per_second"], r["mib_per_second_stdev"])] for r in b["runs"]]
        if b.get("verdict"):
            head += f"\nsuite check: {b['verdict']}"
        lines = [head, table(rows, ["run", "status", "accel", "hosts", "AU % (stdev)", "samples/s (stdev)",
                                    "MiB/s (stdev)"])]
        o = b["overall"]
        if o is None:
            lines.append("overall: no run with usable numbers")
        else:
            rl = next((r["record_length_bytes"] for r in b["runs"] if r["record_length_bytes"]), None)
            how = f'samples/s x {rl:.10g} B / 1024^2, DLIO labels it "MB/s"' if rl else 'DLIO "MB/s"'
            lines += [
                f"overall over {o['num_runs']} run(s), population stdev (2 decimals; full values):",
                f"  samples/s  {_pm(o['samples_per_second'], o['samples_per_second_stdev'])}"
                f"  ({o['samples_per_second']!r} ± {o['samples_per_second_stdev']!r})",
                f"  MiB/s      {_pm(o['mib_per_second'], o['mib_per_second_stdev'])}"
                f"  ({o['mib_per_second']!r} ± {o['mib_per_second_stdev']!r}; {how})",
                f"  AU %       {_pm(o['au_mean_percentage'], o['au_stdev_percentage'])}"
                f"  ({o['au_mean_percentage']!r} ± {o['au_stdev_percentage']!r})",
                f"  accelerators {o['num_accelerators']}, hosts {o['num_hosts']}"
                + (f": {', '.join(o['hostnames'])}" if o["hostnames"] else ""),
            ]
            c = b["claimed"]
            if c and c["samples_per_second"] is not None:
                diff = o["samples_per_second"] - c["samples_per_second"]
                lines.append(f"  mlperf_storage_report.json claims {c['samples_per_second']:.2f} samples/s"
                             + (f", {c['mib_per_second']:.2f} MB/s" if c["mib_per_second"] is not None else "")
                             + f" over {c['num_runs']:g} runs; recomputed - claimed = {diff:+.4f} samples/s")
        for p in b["problems"]:
            lines.append(f"  problem: {p}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
