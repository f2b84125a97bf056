"""`suite check` over whatever PATH holds (issue 24, class 4): the parts of the one partitioner
(suite.kinds.dispatch.parts with the check's arguments), each checked by its owner and counted; the
verdict is the worst of all; what no kind could take is listed and keeps the check from compliance.

A PATH that is one result, or holds one kind's results only (a training submission tree, a
checkpointing write+read pair), is checked by that kind as before; a layout's tree by the layout, which
hands each folder it does not read to the kind that claims it (`handover`) and each benchmark node its walk
found to the kind that claims it (`node_handover`: a benchmark-dir tree's, or loose benchmark dirs'). A mixed
tree is checked part by part: the kinds whose check takes a tree (checkpointing) once over PATH, the
catch-all's results by the benchmark-dir layout with the other kinds' directories left out; the others
(TPCx-AI) once per result directory.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from suite.errors import ExitCode
from suite.kinds import dispatch, registry
from suite.benchmark import Checked, Kind
from suite.rules import findings

_RANK = {"": 2, "valid": 0, "closed": 0, "open": 1, "invalid": 2}   # a kind that names no verdict counts worst


def check(path: Path, args) -> Checked:
    """PATH's check: the parts the one partitioner gives (suite.kinds.dispatch.parts), each checked by
    its owner; one part is its owner's check as it is, several are combined (the worst verdict)."""
    split = dispatch.parts(Path(path), args)
    first = split.parts[0]
    if split.single:
        return first.kind.check(first.path, _handed(first, args))
    rest, checked = split.parts, []
    if registry.is_layout(first.kind) and not first.kind.walks_catch_all:
        # a published v3.0 tree: the layout walks it and hands over the rest
        rest, checked = split.parts[1:], [(first.kind.name, first.path, first.kind.check(first.path, _handed(first, args)))]
    return _combine(split.found, checked + [(p.of or p.kind.name, p.path, _part(p.kind, p.path, _handed(p, args)))
                                            for p in rest], args)


def result_of(path: Path):
    """`suite check PATH`'s structured result (a suite.check.result.CheckResult: a benchmark-dir tree's
    own findings, by its layout, beside its nodes' kinds' results), for a kind's page that shows the verdict
    (suite report); None where PATH is parted among several owners (each its own)."""
    from suite.report.findings import RESULT

    return check(Path(path), argparse.Namespace(format=RESULT, ruleset="auto")).result


def _handed(part, args):
    """The arguments a part's owner is called with: the directories it leaves to others; a layout's,
    the handovers of the folders and the benchmark nodes it does not judge itself to their kinds."""
    args = _excluding(args, part.exclude)
    if not registry.is_layout(part.kind):
        return args
    return argparse.Namespace(**{**vars(args), "for_result": handover(part.kind, args),
                                 "for_nodes": node_handover(args, part.of)})


def _excluding(args, exclude):
    if exclude is None:
        return args
    return argparse.Namespace(**{**vars(args), "exclude_dirs": exclude})


def node_handover(args, of: str | None = None):
    """What a layout calls with the benchmark nodes its walk found (suite.layouts.benchdirs.check): each
    node judged by the kind that claims it, all of one kind's in one call of its check with `args.nodes`
    (the tree with only those nodes: the walk is not done again) and the format "result"; their results
    (suite.check.result.BenchmarkResult). `of`: the kind the partitioner gave the layout's part to (its walk
    left the other owners' results out: every node there is that kind's); else each node's most specific
    claim (suite.kinds.registry.owner_of)."""
    from suite.errors import ResultError
    from suite.report.findings import RESULT

    def take(tree) -> list:
        mine: dict[str, tuple] = {}
        for b in tree.benchmarks:
            kind = _registered(of) if of else registry.owner_of(b.path, registry.KINDS)
            if kind is None:
                raise ResultError(f"{b.path}: (benchmark): expected a kind claiming it, got none")
            mine.setdefault(kind.name, (kind, []))[1].append(b)
        out = []
        for kind, nodes in mine.values():
            c = kind.check(tree.root, argparse.Namespace(**{**vars(args), "nodes": replace(tree, benchmarks=nodes),
                                                             "format": RESULT}))
            if not isinstance(getattr(c.result, "benchmarks", None), list):
                raise ResultError(f"{nodes[0].path}: (check): expected {kind.name}'s results of its benchmark "
                                  f"nodes, got none")
            out += c.result.benchmarks
        return out
    return take


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
