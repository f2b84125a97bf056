"""`suite engine`: its options live in suite/engines/cli.py (standard library only: CI runs it
before our dependencies are installed)."""


def add_parser(sub) -> None:
    from suite.engines import cli as engine_cli

    engine_cli.add_parser(sub)


def run(args) -> int:
    from suite.engines import cli as engine_cli

    return engine_cli.run(args)
