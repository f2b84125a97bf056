"""`suite metrics`: the published numbers of a result, computed by its kind."""

from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("metrics", help="the published numbers of storage results or a TPCx-AI result/FDR file",
                       description="Storage results: AU, samples/s and MiB/s per run and over runs. "
                                   "TPCx-AI: AIUCpm@SF and $/AIUCpm@SF from a run or an FDR data file "
                                   "(.yaml, .json or .csv).")
    p.add_argument("path", type=Path, metavar="PATH", help="results directory, or TPCx-AI FDR data file")
    p.add_argument("--format", choices=["text", "json"], default="text")


def run(args) -> int:
    from suite.kinds import registry

    return registry.for_result(args.path).metrics(args.path, args.format)
