"""Numbers as people read them in terminal text (issue 38): rounded to what they mean.

`--format json` keeps every value exact; only text for people goes through here:

- AU and other percentages: 2 decimals (26.696426993492032 -> 26.70);
- bytes: an integer, with GiB (2 decimals) beside it from 1 GiB up;
- seconds (a field ending in _s, a duration or a time): 3 decimals;
- any other float: 2 decimals from 1 up, else 4 significant digits at most 4 decimals (1.23e-05 below that).

`finding(f)` is a finding's message with its expected and actual values said so, and any other long float
in it (a note's) rounded the generic way.
"""

from __future__ import annotations

import math
import re

from suite.rules.findings import render
from suite.sizes import GIB

MAX_DECIMALS = 4                     # no float in findings text has more
# a decimal number with more than MAX_DECIMALS decimals, not part of a version, a time of day or a name
_LONG_FLOAT = re.compile(r"(?<![\w.:])-?\d+\.\d{%d,}(?:[eE][-+]?\d+)?(?![\w.])" % (MAX_DECIMALS + 1))


def _unit(field: str) -> str:
    name = str(field or "").lower()
    words = set(re.split(r"[^a-z0-9]+", name))
    if "au" in words or "percent" in name or "percentage" in name or name.endswith("_pct"):
        return "percent"
    if "bytes" in name or name.endswith("_b"):
        return "bytes"
    if name.endswith("_s") or "duration" in name or "seconds" in name or "time" in words:
        return "seconds"
    return ""


def number(value: float, field: str = "") -> str:
    """One float rounded to what it means (by its field's name)."""
    if not math.isfinite(value) or abs(value) >= 1e15:
        return generic(value)                # inf, nan, 1e308: no 300-digit line
    unit = _unit(field)
    if unit == "percent":
        return f"{value:.2f}"
    if unit == "bytes":
        whole = int(round(value))
        return f"{whole} ({value / GIB:.2f} GiB)" if abs(value) >= GIB else str(whole)
    if unit == "seconds":
        return f"{value:.3f}"
    return generic(value)


def generic(value: float) -> str:
    """A float of unknown meaning: 2 decimals from 1 up, else at most 4 decimals (or 3 significant digits);
    past 1e15 (where 2 decimals mean nothing) 6 significant digits; inf and nan as Python says them."""
    if not math.isfinite(value):
        return repr(value)
    if abs(value) >= 1e15:
        return f"{value:.6g}"
    if value == int(value):
        return repr(float(value))            # 85.0 stays 85.0: a threshold as the rule file says it
    if abs(value) >= 1:
        return f"{value:.2f}"
    small = f"{value:.{MAX_DECIMALS}f}"
    return small if float(small) != 0 else f"{value:.3g}"


def value(v, field: str = "") -> str:
    """A finding's expected or actual value for people (suite.rules.findings.render, numbers rounded)."""
    if isinstance(v, bool) or not isinstance(v, (float, list, tuple)):
        return render(v)
    if isinstance(v, float):
        return number(v, field)
    inner = ", ".join(value(x, field) for x in list(v)[:8])
    more = f", ... ({len(v)} items)" if len(v) > 8 else ""
    return f"[{inner}{more}]"


def rounded(text: str) -> str:
    """Free text with every float of more than MAX_DECIMALS decimals rounded the generic way."""
    return _LONG_FLOAT.sub(lambda m: generic(float(m.group(0))), str(text))


def finding(f) -> str:
    """A finding's message as people read it: `<path>: <field>: expected X, got Y ...` with X and Y
    rounded by the field's meaning, the rest of it (a note) with long floats rounded."""
    get = (lambda k: f.get(k)) if isinstance(f, dict) else (lambda k: getattr(f, k))
    message, path, field = str(get("message")), get("path"), get("field")
    head = f"{path}: {field}: expected {render(get('expected'))}, got {render(get('actual'))}"
    if message.startswith(head):
        said = f"{path}: {field}: expected {value(get('expected'), field)}, got {value(get('actual'), field)}"
        return said + rounded(message[len(head):])
    return rounded(message)
