"""What the checker reports: Finding records and the verdict they add up to.

A Finding is {rule_id, severity, effect, path, field, expected, actual, message}; `effect` says
what the result still qualifies for when the rule fails:

- closed: a note, nothing lost;
- fix-required: a documentation defect reviewers fix rather than reject (a system description that
  is not valid JSON or fails its schema): the measurement stands, the verdict reads
  "CLOSED, fix required", and the result is not compliant until the document is fixed;
- open: no longer closed-division;
- invalid: a broken measurement rule.

A verdict is the worst measurement effect: invalid > open > closed; fix-required is a flag beside
it (`fix_required`), never a verdict of its own.
"""

from dataclasses import asdict, dataclass

EFFECTS = ("closed", "fix-required", "open", "invalid")
VERDICTS = ("closed", "open", "invalid")
SEVERITIES = ("info", "warning", "error")
_RANK = {e: i for i, e in enumerate(VERDICTS)}
_RANK["fix-required"] = _RANK["closed"]


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
    """`note` (e.g. how an expected value was derived) follows the values in the message."""
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
    return VERDICTS[worst]


def worst(verdicts) -> str:
    return VERDICTS[max((_RANK[v] for v in verdicts), default=0)]


def fix_required(findings) -> bool:
    """A documentation defect to fix before the result is accepted (effect fix-required)."""
    return any(f.effect == "fix-required" for f in findings)


def label(verdict: str, fix: bool) -> str:
    """'CLOSED', 'CLOSED, fix required', ..."""
    return verdict.upper() + (", fix required" if fix else "")
