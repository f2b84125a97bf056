"""`suite check` output: text grouped by benchmark (verdict first) and the JSON document.

Pure functions: a suite.check.result.CheckResult in, a str out.
"""

import re
from collections import Counter
from dataclasses import replace

from suite import files
from suite import terminal as width
from suite.report import rounding
from suite.report.escape import terminal

UPPER = {"closed": "CLOSED", "open": "OPEN", "invalid": "INVALID"}
RUN_PART = re.compile(r"^(?:run|iter|iteration)[-_]?\d+$|^warm[-_]?up|^\d{8}[_T-]?\d{6}(?:[._-]\d+)?$", re.I)
# a run's directory: run-1, iter_2, warmup, or the timestamp `suite run` names it by (20261207_075714)


def _label(verdict: str, fix: bool) -> str:
    return UPPER[verdict] + (", fix required" if fix else "")


def _pattern(path: str) -> str:
    return "/".join("*" if RUN_PART.match(p) else p for p in str(path).split("/"))


def group(findings) -> list[tuple[object, list]]:
    """Findings repeated over runs (same rule, effect, severity and field; paths differing only in
    the run directory) as (first, [the others]), in order of first appearance. The JSON output keeps
    every finding; text and HTML show one line per group."""
    groups: dict[tuple, list] = {}
    for f in findings:
        key = (_get(f, "rule_id"), _get(f, "effect"), _get(f, "severity"), _get(f, "field"), _pattern(_get(f, "path")))
        groups.setdefault(key, []).append(f)
    return [(fs[0], fs[1:]) for fs in groups.values()]


def _get(f, name):
    return f.get(name) if isinstance(f, dict) else getattr(f, name)


def repeat_note(first, others) -> str:
    """'same in 4 more runs: run2, run3, run4, run5' (with their values when they differ)."""
    if not others:
        return ""
    runs = []
    for f in others:
        parts = [p for p in str(_get(f, "path")).split("/") if RUN_PART.match(p)]
        runs.append("/".join(parts) or str(_get(f, "path")))
    field = _get(first, "field")
    actual = [rounding.rounded(rounding.value(_get(f, "actual"), field)) for f in others]   # a str actual too
    same = all(a == rounding.rounded(rounding.value(_get(first, "actual"), field)) for a in actual)
    values = "" if same else f"; got {', '.join(actual)}"
    return f"same in {len(others)} more: {', '.join(runs)}{values}"


def _what(b) -> str:
    accel = f"/{b.accelerator}" if b.accelerator else ""
    division = b.division or "division not given"
    return f"{b.workload or 'unknown workload'}{accel}, {b.ruleset} {division}, {len(b.runs)} run(s)"


def text(result, rule_messages: dict | None = None, headline=None) -> str:
    """Human-readable report: per benchmark the verdict, what was detected, the numbers, the findings.
    `headline(aggregate) -> str`: a benchmark's numbers in one line, by the kind that aggregated them
    (a benchmark result's own `headline`, where its kind gave one, first; none shown without either)."""
    lines = [f"suite check {result.root}"]
    for br in result.benchmarks:
        b = br.benchmark
        rel = _rel(b.path, result.root)
        status = "" if br.compliant else "  (not compliant)"
        lines.append("")
        lines.append(f"{_label(br.verdict, getattr(br, 'fix_required', False)):<8} {rel}{status}")
        lines.append(f"         {_what(b)}; detected from " +
                     ", ".join(f"{k}: {v}" for k, v in sorted(b.detected_from.items())))
        said = getattr(br, "headline", None) or (headline(br.aggregate) if br.aggregate and headline else None)
        if said:
            lines.append(f"         {said}")
        lines += rederived_lines(getattr(br, "rederived", None) or [])
        lines += finding_lines(br.findings)
    if result.findings:
        lines.append("")
        lines.append("outside any benchmark:")
        lines += finding_lines(result.findings)
    every = result.all_findings()
    if every and rule_messages:
        lines.append("")
        lines.append("rules with findings:")
        for rid in sorted({f.rule_id for f in every}):
            lines.append(f"  {rid}: {rule_messages.get(rid, '')}")
    counts = Counter(f.effect for f in every)
    ok = sum(br.compliant for br in result.benchmarks)
    lines.append("")
    fix = f"{counts.get('fix-required', 0)} fix required, " if counts.get("fix-required") else ""
    lines.append(f"{ok} of {len(result.benchmarks)} benchmarks compliant; {len(every)} findings "
                 f"({counts.get('invalid', 0)} invalid, {counts.get('open', 0)} open, {fix}"
                 f"{counts.get('closed', 0)} notes)")
    lines.append(_voice_line(result))          # the last line: the one verdict line (suite.rules.verdict)
    # text from the tree (paths, values, messages) may hold ESC, CR or newlines: one line each, visible;
    # then wrapped at suite.terminal.WIDTH columns
    return "\n".join(out for line in lines for out in width.wrap(terminal(line))) + "\n"


def _voice_line(result) -> str:
    """The one verdict line (suite.rules.verdict), compliance as the checker decided it."""
    from suite.rules.verdict import COMPLIANT, NOT_COMPLIANT

    voice = result.voice() if hasattr(result, "voice") else None
    if voice is None:
        return (f"verdict: {_label(result.verdict, getattr(result, 'fix_required', False))} "
                f"({COMPLIANT if result.compliant else NOT_COMPLIANT})")
    return voice.line().rsplit(" (", 1)[0] + f" ({COMPLIANT if result.compliant else NOT_COMPLIANT})"


def rederived_lines(records: list[dict], limit: int = 3) -> list[str]:
    """What was re-derived from the evidence and what could not be (BenchmarkResult.rederived)."""
    if not records:
        return ["         re-derived: nothing (no re-derivation recorded for this result)"]
    by_source: dict[str, list[str]] = {}
    for r in records:
        if r["status"] == "rederived":
            figs = by_source.setdefault(r["from"], [])
            if r["figure"] not in figs:
                figs.append(r["figure"])
    out = []
    agreed = sum(r["status"] == "rederived" for r in records)
    if by_source:            # counts and a few names per source: every figure and path in --format json
        out.append(f"         re-derived: {agreed} claims agree, {sum(map(len, by_source.values()))} figure(s) "
                   f"from {len(by_source)} source(s) (each in --format json)")
        out += [f"           {len(figs)} from {src}: {_few(figs)}" for src, figs in by_source.items()]
    bad = [r for r in records if r["status"] == "mismatch"]
    for r in bad[:limit]:
        claimed, derived = _short(r["claimed"]), _short(r["derived"])
        if claimed == derived:          # rounded alike: the digits that differ are the point
            claimed, derived = _short(r["claimed"], exact=True), _short(r["derived"], exact=True)
        out.append(f"         re-derived, DISAGREES: {r.get('path')}: {r.get('field')}: claimed {claimed}, "
                   f"derived {derived} from {r['from']}")
    if len(bad) > limit:
        out.append(f"         re-derived, DISAGREES: {len(bad) - limit} more claims")
    nots = list(dict.fromkeys(f"{r['figure']} ({r['from']})" for r in records if r["status"] == "not-rederivable"))
    if nots:
        out.append(f"         not re-derivable: {'; '.join(nots)}")
    return out


def _few(names: list[str], shown: int = 3) -> str:
    """'a, b, c and 5 more' (or all of them when that is no longer)."""
    if len(names) <= shown + 1:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


def _short(v, exact: bool = False) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_short(x, exact) for x in v[:4]) + (", ...]" if len(v) > 4 else "]")
    if isinstance(v, float):
        return repr(v) if exact else rounding.generic(v)
    return repr(v)


MESSAGE_COLUMN = 18          # where a finding's message starts (past a longer effect: later); wrapped lines go on there


def finding_line(f) -> list[str]:
    """One finding for people: effect, severity, its message with numbers rounded (suite.report.rounding),
    wrapped under the message; made visible (control characters) before it is wrapped."""
    head = f"  {f.effect:<7} {f.severity:<7} "
    return width.wrap(terminal(head + rounding.finding(f)), hang=len(head))


def finding_lines(found, grouped: bool = True) -> list[str]:
    """Findings for people; `grouped`: one line per finding repeated over runs (group), with a note."""
    out = []
    for f, others in (group(found) if grouped else [(f, []) for f in found]):
        out += finding_line(f)
        if others:
            out += width.wrap(terminal(f"{' ' * (MESSAGE_COLUMN + 2)}({repeat_note(f, others)})"),
                              hang=MESSAGE_COLUMN + 3)
    return out



def summary_line(result) -> str:
    every = result.all_findings()
    ok = sum(br.compliant for br in result.benchmarks)
    return (f"{_voice_line(result)}; "
            f"{ok} of {len(result.benchmarks)} benchmarks compliant; {len(every)} findings")


RESULT = "result"      # the form a layout asks its nodes' kinds for: the structured result only, no report


def checked(result, form: str, headline=None):
    """A CheckResult as `suite check` shows it: the report (text or JSON; none for RESULT, the form a
    layout combining its nodes' checks asks for), its summary line, its exit code, the result itself."""
    from suite.benchmark import Checked
    from suite.errors import ExitCode

    out = "" if form == RESULT else json_text(result) if form == "json" else text(result, result.rule_messages(), headline)
    voice = result.voice() if hasattr(result, "voice") else None
    if voice is not None and voice.compliant != result.compliant:     # the checker decides; the line says the same
        voice = replace(voice, failed=not result.compliant)
    return Checked(out, summary_line(result), ExitCode.OK if result.compliant else ExitCode.FAILED, result.verdict,
                   voice, result)


def json_text(result) -> str:
    """The JSON document (validated against suite/schemas/check-result.schema.json)."""
    doc = result.to_dict()
    problems = files.schema_errors(doc, "check-result")
    if problems:  # our own output breaking our schema is a bug
        raise ValueError(f"check-result: {problems[0]}")
    return files.dump_json(doc, indent=2)


def _rel(path, root) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
