"""The engine toyio would drive besides our runner (a placeholder: `suite engine list` shows it, not installed)."""

from suite.engines.registry import Engine

READER = Engine(name="toyio-reader", version="0.0.1", description="toyio's reference reader (never installed)",
                first=("toyio-reader==0.0.1",), packages=(), executable="toyio-reader", framework="toyio",
                download="nothing (a placeholder)")

ENGINES = (READER,)
