"""suite/commands/: one module per command, each listed once by the dispatcher (suite/cli.py)."""

import importlib

import paths

from suite import cli


def test_every_command_module_is_dispatched_and_has_its_two_functions():
    modules = sorted(p.stem for p in (paths.REPO / "suite" / "commands").glob("*.py") if p.stem != "__init__")
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in cli.COMMANDS.values()) == modules
    for name in modules:
        module = importlib.import_module(f"suite.commands.{name}")
        assert callable(module.add_parser) and callable(module.run), name


def test_the_parser_has_each_command_under_its_name():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == list(cli.COMMANDS)
