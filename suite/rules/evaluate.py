"""Applying a rule set to one scope: every rule of the scope's kind that applies, every violation
a finding (suite.rules.findings). Used by `suite check` (suite.check) and the TPCx-AI checks
(suite.tpcx_ai.check) alike: one engine for every benchmark.
"""

from __future__ import annotations

from pathlib import Path

from suite.rules import engine as rules
from suite.rules import findings
from suite.rules.engine import Scope
from suite.rules.findings import Finding


def evaluate(rs: rules.RuleSet, kind: str, scope: Scope, root: Path | None = None) -> list[Finding]:
    """The findings of `rs`'s rules for scope kind `kind` over `scope`; paths relative to `root`."""
    out = []
    for rule in rs.for_scope(kind):
        if not rules.applies(rule, scope, rs.params):
            continue
        vs = rules.violations(rule, scope, rs.params)
        if not vs:
            continue
        src_path, src_field = scope.source(rule.field)
        note = scope.get(rule.explain) if rule.explain else None
        for v in vs:
            path = v.path if v.path is not None else src_path
            fld = v.field if v.field is not None else f"{src_field}{v.field_suffix}"
            out.append(findings.make(rule.id, rule.severity, rule.effect, relative(path, root), fld,
                                     v.expected, v.actual, v.note or (str(note) if note else "")))
    return out


def relative(path, root: Path | None) -> str:
    """A finding's path: relative to `root` ('.' for root itself); as given when there is no root."""
    if path is None:
        return "."
    if root is None:
        return str(path)
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)
