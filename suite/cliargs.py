"""What the `suite` command line's parsers share: the one-line-error parser, the argument
validators (counts, seeds, sizes, seconds, accelerator lists) and the option groups several
subcommands take (workload, dataset sizing, engine). Each command's own options are in its module
(suite/commands/), each benchmark kind's in its kind (suite/kinds/).
"""

import argparse

from suite.errors import ExitCode, SuiteError
from suite.rules import rulesets


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2), not the whole usage block."""

    def error(self, message):
        from suite.report.escape import terminal   # a bad value's control characters, made visible
        self.exit(ExitCode.BAD_INPUT, f"{self.prog}: error: {terminal(message)} (see {self.prog} --help)\n")


MAX_COUNT = 10**9  # counts (accelerators, hosts, files, runs, processes) beyond any real system


def positive_int(text: str) -> int:
    if len(text) > 12:  # int() of a 400-digit string is fine; the arithmetic after it is not
        raise argparse.ArgumentTypeError(f"expected a positive integer up to {MAX_COUNT:,}, got {text[:16]!r}...")
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if not 0 < value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"expected a positive integer up to {MAX_COUNT:,}, got {value}")
    return value


def seed_int(text: str) -> int:
    if len(text) > 12 or not text.strip().isdigit() or int(text) > 2**32 - 1:
        raise argparse.ArgumentTypeError(f"expected an integer 0..{2**32 - 1}, got {text[:16]!r}")
    return int(text)


def size(text: str) -> int:
    from suite.sizes import parse_size

    try:
        return parse_size(text)
    except SuiteError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def unit_notes(args, flags=("--host-memory", "--memory-limit")) -> None:
    """One line on stderr for each of `flags` typed as a bare GB count typical of GiB memory ("256GB"):
    the unit suite took it in and the other's spelling (suite.sizes.gib_hint). Its meaning is unchanged."""
    import sys
    from suite.sizes import gib_hint
    from suite.terminal import wrap

    argv = [str(a) for a in getattr(args, "argv", None) or []]
    for k, word in enumerate(argv):
        flag, eq, value = word.partition("=")
        if flag in flags:
            note = gib_hint(value if eq else (argv[k + 1] if k + 1 < len(argv) else ""))
            if note:
                print("\n".join(wrap(f"suite {args.command}: note: {flag} {note}")), file=sys.stderr)


def record_defaults(parser) -> None:
    """Keep the parser's defaults on the parsed args, so suite.runscope can tell what was given."""
    parser.set_defaults(scope_defaults={a.dest: a.default for a in parser._actions})


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


def engine_arg(p, also=()) -> None:
    """--engine: suite (our runner), the engines the registered kinds brought (suite.engines.registry; the
    commands register the kinds first), and `also`."""
    from suite.engines import registry

    p.add_argument("--engine", choices=["suite", *registry.names(), *also], default="suite",
                   help="suite (default: our runner) or dlio (the reference code, installed by "
                        "`suite engine install dlio`), under the same enforcement; vector_database "
                        "workloads: diskann (embedded, the default) or milvus"
                        + ("; tpcx-ai: local (= suite) or dask (a dask.distributed cluster, --scheduler)" if also else ""))


def workload_args(p, names) -> None:
    p.add_argument("--workload", required=True, choices=names)
    p.add_argument("--accelerator-type", default="h100", metavar="TYPE",
                   help="one of the workload's accelerators (default h100): " + accelerator_types(names))


def accelerator_types(names) -> str:
    """The accelerator types the workload files define, per workload ("unet3d a100|b200|h100|v100; ..."),
    read from workloads/*.yaml (a new type in a file is in --help with no code edit)."""
    from suite.storage import workloads

    listed, where = [], workloads.paths()
    for name in names:
        types = workloads.accelerator_types(where[name]) if name in where else []
        if types:                   # vector DB, kv-cache, TPCx-AI, checkpointing (processes): no accelerator type
            listed.append(f"{name} {'|'.join(types)}")
    return "; ".join(listed) or "none defined"


def sizing_args(p, required: bool, accelerators_help: str, memory_help: str | None = None) -> None:
    """What the dataset-size rule needs: accelerators, client hosts, host memory, ruleset (memory_help:
    host memory optional, with that help -- `suite sizing` defaults it to MemTotal)."""
    p.add_argument("--accelerators", type=positive_int, required=required, help=accelerators_help)
    p.add_argument("--client-hosts", type=positive_int, default=1)
    p.add_argument("--host-memory", type=size, required=required and memory_help is None,
                   help=memory_help or 'per host, with a unit: "128GiB" or "137.4GB"')
    p.add_argument("--ruleset", type=rulesets.argtype(), default=None, metavar="RULESET",
                   help="a round of rules/*/ruleset.yaml; default: the default round where the workload has it, else "
                        "the base round, else the workload's newest")


def accelerator_list(text: str) -> list[int]:
    """"1,2,4,8": positive counts, each once, in the order given."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > 64:
        raise argparse.ArgumentTypeError(f"expected at most 64 accelerator counts, got {len(parts)}")
    values = [positive_int(p) for p in parts]
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"expected each accelerator count once, got {text!r}")
    return values
