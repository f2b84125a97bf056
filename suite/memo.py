"""What one command works out once (issue 47: `suite report` on a results dir of 500 runs walked and read
the tree twice, worked out each run directory's owner twice and listed the rules directories 7,000
times). Inside `held()`, a value made by `kept(key, make)` is kept by its key and given again to every
later caller in that block; outside it nothing is kept, so a process that changes files between two
calls (a test, `suite submission`) reads them afresh. A command holds it only over inputs it does not
change while it runs (`suite report` writes nowhere but --out, which may not lie inside its input)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

_HELD: dict | None = None


@contextmanager
def held() -> Iterator[None]:
    """Keep what `kept` makes until the block ends (a nested block shares the outer one's)."""
    global _HELD
    if _HELD is not None:
        yield
        return
    _HELD = {}
    try:
        yield
    finally:
        _HELD = None


def kept(key: Hashable, make: Callable[[], T]) -> T:
    """make(), or inside `held()` the value made for `key` before (an error is not kept: raised again
    by the next call's make)."""
    if _HELD is None:
        return make()
    if key not in _HELD:
        _HELD[key] = make()
    return _HELD[key]
