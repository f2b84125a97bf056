"""`suite list workloads`: each benchmark kind's workloads."""

from suite.errors import ExitCode


def add_parser(sub) -> None:
    p = sub.add_parser("list", help="list the workloads and their accelerators")
    p.add_argument("what", nargs="?", choices=["workloads"], default="workloads")


def run(args) -> int:
    from suite.kinds import registry
    from suite.report.escape import terminal_lines

    print(terminal_lines("\n\n".join(kind.workloads.listing() for kind in registry.KINDS if kind.workloads.listing is not None)))
    return ExitCode.OK
