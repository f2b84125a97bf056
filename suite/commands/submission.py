"""`suite submission`: its options and subcommands live in suite/submission/cli.py."""


def add_parser(sub) -> None:
    from suite.submission import cli as submission_cli

    submission_cli.add_parser(sub)


def run(args) -> int:
    from suite.submission import cli as submission_cli

    return submission_cli.run(args)
