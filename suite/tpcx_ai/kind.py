"""The TPCx-AI kind (`benchmark: tpcx-ai`, workloads/tpcx-ai.yaml): run by suite.tpcx_ai.run,
checked by rules/tpcx-ai/ (suite.tpcx_ai.check), measured from a run or an FDR data file
(suite.tpcx_ai.fdr). Its results: a run directory holding tpcxai-result.json, or a data file."""

from __future__ import annotations

from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.benchmark import Checked, Claim, Kind, Options, Workloads


def add_run_arguments(p) -> None:
    from suite.tpcx_ai.run import add_run_arguments as add

    add(p)


def run(args) -> int:
    from suite.tpcx_ai import run as command

    if args.engine not in ("suite", "local", "dask"):
        raise SuiteError(f"--engine {args.engine}: expected suite for tpcx-ai (= local) or dask (DLIO runs the storage workloads)")
    return command.run(args)


def recognises(path: Path) -> int:
    """A run directory with tpcxai-result.json (its own), or a file no storage kind names (an FDR data
    file: fdr.load refuses what is not one): a catch-all for files."""
    from suite.harness.storagerun import STORAGE_FILES, SWEEP_FILE
    from suite.tpcx_ai import fdr

    if path.is_dir():
        return Claim.OWN if (path / fdr.RUN_FILE).is_file() else Claim.NONE
    return Claim.ANY if path.name not in (*STORAGE_FILES, SWEEP_FILE) else Claim.NONE


def check(path: Path, args) -> Checked:
    """The rules of rules/tpcx-ai/ over tpcxai-result.json, or over an FDR data file (fdr.yaml)."""
    from suite import files
    from suite.report import rounding
    from suite.report.escape import terminal
    from suite.tpcx_ai import check as tpcxai_check
    from suite.tpcx_ai.assess import Assessment

    if args.ruleset not in (None, "auto"):
        raise SuiteError(f"--ruleset: expected none for a TPCx-AI result (rules/tpcx-ai/), got {args.ruleset}")
    if tpcxai_check.is_result(path):
        verdict, findings, doc, statements = tpcxai_check.assess(path)
        from suite.tpcx_ai import naming

        a = Assessment(verdict, findings, statements, naming.substitutes_of(doc), naming.disclosures_of(doc))
        aiucpm = (doc.get("metric") or {}).get("aiucpm")
    else:
        from suite.tpcx_ai import assess
        from suite.tpcx_ai import fdr

        data = fdr.load(path)                                 # an FDR data file: its figures from its jobs
        a, doc, aiucpm = assess.of_fdr(data), data.doc, data.compute().aiucpm
    if args.format == "json":
        out = files.dump_json({"kind": "tpcx-ai", "path": str(path), "verdict": a.voice().verdict, "compliant": a.compliant,
                               "publishable": a.verdict == "valid", "aiucpm": aiucpm,
                               "verdict_line": a.voice().line(),
                               "metric_name": a.metric_name(doc.get("scale_factor")),
                               "substitutes": a.substitutes, "disclosures": a.disclosures,
                               "findings": [f.to_dict() for f in a.findings], "rederived": a.statements}, indent=2)
    else:
        lines = [f"suite check {path}", "", f"{a.label():<8} TPCx-AI SF {doc.get('scale_factor')}, "
                 f"{doc.get('streams')} streams, {a.metric_name(doc.get('scale_factor'))} {aiucpm}{a.note()}"]
        lines += [f"  {note}" for note in a.notes()]
        lines += [f"  {f.effect:<7} {f.severity:<7} {rounding.finding(f)}" for f in a.findings]
        lines += rederived_lines(a.statements)
        lines += ["", f"TPCx-AI: {a.label()}; {len(a.findings)} findings", a.voice().line()]
        out = "\n".join(terminal(line) for line in lines) + "\n"
    return Checked(out, a.voice().line(), a.voice().code, a.verdict, a.voice())


def defers_check(path: Path, args) -> bool:
    """Neither a TPCx-AI run nor an FDR data file: the catch-all (storage) checker says why."""
    from suite.tpcx_ai import check as tpcxai_check
    from suite.tpcx_ai import fdr

    return not tpcxai_check.is_result(path) and Path(path).suffix.lower() not in fdr.SUFFIXES


def rederived_lines(statements) -> list[str]:
    """The re-derivation statement in text: counts, then each figure that did not re-derive."""
    if not statements:
        return ["", "re-derived: nothing (no figure with evidence below it)"]
    counts = {s: sum(1 for x in statements if x["status"] == s) for s in ("rederived", "mismatch", "not-rederivable")}
    lines = ["", f"re-derived: {counts['rederived']} figures from their evidence; {counts['mismatch']} mismatch; "
                 f"{counts['not-rederivable']} not re-derivable"]
    for x in statements:
        if x["status"] != "rederived":
            lines.append(f"  {x['status']:<15} {x['figure']} from {x['from']}: claimed {x['claimed']}, "
                         f"derived {x['derived']}")
    return lines


def metrics(path: Path, form: str) -> int:
    """AIUCpm@SF and $/AIUCpm@SF from a run or an FDR data file."""
    from suite import files
    from suite.errors import ResultError
    from suite.report.escape import terminal_lines
    from suite.tpcx_ai import fdr
    from suite.tpcx_ai import page

    from suite.tpcx_ai import assess

    data = fdr.load(path)
    result = data.compute()
    a = assess.of_path(path, data)
    if form == "json":
        doc = {"kind": data.doc["kind"], "source": str(data.path), "kit_version": data.doc["kit_version"],
               "published": data.published, **result.to_dict(), "verdict": a.verdict, "verdict_note": a.note(),
               "metric_name": a.metric_name(result.scale_factor), "substitutes": a.substitutes,
               "disclosures": a.disclosures,
               "findings": [f.to_dict() for f in a.findings], "rederived": a.statements}
        print(files.dump_json(doc, indent=2), end="")
    else:
        print(terminal_lines(page.text(data, result, a)))
    if not result.complete:
        raise ResultError(result.why_incomplete(str(data.path)))
    return ExitCode.OK if a.compliant else ExitCode.FAILED


def report_page(path: Path, args):
    from suite.harness.storagerun import refuse_storage_nodes
    from suite.tpcx_ai import fdr
    from suite.tpcx_ai import page

    from suite.tpcx_ai import assess

    refuse_storage_nodes(path, args)
    data = fdr.load(path)
    built = page.build(data, data.compute(), assess.of_path(path, data))
    host = page.host_section(path) if Path(path).is_dir() else None
    if host:                     # before the re-derivation table: that stays the page's last section
        last = [s.id for s in built.sections][-1:] == [page.REDERIVED]
        built.sections.insert(len(built.sections) - last, host)
    return built


def measured(path: Path) -> list:
    from suite.tpcx_ai import compared

    return compared.measured(path)


def listing() -> str:
    from suite.report import text
    from suite.tpcx_ai import usecase
    from suite.tpcx_ai.registry import Registry

    return ("TPCx-AI (suite run --workload tpcx-ai --scale-factor SF):\n"
            + text.table(usecase.list_rows(Registry()), ["use case", "name", "task", "algorithm", "metric", "threshold"]))


KIND = Kind(
    name="tpcx-ai",
    run=run,
    recognises=recognises,
    check=check,
    metrics=metrics,
    report_page=report_page,
    defers_check=defers_check,
    result_files=("tpcxai-result.json",),
    takes="result",
    measured=measured,
    options=Options(add_run=add_run_arguments, run=("scale_factor", "streams", "use_cases", "processes", "seed", "scheduler")),
    workloads=Workloads(listing=listing, schema="tpcxai-workload"))
