"""Benchmark engines besides our own runner: where each lives, how it is installed, how it is found.

`suite engine install dlio` builds DLIO (the MLPerf Storage reference code) in a venv of its own,
pinned, outside our environment; `suite run --engine dlio` and `suite datagen --engine dlio` find it
here. Standard library only: this package is imported by `python3 -m suite engine install` before
our own dependencies exist (CI installs the engine that way).
"""
