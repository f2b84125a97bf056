"""The verdict of any TPCx-AI result, for every output that shows its figures.

    a = assess.of_path(path)          # a run directory, its tpcxai-result.json, or an FDR data file
    a.verdict                          # valid | open (valid, not publishable: SF < 1) | invalid
    a.findings, a.statements           # graded findings; what was re-derived and what could not be
    a.note()                           # "" or " — INVALID: ..." / " — NOT PUBLISHABLE: ..."

`suite check`, `suite metrics` and `suite report` all take their verdict from here, so a result
whose own record or evidence says it is not valid never shows a bare AIUCpm headline.
A run of ours (schema_version 2) is checked by rules/tpcx-ai/result.yaml (suite.tpcx_ai.check);
an FDR data file by rules/tpcx-ai/fdr.yaml over its jobs and quality values (its figures are
re-derived from its jobs by suite.tpcx_ai.fdr on load, which refuses a figure they contradict).
"""

from dataclasses import dataclass, field
from pathlib import Path

from suite.rules import engine as rules
from suite.rules.evaluate import evaluate
from suite.rules.engine import Scope
from suite.tpcx_ai import check
from suite.tpcx_ai import figures as metric
from suite.tpcx_ai import naming
from suite.tpcx_ai import rederive
from suite.tpcx_ai import leaf as result

FDR_RULE_FILES = ("fdr.yaml",)
NOTE_FINDINGS = 2


@dataclass
class Assessment:
    verdict: str
    findings: list = field(default_factory=list)
    statements: list = field(default_factory=list)
    substitutes: list = field(default_factory=list)   # naming.records: use cases whose model is not the kit's
    disclosures: list = field(default_factory=list)   # naming.disclosures_of: other differences (the load)

    def notes(self) -> list[str]:
        """The lines every output shows under the metric: the substitutes, then the disclosures."""
        return ([self.substitutes_line()] if self.substitutes else []) + list(self.disclosures)

    def metric_name(self, sf) -> str:
        """AIUCpm@SF, or AIUCpm-sub@SF when a use case's model is a substitute."""
        return naming.metric_name(sf, self.substitutes)

    def substitutes_line(self) -> str:
        return naming.substitutes_line(self.substitutes)

    def note(self) -> str:
        """What follows a headline figure: nothing when valid, else the verdict and why."""
        if self.verdict == "valid":
            return ""
        shown = [f for f in self.findings if f.effect == ("invalid" if self.verdict == "invalid" else "open")]
        why = "; ".join(_short(f) for f in shown[:NOTE_FINDINGS])
        more = f" (+{len(shown) - NOTE_FINDINGS} more)" if len(shown) > NOTE_FINDINGS else ""
        label = "INVALID" if self.verdict == "invalid" else "NOT PUBLISHABLE"     # the one vocabulary
        return f" — {label}: {why}{more}"

    @property
    def compliant(self) -> bool:
        return self.voice().compliant

    def voice(self):
        """The one voice (suite.rules.verdict): VALID is CLOSED; OPEN is TPC's valid-not-publishable
        (SF < 1, the only open rule): asked as such (TPC has no open division), so compliant, NOT
        PUBLISHABLE; NOT VALID is INVALID."""
        from suite.rules.verdict import Voice

        verdict = {"valid": "closed"}.get(self.verdict, self.verdict)
        return Voice(verdict, division="open" if verdict == "open" else "closed", open_division=False)

    def label(self) -> str:
        """The verdict in the one vocabulary every kind speaks (suite.rules.verdict: 'CLOSED', 'OPEN NOT
        PUBLISHABLE', 'INVALID NOT PUBLISHABLE'): never a second word (VALID) for the same result (issue 47)."""
        return self.voice().tags()


def _short(f) -> str:
    """A finding without its path: `field: expected x, got y (rule)`."""
    text = f.message
    if f.path and text.startswith(f"{f.path}: "):
        text = text[len(f.path) + 2:]
    return text[:240]


def is_run(path) -> bool:
    """A run directory of ours or its tpcxai-result.json holding schema_version 2."""
    from suite import files
    from suite.errors import SuiteError

    path = Path(path)
    where = path / result.RESULT_FILE if path.is_dir() else path
    if where.name != result.RESULT_FILE or not where.is_file():
        return False
    try:
        doc = files.load_json(where)
    except SuiteError:
        return False
    return isinstance(doc, dict) and doc.get("schema_version") == 2


def of_path(path, data=None) -> Assessment:
    if is_run(path):
        v, findings, doc, statements = check.assess(path)
        return Assessment(v, findings, statements, naming.substitutes_of(doc), naming.disclosures_of(doc))
    if data is None:
        from suite.tpcx_ai import fdr

        data = fdr.load(path)
    return of_fdr(data)


def of_fdr(data) -> Assessment:
    """An FDR data file's verdict: its jobs in sequence, its quality values, its scale factor."""
    doc = data.doc
    r = rederive.Rederivation()
    jobs = [(i, j) for i, j in enumerate(doc.get("jobs", [])) if isinstance(j, dict)]
    rederive.overlaps(jobs, r)
    facts = {"jobs.overlaps": r.problems["jobs.overlaps"], "quality.problems": _quality(data),
             "scale_factor": doc.get("scale_factor")}
    findings = evaluate(rules.load_layers(check.RULESET, FDR_RULE_FILES), "run", Scope("run", str(data.path), facts))
    return Assessment(check.grade(findings), findings, _fdr_statements(data))


def _quality(data) -> list:
    from suite.tpcx_ai import usecase
    from suite.tpcx_ai.registry import Registry

    kit = usecase.thresholds(Registry())
    out = []
    for uc, q in sorted(data.quality.items()):
        value = q.get("value")
        if not isinstance(value, (int, float)):
            continue
        stated = (q.get("threshold"), q.get("higher_is_better"))
        th = kit.get(uc)
        limits = [stated] if None not in stated else []
        if th is not None and th.op in ("min", "max") and q.get("metric") == th.metric:
            limits.append((th.value, th.op == "min"))
        for limit, higher in limits:
            if not (value >= limit if higher else value <= limit):
                out.append(rederive.problem(f"quality.uc{uc}.value", f"{q.get('metric')} {'>=' if higher else '<='} "
                                            f"{limit:g}", value))
                break
    return out


def _fdr_statements(data) -> list:
    """What the file's figures come from: its jobs (re-derived) or the file's word alone."""
    r = rederive.Rederivation()
    phases = {j.phase for j in data.jobs}
    for name in ("load_time_s", "throughput_elapsed_s", *metric.PER_USE_CASE):
        phase = {"load_time_s": "load", "throughput_elapsed_s": "throughput"}.get(name, name[:-2])
        status = "rederived" if phase in phases else "not-rederivable"
        value = getattr(data.inputs, name)
        shown = f"{len(value)} use-case times" if isinstance(value, dict) else value
        r.state(name, f"{phase} jobs" if phase in phases else "stated in the file (no jobs)", status,
                shown, shown if phase in phases else None)
    res = data.compute()
    pub = data.published.get("aiucpm")
    if res.complete:
        ok = pub is None or abs(pub - res.aiucpm_published) <= 0.005
        r.state("aiucpm", "the phase times" + ("" if ok else " (the published figure differs: the recomputed "
                                                "one is what every output shows)"),
                "rederived" if ok else "mismatch", pub if pub is not None else res.aiucpm, res.aiucpm)
    return r.statements
