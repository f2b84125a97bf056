from suite.cli import entry

entry()
