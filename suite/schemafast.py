"""A quick yes for the common case: is a document valid under one of the package's JSON Schemas (draft
2020-12)? `valid(doc, schema)` answers True or False where it knows every keyword on the way, and None
where it meets one it does not (or a value not of JSON's types): the caller then asks jsonschema, which
also words the errors (suite.files.schema_errors). So a rank or a `python -m suite` that reads only
valid files never imports jsonschema (~0.1 s of CPU a process, with its metaschema check), and a valid
document is walked once, without jsonschema's per-keyword error objects (issue 47: the suite's CPU).

Its answers are jsonschema's by construction, keyword by keyword as draft 2020-12 defines them with no
format assertion (jsonschema's default): tests/test_schemafast.py holds every answer it gives on real
and mutated documents of every schema against jsonschema's.
"""

from __future__ import annotations

import re
from functools import lru_cache

ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "definitions", "title", "description",
                         "default", "examples", "format", "deprecated", "readOnly", "writeOnly"})
KNOWN = ANNOTATIONS | {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                       "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "items",
                       "prefixItems", "properties", "patternProperties", "additionalProperties", "required",
                       "minProperties", "maxProperties", "propertyNames", "allOf", "anyOf", "oneOf", "if",
                       "then", "else", "$ref"}
PLAIN = (dict, list, str, int, float, bool, type(None))


class Unknown(Exception):
    """A keyword, reference or value this module does not judge: jsonschema does."""


def valid(doc, schema: dict) -> bool | None:
    """True/False as jsonschema would answer `doc` under `schema` (a root schema, its $refs local), or
    None where it cannot tell."""
    try:
        return _ok(doc, schema, schema)
    except (Unknown, RecursionError, re.error, TypeError):      # TypeError: a key that is not a string
        return None


def _ok(x, s, root) -> bool:
    if s is True:
        return True
    if s is False:
        return False
    if not isinstance(s, dict) or not s.keys() <= KNOWN:
        raise Unknown
    if type(x) not in PLAIN:
        raise Unknown
    for key, want in s.items():
        if key not in ANNOTATIONS and not CHECKS[key](x, want, s, root):
            return False
    return True


def _type(x, want, s, root) -> bool:
    return any(_is(x, t) for t in want) if isinstance(want, list) else _is(x, want)


def _is(x, t) -> bool:
    if t == "object":
        return isinstance(x, dict)
    if t == "array":
        return isinstance(x, list)
    if t == "string":
        return isinstance(x, str)
    if t == "boolean":
        return isinstance(x, bool)
    if t == "null":
        return x is None
    if isinstance(x, bool):
        return False
    if t == "number":
        return isinstance(x, (int, float))
    if t == "integer":
        return isinstance(x, int) or (isinstance(x, float) and x.is_integer())
    raise Unknown


def _equal(a, b) -> bool:
    """jsonschema's equality: a bool equals only a bool; 1 == 1.0; containers item by item."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(i, j) for i, j in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


@lru_cache(maxsize=512)
def _pattern(text: str):
    return re.compile(text)


def _unique(items: list) -> bool:
    if any(isinstance(i, (bool, list, dict)) for i in items):
        raise Unknown                  # jsonschema's own rules for these (its `uniq`): leave them to it
    return all(not _equal(items[i], items[j]) for i in range(len(items)) for j in range(i + 1, len(items)))


def _items(x, want, s, root) -> bool:
    if not isinstance(x, list):
        return True
    start = len(s.get("prefixItems", ()))
    return all(_ok(item, want, root) for item in x[start:])


def _prefix(x, want, s, root) -> bool:
    return not isinstance(x, list) or all(_ok(item, sub, root) for item, sub in zip(x, want))


def _properties(x, want, s, root) -> bool:
    return not isinstance(x, dict) or all(_ok(x[k], sub, root) for k, sub in want.items() if k in x)


def _pattern_properties(x, want, s, root) -> bool:
    if not isinstance(x, dict):
        return True
    return all(_ok(v, sub, root) for p, sub in want.items() for k, v in x.items() if _pattern(p).search(k))


def _additional(x, want, s, root) -> bool:
    if not isinstance(x, dict):
        return True
    named, patterns = s.get("properties", {}), [_pattern(p) for p in s.get("patternProperties", {})]
    return all(_ok(v, want, root) for k, v in x.items()
               if k not in named and not any(p.search(k) for p in patterns))


def _ref(x, want, s, root) -> bool:
    if not isinstance(want, str) or not (want == "#" or want.startswith("#/")):
        raise Unknown
    target = root
    for part in want[2:].split("/") if want != "#" else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            raise Unknown
        target = target[part]
    return _ok(x, target, root)


def _if(x, want, s, root) -> bool:
    branch = "then" if _ok(x, want, root) else "else"
    return branch not in s or _ok(x, s[branch], root)


CHECKS = {
    "type": _type,
    "enum": lambda x, want, s, root: any(_equal(x, v) for v in want),
    "const": lambda x, want, s, root: _equal(x, want),
    # as jsonschema compares (a NaN fails no bound)
    "minimum": lambda x, want, s, root: not _number(x) or not x < want,
    "maximum": lambda x, want, s, root: not _number(x) or not x > want,
    "exclusiveMinimum": lambda x, want, s, root: not _number(x) or not x <= want,
    "exclusiveMaximum": lambda x, want, s, root: not _number(x) or not x >= want,
    "minLength": lambda x, want, s, root: not isinstance(x, str) or len(x) >= want,
    "maxLength": lambda x, want, s, root: not isinstance(x, str) or len(x) <= want,
    "pattern": lambda x, want, s, root: not isinstance(x, str) or _pattern(want).search(x) is not None,
    "minItems": lambda x, want, s, root: not isinstance(x, list) or len(x) >= want,
    "maxItems": lambda x, want, s, root: not isinstance(x, list) or len(x) <= want,
    "uniqueItems": lambda x, want, s, root: not want or not isinstance(x, list) or _unique(x),
    "items": _items,
    "prefixItems": _prefix,
    "properties": _properties,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional,
    "required": lambda x, want, s, root: not isinstance(x, dict) or all(k in x for k in want),
    "minProperties": lambda x, want, s, root: not isinstance(x, dict) or len(x) >= want,
    "maxProperties": lambda x, want, s, root: not isinstance(x, dict) or len(x) <= want,
    "propertyNames": lambda x, want, s, root: not isinstance(x, dict) or all(_ok(k, want, root) for k in x),
    "allOf": lambda x, want, s, root: all(_ok(x, sub, root) for sub in want),
    "anyOf": lambda x, want, s, root: any(_ok(x, sub, root) for sub in want),
    "oneOf": lambda x, want, s, root: sum(_ok(x, sub, root) for sub in want) == 1,
    "if": _if,
    "then": lambda x, want, s, root: True,           # judged with "if"; alone, jsonschema ignores it
    "else": lambda x, want, s, root: True,
    "$ref": _ref,
}
