"""`suite metrics`: the published numbers of a result, computed by its kind; of every result under a
path holding several (suite.kinds.dispatch), each by its kind, combined (suite.kinds.combine)."""

from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("metrics", help="the published numbers of storage results or a TPCx-AI result/FDR file",
                       description="Storage results: AU, samples/s and MiB/s per run and over runs. "
                                   "TPCx-AI: AIUCpm@SF and $/AIUCpm@SF from a run or an FDR data file "
                                   "(.yaml, .json or .csv).")
    p.add_argument("path", type=Path, metavar="PATH", help="results directory, or TPCx-AI FDR data file")
    p.add_argument("--format", choices=["text", "json"], default="text")


def run(args) -> int:
    from suite import memo
    from suite.kinds import combine, dispatch

    with memo.held():            # PATH is read, never written: walked once for the figures and the check
        found = dispatch.parts(args.path)
        if found.single:
            return found.parts[0].kind.metrics(args.path, args.format)
        return combine.metrics(found, args.format)
