"""`suite engine`: its options live in suite/engines/cli.py (standard library only: CI runs it
before our dependencies are installed). The engines are the kinds' (suite/<kind>/engines.py): the
kinds registry, imported first, hands them to suite.engines.registry."""


def add_parser(sub) -> None:
    import suite.kinds.registry  # noqa: F401  the kinds' engines join suite.engines.registry
    from suite.engines import cli as engine_cli

    engine_cli.add_parser(sub)


def run(args) -> int:
    import suite.kinds.registry  # noqa: F401  the kinds' engines join suite.engines.registry
    from suite.engines import cli as engine_cli

    return engine_cli.run(args)
