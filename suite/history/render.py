"""`suite history` for people and for programs: the list, one entry in full, series and their change
points, as text (every value through suite.report.escape.terminal: entries come from results other
parties wrote) or JSON (sorted keys)."""

from __future__ import annotations

import json
import shlex

from suite.history.entry import Entry

LIST_HEADER = ("id", "when (UTC)", "kind", "workload", "accel", "system", "status", "verdict", "value")


def _t(value) -> str:
    from suite.report.escape import terminal

    return terminal("-" if value is None else str(value))


def _value(e: Entry, figure: str | None) -> str:
    f = e.figure(figure) if figure else (e.figures[0] if e.figures else None)
    if f is None or f.point() is None:
        return "-"
    return f"{f.point():.6g} {f.label}"


def list_text(entries: list[Entry], figure: str | None) -> str:
    rows = [LIST_HEADER] + [(str(e.id), e.when()[:19], e.kind, e.workload, f"{e.accelerator or '-'} x{e.accelerators or '?'}",
                             f"{e.system_label} [{e.system_fp[:8]}]", e.status, e.verdict, _value(e, figure))
                            for e in entries]
    rows = [tuple(_t(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(LIST_HEADER) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows]
    return "\n".join(lines) + f"\n{len(entries)} entries"


def json_text(doc) -> str:
    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=False, default=str) + "\n"


def show_text(e: Entry, integrity: str) -> str:
    out = [f"entry {e.id}: {_t(e.kind)} {_t(e.workload)} on {_t(e.system_label)} [{e.system_fp}]",
           f"  integrity:    {_t(integrity)}"]
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
    entry = series.points[change.index].entry
    return {"series": series.name(), "kind": series.key[0], "workload": series.key[1], "accelerator": series.key[2],
            "system_fp": series.key[3], "figure": series.figure, "entry_id": entry.id, "when": entry.when(),
            "position": change.index + 1, "entries": len(series.points), "before": change.before,
            "after": change.after, "ratio": change.ratio, "change_percent": change.size_percent, "low": change.low,
            "high": change.high, "level": change.level, "n_before": change.n_before, "n_after": change.n_after,
            "verdict": series.verdict(change)}


def change_line(d: dict) -> str:
    interval = "no interval" if d["low"] is None else f"{d['low']:.4f}..{d['high']:.4f} at {100 * d['level']:g}%"
    return _t(f"{d['verdict'].upper()}: {d['series']}: {d['figure']} {d['change_percent']:+.2f}% at entry "
              f"#{d['entry_id']} ({d['position']} of {d['entries']}, {d['when'][:19]}): {d['before']:.6g} -> "
              f"{d['after']:.6g}, ratio {d['ratio']:.4f} ({interval}; {d['n_before']} vs {d['n_after']} entries)")


def series_text(all_series) -> str:
    out = []
    for s in all_series:
        out.append(_t(f"{s.name()}: {s.figure}, {len(s.points)} entries, {len(s.changes)} change point(s)"))
        out += ["  " + change_line(change_doc(s, ch)) for ch in s.changes]
    return "\n".join(out) if out else "no series with this figure"
