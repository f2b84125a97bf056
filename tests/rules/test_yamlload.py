"""suite.rules.yamlload: the bounded YAML loader the rule engine and the result walker share."""

import pytest

from suite.errors import ResultError, RuleError
from suite.rules import yamlload


def test_reads_a_document(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_text("a: [1, 2]\nb: {c: x}\n")
    assert yamlload.load_yaml_fast(p) == {"a": [1, 2], "b": {"c": "x"}}


def test_deep_nesting_is_refused_before_parsing(tmp_path):
    p = tmp_path / "deep.yaml"
    p.write_text("[" * (yamlload.MAX_NESTING + 1) + "]" * (yamlload.MAX_NESTING + 1))
    with pytest.raises(RuleError, match=f"nesting: expected at most {yamlload.MAX_NESTING} levels"):
        yamlload.load_yaml_fast(p, error=RuleError)


def test_bad_yaml_is_one_line_naming_the_file_and_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("a: 1\nb: [unclosed\n")
    with pytest.raises(ResultError) as err:
        yamlload.load_yaml_fast(p)
    assert str(err.value).startswith(f"{p}: line ") and "expected valid YAML" in str(err.value)
    assert "\n" not in str(err.value)

