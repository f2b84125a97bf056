"""suite.schemafast answers as jsonschema does, or not at all: on every real document in tests/data, rules/,
workloads/ and the kinds' facts under every schema of the package, and on those documents changed at a random
place (Hypothesis: a value replaced by any JSON value, NaN and 1-vs-True included, a key dropped or added)."""
import json
import math
from functools import lru_cache
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suite import files, schemafast

REPO = Path(__file__).resolve().parent.parent
NAMES = sorted(files._schema_files())


@lru_cache(maxsize=1)
def documents() -> list:
    out = []
    for path in sorted((REPO / "tests" / "data").rglob("*.json")):
        try:
            out.append(json.loads(path.read_text()))
        except (ValueError, UnicodeDecodeError):
            continue
    for pattern in ("rules/**/*.yaml", "workloads/**/*.yaml", "suite/*/facts.yaml", "suite/*/*.yaml"):
        for path in sorted(REPO.glob(pattern)):
            out.append(yaml.safe_load(path.read_text()))
    return out


def jsonschema_valid(doc, name: str) -> bool:
    return not any(True for _ in files._validator(name).iter_errors(doc))


@lru_cache(maxsize=1)
def seeds() -> list[tuple[str, object]]:
    return [(name, doc) for name in NAMES for doc in documents() if jsonschema_valid(doc, name)]


def test_every_shipped_schema_is_a_valid_2020_12_schema():
    """What each process checked before it validated (now only where jsonschema is asked): checked once here."""
    for name in NAMES:
        doc = files._schema_doc(name)
        jsonschema.validators.validator_for(doc).check_schema(doc)


def test_every_real_document_under_every_schema():
    assert len(seeds()) >= 300 and len({n for n, _ in seeds()}) >= 25          # the real ones cover most schemas
    wrong = [(name, i) for name in NAMES for i, doc in enumerate(documents())
             if schemafast.valid(doc, files._schema_doc(name)) not in (None, jsonschema_valid(doc, name))]
    assert wrong == []


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True) | st.text(max_size=4)
                    | st.sampled_from([0, 1, 1.0, -1, True, False, "", "x", 2 ** 64, math.inf]),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=6)


def _mutate(data, doc):
    """`doc` with one change at a place drawn from its tree."""
    if isinstance(doc, (dict, list)) and doc and data.draw(st.booleans()):
        keys = list(doc) if isinstance(doc, dict) else list(range(len(doc)))
        k = data.draw(st.sampled_from(keys))
        copy = dict(doc) if isinstance(doc, dict) else list(doc)
        copy[k] = _mutate(data, doc[k])
        return copy
    how = data.draw(st.sampled_from(["replace", "drop", "add"]))
    if how == "drop" and isinstance(doc, dict) and doc:
        k = data.draw(st.sampled_from(list(doc)))
        return {key: v for key, v in doc.items() if key != k}
    if how == "add" and isinstance(doc, dict):
        return {**doc, data.draw(st.text(max_size=6)): data.draw(JSON)}
    return data.draw(JSON)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_changed_real_document_gets_jsonschemas_answer_or_none(data):
    name, doc = data.draw(st.sampled_from(seeds()))
    changed = _mutate(data, doc)
    fast = schemafast.valid(changed, files._schema_doc(name))
    assert fast in (None, jsonschema_valid(changed, name)), (name, changed)


@pytest.mark.parametrize("doc, schema, want", [
    (1, {"enum": [True]}, False), (True, {"const": 1}, False), (1.0, {"const": 1}, True),
    (float("nan"), {"type": "number", "minimum": 0}, True), (2.0, {"type": "integer"}, True),
    (True, {"type": "integer"}, False), ([1, 1.0], {"uniqueItems": True}, False),
    ({"a": 1}, {"properties": {"a": {"type": "string"}}}, False), ({"b": 1}, {"additionalProperties": False}, False),
    ({"x1": 1}, {"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False}, True),
    ([1, "a"], {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, True),
    (3, {"if": {"minimum": 2}, "then": {"maximum": 2}}, False), (3, {"not": {}}, None),
    (3, {"$ref": "https://example.com/s.json"}, None), ((1, 2), {"type": "array"}, None),
])
def test_keywords_as_jsonschema_reads_them(doc, schema, want):
    assert schemafast.valid(doc, schema) is want
    if want is not None:
        assert jsonschema.validators.validator_for({}).__call__(schema).is_valid(doc) is want
