"""`suite metrics`, `suite report` and `suite compare` over the parts of a PATH holding several results
(suite.kinds.dispatch): each part's kind's own callable, its output combined, none dropped.

metrics: text, a section per part (`== <kind>: <path>`), or JSON {kind: "tree", root, results: one per
part with the kind's own document, benchmarks: every benchmark with its kind and path, unclassified}.
A kind's JSON lists its benchmarks under `benchmarks` (or `phases`), each with a `path` (absolute, or
relative to the document's `root`) and, where one kind's document holds several kinds (a published
tree), `benchmark` naming the kind; a document without such a list is one benchmark.
report: one page, an overview table then each part's sections, their ids, plots and tables named
apart. A part that cannot be used (bad input) is said in one line in its place; the others still show.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import replace
from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.kinds import registry
from suite.kinds.dispatch import Part, Parts


def rel(root: Path, p) -> str:
    import os

    try:
        return str(Path(os.path.realpath(p)).relative_to(root)) or "."
    except ValueError:
        return str(p)


def _captured(part: Part, form: str) -> tuple[int, str, str]:
    """(exit code, what the kind printed, '' or why the part is unusable)."""
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            code = part.kind.metrics(part.path, form)
    except SuiteError as exc:
        return ExitCode.FAILED, buf.getvalue(), str(exc)
    return code, buf.getvalue(), ""


def metrics(found: Parts, form: str) -> int:
    """Each part's metrics by its kind, combined; the exit code the worst of theirs."""
    results, benchmarks, codes = [], [], []
    for i, part in enumerate(found.parts):
        code, out, error = _captured(part, form)
        codes.append(code)
        entry = {"kind": part.kind.name, "path": rel(found.root, part.path), "code": int(code)}
        if error:
            entry["error"] = error
        if form == "json":
            doc = _json(out) if not error else None
            entry["metrics"] = doc
            benchmarks += [{**b, "result": i} for b in _benchmarks(found.root, part, doc)]
        else:
            entry["text"] = out
        results.append(entry)
    unclassified = [{"path": rel(found.root, f), "why": why} for f, why in found.unclassified]
    if form == "json":
        doc = {"schema_version": 1, "kind": "tree", "root": str(found.root), "results": results,
               "benchmarks": benchmarks, "unclassified": unclassified}
        print(json.dumps(doc, indent=2, sort_keys=True, allow_nan=False))
    else:
        print(_text(found, results, unclassified), end="")
    return max(codes, default=ExitCode.OK)


def _text(found: Parts, results: list, unclassified: list) -> str:
    """Our own lines escaped for the terminal; each kind's text as its kind escaped it."""
    from suite.report.escape import terminal

    what = ", ".join(f"{k} {n}" for k, n in found.counts().items())
    lines = [terminal(f"suite metrics {found.root}: {len(found.parts)} result(s): {what}"), ""]
    for r in results:
        lines.append(terminal(f"== {r['kind']}: {r['path']}"))
        lines += [r["text"].rstrip("\n")] if r["text"].strip() else []
        lines += [terminal(f"unusable: {r['error']}")] if "error" in r else []
        lines.append("")
    if unclassified:
        lines.append("== unclassified (no benchmark kind takes these):")
        lines += [terminal(f"  {u['path']}: {u['why']}") for u in unclassified]
    return "\n".join(lines) + "\n"


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def _benchmarks(root: Path, part: Part, doc) -> list[dict]:
    """Every benchmark a kind's document names, with its kind and its path under `root`."""
    listed = None
    if isinstance(doc, dict):
        listed = next((doc[k] for k in ("benchmarks", "phases") if isinstance(doc.get(k), list)), None)
    if not listed:
        return [{"kind": part.kind.name, "path": rel(root, part.path)}]
    base = Path(doc.get("root") or part.path)
    known = {k.name for k in registry.KINDS}
    out = []
    for b in listed:
        b = b if isinstance(b, dict) else {}
        kind = b.get("benchmark") if b.get("benchmark") in known else part.kind.name
        p = b.get("path")
        where = part.path if not isinstance(p, str) else (Path(p) if Path(p).is_absolute() else base / p)
        out.append({"kind": kind, "path": rel(root, where)})
    return out


def page(found: Parts, args, args_for=lambda kind, args: args):
    """One page: an overview (a row per part), then each part's page as its sections; a part that
    cannot be used is a section saying why; the files a part's page exports as they are (a published
    tree's results tables) are kept. `args_for(kind, args)`: what each kind's report_page is given.
    Returns (page, number of unusable parts)."""
    from suite.report.content import Page, Section, Table, Text

    rows, sections, tables, exported, bad, subs = [], [], {}, {}, 0, []
    for i, part in enumerate(found.parts, 1):
        where = rel(found.root, part.path)
        sid = f"r{i}-{_slug(part.kind.name)}"
        try:
            sub = part.kind.report_page(part.path, args_for(part.kind, args))
        except SuiteError as exc:
            bad += 1
            rows.append([str(i), part.kind.name, where, f"unusable: {exc}"])
            sections.append(Section(sid, f"{part.kind.name}: {where}", [Text(f"unusable: {exc}")]))
            continue
        subs.append(sub)
        rows.append([str(i), part.kind.name, where, sub.title])
        sections.append(Section(sid, f"{part.kind.name}: {where}", [Text(f"{sub.title} ({sub.subtitle})")]))
        sections += [_renamed(s, sid, f"{part.kind.name} #{i}") for s in sub.sections]
        tables.update({f"{sid}-{name}": t for name, t in sub.tables.items()})
        exported.update(sub.files)
    top = Section("results", "Every result under this path, by its kind",
                  [Table(["#", "kind", "path", "what"], rows, numbers_right=False)])
    if found.unclassified:
        top.blocks.append(Table(["unclassified", "why"], [[rel(found.root, f), why] for f, why in found.unclassified],
                                "no benchmark kind takes these", numbers_right=False))
    what = ", ".join(f"{k} {n}" for k, n in found.counts().items())
    from suite.rules.verdict import headline

    labels = tuple(dict.fromkeys(x for sub in subs for x in sub.labels))   # any part's: said on the whole page
    return Page(headline(f"Results under {found.root.name or found.root}", labels), f"{found.root}: {what}",
                [top, *sections], tables, files=exported, labels=labels), bad


def _renamed(section, sid: str, where: str):
    from suite.report.content import Image

    blocks = [replace(b, name=f"{sid}-{b.name}") if isinstance(b, Image) else b for b in section.blocks]
    return replace(section, id=f"{sid}-{section.id}", title=f"{section.title} ({where})", blocks=blocks)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name)
