"""What `suite check`, `suite metrics` and `suite report` show for a published MLPerf Storage v3.0
tree (suite.published.check's Result): text, JSON, and a report page whose whole-tree table has one row
per benchmark with the published columns. Every value from the tree is escaped for the terminal
(suite.report.escape); the HTML/Markdown renderings escape their own.
"""

from __future__ import annotations

import json
from pathlib import Path

from suite.numbers import CLAIMED
from suite.report.content import Figures, Page, Section, Table, Text, Verdict, fmt
from suite.report import rounding
from suite.report.escape import terminal, terminal_lines
from suite.rules import findings as fnd

COLUMNS = [  # (key, published heading)
    ("division", "Division"), ("org", "Organization"), ("system", "System"), ("benchmark", "Benchmark"),
    ("model", "Model"), ("accelerator", "Accelerator"), ("accelerators", "# Accelerators"),
    ("client_hosts", "# Client Hosts"), ("processes", "# Processes"),
    ("read_gib_s", "Read B/W (GiB/s)"), ("samples_per_s", "Samples/s"), ("au_pct", "AU (%)"),
    ("write_gib_s", "Write B/W (GiB/s)"), ("write_duration_s", "Write Time (s)"),
    ("read_duration_s", "Read Time (s)"), ("checkpoint_size_gib", "Checkpoint (GiB)"),
    ("availability", "Availability"), ("usable_capacity_tib", "Usable Capacity (TiB)"),
    ("int_client_store_tib", "Integrated Client Storage (TiB)"), ("provisioned_power_w", "Provisioned Power (W)"),
    ("rack_units", "RU's"), ("verdict", "Verdict"), ("figures", "Figures"),     # figures: recomputed | claimed
]


def _rel(res, p) -> str:
    try:
        return str(Path(p).relative_to(res.root)) or "."
    except ValueError:
        return str(p)


def summary_line(res) -> str:
    c = res.counts()
    kinds: dict = {}
    for r in res.rows:
        kinds[r["benchmark"]] = kinds.get(r["benchmark"], 0) + 1
    rows = {r["path"] for r in res.rows}
    for d in res.delegated:
        if d["path"] not in rows:                  # our own runs: their row counted once
            kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    what = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"
    return (f"verdict: {fnd.label(res.verdict, res.fix_required)} "
            f"({'compliant' if res.compliant else 'not compliant'}); ruleset {res.ruleset}; results: {what}; "
            f"errors {c['error']}, warnings {c['warning']}, info {c['info']}")


def _cell(row: dict, key: str) -> str:
    v = row.get(key)
    if v is None:
        return "-"
    if isinstance(v, float):
        return fmt(v)
    return str(v)


def check_text(res) -> str:
    lines = [f"suite check {res.root}: a published MLPerf Storage {res.ruleset} tree (ruleset {res.ruleset}, from its layout)"]
    if res.scope != res.root:
        lines.append(f"scope: {_rel(res, res.scope)}")
    lines.append("")
    for row in res.rows:
        figs = (f"read {_cell(row, 'read_gib_s')} GiB/s, {_cell(row, 'samples_per_s')} samples/s, AU "
                f"{_cell(row, 'au_pct')}% over {row.get('runs')} measured runs" if row["benchmark"] == "training" else
                f"write {_cell(row, 'write_gib_s')} GiB/s, read {_cell(row, 'read_gib_s')} GiB/s, "
                f"{_cell(row, 'processes')} processes")
        lines.append(f"== {_rel(res, row['path'])}: {row['verdict'].upper()}: {figs} ({row.get('figures') or CLAIMED})")
    for d in res.delegated:
        lines.append(f"== {_rel(res, d['path'])}: {str(d['verdict']).upper() or '?'} (checked by the {d['kind']} kind)")
        lines += _handed(d.get("findings") or ())
    lines.append("")
    for sev in ("error", "warning", "info"):
        these = [f for f in res.findings if f.severity == sev]
        if these:
            lines.append(f"{ {'error': 'errors', 'warning': 'warnings'}.get(sev, sev)} ({len(these)}):")
            lines += [f"  [{sev}] {rounding.finding(f)}" for f in these]     # numbers rounded for people
            lines.append("")
    lines.append(summary_line(res))
    return "\n".join(terminal_lines(terminal(x)) for x in lines) + "\n"


SHOWN_HANDED = 20       # a handed-over check's findings listed under its line; the rest counted


def _handed(found) -> list[str]:
    """The findings of a check another kind made, under its line (its own paths, relative to its leaf)."""
    out = [f"    [{f.get('severity', '?')}] {f.get('message') or f.get('rule_id')}" for f in found[:SHOWN_HANDED]]
    if len(found) > SHOWN_HANDED:
        out.append(f"    ... {len(found) - SHOWN_HANDED} more finding(s): suite check on that folder lists them")
    return out


def as_json(res) -> dict:
    return {"schema_version": 1, "kind": "mlperf-v3-tree", "ruleset": res.ruleset, "root": str(res.root),
            "scope": _rel(res, res.scope), "verdict": res.verdict, "compliant": res.compliant,
            "fix_required": res.fix_required, "counts": res.counts(),
            "benchmarks": [{**r, "path": _rel(res, r["path"])} for r in res.rows],
            "delegated": [{**d, "path": _rel(res, d["path"])} for d in res.delegated],
            "findings": [f.to_dict() for f in res.findings]}


def check_json(res) -> str:
    return json.dumps(as_json(res), indent=2, sort_keys=True, allow_nan=False) + "\n"


def metrics_text(res) -> str:
    lines = [f"MLPerf Storage {res.ruleset} figures, {res.root} (scope {_rel(res, res.scope)}): {summary_line(res)}", ""]
    for row in res.rows:
        lines.append(f"{row['division']}/{row['org']}/{row['system']} {row['benchmark']} {row['model']} "
                     f"[{row['verdict'].upper()}]")
        if row["benchmark"] == "training":
            lines.append(f"  Read B/W {_cell(row, 'read_gib_s')} GiB/s  Samples/s {_cell(row, 'samples_per_s')}  "
                         f"AU {_cell(row, 'au_pct')}%  ({row.get('runs')} measured of {row.get('runs_found')} runs; "
                         f"{_cell(row, 'accelerators')} x {_cell(row, 'accelerator')}, {_cell(row, 'client_hosts')} hosts)")
        else:
            lines.append(f"  Write B/W {_cell(row, 'write_gib_s')} GiB/s  Read B/W {_cell(row, 'read_gib_s')} GiB/s  "
                         f"({_cell(row, 'processes')} processes, {_cell(row, 'mode')} mode, checkpoint "
                         f"{_cell(row, 'checkpoint_size_gib')} GiB)")
            if row.get("figures_claimed"):
                lines.append(f"  claimed, not re-derivable (no <r>_per_epoch_stats.json): {', '.join(row['figures_claimed'])}")
        lines.append(f"  Availability {_cell(row, 'availability')}  Usable Capacity {_cell(row, 'usable_capacity_tib')} "
                     f"TiB  Provisioned Power {_cell(row, 'provisioned_power_w')} W  RU's {_cell(row, 'rack_units')}")
    for s in getattr(res, "systems", []):
        lines.append(f"system {s['division']}/{s['org']}/{s['system']}: Availability {_cell(s, 'availability')}  "
                     f"Usable Capacity {_cell(s, 'usable_capacity_tib')} TiB  Provisioned Power "
                     f"{_cell(s, 'provisioned_power_w')} W  RU's {_cell(s, 'rack_units')}")
    return "\n".join(terminal_lines(terminal(x)) for x in lines) + "\n"


def metrics_json(res) -> str:
    doc = {"schema_version": 1, "kind": "mlperf-v3-tree", "root": str(res.root), "scope": _rel(res, res.scope),
           "verdict": res.verdict, "benchmarks": [{**r, "path": _rel(res, r["path"])} for r in res.rows],
           "systems": getattr(res, "systems", [])}
    return json.dumps(doc, indent=2, sort_keys=True, allow_nan=False) + "\n"


def page(res, others: list = ()) -> Page:
    """The report page; its files results.csv and results.json are the published results tables
    (suite.published.tables) of every result, `others` those the kinds of its kv_cache and
    vector_database folders gave."""
    header = [h for _, h in COLUMNS]
    rows = [[_cell(r, k) for k, _ in COLUMNS] for r in res.rows]
    c = res.counts()
    top = Section("verdict", "Verdict", [Verdict(res.verdict if res.compliant else "non-compliant", summary_line(res)),
                                         Figures([("results", str(len(res.rows) + len(res.delegated)), ""),
                                                  ("errors", str(c["error"]), ""), ("warnings", str(c["warning"]), ""),
                                                  ("info", str(c["info"]), "")])])
    table = Section("benchmarks", "All benchmarks (one row per result, the published columns)",
                    [Table(header, rows, "Read/Write B/W in GiB/s; Provisioned Power and RU's from the system "
                                         "descriptions; '-' where a column does not apply or is not published")])
    kinds = []
    for name, keys in (("training", ["division", "org", "system", "model", "accelerator", "accelerators",
                                     "read_gib_s", "samples_per_s", "au_pct", "verdict", "figures"]),
                       ("checkpointing", ["division", "org", "system", "model", "processes", "write_gib_s",
                                          "read_gib_s", "write_duration_s", "read_duration_s", "verdict", "figures"])):
        these = [r for r in res.rows if r["benchmark"] == name]
        if these:
            head = [dict(COLUMNS).get(k, k) for k in keys]
            kinds.append(Section(name, name.capitalize(), [Table(head, [[_cell(r, k) for k in keys] for r in these])]))
    found = Section("findings", "Findings", [Table(["severity", "rule", "path", "field", "expected", "actual"],
                                                   [[f.severity, f.rule_id, f.path, f.field, fnd.render(f.expected),
                                                     fnd.render(f.actual)] for f in res.findings])]
                    if res.findings else [Text("none")])
    export = {"benchmarks": ([k for k, _ in COLUMNS] + ["path"],
                             [{**{k: r.get(k) for k, _ in COLUMNS}, "path": _rel(res, r["path"])} for r in res.rows])}
    from suite.published import tables

    rows = tables.assemble(res, list(others))
    return Page(f"MLPerf Storage {res.ruleset} results", f"{res.root}", [top, table, *kinds, found], export,
                files={"results.csv": tables.csv_text(rows), "results.json": tables.json_text(rows)})
