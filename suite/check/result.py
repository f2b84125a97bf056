"""What `suite check` returns: per benchmark and for the whole tree, the verdict and the findings
(records); `evaluate` (suite.rules.evaluate) applies one rule set to one scope -> findings.
Used by suite.training.check.checker (the benchmark nodes it judges), suite.layouts.benchdirs.check (a
benchmark-dir tree: its kinds' node results and its own findings) and suite.checkpointing.check."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from suite.rules import engine as rules
from suite.rules.evaluate import evaluate, relative as rel  # noqa: F401 (one evaluator, re-exported)
from suite.rules import findings as grades
from suite.rules.findings import Finding
from suite.rules.verdict import Voice, worst


@dataclass
class BenchmarkResult:
    benchmark: object                # the node judged (suite.layouts.benchdirs.tree.Benchmark)
    verdict: str
    findings: list[Finding]
    aggregate: dict | None
    compliant: bool
    rule_files: list[str] = field(default_factory=list)
    rules_evaluated: int = 0
    rule_messages: dict[str, str] = field(default_factory=dict)
    fix_required: bool = False
    # what was re-derived and what could not be: [{figure, from, status: rederived|not-rederivable|
    # mismatch, claimed, derived, path, field}] (suite.training.check.rederive; any kind may fill it)
    rederived: list[dict] = field(default_factory=list)
    miniature: bool = False          # a scaled-down run: never compliant (suite.rules.verdict)
    headline: str | None = None      # its numbers in one line, by the kind that judged it (text report only)

    def voice(self) -> Voice:
        return Voice(self.verdict, self.miniature, self.benchmark.division or "closed", self.fix_required)

    def to_dict(self, root: Path) -> dict:
        b = self.benchmark
        out = {
            "path": rel(b.path, root), "org": b.org, "system": b.system, "division": b.division,
            "ruleset": b.ruleset, "workload": b.workload, "accelerator": b.accelerator,
            "detected_from": dict(b.detected_from), "num_runs": len(b.runs),
            "verdict": self.verdict, "compliant": self.compliant, "fix_required": self.fix_required,
            "miniature": self.miniature, "findings": [f.to_dict() for f in self.findings], "aggregate": self.aggregate,
            "rule_files": self.rule_files, "rules_evaluated": self.rules_evaluated,
            "rederived": self.rederived,
        }
        return out


@dataclass
class CheckResult:
    root: Path
    benchmarks: list[BenchmarkResult]
    findings: list[Finding]          # tree-level (outside any benchmark)
    verdict: str
    compliant: bool
    tree_rule_messages: dict[str, str] = field(default_factory=dict)
    fix_required: bool = False
    incomplete: list[str] = field(default_factory=list)    # directories that hold no result (aborted runs)

    def all_findings(self) -> list[Finding]:
        return self.findings + [f for b in self.benchmarks for f in b.findings]

    def rule_messages(self) -> dict[str, str]:
        """Rule id -> the rule's one-line description, for every rule set used."""
        out = dict(self.tree_rule_messages)
        for b in self.benchmarks:
            out.update(b.rule_messages)
        return out

    def voice(self) -> Voice:
        """The tree said as one (suite.rules.verdict): its benchmarks' and its own findings'."""
        tree = Voice(grades.verdict(self.findings), fix_required=grades.fix_required(self.findings))
        return worst([b.voice() for b in self.benchmarks] + [tree])

    def to_dict(self) -> dict:
        return {
            "schema_version": 1, "root": str(self.root), "verdict": self.verdict, "compliant": self.compliant,
            "fix_required": self.fix_required, "incomplete": self.incomplete, "verdict_line": self.voice().line(),
            "miniature": any(b.miniature for b in self.benchmarks),
            "findings": [f.to_dict() for f in self.findings],
            "benchmarks": [b.to_dict(self.root) for b in self.benchmarks],
        }



def described(rule: rules.Rule) -> str:
    """A rule's message, with the guideline section it enforces when the rule names one."""
    return rule.message + (f" [guidelines {rule.guideline}]" if rule.guideline else "")
