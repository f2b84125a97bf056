"""`suite history` for people and for programs: the list, one entry in full, series and their change
points, as text (every value through suite.report.escape.terminal: entries come from results other
parties wrote) or JSON (sorted keys)."""

from __future__ import annotations

import json
import shlex

from suite.history import series
from suite.history.entry import Entry

LIST_HEADER = ("id", "when (UTC)", "workload", "runs on", "verdict", "value", "system")
WORKLOAD_SHOWN = 18        # the widest workload cell ("..." past it); the system gets what is left of a line


def _t(value) -> str:
    from suite.report.escape import terminal

    return terminal("-" if value is None else str(value))


def _value(e: Entry, figure: str | None) -> str:
    """--figure's value, else the entry's headline: its kind's first figure."""
    f = e.figure(figure) if figure else (e.figures[0] if e.figures else None)
    if f is None or f.point() is None:
        return "-"
    return f"{number(f.point())} {f.label}"


def number(x: float) -> str:
    """4 significant digits, a whole number from 1000 on (30896 tokens/s, 92.63 AU %, 0.808 GiB/s)."""
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def runs_on(e: Entry) -> str:
    """What the entry ran on, as its kind counts it (suite.kinds.registry: Kind.runs_on): accelerators
    with their type ("h100 x8"), processes ("8 processes"); "-" for a kind that counts none."""
    from suite.errors import SuiteError
    from suite.kinds import registry

    try:
        what = registry.get(e.kind).runs_on
    except SuiteError:
        return "-"                              # a kind this suite does not have (another's store)
    if what is None:
        return "-"
    n = e.accelerators if what == "accelerators" else e.identity.get(what, e.system.get(what))
    return f"{e.accelerator} x{n if n is not None else '?'}" if e.accelerator else f"{n if n is not None else '?'} {what}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def list_text(entries: list[Entry], figure: str | None) -> str:
    """A table, one entry a line of at most suite.terminal.WIDTH columns: the system, last, gets what
    the other columns leave (at least its fingerprint). A workload is one kind's (its file says which),
    so the kind is shown only where the workload is unknown: `(vector_database)`."""
    from suite.terminal import WIDTH

    rows = [LIST_HEADER[:-1]] + [(str(e.id), e.when()[:16].replace("T", " "),
                                  _cut(_t(e.workload or f"({e.kind})"), WORKLOAD_SHOWN), runs_on(e), e.verdict,
                                  _value(e, figure)) for e in entries]
    rows = [tuple(_t(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(LIST_HEADER) - 1)]
    room = max(WIDTH - sum(w + 2 for w in widths), 10)
    systems = [LIST_HEADER[-1]] + [_system(e, room) for e in entries]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + sys for r, sys in zip(rows, systems)]
    return "\n".join(line.rstrip() for line in lines) + f"\n{len(entries)} entries"


def _system(e: Entry, room: int) -> str:
    """`label [fingerprint]` in `room` columns: the label shortened first, the fingerprint kept."""
    fp = f"[{e.system_fp[:8]}]"
    label = _t(e.system_label)
    if len(label) + 1 + len(fp) <= room:
        return f"{label} {fp}"
    return fp if room - len(fp) - 1 < 6 else f"{_cut(label, room - len(fp) - 1)} {fp}"


def json_text(doc) -> str:
    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=False, default=str) + "\n"


def show_text(e: Entry, integrity: str) -> str:
    out = [f"entry {e.id}: {_t(e.kind)} {_t(e.workload)} on {_t(e.system_label)} [{e.system_fp}]",
           f"  integrity:    {_t(integrity)}", f"  series:       {_t(series.described(e))}"]
    for name in ("status", "verdict", "exit_code", "source", "recorded_at", "started_at", "duration_s", "accelerator",
                 "accelerators", "ruleset", "division", "results_path", "content_hash", "cwd"):
        out.append(f"  {name + ':':13s} {_t(getattr(e, name))}")
    out.append(f"  {'command:':13s} {_t(shlex.join(e.command) or '-')}")
    for k, v in sorted(e.identity.items()):
        out.append(f"  identity.{_t(k)}: {_t(v)}")
    for f in e.figures:
        runs = ", ".join(f"{x:.6g}" for x in f.per_run) or "-"
        point = "-" if f.point() is None else f"{f.point():.6g}"
        out.append(f"  figure {_t(f.name)} ({_t(f.label)}): {point} (runs: {runs})")
    out.append("  system:")
    out += [f"    {_t(k)} = {_t(v)}" for k, v in sorted(e.system.items())]
    return "\n".join(out)


def change_doc(series, change) -> dict:
    entry, first = series.points[change.index].entry, series.first
    return {"series": series.name(), "series_key": series.key, "kind": first.kind, "workload": first.workload,
            "accelerator": first.accelerator, "identity": first.identity, "system_fp": first.system_fp,
            "figure": series.figure, "entry_id": entry.id, "when": entry.when(),
            "position": change.index + 1, "entries": len(series.points), "before": change.before,
            "after": change.after, "ratio": change.ratio, "change_percent": change.size_percent, "low": change.low,
            "high": change.high, "level": change.level, "n_before": change.n_before, "n_after": change.n_after,
            "verdict": series.verdict(change)}


def change_line(d: dict, indent: str = "") -> str:
    """A change point in lines of at most suite.terminal.WIDTH columns: what and where, its series,
    its size and interval."""
    from suite.terminal import wrap

    interval = "no interval" if d["low"] is None else f"{d['low']:.4f}..{d['high']:.4f} at {100 * d['level']:g}%"
    lines = [f"{indent}{d['verdict'].upper()}: {d['figure']} {d['change_percent']:+.2f}% at entry #{d['entry_id']} "
             f"({d['position']} of {d['entries']}, {d['when'][:19]})",
             f"{indent}  series: {d['series']}",
             f"{indent}  {d['before']:.6g} -> {d['after']:.6g}, ratio {d['ratio']:.4f} ({interval}; "
             f"{d['n_before']} vs {d['n_after']} entries)"]
    return "\n".join(out for line in lines for out in wrap(_t(line)))


def series_text(all_series) -> str:
    from suite.terminal import wrap

    out = []
    for s in all_series:
        out += wrap(_t(f"{s.name()}: {s.figure}, {len(s.points)} entries, {len(s.changes)} change point(s)"))
        out += [change_line(change_doc(s, ch), "  ") for ch in s.changes]
    return "\n".join(out) if out else "no series with this figure"
