"""A store's rows read back as Entry and Figure, every cell checked: a store is input like any other
(another suite wrote it, a person edited it, a disk flipped a bit). A cell of the wrong type, JSON that
does not parse, NaN or infinity is a HistoryError naming the store, the entry id, the field, what was
expected and what is there (one line, exit 2), never a traceback."""

from __future__ import annotations

import json
import math

from suite.errors import SuiteError
from suite.history.entry import Entry, Figure

TEXT = ("recorded_at", "source", "status", "kind", "verdict", "system_fp", "system_label")
TEXT_OR_NONE = ("started_at", "workload", "accelerator", "ruleset", "division", "results_path", "content_hash", "cwd",
                "series_key")
INT_OR_NONE = ("accelerators", "exit_code")
JSON_SHAPES = {"command": (list, "a JSON list of strings"), "system": (dict, "a JSON object"),
               "identity": (dict, "a JSON object"), "hash_scope": (dict, "a JSON object or nothing")}


class StoreDataError(SuiteError):
    """A cell of the store that is not what this suite writes (one line, exit 2)."""


def _bad(where: str, entry_id, field: str, expected: str, actual) -> StoreDataError:
    shown = repr(actual)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return StoreDataError(f"{where}: entry {entry_id}: {field}: expected {expected}, got {shown}")


def integer(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _json(where: str, entry_id, field: str, text, expected: str):
    if not isinstance(text, str):
        raise _bad(where, entry_id, field, expected, text)
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise _bad(where, entry_id, field, expected, text) from None


def entry(where: str, row, columns, figures) -> Entry:
    """The Entry of one row (id first, then `columns`)."""
    entry_id = integer(row[0])
    if entry_id is None:
        raise _bad(where, row[0], "id", "an integer", row[0])
    values = dict(zip(columns, row[1:]))
    for c in TEXT:
        if not isinstance(values[c], str):
            raise _bad(where, entry_id, c, "text", values[c])
    for c in TEXT_OR_NONE:
        if values[c] is not None and not isinstance(values[c], str):
            raise _bad(where, entry_id, c, "text or nothing", values[c])
    for c in INT_OR_NONE:
        if values[c] is not None and integer(values[c]) is None:
            raise _bad(where, entry_id, c, "an integer or nothing", values[c])
    d = values["duration_s"]
    if d is not None and (isinstance(d, bool) or not isinstance(d, int | float) or not math.isfinite(d)):
        raise _bad(where, entry_id, "duration_s", "a finite number of seconds or nothing", d)
    raw = dict(values)
    for c, (shape, expected) in JSON_SHAPES.items():
        if c == "hash_scope" and values[c] is None:
            values[c] = {}
            continue
        got = _json(where, entry_id, c, values[c], expected)
        if not isinstance(got, shape) or c == "command" and not all(isinstance(a, str) for a in got):
            raise _bad(where, entry_id, c, expected, values[c])
        values[c] = got
    scope = values["hash_scope"]
    if scope and not (isinstance(scope.get("root"), str) and isinstance(scope.get("exclude", []), list)
                      and all(isinstance(x, str) for x in scope.get("exclude", []))):
        raise _bad(where, entry_id, "hash_scope", "{root: text, exclude: [text]}", raw["hash_scope"])
    values["command"] = tuple(values["command"])
    values["series_key"] = values["series_key"] or ""
    return Entry(id=entry_id, figures=tuple(figures), **values)


def _numbers(where: str, entry_id, field: str, text, depth: int) -> tuple:
    expected = "a JSON list of finite numbers" if depth == 1 else "a JSON list of lists of finite numbers"
    got = _json(where, entry_id, field, text, expected)

    def ok(x, d):
        if d == 0:
            return not isinstance(x, bool) and isinstance(x, int | float) and math.isfinite(x)
        return isinstance(x, list) and all(ok(y, d - 1) for y in x)

    if not ok(got, depth):
        raise _bad(where, entry_id, field, expected, text)
    return tuple(tuple(float(y) for y in x) for x in got) if depth == 2 else tuple(float(x) for x in got)


def figure(where: str, entry_id, name, label, higher_is_better, per_run, per_epoch) -> Figure:
    """One row of the figures table as a Figure."""
    if not isinstance(name, str) or not isinstance(label, str):
        raise _bad(where, entry_id, f"figures.{name}", "a name and a label (text)", (name, label))
    if integer(higher_is_better) not in (0, 1):
        raise _bad(where, entry_id, f"figures.{name}.higher_is_better", "0 or 1", higher_is_better)
    return Figure(name, label, bool(higher_is_better), _numbers(where, entry_id, f"figures.{name}.per_run", per_run, 1),
                  _numbers(where, entry_id, f"figures.{name}.per_epoch", per_epoch, 2))
