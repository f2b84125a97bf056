"""`suite check` over whatever PATH holds (issue 24, class 4): every result below it is found
(suite.kinds.registry.results_under asks each kind about each directory it meets), checked by its
kind and counted; the verdict is the worst of all; what no kind could take is listed and keeps the
check from compliance.

A PATH that is one result, or holds one kind's results only (a training submission tree, a
checkpointing write+read pair), is checked by that kind as before. A mixed tree is checked part by
part: the kinds whose check takes a tree (training, checkpointing) once over PATH, training with the
other kinds' directories left out; the others (TPCx-AI) once per result directory.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace
from pathlib import Path

from suite.errors import ExitCode
from suite.kinds import dispatch, registry
from suite.benchmark import Checked, Kind
from suite.rules import findings

_RANK = {"": 2, "valid": 0, "closed": 0, "open": 1, "invalid": 2}   # a kind that names no verdict counts worst


def check(path: Path, args) -> Checked:
    path = Path(path)
    kind = registry.for_result(path)           # the one owner (suite.kinds.dispatch starts from it too)
    if kind.defers_check is not None and kind.defers_check(path, args):
        return _catch_all(path).check(path, args)   # e.g. a v3.0 tree held to another round: the storage checker's
    if registry.is_layout(kind):               # a published v3.0 tree: the layout walks it and hands over the rest
        whole = kind.check(path, argparse.Namespace(**{**vars(args), "for_result": handover(kind, args)}))
        beside = _beside(path, args) if path.is_dir() and not path.is_symlink() else []
        if not beside:
            return whole
        found = registry.Found(Path(os.path.realpath(path)), {kind.name: [path]})
        for name, d, _ in beside:
            found.by_kind.setdefault(name, []).append(d)
        return _combine(found, [(kind.name, path, whole)] + beside, args)
    if path.is_dir() and not path.is_symlink():
        found = registry.results_under(path)
        sole = dispatch.taker(kind, found)
        if sole is None:
            return _mixed(found, args)
        kind = sole
    return kind.check(path, args)


WHOLE_TREE_DIRS = ("closed", "open")     # what a published tree's own walk reads (with its code pools)


def _catch_all(path: Path) -> Kind:
    """The kind that takes any directory (training): what a deferred check is handed to."""
    d = path if path.is_dir() else path.parent
    return next(k for k in registry.KINDS if registry.catch_all(k, d))


def _beside(path: Path, args) -> list:
    """Results under PATH that a whole-tree kind's walk does not read (outside closed/ and open/, not in
    a code image), each checked by the kind that found it there (a top-level folder holding one kind's
    results as one part; else each result), so that a result beside a published tree counts in the
    verdict (the worst of all parts) and is never silently left out."""
    root = Path(os.path.realpath(path))
    if any(p in WHOLE_TREE_DIRS for p in root.parts) or not any((root / d).is_dir() for d in WHOLE_TREE_DIRS):
        return []                        # inside a division, or a result read out of its tree: all the kind's
    found = registry.results_under(root)
    tops: dict[Path, dict[str, list]] = {}
    for name, dirs in found.by_kind.items():
        for d in dirs:
            rel = d.relative_to(root).parts if d != root else ()
            if not rel or rel[0] in WHOLE_TREE_DIRS or any(p.startswith("code-") for p in rel):
                continue
            tops.setdefault(root / rel[0], {}).setdefault(name, []).append(d)
    out = []
    for top, kinds in sorted(tops.items()):
        if len(kinds) == 1:
            name = next(iter(kinds))
            out.append((name, top, _part(registry.owner(name), top, args)))
        else:
            out += [(name, d, _part(registry.owner(name), d, args)) for name, dirs in kinds.items() for d in dirs]
    return out


def handover(whole, args):
    """What a layout calls for a folder it does not check itself: the kind that claims it checks it
    ({kind, verdict, compliant, summary}); None when only the catch-all or a layout would take it."""
    from suite.errors import ResultError

    def take(d: Path, own: str | None = None):
        """`own`: the kind whose own runs' leaves `d` holds, as the tree's layout names its folder."""
        try:
            kind = _registered(own) if own else registry.for_result(d)
        except ResultError:
            return None
        if kind is None or registry.is_layout(kind) or (not own and registry.catch_all(kind, d)):
            return None
        c = _part(kind, d, argparse.Namespace(**{**vars(args), "ruleset": "auto", "format": "json"}))
        return {"kind": kind.name, "verdict": c.verdict, "compliant": c.code == ExitCode.OK, "summary": c.summary,
                "findings": findings_of(_json(c.out))}
    return take


def _registered(name: str) -> Kind | None:
    return next((k for k in registry.KINDS if k.name == name), None)


FINDING_KEYS = ("rule_id", "severity", "effect", "path", "field", "expected", "actual", "message")


def findings_of(doc) -> list[dict]:
    """Every finding a kind's JSON check holds, wherever its format keeps them (a finding: a mapping
    with a rule id), so that a check handed over shows its findings, not its verdict alone."""
    out: list[dict] = []

    def walk(x) -> None:
        if isinstance(x, dict):
            if isinstance(x.get("rule_id"), str):
                out.append({k: x[k] for k in FINDING_KEYS if k in x})
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)
    return out


def table_rows(d: Path) -> list:
    """The published results tables' (table, row) of the results under `d`, by the kind that
    recognises it ([] where it has none to give, or its results cannot be read: its own check and
    page say why, the rest of the tree's rows still stand)."""
    from suite.errors import SuiteError

    try:
        kind = registry.for_result(d)
        rows = None if registry.is_layout(kind) else kind.table_rows
        return rows(d) if rows is not None else []
    except SuiteError:
        return []


def _mixed(found: registry.Found, args) -> Checked:
    parts: list[tuple[str, Path, Checked]] = []
    catch_alls = {k.name for k in registry.KINDS if registry.catch_all(k, found.root)}
    others = [d for name, dirs in found.by_kind.items() if name not in catch_alls for d in dirs]
    foreign = _foreign(found)
    for name in found.kinds():
        kind = registry.owner(name)
        if name in catch_alls:
            if not [d for d in found.by_kind[name] if not any(f == d or f in d.parents for f in foreign)]:
                continue
            sub = argparse.Namespace(**{**vars(args), "exclude_dirs": tuple(others) + tuple(sorted(foreign))})
            parts.append((name, found.root, _part(kind, found.root, sub)))
        elif kind.checks_trees:
            parts.append((name, found.root, _part(kind, found.root, args)))
        else:
            parts += [(name, d, _part(kind, d, args)) for d in found.by_kind[name]]
    return _combine(found, parts, args)


def _part(kind: Kind, path: Path, args) -> Checked:
    """One part of a mixed tree checked by its kind; a part that cannot be used (bad input: a broken
    file) is an invalid result of the tree, said in one line, and the others are still checked."""
    from suite.errors import SuiteError

    if getattr(args, "ruleset", None) not in (None, "auto") and not kind.checks_trees:
        args = argparse.Namespace(**{**vars(args), "ruleset": "auto"})   # --ruleset names the storage rules
    try:
        return kind.check(path, args)
    except SuiteError as exc:
        text = f"unusable: {exc}"
        out = json.dumps({"error": str(exc), "verdict": "invalid"}) if args.format == "json" else text + "\n"
        return Checked(out, text, ExitCode.FAILED, "invalid")


def _foreign(found: registry.Found) -> list[Path]:
    """What the catch-all kind must not take: an unclassified file's directory, or only the file where
    other results sit below that directory."""
    catch_all = [d for k in registry.KINDS if registry.catch_all(k, found.root) for d in found.by_kind[k.name]]
    out = []
    for f, _ in found.unclassified:
        below = [d for d in catch_all if f.parent in d.parents]
        out.append(f if below or f.parent == found.root else f.parent)
    return out


def _combine(found: registry.Found, parts: list, args) -> Checked:
    worst = max([_RANK.get(c.verdict, 2) for _, _, c in parts] + [1 if found.unclassified else 0])
    verdict = findings.VERDICTS[worst]                 # the worst of all; an unclassified result: at least open
    compliant = all(c.code == ExitCode.OK for _, _, c in parts) and not found.unclassified
    counts = {}
    for name, _, _ in parts:
        counts[name] = counts.get(name, 0) + 1
    counted = ", ".join(f"{name} {_what(name, found)}" for name in counts)
    from suite.rules.verdict import Voice
    from suite.rules.verdict import worst as worst_voice

    said = worst_voice([c.said() for _, _, c in parts] + [Voice("open")] * bool(found.unclassified))
    said = replace(said, failed=said.failed or not compliant)       # the codes decide; the line says the same
    counts_line = f"results checked: {counted}; unclassified: {len(found.unclassified)}"
    summary = f"{said.line()}; {counts_line}"
    rel = _rel(found.root)
    if args.format == "json":
        out = json.dumps({"schema_version": 1, "kind": "tree", "root": str(found.root), "verdict": verdict,
                          "compliant": compliant,
                          "results": [{"kind": n, "path": rel(p), "verdict": c.verdict, "compliant": c.code == 0,
                                       "check": _json(c.out)} for n, p, c in parts],
                          "unclassified": [{"path": rel(f), "why": why} for f, why in found.unclassified]},
                         indent=2, sort_keys=True) + "\n"
        return Checked(out, summary, ExitCode.OK if compliant else ExitCode.FAILED, verdict, said)
    from suite.report.escape import terminal, terminal_lines
    from suite.rules.verdict import parse as parse_line

    lines = [f"suite check {found.root}: a tree of {len(counts)} kind(s) of result", ""]
    one = len(parts) == 1 and not found.unclassified     # one result: its verdict line is the tree's, said last
    for name, p, c in parts:
        body = c.out.rstrip("\n").split("\n")
        if one and parse_line(body[-1]) is not None:
            body = body[:-1]
        lines += [terminal(f"== {name}: {rel(p)}: {c.verdict.upper() or '?'} ({'compliant' if c.code == 0 else 'not compliant'})"),
                  "\n".join(body).rstrip("\n"), ""]
    if found.unclassified:
        lines += ["== unclassified (no benchmark kind takes these; the tree is not compliant):"]
        lines += [terminal(f"  {rel(f)}: {why}") for f, why in found.unclassified] + [""]
    lines += [counts_line, said.line()]         # the last line: the one verdict line (suite.rules.verdict)
    out = "\n".join(terminal_lines(x) for x in lines) + "\n"
    return Checked(out, summary, ExitCode.OK if compliant else ExitCode.FAILED, verdict, said)


def _what(name: str, found: registry.Found) -> str:
    n = len(found.by_kind[name])
    return f"({n} result dir{'s' if n != 1 else ''})"


def _rel(root: Path):
    def rel(p: Path) -> str:
        try:
            return str(Path(p).relative_to(root)) or "."
        except ValueError:
            return str(p)
    return rel


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text
