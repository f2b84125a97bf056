"""The rule operators: the closed registry OPS a rule's `op` names, and the records they return.

An operator takes (actual, value, options) and returns a list of Violations (empty: the rule
holds). List-valued facts are lists of Items, so a violation can name the element's own file.
"""

from __future__ import annotations

from dataclasses import dataclass

from suite import files
from suite.numbers import is_number


@dataclass(frozen=True)
class Item:
    """One element of a list-valued fact, with where it came from (for per-element findings)."""

    value: object
    path: object = None
    field: str | None = None
    expected: object = None      # for problem items: what was expected
    shown: object = None         # what a finding reports as actual, when not `value` itself
    note: str = ""               # for problem items: what follows the values in the finding
    expected_given: bool = False  # for problem items: `expected` is the value, even when None


@dataclass(frozen=True)
class Violation:
    expected: object
    actual: object
    field_suffix: str = ""
    path: object = None
    field: str | None = None
    note: str = ""               # follows the values in the finding's message



# --------------------------------------------------------------------------- operators


def _values(actual):
    return [a.value if isinstance(a, Item) else a for a in actual]


def _one(ok: bool, expected, actual) -> list[Violation]:
    return [] if ok else [Violation(expected, actual)]


def op_eq(a, v, o):
    same = (a is v) if isinstance(v, bool) else (a == v and not isinstance(a, bool))
    return _one(same, v, a)


def op_ne(a, v, o):
    return _one(a != v, f"not {v!r}", a)


def op_in(a, v, o):
    return _one(a in v, f"one of {v}", a)


def op_not_in(a, v, o):
    return _one(a not in v, f"none of {v}", a)


def op_min(a, v, o):
    return _one(is_number(a) and a >= v, f">= {v!r}", a)


def op_max(a, v, o):
    return _one(is_number(a) and a <= v, f"<= {v!r}", a)


def op_range(a, v, o):
    return _one(is_number(a) and v[0] <= a <= v[1], f"within [{v[0]!r}, {v[1]!r}]", a)


def op_exists(a, v, o):
    present = a is not None
    return _one(present == bool(v), "present" if v else "absent", "present" if present else "missing")


def _len(a):
    return len(a) if isinstance(a, (list, tuple, dict, str)) else None


def op_count(a, v, o):
    n = _len(a)
    return _one(n == v, f"{v} entries", f"{n} entries" if n is not None else type(a).__name__)


def op_count_min(a, v, o):
    n = _len(a)
    return _one(n is not None and n >= v, f"at least {v} entries", f"{n} entries")


def op_count_max(a, v, o):
    n = _len(a)
    return _one(n is not None and n <= v, f"at most {v} entries", f"{n} entries")


def close_enough(a, b, rel: float = 0.0, abs_: float = 0.0) -> bool:
    """Both finite numbers and |a - b| within max(abs_, rel x the larger magnitude)."""
    if not (is_number(a) and is_number(b)):
        return False
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def op_close(a, v, o):
    """Reported `a` equals recomputed `v` within rel/abs tolerance; lists element by element."""
    rel, abs_ = o.get("rel", 0.0), o.get("abs", 0.0)
    if isinstance(v, (list, tuple)):
        if not isinstance(a, (list, tuple)):
            return [Violation(f"a list of {len(v)} numbers", type(a).__name__)]
        if len(a) != len(v):
            return [Violation(f"{len(v)} values", f"{len(a)} values")]
        return [Violation(b, x, f"[{i}]") for i, (x, b) in enumerate(zip(a, v)) if not close_enough(x, b, rel, abs_)]
    return _one(close_enough(a, v, rel, abs_), v, a)


def op_all_in(a, v, o):
    if not isinstance(a, (list, tuple)):
        return [Violation(f"a list within {v}", type(a).__name__)]
    out = []
    allowed = ", ".join(map(str, v))
    for item in a:
        value = item.value if isinstance(item, Item) else item
        if value in v:
            continue
        if isinstance(item, Item) and item.shown is not None:     # a value differing from item.expected
            out.append(Violation(f"{item.expected!r} (the workload's; not in the allow-list)", item.shown,
                                 path=item.path, field=item.field))
        else:
            out.append(Violation(f"one of {allowed}", value,
                                 path=getattr(item, "path", None), field=getattr(item, "field", None)))
    return out


def op_empty(a, v, o):
    """Every element is a problem; one violation each (items carry their own path/field/expected)."""
    if not isinstance(a, (list, tuple)):
        return [Violation("none", a)]
    out = []
    for item in a:
        if isinstance(item, Item):
            given = item.expected is not None or item.expected_given
            out.append(Violation(item.expected if given else "none", item.value,
                                 path=item.path, field=item.field, note=item.note))
        else:
            out.append(Violation("none", item))
    return out


def op_all_equal(a, v, o):
    """Every element equals the most common one (first seen wins ties)."""
    if not isinstance(a, (list, tuple)) or not a:
        return []
    vals = _values(a)
    counts: dict = {}
    for x in vals:
        counts[repr(x)] = counts.get(repr(x), 0) + 1
    top = max(counts.values())
    majority = next(x for x in vals if counts[repr(x)] == top)
    return [Violation(majority, x, path=getattr(item, "path", None), field=getattr(item, "field", None))
            for item, x in zip(a, vals) if x != majority]


def op_increasing(a, v, o):
    """Each number greater than the one before it (list order); one violation per step back."""
    if not isinstance(a, (list, tuple)):
        return []
    out, prev, prev_shown = [], None, None
    for item, x in zip(a, _values(a)):
        shown = item.shown if isinstance(item, Item) and item.shown is not None else x
        if prev is not None and is_number(x) and not x > prev:
            out.append(Violation(f"later than {prev_shown} (the one before)", shown,
                                 path=getattr(item, "path", None), field=getattr(item, "field", None)))
        if is_number(x):
            prev, prev_shown = x, shown
    return out


def op_spread_max(a, v, o):
    vals = [x for x in _values(a or []) if is_number(x)]
    if len(vals) < 2:
        return []
    spread = max(vals) - min(vals)
    return _one(spread <= v, f"a spread <= {v!r}", spread)


def op_none_equal(a, v, o):
    """No element of a list equals v. One violation for the list, in words a reviewer reads once:
    "12 of 16 hosts report 0 GiB memory" (options `of`: what the elements are, `say`: what the
    bad ones do; plain "entries" / "equal to v" without them)."""
    if not isinstance(a, (list, tuple)):
        return []
    vals = _values(a)
    bad = sum(1 for x in vals if is_number(x) and x == v)
    of, say = o.get("of", "entries"), o.get("say", f"equal to {v!r}")
    return _one(bad == 0, f"no {of} that {say}", f"{bad} of {len(vals)} {of} {say}")


def op_meets_threshold(a, v, o):
    """A quality record {metric, value} meets a threshold {metric, op: min|max|none, value}: the
    same metric, a finite value, >= (min) or <= (max) the threshold. Missing counts as failing."""
    if not isinstance(v, dict) or v.get("op") not in ("min", "max") or not is_number(v.get("value")):
        return []
    expected = f"{v.get('metric')} {'>=' if v['op'] == 'min' else '<='} {v['value']:g}"
    value = a.get("value") if isinstance(a, dict) else None
    measured = value if is_number(value) else None
    if isinstance(a, dict) and a.get("metric") != v.get("metric"):
        return [Violation(expected, f"metric {a.get('metric')}")]
    if measured is None:
        return [Violation(expected, "no value" if not isinstance(value, float) else value)]
    ok = measured >= v["value"] if v["op"] == "min" else measured <= v["value"]
    return _one(ok, expected, measured)


def op_schema(a, v, o):
    return [Violation("valid", e.split(": ", 1)[1] if ": " in e else e, field_suffix="",
                      field=e.split(": ", 1)[0] if ": " in e else None)
            for e in files.schema_errors(a, v)]


OPS = {
    "eq": op_eq, "ne": op_ne, "in": op_in, "not_in": op_not_in, "min": op_min, "max": op_max,
    "range": op_range, "exists": op_exists, "count": op_count, "count_min": op_count_min,
    "count_max": op_count_max, "close": op_close, "all_in": op_all_in, "empty": op_empty,
    "all_equal": op_all_equal, "increasing": op_increasing, "spread_max": op_spread_max, "schema": op_schema,
    "none_equal": op_none_equal, "meets_threshold": op_meets_threshold,
}
EVALUATED_WHEN_MISSING = {"exists", "meets_threshold"}
