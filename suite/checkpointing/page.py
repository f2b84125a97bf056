"""Checkpointing (llama3-*) for humans: `suite datasize` and `suite metrics` text."""

from __future__ import annotations

from suite.numbers import CLAIMED, RECOMPUTED, source_label
from suite.report.escape import terminal
from suite.terminal import fit


def datasize(d: dict) -> str:
    """The text of `suite datasize --workload llama3-*` (d: suite.checkpointing.command.sizing)."""
    p = d["parallelism"]
    published = f"published {d['published_checkpoint_size']}"
    if d.get("published_corrected_gib"):
        published = (f"Table 2 prints {d['published_checkpoint_size']}, an erratum: the reference's own total is "
                     f"{d['published_corrected_gib']:,} GiB, see the workload's published.erratum")
    lines = [
        f"{d['workload']}: {d['parameters'] / 1e9:.2f} B parameters, TP {p['tensor']} x PP {p['pipeline']} x DP "
        f"{p['data']}, ZeRO {p['zero_stage']}, {d['processes']} processes ({d['mode']} mode; closed: "
        f"{d['closed_processes']})",
        f"one checkpoint: {d['checkpoint_bytes']:,} bytes ({d['checkpoint_gib']:.2f} GiB; "
        f"{published}) in {d['files_per_checkpoint']} files; per rank "
        f"{d['rank_bytes_min']:,}..{d['rank_bytes_max']:,} bytes",
        f"checkpoint folder: {d['folder_bytes']:,} bytes for the {d['checkpoints']} checkpoints a write phase leaves",
    ]
    if d.get("checkpoint_per_host_over_memory") is not None:
        lines.append(f"per host: {d['bytes_per_host']:,} bytes of each checkpoint = "
                     f"{d['checkpoint_per_host_over_memory']:.2f} x host memory (the read is measured after a cache "
                     f"drop either way)")
    run = f"suite run --workload {d['workload']} --accelerators {d['processes']} --mode {d['mode']}"
    if d.get("write_read"):        # v3.0: one invocation writes, then reads (rules/<round>/ruleset.yaml)
        lines.append(f"next ({d['ruleset']}: writes, then reads, in one invocation): {run} --ruleset {d['ruleset']} "
                     "--data-dir CHECKPOINT_DIR")
    else:
        lines.append(f"next ({d.get('ruleset') or 'this round'}: two invocations): {run}"
                     + (f" --ruleset {d['ruleset']}" if d.get("ruleset") else "") + " --checkpoints-read 0 "
                     "--data-dir CHECKPOINT_DIR --results-dir W, then the same with --checkpoints-write 0 "
                     "--results-dir R")
    return fit("\n".join(terminal(line) for line in lines))


# --------------------------------------------------------------------------- suite metrics / report

def summarise(path) -> dict:
    """Per phase directory below `path`: the runs' figures, each rank's bandwidth over the runs, the
    means over the runs ({"phases": [...]}; one phase: that phase's document)."""
    from suite.checkpointing.check import Phase, phase_dirs

    phases = [_phase(Phase(d)) for d in phase_dirs(path)]
    return phases[0] if len(phases) == 1 else {"phases": phases}


def _phase(ph) -> dict:
    """The figures shown are re-derived from the ranks' records (suite.checkpointing.figures), never taken
    from results.json or checkpoint_run_set.json; where those claim otherwise, `claims_differ` says so."""
    from suite.checkpointing import figures as ckpt_figures
    from suite.checkpointing import results

    rs = ph.run_set
    which = rs["phase"]
    runs, by_rank, derived = [], {}, []
    for p, doc in ph.runs:
        d = ckpt_figures.run(p.parent, doc) if doc["status"] == "complete" else None
        derived.append({**doc, "metric": d.metric if d else doc["metric"]})
        m = derived[-1]["metric"].get(which)
        source = RECOMPUTED if d is not None and d.source == "ranks" else CLAIMED   # else results.json's own list
        c = [x for x in d.checkpoints if x.get("phase", which) == which] if d is not None else doc["checkpoints"]
        runs.append({"run": p.parent.name, "status": doc["status"], "source": source,
                     "duration_mean_s": m and m["duration_mean_s"], "throughput_mean_gib_s": m and m["throughput_mean_gib_s"],
                     "rank_min_gib_s": min((x["rank_min_gib_s"] for x in c), default=None),
                     "rank_max_gib_s": max((x["rank_max_gib_s"] for x in c), default=None),
                     "resident_bytes_before_read": doc["enforcement"].get("resident_bytes_before_read"),
                     "cache_drop": bool((doc["enforcement"].get("cache_drop") or {}).get("succeeded")),
                     "handoff": _handoff(doc)})
        for r in doc["ranks"]:
            v = r.get(f"{which}_gib_s")
            if v is not None:
                by_rank.setdefault((r["rank"], r["hostname"]), []).append(v)
    ranks = [{"rank": k[0], "hostname": k[1], "gib_s_mean": sum(v) / len(v), "gib_s_min": min(v), "gib_s_max": max(v),
              "source": CLAIMED} for k, v in sorted(by_rank.items())]     # results.json's per-rank figures (check ties them)
    return {"path": str(ph.path), "workload": rs["workload"], "phase": which, "mode": rs["mode"],
            "division": rs["division"], "miniature": rs["miniature"], "processes": rs["processes"],
            "checkpoint_bytes": ph.runs[0][1]["checkpoint_bytes"] if ph.runs else None,
            "runs": runs, "ranks": ranks, "overall": (overall := results.overall(derived)),
            "source": RECOMPUTED if runs and all(r["source"] == RECOMPUTED for r in runs) else CLAIMED,
            "claims_differ": sorted(k for k in set(overall) | set(rs["overall"])
                                    if not ckpt_figures.close(rs["overall"].get(k), overall.get(k)))}


def _handoff(doc: dict) -> dict | None:
    """A v3.0 read's handoff as shown: the gap, the 3x rule, what the clear removed (None before v3.0)."""
    h = doc.get("handoff")
    if not isinstance(h, dict):
        return None
    c = h.get("cache_clear") or {}
    return {"gap_s": h.get("gap_s"), "window_s": h.get("window_s"), "within_window": h.get("within_window"),
            "clear_required": h.get("clear_required"), "ratio": h.get("ratio"),
            "cleared": bool(c.get("performed") and c.get("succeeded")),
            "resident_bytes_before": c.get("resident_bytes_before"), "resident_bytes_after": c.get("resident_bytes_after")}


def _f(v, places=3) -> str:
    return "-" if v is None else f"{v:.{places}f}"


def metrics(summary: dict) -> str:
    """`suite metrics` text: per phase, each run's duration and bandwidth, each rank's, the mean."""
    lines = []
    for p in summary.get("phases", [summary]):
        ph, o = p["phase"], p["overall"]
        lines += [f"{p['path']}: {p['workload']} checkpoint {ph}, {p['processes']} processes, {p['mode']} mode, "
                  f"{p['division']}" + (", MINIATURE (not valid for submission)" if p["miniature"] else ""),
                  f"  {ph}: {_f(o.get(f'{ph}_duration_mean_s'))} s per checkpoint (max over ranks), "
                  f"{_f(o.get(f'{ph}_throughput_mean_gib_s'))} GiB/s (min over ranks), mean over {len(p['runs'])} runs",
                  "  run     status    s/ckpt    GiB/s  rank min..max GiB/s"]
        if p.get("claims_differ"):
            lines.insert(-1, f"  NOTE: checkpoint_run_set.json overall claims other figures ({', '.join(p['claims_differ'])}); "
                             f"shown: re-derived from the ranks' records (suite check: INVALID)")
        for r in p["runs"]:
            lines.append(f"  {r['run']:<7} {r['status']:<9} {_f(r['duration_mean_s']):>7} {_f(r['throughput_mean_gib_s']):>8}"
                         f"  {_f(r['rank_min_gib_s'])}..{_f(r['rank_max_gib_s'])}  {r['source']}")
            h = r.get("handoff")
            if h:
                lines.append(f"          handoff: read started {_f(h['gap_s'])} s after the write ended (window "
                             f"{_f(h['window_s'], 0)} s{'' if h['within_window'] else ': BROKEN'}); cache clear "
                             f"{'required' if h['clear_required'] else 'not required'} (3x rule ratio {_f(h['ratio'], 4)}), "
                             f"{'done' if h['cleared'] else 'NOT done'}: {h['resident_bytes_before']} -> "
                             f"{h['resident_bytes_after']} bytes of the checkpoint files cached")
        lines.append("  per rank (its bytes / its time, mean over runs, min..max; claimed: results.json's, which "
                     "suite check ties to the ranks' records):")
        for r in p["ranks"]:
            lines.append(f"    rank {r['rank']:<4} {r['hostname']:<12} {_f(r['gib_s_mean'])} GiB/s "
                         f"({_f(r['gib_s_min'])}..{_f(r['gib_s_max'])})")
    return fit("\n".join(terminal(line) for line in lines))       # every line within 100 columns


def build_page(summary: dict, check):
    """The `suite report` page of checkpointing results: headline, runs, ranks, compliance."""
    from suite.report.content import Figures, Page, Section, Table, Text

    sections, run_rows, rank_rows = [], [], []
    for i, p in enumerate(summary.get("phases", [summary])):
        ph, o = p["phase"], p["overall"]
        s = Section(f"phase{i}", f"{p['workload']} checkpoint {ph} ({p['processes']} processes, {p['mode']})")
        src = p.get("source") or CLAIMED
        s.blocks.append(Figures([(source_label(f"{ph} GiB/s", src), _f(o.get(f"{ph}_throughput_mean_gib_s")), "mean over runs"),
                                 (source_label("s per checkpoint", src), _f(o.get(f"{ph}_duration_mean_s")), "max over ranks")]))
        s.blocks.append(Text("Figures re-derived from the ranks' records (ranks/rank-<r>.json)." if src == RECOMPUTED else
                             "Figures CLAIMED for " + ", ".join(r["run"] for r in p["runs"] if r["source"] != RECOMPUTED)
                             + ": the ranks' records are not usable; results.json's own checkpoint list is shown."))
        if p["miniature"]:
            s.blocks.append(Text("MINIATURE: a scaled-down model; not valid for submission."))
        if p.get("claims_differ"):
            s.blocks.append(Text(f"checkpoint_run_set.json claims other figures ({', '.join(p['claims_differ'])}); "
                                 f"shown: re-derived from the ranks' records. suite check: {check.verdict.upper()}."))
        s.blocks.append(Table(["run", "status", "s/checkpoint", "GiB/s", "rank min GiB/s", "rank max GiB/s", "figures"],
                              [[r["run"], r["status"], _f(r["duration_mean_s"]), _f(r["throughput_mean_gib_s"]),
                                _f(r["rank_min_gib_s"]), _f(r["rank_max_gib_s"]), r["source"]] for r in p["runs"]]))
        s.blocks.append(Table(["rank", "host", "GiB/s mean", "min", "max", "figures"],
                              [[r["rank"], r["hostname"], _f(r["gib_s_mean"]), _f(r["gib_s_min"]), _f(r["gib_s_max"]),
                                r["source"]] for r in p["ranks"]],
                              "each rank's own bytes over its own time, as results.json states them (claimed; suite "
                              "check ties them to the ranks' records)"))
        sections.append(s)
        run_rows += [{"phase": ph, "path": p["path"], **r} for r in p["runs"]]
        rank_rows += [{"phase": ph, "path": p["path"], **r} for r in p["ranks"]]
    comp = Section("compliance", f"Compliance: {check.verdict.upper()}")
    from suite.report import rounding

    comp.blocks.append(Table(["rule", "effect", "message"], [[f.rule_id, f.effect, rounding.finding(f)]
                                                             for f in check.all_findings()] or [["-", "-", "no findings"]]))
    sections.append(comp)
    from suite.report.content import Verdict
    from suite.rules.verdict import headline

    voice = check.voice()
    rounds = sorted({b.benchmark.ruleset for b in check.benchmarks if b.benchmark.ruleset})
    title = f"Checkpointing (MLPerf Storage {', '.join(rounds) or 'round unknown'})"     # the result's round
    page = Page(title=headline(title, voice.labels()), subtitle=str(check.root), sections=sections, labels=voice.labels())
    sections[0].blocks.insert(0, Verdict(voice.verdict, voice.line()))       # the first section says it too
    page.tables["checkpoint_runs"] = (list(run_rows[0]) if run_rows else ["phase"], run_rows)
    page.tables["checkpoint_ranks"] = (list(rank_rows[0]) if rank_rows else ["phase"], rank_rows)
    return page


def host_section(path):
    """The runs' host metrics (every host_metrics.json under the result: suite run samples each run)
    as suite.report.hostplots' section; None where there are none."""
    from pathlib import Path

    from suite.harness import hostmetrics
    from suite.report import hostplots

    return hostplots.section("host", [(name, hm, None) for name, hm in hostmetrics.below(Path(path))],
                             "Host metrics (client CPU, disk, network)")
