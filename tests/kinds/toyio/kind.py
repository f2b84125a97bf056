"""The toyio kind: run, recognise, check, metrics, report page and compare, each a call into its folder."""

from __future__ import annotations

from pathlib import Path

from suite.benchmark import Checked, Kind, Options, Workloads
from suite.errors import ExitCode

RESULT = "toyio_result.json"


def add_run_arguments(p) -> None:
    from suite.cliargs import positive_int

    g = p.add_argument_group("toyio (suite run --workload toyio-mini)")
    g.add_argument("--toyio-files", type=positive_int, default=None, help="toyio: files to write and read back")


def run(args) -> int:
    from suite.toyio import run as toyrun

    leaf = toyrun.run(args.results_dir, args.data_dir, args.toyio_files or 8)
    checked = check(leaf, args)
    print(f"toyio complete: {leaf}; {checked.summary}")
    return checked.code


def recognises(path: Path) -> bool:
    from suite.toyio import leaf

    return leaf.is_leaf(Path(path))


def check(path: Path, args) -> Checked:
    from suite import files
    from suite.toyio import check as toycheck

    verdict, found, figures = toycheck.assess(Path(path))
    if getattr(args, "format", "text") == "json":
        out = files.dump_json({"kind": "toyio", "path": str(path), "verdict": verdict,
                               "findings": [f.to_dict() for f in found], "figures": figures}, indent=2)
    else:
        out = "".join(f"  {f.effect:<7} {f.message}\n" for f in found) + f"verdict: {verdict.upper()}\n"
    return Checked(out, f"verdict: {verdict.upper()}", ExitCode.OK if verdict == "closed" else ExitCode.FAILED, verdict)


def metrics(path: Path, form: str) -> int:
    from suite import files
    from suite.toyio import figures

    doc = figures.rederive(Path(path))
    print(files.dump_json(doc, indent=2), end="") if form == "json" else \
        print(f"toyio {path}: {doc['throughput_mib_s']:.1f} MiB/s over {len(doc['passes'])} passes")
    return ExitCode.OK


def report_page(path: Path, args):
    from suite.toyio import page

    return page.build(Path(path))


def measured(path: Path):
    from suite.toyio import figures

    return [figures.measured(Path(path))]


def listing() -> str:
    return "toyio (suite run --workload toyio-mini [--toyio-files N]): a throwaway kind"


KIND = Kind(
    name="toyio",
    run=run,
    recognises=recognises,
    check=check,
    metrics=metrics,
    report_page=report_page,
    measured=measured,
    result_files=(RESULT,),
    takes="result",
    options=Options(add_run=add_run_arguments, run=("toyio_files",)),
    workloads=Workloads(listing=listing, dir=Path(__file__).resolve().parent / "workloads"))
