"""Numbers in untrusted documents: the one place that says what counts as one.

A number is a finite int or float that is not a bool (JSON's true is no count); DLIO writes
some values as numeric strings, which `to_float` reads too. Non-finite values are refused.
"""

import math


def is_number(x) -> bool:
    """A finite int or float, not a bool."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def as_int(x) -> int | None:
    """x when it is an int (not a bool), else None."""
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def finite_list(x) -> list[float] | None:
    """A non-empty list of numbers as floats, else None."""
    if isinstance(x, list) and x and all(is_number(v) for v in x):
        return [float(v) for v in x]
    return None


def to_float(value) -> float | None:
    """A finite float from a number or a numeric string; else None."""
    if isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
