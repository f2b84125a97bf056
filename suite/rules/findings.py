"""What the checker reports: Finding records and the verdict they add up to.

A Finding is {rule_id, severity, effect, path, field, expected, actual, message}; `effect` says
what the result still qualifies for when the rule fails: closed (a note, nothing lost), open (no
longer closed-division) or invalid. A verdict is the worst effect: invalid > open > closed.
"""

from dataclasses import asdict, dataclass

EFFECTS = ("closed", "open", "invalid")
SEVERITIES = ("info", "warning", "error")
_RANK = {e: i for i, e in enumerate(EFFECTS)}


@dataclass(frozen=True)
class Finding:
    rule_id: str
    severity: str
    effect: str
    path: str
    field: str
    expected: object
    actual: object
    message: str

    def to_dict(self) -> dict:
        return asdict(self)


def render(value) -> str:
    """A value as it appears in a message: floats with full precision, short lists inline."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(render(v) for v in list(value)[:8])
        more = f", ... ({len(value)} items)" if len(value) > 8 else ""
        return f"[{inner}{more}]"
    return str(value)


def make(rule_id: str, severity: str, effect: str, path: str, field: str, expected, actual,
         note: str = "") -> Finding:
    """A Finding with the one message shape: `<path>: <field>: expected X, got Y (<rule id>)`."""
    note = f"; {note}" if note else ""
    message = f"{path}: {field}: expected {render(expected)}, got {render(actual)}{note} ({rule_id})"
    return Finding(rule_id, severity, effect, path, field, _plain(expected), _plain(actual), message)


def _plain(value):
    """JSON-friendly: keep numbers, strings, bools, None and lists of them; anything else as str."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def verdict(findings, division: str | None = None) -> str:
    """invalid > open > closed; a result in the open division is at best open."""
    worst = max((_RANK[f.effect] for f in findings), default=0)
    if division == "open":
        worst = max(worst, _RANK["open"])
    return EFFECTS[worst]


def worst(verdicts) -> str:
    return EFFECTS[max((_RANK[v] for v in verdicts), default=0)]
