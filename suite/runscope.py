"""Which `suite run` (and `suite datasize`) options each benchmark kind uses; one given to a kind
that would ignore it is refused (one line, exit 2) rather than dropped: a result must not look as if
a setting applied.

The table falls out of the kinds' option groups (suite.benchmark.Kind.options: run and
datasize): an option some kind declares is refused for every kind that does not. An option
counts as given when its value differs from the parser's default (`scope_defaults`, recorded by the
`run` and `datasize` parsers). Options every kind uses (--workload, --data-dir, --results-dir) and
--engine (each kind refuses its own) are in no kind's group.
"""

from suite.errors import SuiteError
from suite.kinds import registry

TPCXAI_ENGINES = ("local", "dask")            # tpcx-ai's --engine values (suite/tpcx_ai/engine_dask.py)
SUITE_ENGINE_ONLY = ("debug_read_delay", "debug_decode_delay")   # benchmarks' knobs: our reader has them, DLIO not


def options(command: str = "run") -> dict[str, tuple[str, ...]]:
    """Option dest -> the kinds that use it, for `suite run` or `suite datasize`."""
    table: dict[str, tuple[str, ...]] = {}
    for kind in registry.KINDS:
        for dest in kind.options.run if command == "run" else kind.options.datasize:
            table[dest] = (*table.get(dest, ()), kind.name)
    return table


def kind(workload: str) -> str:
    return registry.for_workload(workload).name


def _shown(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def refuse_unused(args, command: str = "run") -> None:
    """Raise SuiteError for the first option the workload's kind (or engine) would ignore."""
    defaults, k = getattr(args, "scope_defaults", {}), kind(args.workload)
    for dest, kinds in options(command).items():
        value = getattr(args, dest, None)
        if k not in kinds and value != defaults.get(dest):
            users = " or ".join(registry.described(registry.get(name)) for name in kinds)
            raise SuiteError(f"--{dest.replace('_', '-')}: expected only with {users}, "
                             f"got {_shown(value)} with {args.workload}")
    if getattr(args, "engine", "suite") in TPCXAI_ENGINES and k != "tpcx-ai":
        raise SuiteError(f"--engine {args.engine}: expected suite or dlio for {args.workload} "
                         f"(local and dask are tpcx-ai's engines)")
    if getattr(args, "engine", "suite") != "suite":
        for dest in SUITE_ENGINE_ONLY:
            if getattr(args, dest, None) != defaults.get(dest):
                raise SuiteError(f"--{dest.replace('_', '-')}: expected only with --engine suite, got "
                                 f"{_shown(getattr(args, dest))} with --engine {args.engine}")
