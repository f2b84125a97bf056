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


def nonfinite(doc, limit: int = 20) -> list[tuple[str, str]]:
    """(dotted field, 'NaN'/'Infinity'/'-Infinity') for each non-finite float in a parsed document,
    the first `limit` of them in document order (JSON and YAML loaders both let them through)."""
    out: list[tuple[str, str]] = []
    stack = [("", doc)]
    while stack and len(out) < limit:
        where, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            out.append((where or "(top level)", "NaN" if node != node else ("Infinity" if node > 0 else "-Infinity")))
        elif isinstance(node, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(node))))
    return out


# A figure's provenance (issue 46, class 2): every figure a command shows as measured is either
# re-derived from the lowest records (steps/, the ranks' records) by its kind's figures code, or marked
# claimed (a summary's or results.json's number, shown as such in text, Markdown, HTML, CSV and JSON).
RECOMPUTED = "recomputed"
CLAIMED = "claimed"
CLAIM_TOLERANCE = 1e-6          # relative: a claim and its re-derivation from the same records agree to rounding


def claim_differs(claimed, derived, rel: float = CLAIM_TOLERANCE) -> bool:
    """Whether a claimed figure is not the figure re-derived from the records (a missing claim is no claim)."""
    c, d = to_float(claimed), to_float(derived)
    if c is None or d is None:
        return False
    return abs(c - d) > rel * max(1.0, abs(c), abs(d))


def source_label(label: str, source: str) -> str:
    """A figure's heading as every output shows it: a claimed figure says so."""
    return label if source == RECOMPUTED else f"{label} ({CLAIMED})"
