"""`suite check` output: text grouped by benchmark (verdict first) and the JSON document.

Pure functions: a suite.check.CheckResult in, a str out.
"""

from collections import Counter

from suite import files
from suite.report.escape import terminal
from suite.numbers import is_number
from suite.storage import metrics

UPPER = {"closed": "CLOSED", "open": "OPEN", "invalid": "INVALID"}


def _fixed(x, digits=4) -> str:
    return f"{x:.{digits}f}" if is_number(x) else "-"


def _what(b) -> str:
    accel = f"/{b.accelerator}" if b.accelerator else ""
    division = b.division or "division not given"
    return f"{b.workload or 'unknown workload'}{accel}, {b.ruleset} {division}, {len(b.runs)} run(s)"


def text(result, rule_messages: dict | None = None) -> str:
    """Human-readable report: per benchmark the verdict, what was detected, the numbers, the findings."""
    lines = [f"suite check {result.root}"]
    for br in result.benchmarks:
        b = br.benchmark
        rel = _rel(b.path, result.root)
        status = "" if br.compliant else "  (not compliant)"
        lines.append("")
        lines.append(f"{UPPER[br.verdict]:<8} {rel}{status}")
        lines.append(f"         {_what(b)}; detected from " +
                     ", ".join(f"{k}: {v}" for k, v in sorted(b.detected_from.items())))
        agg = br.aggregate
        if agg:
            o = agg["overall"]
            lines.append(f"         {o[metrics.NUM_RUNS]} runs x {o[metrics.NUM_ACCELERATORS]} accelerators: "
                         f"{_fixed(o[metrics.SAMPLES_MEAN])} "
                         f"({_fixed(o[metrics.SAMPLES_STDEV])}) samples/s, "
                         f"{_fixed(o[metrics.REPORT_MB_MEAN])} "
                         f"({_fixed(o[metrics.REPORT_MB_STDEV])}) MB/s")
        for f in br.findings:
            lines.append(f"  {f.effect:<7} {f.severity:<7} {f.message}")
    if result.findings:
        lines.append("")
        lines.append("outside any benchmark:")
        for f in result.findings:
            lines.append(f"  {f.effect:<7} {f.severity:<7} {f.message}")
    every = result.all_findings()
    if every and rule_messages:
        lines.append("")
        lines.append("rules with findings:")
        for rid in sorted({f.rule_id for f in every}):
            lines.append(f"  {rid}: {rule_messages.get(rid, '')}")
    counts = Counter(f.effect for f in every)
    ok = sum(br.compliant for br in result.benchmarks)
    lines.append("")
    lines.append(f"verdict: {UPPER[result.verdict]} ({'compliant' if result.compliant else 'not compliant'}); "
                 f"{ok} of {len(result.benchmarks)} benchmarks compliant; {len(every)} findings "
                 f"({counts.get('invalid', 0)} invalid, {counts.get('open', 0)} open, {counts.get('closed', 0)} notes)")
    # text from the tree (paths, values, messages) may hold ESC, CR or newlines: one line each, visible
    return "\n".join(terminal(line) for line in lines) + "\n"


def summary_line(result) -> str:
    every = result.all_findings()
    ok = sum(br.compliant for br in result.benchmarks)
    return (f"verdict: {UPPER[result.verdict]} ({'compliant' if result.compliant else 'not compliant'}); "
            f"{ok} of {len(result.benchmarks)} benchmarks compliant; {len(every)} findings")


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
