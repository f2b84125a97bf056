"""`suite sweep`: suite run over accelerator counts (the workloads of kinds that sweep)."""

from suite.cliargs import accelerator_list, positive_int, size, workload_args
from suite.errors import SuiteError
from suite.rules import rulesets


def add_parser(sub) -> None:
    from suite.kinds import registry

    p = sub.add_parser("sweep", help="suite run over accelerator counts: throughput and AU vs N, find the maximum N",
                       description="Run the workload for each N (cache drop before each run, memory cgroup as "
                                   "configured) into one sweep dir with sweep.json; --find-max searches for the "
                                   "largest N at the AU threshold (from the bracket the dataset sets, galloping, then "
                                   "bisection; --full-probes: doubling from --start) and confirms it with "
                                   "the ruleset's runs.count runs; --ceiling adds a page-cache run per N (open "
                                   "division). "
                                   "`suite report SWEEP_DIR` draws it.")
    workload_args(p, registry.workload_names(lambda k: k.sweeps is not None))
    p.add_argument("--accelerators", type=accelerator_list, metavar="N,N,...", help="the counts to run, e.g. 1,2,4,8")
    p.add_argument("--find-max", action="store_true", help="search for the largest N with AU >= the threshold")
    p.add_argument("--start", type=positive_int, default=1,
                   help="--find-max: double from this N (default 1: the bracket is probed first, the largest N "
                        "whose epochs keep a step after the first, unless --full-probes)")
    p.add_argument("--max-accelerators", type=positive_int, default=64, help="--find-max: never probe past this")
    p.add_argument("--ceiling", action="store_true",
                   help="also run each N from the page cache (dataset pre-read, no drop; open division)")
    p.add_argument("--data-dir", help="the dataset (suite datagen); omitted: the embedded miniature")
    p.add_argument("--results-dir", help="the sweep dir (new or empty); default ./results/<workload>-sweep-<UTC time>")
    p.add_argument("--runs", type=positive_int, default=1,
                   help="runs per N: 1 (default) or the ruleset's runs.count (rules/<round>/ruleset.yaml)")
    p.add_argument("--memory-limit", type=size, default=None, help="as for suite run")
    p.add_argument("--division", choices=["closed", "open"], default="closed")
    p.add_argument("--ruleset", type=rulesets.argtype(), default=None, metavar="RULESET")
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="workload override (repeatable)")
    p.add_argument("--allow-no-cache-drop", action="store_true", help="as for suite run (non-compliant)")
    p.add_argument("--full-probes", action="store_true",
                   help="--find-max: the full search: doubling from --start, halving, every probe's epochs "
                        "(default: the bracket first, and a probe stops once its AU against the threshold is "
                        "clear, a sequential test; the confirmation always runs in full)")
    p.add_argument("--level", type=_level, default=0.95,
                   help="--find-max: the sequential test's confidence over all its looks (default 0.95)")


def run(args) -> int:
    from suite.kinds import registry

    if bool(args.accelerators) == bool(args.find_max):
        raise SuiteError("--accelerators/--find-max: expected one of them (a list of N, or a search for the "
                         f"largest N at the AU threshold), got {'both' if args.find_max else 'neither'}")
    if not args.find_max and (args.start, args.max_accelerators) != (1, 64):
        raise SuiteError(f"--start/--max-accelerators: expected only with --find-max, got {args.start}/"
                         f"{args.max_accelerators} with --accelerators")
    if args.start > args.max_accelerators:
        raise SuiteError(f"--start: expected at most --max-accelerators {args.max_accelerators}, got {args.start}")
    counted = rulesets.run_count(args.ruleset)
    if args.runs not in (1, counted):
        raise SuiteError(f"--runs: expected 1 or {counted} (the ruleset's runs.count), got {args.runs}")
    return registry.for_workload(args.workload).sweeps.run(args)     # training: suite.training.sweep.command


def _level(text: str) -> float:
    from suite.commands.compare import level

    return level(text)
