"""`suite engine {install, list}`: the engines' venvs (suite.engines.registry). Standard library only."""

import json

from suite.errors import ExitCode


def add_parser(sub) -> None:
    """The engines offered are those the registered kinds brought (suite.engines.registry.names(): the
    caller, suite/commands/engine.py, has the kinds registered first)."""
    from suite.engines import registry

    p = sub.add_parser("engine", help="install or list benchmark engines (DLIO, the reference code)",
                       description="`suite engine install dlio` builds DLIO 2.0.0 (TensorFlow-CPU, from PyPI, "
                                   "about 1.7 GB) in a pinned venv of its own, outside this environment (diskann and milvus: "
                                   "the vector_database engines, likewise); "
                                   "`suite engine list` shows where (SUITE_ENGINES_DIR overrides).")
    esub = p.add_subparsers(dest="action", metavar="ACTION")
    esub.required = True
    esub.add_parser("install", help="build an engine's venv").add_argument("name", choices=registry.names())
    esub.add_parser("list", help="the engines, their versions and where they are").add_argument(
        "--format", choices=["text", "json"], default="text")


def run(args) -> int:
    from suite.engines import registry

    if args.action == "install":
        registry.install(args.name)
        return ExitCode.OK
    rows = registry.rows()
    if args.format == "json":
        print(json.dumps(rows, indent=2, sort_keys=True))
    else:
        for r in rows:
            print(f"{r['engine']:<7} {r['version']:<9} {r['status']}  {r['path']}")
    return ExitCode.OK
