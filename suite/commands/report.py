"""`suite report`: an HTML page (+ Markdown, CSV, parquet) of a result, built by its kind; of a path
holding several results, one page with each result's sections (suite.kinds.combine)."""

import os
import shutil
from pathlib import Path

from suite.cliargs import positive_int
from suite.errors import ExitCode


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="an HTML page (+ Markdown, CSV, parquet) of any kind's results",
                       description="Writes index.html (self-contained), report.md, plots/*.png and the tables "
                                   "the result's kind keeps, each as <table>.csv and <table>.parquet, into --out, "
                                   "and nowhere else; it lists what it wrote.")
    p.add_argument("path", type=Path, metavar="PATH", help="results directory, a `suite sweep` dir, or TPCx-AI FDR data file")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="directory to write the report into: new, empty, or an earlier report (replaced whole)")
    p.add_argument("--force", action="store_true", help="replace a non-empty --out that is not an earlier report")
    p.add_argument("--storage-nodes", type=positive_int, default=1, metavar="K",
                   help="a sweep's sizing table: accelerators per storage node for K storage nodes (default 1)")


def _layout_args(kind, args):
    """A layout (a published v3.0 tree) hands the folders it does not check to the kinds that claim
    them, as `suite check` does, and asks them for their results tables' rows; a kind's page shows suite
    check's result of its folder (`for_check`: the one partitioner's, a benchmark-dir tree's own findings
    by its layout included)."""
    import argparse

    from suite.kinds import registry, tree

    if not registry.is_layout(kind):
        return argparse.Namespace(**{**vars(args), "for_check": tree.result_of})

    plain = argparse.Namespace(**{"format": "json", "ruleset": "auto", **vars(args)})
    return argparse.Namespace(**{**vars(plain), "for_result": tree.handover(kind, plain), "for_rows": tree.table_rows})


def run(args) -> int:
    from suite import memo

    with memo.held():      # PATH is read, never written (--out lies outside it): each tree walked once,
        return _report(args)   # each directory's owner worked out once, for the page and its check alike


def _report(args) -> int:
    import sys
    from datetime import datetime, timezone

    from suite import __version__, output
    from suite.harness.storagerun import storage_dir
    from suite.kinds import combine, dispatch, registry
    from suite.report.outdir import report_dir

    args.path = Path(os.path.abspath(args.path))      # `.` named as the directory it is (its page's subtitle)
    out = output.outside(args.out, "--out", [storage_dir(Path(args.path)), *registry.reads_around(Path(args.path))])
    found = dispatch.parts(args.path)        # every result under PATH, by its kind
    bad = 0
    with report_dir(out, force=args.force) as tmp:
        # matplotlib keeps a font cache: keep it in the report's temp dir, removed with it
        mpl_dir = None
        if "matplotlib" not in sys.modules and "MPLCONFIGDIR" not in os.environ:
            mpl_dir = tmp / ".matplotlib"
            os.environ["MPLCONFIGDIR"] = str(mpl_dir)
        try:
            from suite.report import export

            if found.single:
                kind = found.parts[0].kind
                page = kind.report_page(args.path, _layout_args(kind, args))
            else:
                page, bad = combine.page(found, args, _layout_args)
            stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            written = export.write_report(page, tmp, f"suite {__version__} report, {stamp}")
        finally:
            if mpl_dir:
                os.environ.pop("MPLCONFIGDIR", None)
                shutil.rmtree(mpl_dir, ignore_errors=True)
    from suite.report.escape import terminal
    from suite.terminal import fit

    # the directory once, then the files in it by name: no 200-column line of repeated paths
    names = ["index.html (open it in a browser)", "report.md",
             *(p.name for p in written if p.suffix in (".csv", ".parquet"))]
    print(fit(terminal(f"suite report: wrote {len(written)} files to {out}/") + "\n"
              + terminal("    " + ", ".join(names))))
    return ExitCode.FAILED if bad else ExitCode.OK
