"""`suite check`: a result against its kind's rules; the report to stdout or --output."""

import sys
from pathlib import Path

from suite.errors import ExitCode, SuiteError
from suite.rules import rulesets


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="check runs, results dirs or submission trees against the rules",
                       description="Check a run, a benchmark with its runs, a `suite run` results dir or a "
                                   "submission tree against rules/<ruleset>/. Exit 0 compliant, 1 not, 2 unusable.")
    p.add_argument("path", metavar="PATH", help="a run, a benchmark dir, a results dir or a submission tree")
    p.add_argument("--ruleset", type=rulesets.argtype("auto"), default="auto", metavar="RULESET",
                   help="default: detected from the files")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--output", metavar="FILE", default=None,
                   help="write the report to FILE (atomically) instead of stdout")


def run(args) -> int:
    from suite import files
    from suite.kinds import tree

    output = Path(args.output) if args.output else None
    if output is not None:  # refuse before doing the work: never a surprise location
        if output.is_dir():
            raise SuiteError(f"--output {output}: expected a file path, got a directory")
        if not output.parent.is_dir():
            raise SuiteError(f"--output {output}: expected an existing directory {output.parent}, got none")
    checked = tree.check(Path(args.path), args)      # every result below PATH, by its kind (issue 24)
    if output is None:
        sys.stdout.write(checked.out)
    else:
        try:
            files.write_atomic(output, checked.out)
        except OSError as exc:
            raise SuiteError(f"--output {output}: cannot write: {exc.strerror or exc}") from None
        print(f"{checked.summary}; wrote {output}")
    return checked.code
