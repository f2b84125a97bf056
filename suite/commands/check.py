"""`suite check`: a result against its kind's rules; the report to stdout or --output."""

import sys
from pathlib import Path

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
                   help="write the report to FILE instead of stdout, whole (a temp file, then a rename); FILE must "
                        "be new (an existing one is refused: --replace) and never inside PATH (the evidence)")
    p.add_argument("--replace", action="store_true",
                   help="with --output: replace an existing FILE (in one rename: never truncated, never half-written)")


def run(args) -> int:
    from suite import output
    from suite import terminal as terminal_width
    from suite.kinds import registry, tree
    from suite.harness.storagerun import storage_dir
    from suite.report.escape import terminal

    path = Path(args.path)
    target = None
    if args.output is not None:   # refused before the work: never a surprise location, never inside the evidence
        target = output.target_file(args.output, "--output", [storage_dir(path), *registry.reads_around(path)],
                                    replace=args.replace)
    checked = tree.check(path, args)      # every result below PATH, by its kind (issue 24)
    if target is None:       # text: no line over suite.terminal.WIDTH columns, whichever kind wrote it
        sys.stdout.write(terminal_width.fit(checked.out) if args.format == "text" else checked.out)
    else:
        with output.interruptible():
            output.write_file(target, checked.out, "--output", replace=args.replace)
        print(terminal(f"{checked.summary}; wrote {target}"))
    return checked.code

