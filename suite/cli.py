"""The `suite` command line: a dispatcher over the commands of suite/commands/, one module each
with `add_parser(subparsers)` and `run(args) -> int`. What a command does for a workload or a
result is its benchmark kind's (suite/kinds/).

Heavy libraries are imported inside the commands so `suite --help` is instant.
"""

import argparse
import os
import sys

from suite import __version__
from suite.cliargs import Parser
from suite.commands import (check, datagen, datasize, engine, list as list_, metrics, report, run, sizing,
                            submission, sweep)
from suite.commands import compare, history, mlpstorage
from suite.errors import ExitCode, SuiteError

# in the order `suite --help` lists them
COMMANDS = {"list": list_, "datasize": datasize, "datagen": datagen, "run": run, "metrics": metrics,
            "report": report, "check": check, "sweep": sweep, "sizing": sizing, "submission": submission,
            "engine": engine, "compare": compare, "history": history,
            "mlpstorage": mlpstorage}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="suite",
        description="MLPerf Storage-style and TPCx-AI-style benchmarks under enforced rules.")
    parser.add_argument("--version", action="version", version=f"suite {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS.values():
        command.add_parser(sub)
    _show_choices(parser)
    return parser


def _show_choices(parser) -> None:
    """Every option whose `type=` knows its choices (a `metavar` on it: suite.rules.rulesets.argtype)
    shows them in --help, from the same source the value is checked against. Set after each
    add_argument (argparse formats a metavar as it adds it: that would read rules/ at build time)."""
    for action in parser._actions:
        shown = getattr(action.type, "metavar", None)
        if shown is not None:
            action.metavar = shown
        for child in (getattr(action, "choices", None) or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
            _show_choices(child)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)     # as given: suite history records it (redacted)
    try:
        return int(COMMANDS[args.command].run(args))
    except SuiteError as exc:       # one line whatever the input held: control characters made visible
        from suite.report.escape import terminal
        print(f"suite {args.command}: error: {terminal(exc)}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print(f"suite {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `suite list workloads | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:          # a full disk, a file size limit, a quota, a read-only file system: one line
        from suite import files
        from suite.report.escape import terminal
        if not files.is_resource_error(exc):
            raise
        print(f"suite {args.command}: error: {terminal(files.write_error(exc.filename or 'a file', exc))}",
              file=sys.stderr)
        return int(ExitCode.BAD_INPUT)


def entry() -> None:
    """The `suite` program (python -m suite, the console script): main()'s exit code. A second stop
    (SIGTERM or Ctrl-C) that lands while the first is being reported exits 130 as
    the first did, never as a KeyboardInterrupt escaping the interpreter (exit -2, issue 47's flake: seen
    again after `suite submission: interrupted` was printed). Once main() has returned or raised, the
    process ignores SIGINT and SIGTERM: a stop landing in the handler or in sys.exit's unwinding raised
    past this function."""
    import signal

    try:
        try:
            code = main()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, signal.SIG_IGN)
    except KeyboardInterrupt:
        code = 130
    # CPython marks a KeyboardInterrupt that left code run from a string (exec of source: namedtuple,
    # dataclasses, a module's import) as unhandled even when a caller caught it, and under `python -m`
    # then ends the process by SIGINT (-2) after our exit code was set: a stop landing while a module was
    # imported exited -2 after "interrupted" (issue 47's flake, test_sigterm_during_package[2.5]). Running
    # any string clears that mark.
    exec("")   # noqa: S102 -- an empty string: no code runs
    sys.exit(code)


if __name__ == "__main__":
    entry()
