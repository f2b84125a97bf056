"""A comparison as one document (`build`), shown as text, JSON or Markdown (and, by suite.compare.page,
as HTML). Two results: every figure's B/A, interval and verdict, the first-epoch effect, the
systems side by side. More: each one against the first, and a table sorted by the chosen figure."""

from __future__ import annotations

import math

from suite import stats
from suite.compare import analysis, comparable
from suite.benchmark import Measured

METHOD = ("ratio of geometric means B/A; Welch t interval on the logarithms; per-run values with >= "
          f"{analysis.MIN_RUNS} runs a side, else per-epoch")


def build(results: list[Measured], level: float, figure: str | None, differences: list[str]) -> dict:
    names = analysis.figure_names(results)
    chosen = figure if figure is not None else ("samples_per_second" if "samples_per_second" in names else names[0])
    base = results[0]
    pairs = []
    for i, r in enumerate(results[1:], start=2):
        pairs.append({"against": "A", "result": comparable.letter(i),
                      "figures": [c.to_dict() for c in analysis.compare(base, r, level)]})
    ranking = []
    for i, r in enumerate(results, start=1):
        f = next(s for s in r.figures if s.name == chosen)
        c = pairs[i - 2]["figures"] if i > 1 else None
        mine = next((x for x in c if x["figure"] == chosen), None) if c else None
        ranking.append({"result": comparable.letter(i), "label": r.label, "when": r.when,
                        "mean": stats.mean(f.per_run), "runs": len(f.per_run),
                        "ratio": mine["ratio"] if mine else 1.0, "low": mine["low"] if mine else None,
                        "high": mine["high"] if mine else None, "verdict": mine["verdict"] if mine else "baseline"})
    higher = next(s for s in base.figures if s.name == chosen).higher_is_better
    ranking.sort(key=lambda row: row["mean"], reverse=higher)
    return {
        "schema_version": 1, "level": level, "method": METHOD, "figure": chosen,
        "results": [{"result": comparable.letter(i), "label": r.label, "path": comparable.shown(r), "kind": r.kind,
                     "identity": r.identity, "when": r.when, "notes": list(r.notes)}
                    for i, r in enumerate(results, start=1)],
        "differences": differences, "comparisons": pairs, "ranking": ranking,
        "systems": [{"key": k, "values": v, "differs": d} for k, v, d in comparable.side_by_side(results)],
    }


def num(x, places=2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return f"{x:,.{places}f}"


def interval(c: dict) -> str:
    return "-" if c["low"] is None else f"[{c['low']:.3f}, {c['high']:.3f}]"


def figure_rows(pair: dict) -> list[list[str]]:
    return [[c["label"], num(c["a_mean"]), num(c["b_mean"]), f"{c['ratio']:.3f}", interval(c), c["verdict"], c["basis"]]
            for c in pair["figures"]]


FIGURE_HEADER = ["figure", "A", "B", "B/A", "interval", "verdict", "values"]


def first_epoch_rows(doc: dict) -> list[list[str]]:
    """Per result and figure: mean first-epoch / later-epochs ratio (1.0: no first-epoch effect)."""
    rows = []
    for pair in doc["comparisons"]:
        for c in pair["figures"]:
            if c["a_first_to_later"] is None and c["b_first_to_later"] is None:
                continue
            rows.append([c["label"], pair["result"], num(c["a_first_to_later"], 3), num(c["b_first_to_later"], 3)])
    return rows


FIRST_HEADER = ["figure", "vs", "A first/later", "other first/later"]


def ranking_rows(doc: dict) -> list[list[str]]:
    return [[r["result"], r["label"], num(r["mean"]), str(r["runs"]), f"{r['ratio']:.3f}",
             "-" if r["low"] is None else f"[{r['low']:.3f}, {r['high']:.3f}]", r["verdict"]] for r in doc["ranking"]]


RANKING_HEADER = ["", "result", "mean", "runs", "vs A", "interval", "verdict"]


def _table(header, rows) -> str:
    from suite.report.text import table

    return table(rows, header)


def text(doc: dict) -> str:
    from suite.report.escape import terminal_lines

    lvl = f"{100 * doc['level']:g}%"
    out = [f"{r['result']} = {r['label']} ({r['path']})" for r in doc["results"]]
    if doc["differences"]:
        out += ["", "NOT LIKE FOR LIKE (--allow-different):"] + [f"  {d}" for d in doc["differences"]]
    out += ["", f"At {lvl}: {doc['method']}."]
    for pair in doc["comparisons"]:
        out += ["", f"{pair['result']} against A:", _table(FIGURE_HEADER, figure_rows(pair))]
    fe = first_epoch_rows(doc)
    if fe:
        out += ["", "First epoch / later epochs (mean over runs; not part of the verdicts):", _table(FIRST_HEADER, fe)]
    if len(doc["results"]) > 2:
        out += ["", f"Sorted by {doc['figure']}:", _table(RANKING_HEADER, ranking_rows(doc))]
    out += ["", "Systems (differences first, marked *):", _table(["", "key", *[r["result"] for r in doc["results"]]],
                                                                  system_rows(doc))]
    notes = [f"{r['result']}: {n}" for r in doc["results"] for n in r["notes"]]
    if notes:
        out += ["", "Left out, claimed, or claims the records contradict:"] + [f"  {n}" for n in notes]
    return terminal_lines("\n".join(out))


def system_rows(doc: dict, limit: int = 60) -> list[list[str]]:
    rows = [["*" if s["differs"] else "", s["key"], *[_short(v) for v in s["values"]]] for s in doc["systems"]]
    if len(rows) > limit:
        rows = rows[:limit] + [["", f"... {len(rows) - limit} more (--format json lists them all)",
                                *["" for _ in doc["results"]]]]
    return rows


def _short(v, width: int = 36) -> str:       # key + two results side by side in 100 columns
    s = "-" if v is None else str(v)
    return s if len(s) <= width else s[: width - 3] + "..."


def markdown(doc: dict) -> str:
    from suite.report.escape import markdown as esc

    def table(header, rows):
        lines = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "---|" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows])

    out = ["# suite compare", ""] + [f"- **{r['result']}** {esc(r['label'])} (`{esc(r['path'])}`)" for r in doc["results"]]
    if doc["differences"]:
        out += ["", "**Not like for like** (--allow-different):", ""] + [f"- {esc(d)}" for d in doc["differences"]]
    out += ["", f"At {100 * doc['level']:g}%: {esc(doc['method'])}."]
    for pair in doc["comparisons"]:
        out += ["", f"## {pair['result']} against A", "", table(FIGURE_HEADER, figure_rows(pair))]
    fe = first_epoch_rows(doc)
    if fe:
        out += ["", "## First epoch / later epochs", "", table(FIRST_HEADER, fe)]
    if len(doc["results"]) > 2:
        out += ["", f"## Sorted by {esc(doc['figure'])}", "", table(RANKING_HEADER, ranking_rows(doc))]
    out += ["", "## Systems (differences first, marked *)", "",
            table(["", "key", *[r["result"] for r in doc["results"]]], system_rows(doc))]
    return "\n".join(out) + "\n"


def json_text(doc: dict) -> str:
    from suite import files

    return files.dump_json(doc, indent=2)
