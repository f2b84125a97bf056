"""The TPCx-AI kind (`benchmark: tpcx-ai`, workloads/tpcx-ai.yaml): run by suite.tpcxai.command,
checked by rules/tpcx-ai/ (suite.tpcxai.check), measured from a run or an FDR data file
(suite.tpcxai.fdr). Its results: a run directory holding tpcxai-result.json, or a data file."""

from __future__ import annotations

from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.kinds.base import Checked, Kind


def add_run_arguments(p) -> None:
    from suite.tpcxai.command import add_run_arguments as add

    add(p)


def run(args) -> int:
    from suite.tpcxai import command

    if args.engine != "suite":
        raise SuiteError(f"--engine {args.engine}: expected suite for tpcx-ai (DLIO runs the storage workloads)")
    return command.run(args)


def recognises(path: Path) -> bool:
    """A run directory with tpcxai-result.json, or a file no storage kind names (an FDR data file:
    fdr.load refuses what is not one)."""
    from suite.kinds.training import STORAGE_FILES
    from suite.sweep.result import SWEEP_FILE
    from suite.tpcxai import fdr

    if path.is_dir():
        return (path / fdr.RUN_FILE).is_file()
    return path.name not in (*STORAGE_FILES, SWEEP_FILE)


def check(path: Path, args) -> Checked:
    """The rules of rules/tpcx-ai/ over tpcxai-result.json."""
    from suite import files
    from suite.report.escape import terminal
    from suite.tpcxai import check as tpcxai_check

    if args.ruleset not in (None, "auto"):
        raise SuiteError(f"--ruleset: expected none for a TPCx-AI result (rules/tpcx-ai/), got {args.ruleset}")
    if not tpcxai_check.is_result(path):
        from suite.kinds import training
        from suite.tpcxai import fdr

        if Path(path).suffix.lower() not in fdr.SUFFIXES:     # not a data file either: the storage checker says why
            return training.check_storage(path, args)
        raise SuiteError(f"{path}: expected a TPCx-AI run (its tpcxai-result.json), got a data file "
                         f"(suite metrics and suite report read an FDR file)")
    verdict, findings, doc = tpcxai_check.verdict(path)
    aiucpm = (doc.get("metric") or {}).get("aiucpm")
    if args.format == "json":
        out = files.dump_json({"kind": "tpcx-ai", "path": str(path), "verdict": verdict, "compliant": not findings,
                               "aiucpm": aiucpm, "findings": [f.to_dict() for f in findings]}, indent=2)
    else:
        lines = [f"suite check {path}", "", f"{verdict.upper():<8} TPCx-AI SF {doc.get('scale_factor')}, "
                 f"{doc.get('streams')} streams, AIUCpm {aiucpm}"]
        lines += [f"  {f.effect:<7} {f.severity:<7} {f.message}" for f in findings]
        lines += ["", f"verdict: {verdict.upper()} ({'compliant' if not findings else 'not compliant'}); "
                      f"{len(findings)} findings"]
        out = "\n".join(terminal(line) for line in lines) + "\n"
    return Checked(out, f"verdict: {verdict.upper()}", ExitCode.OK if not findings else ExitCode.FAILED, verdict)


def metrics(path: Path, form: str) -> int:
    """AIUCpm@SF and $/AIUCpm@SF from a run or an FDR data file."""
    from suite import files
    from suite.errors import ResultError
    from suite.report import metrics_text
    from suite.report.escape import terminal_lines
    from suite.tpcxai import fdr

    data = fdr.load(path)
    result = data.compute()
    if form == "json":
        doc = {"kind": data.doc["kind"], "source": str(data.path), "kit_version": data.doc["kit_version"],
               "published": data.published, **result.to_dict()}
        print(files.dump_json(doc, indent=2), end="")
    else:
        print(terminal_lines(metrics_text.tpcxai(data, result)))
    if not result.complete:
        raise ResultError(result.why_incomplete(str(data.path)))
    return ExitCode.OK


def report_page(path: Path, args):
    from suite.kinds.training import refuse_storage_nodes
    from suite.report import content
    from suite.tpcxai import fdr

    refuse_storage_nodes(path, args)
    data = fdr.load(path)
    return content.build_tpcxai(data, data.compute())


def listing() -> str:
    from suite.report import text
    from suite.tpcxai import usecase
    from suite.tpcxai.registry import Registry

    return ("TPCx-AI (suite run --workload tpcx-ai --scale-factor SF):\n"
            + text.table(usecase.list_rows(Registry()), ["use case", "name", "task", "algorithm", "metric", "threshold"]))


KIND = Kind(
    name="tpcx-ai", run=run, recognises=recognises, check=check, metrics=metrics, report_page=report_page,
    listing=listing, add_run_arguments=add_run_arguments, workload_schema="tpcxai-workload",
    result_files=("tpcxai-result.json",), checks_trees=False,
    run_options=("scale_factor", "streams", "use_cases", "processes", "seed"))
