import re
from pathlib import Path

import pytest
import yaml

from suite import files
from suite.rules import engine as rules
from suite.training import workloads
from suite.errors import RuleError
from suite.rules.engine import Item, Scope


# --------------------------------------------------------------------------- the rule files


def test_every_rule_file_validates_against_its_schema():
    paths = rules.all_rule_files()
    assert len(paths) >= 15
    for path in paths:
        files.load_yaml(path, schema="rules", error=RuleError)


@pytest.mark.parametrize("ruleset", ["v0.5", "v1.0", "v2.0"])
@pytest.mark.parametrize("division", ["closed", "open", None])
def test_every_layer_combination_loads(ruleset, division):
    for wl in [None, *sorted(p.stem for p in (rules.rules_dir() / ruleset).glob("*.yaml")
                             if p.stem not in ("common", "closed", "open"))]:
        rs = rules.load(ruleset, division, wl)
        assert rs.rules and rs.files[0].startswith("v1.0/common.yaml")
        ids = [r.id for r in rs.rules]
        assert len(ids) == len(set(ids))
        if division == "open":
            assert "closed-params" not in ids and "open-params" in ids
        else:
            assert "closed-params" in ids and "open-params" in ids


def test_rule_ids_are_stable_kebab_case_and_many():
    ids = rules.all_rule_ids()
    assert len(ids) >= 60
    # ours kebab-case; a Rules.md clause's own: <section>-<the review staff's camelCase name>
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*|[0-9]+(\.[0-9]+)+-[a-z][A-Za-z0-9]*", i) for i in ids), ids


@pytest.mark.parametrize("ruleset", ["v1.0", "v2.0"])
def test_au_thresholds_agree_with_the_workload_files(ruleset):
    from suite.training.check.checker import rule_set

    for name in ("unet3d", "resnet50", "cosmoflow"):
        rs = rule_set(ruleset, "closed", name, "h100")
        assert rs.params["au_threshold_percentage"] == pytest.approx(100 * workloads.resolve(name, "h100").au_threshold)
        # one source: the rule files keep no copy of the threshold
        assert rules.load(ruleset, "closed", name).params["au_threshold_percentage"] is None
    assert rule_set("v0.5", "closed", "unet3d", None).params["au_threshold_percentage"] == 90
    assert rule_set("v0.5", "closed", "bert", "v100").params["au_threshold_percentage"] == 90


def test_layering_v2_unet3d_adds_odirect_to_the_closed_list():
    assert rules.load("v2.0", "closed", "unet3d").params["workload_closed_params"] == ["reader.odirect"]
    assert rules.load("v1.0", "closed", "unet3d").params["workload_closed_params"] == []
    assert "warmup-run" in {r.id for r in rules.load("v2.0", "closed", "unet3d").rules}
    assert "warmup-run" not in {r.id for r in rules.load("v1.0", "closed", "unet3d").rules}


def test_engine_has_no_eval_or_exec():
    pkg = Path(rules.__file__).resolve().parent.parent
    src = "".join(p.read_text() for d in ("rules", "check") for p in sorted((pkg / d).glob("*.py")))
    assert not re.search(r"(?<![.\w])(eval|exec|compile|__import__)\s*\(", src)


# --------------------------------------------------------------------------- strict loader


@pytest.fixture
def rule_tree(tmp_path, monkeypatch):
    """A private rules/ directory; returns a writer for <ruleset>/<file>."""
    monkeypatch.setattr(rules, "rules_dir", lambda: tmp_path)
    rules.load.cache_clear()
    yield lambda rel, doc: (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True) or \
        (tmp_path / rel).write_text(yaml.safe_dump(doc, sort_keys=False))
    rules.load.cache_clear()


GOOD = {"id": "x-one", "applies_to": "host", "field": "workload", "op": "eq", "value": 1, "severity": "error",
        "effect": "invalid", "message": "m"}


@pytest.mark.parametrize("rule,match", [
    ({**GOOD, "op": "regex"}, r"common.yaml: rule x-one: op: expected one of .*got 'regex'"),
    ({**GOOD, "colour": "red"}, r"common.yaml: rule x-one: unknown key colour"),
    ({**GOOD, "applies_to": "galaxy"}, r"rule x-one: applies_to: expected one of"),
    ({**GOOD, "severity": "fatal"}, r"rule x-one: severity"),
    ({**GOOD, "effect": "maybe"}, r"rule x-one: effect"),
    ({**GOOD, "value": {"param": "nope"}}, r"rule x-one: value: expected a defined param, got 'nope'"),
    ({**GOOD, "value": {"fact": "a", "colour": 1}}, r"rule x-one: value: unknown key colour"),
    ({**GOOD, "value": {"fact": "a", "rel": 0.1}}, r"rule x-one: value: expected rel/abs only with op close"),
    ({**GOOD, "op": "range", "value": 3}, r"rule x-one: value: expected \[low, high\]"),
    ({**GOOD, "op": "schema", "value": "no-such"}, r"rule x-one: value: expected a schema name"),
    ({**GOOD, "id": "Bad_Id"}, r"id|pattern"),
    ({**GOOD, "when": {"field": "a", "op": "bogus"}}, r"rule x-one: when.op"),
    ({k: v for k, v in GOOD.items() if k != "message"}, r"rule x-one: expected keys message"),
])
def test_strict_loader_names_file_and_rule(rule_tree, rule, match):
    rule_tree("vt/common.yaml", {"schema_version": 1, "rules": [rule]})
    with pytest.raises(RuleError, match=match):
        rules.load("vt")


def test_duplicate_id_across_layers(rule_tree):
    rule_tree("vt/common.yaml", {"schema_version": 1, "rules": [GOOD]})
    rule_tree("vt/closed.yaml", {"schema_version": 1, "extends": ["vt/common.yaml"], "rules": [GOOD]})
    with pytest.raises(RuleError, match=r"closed.yaml: rule x-one: id: expected unique, got a duplicate of .*common.yaml"):
        rules.load("vt", "closed")


def test_extends_cycle_and_missing(rule_tree):
    rule_tree("vt/common.yaml", {"schema_version": 1, "extends": ["vt/closed.yaml"], "rules": []})
    rule_tree("vt/closed.yaml", {"schema_version": 1, "extends": ["vt/common.yaml"], "rules": []})
    with pytest.raises(RuleError, match="cycle"):
        rules.load("vt", "closed")
    rule_tree("vt/common.yaml", {"schema_version": 1, "extends": ["vt/gone.yaml"], "rules": []})
    rules.load.cache_clear()
    with pytest.raises(RuleError, match="expected an existing rule file, got 'vt/gone.yaml'"):
        rules.load("vt")


def test_unknown_file_key_and_bad_yaml(rule_tree, tmp_path):
    rule_tree("vt/common.yaml", {"schema_version": 1, "rules": [], "imports": []})
    with pytest.raises(RuleError, match="unknown key imports"):
        rules.load("vt")
    (tmp_path / "vt" / "common.yaml").write_text("rules: [\n")
    rules.load.cache_clear()
    with pytest.raises(RuleError, match="expected valid YAML"):
        rules.load("vt")


def test_unknown_ruleset(rule_tree):
    with pytest.raises(RuleError, match="ruleset: expected one of"):
        rules.load("v9.9")


def test_params_layer_later_wins(rule_tree):
    rule_tree("vt/common.yaml", {"schema_version": 1, "params": {"n": 5}, "rules": [
        {**GOOD, "value": {"param": "n"}}]})
    rule_tree("vt/unet3d.yaml", {"schema_version": 1, "params": {"n": 3}, "rules": []})
    assert rules.load("vt", None, "unet3d").params["n"] == 3
    assert rules.load("vt", None, None).params["n"] == 5


# --------------------------------------------------------------------------- operators


def viol(op, actual, value, **opts):
    return rules.OPS[op](actual, value, opts)


@pytest.mark.parametrize("op,actual,value,ok", [
    ("eq", 5, 5, True), ("eq", 5, 6, False), ("eq", True, 1, False), ("eq", 1, True, False),
    ("eq", True, True, True), ("ne", 1, 2, True), ("ne", 2, 2, False),
    ("in", "a", ["a", "b"], True), ("in", "c", ["a", "b"], False),
    ("not_in", "c", ["a"], True), ("not_in", "a", ["a"], False),
    ("min", 90.0, 90, True), ("min", 89.99, 90, False), ("min", "95", 90, False), ("min", float("nan"), 90, False),
    ("max", 2, 2, True), ("max", 3, 2, False), ("range", 5, [1, 9], True), ("range", 10, [1, 9], False),
    ("exists", None, True, False), ("exists", 0, True, True), ("exists", None, False, True),
    ("count", [1, 2], 2, True), ("count", [1], 2, False), ("count_min", [], 1, False), ("count_max", [1], 1, True),
    ("spread_max", [0.0, 9.9], 10, True), ("spread_max", [0.0, 10.5], 10, False),
    ("increasing", [1.0, 2.0, 3.5], None, True), ("increasing", [1.0, 1.0], None, False),
    ("increasing", [2.0, 1.0, 3.0], None, False), ("increasing", [], None, True),
])
def test_ops(op, actual, value, ok):
    assert (viol(op, actual, value) == []) is ok


def test_close_is_relative_and_elementwise():
    assert viol("close", 1.0, 1.0 + 1e-12, rel=1e-9) == []
    assert viol("close", 1.0, 1.001, rel=1e-9)
    v = viol("close", [1.0, 2.0, 3.0], [1.0, 2.5, 3.0], rel=1e-9)
    assert len(v) == 1 and v[0].field_suffix == "[1]" and v[0].expected == 2.5 and v[0].actual == 2.0
    assert viol("close", [1.0], [1.0, 2.0], rel=1e-9)[0].expected == "2 values"
    assert viol("close", 0.0, 1e-12, abs=1e-9) == []


def test_list_ops_report_each_item():
    items = [Item("a", "f1", "k1"), Item("z", "f2", "k2"), Item("y", "f3", "k3")]
    v = viol("all_in", items, ["a"])
    assert [(x.actual, x.path, x.field) for x in v] == [("z", "f2", "k2"), ("y", "f3", "k3")]
    v = viol("all_equal", [Item(1, "p1"), Item(1, "p2"), Item(2, "p3")], None)
    assert len(v) == 1 and v[0].expected == 1 and v[0].actual == 2 and v[0].path == "p3"
    v = viol("empty", [Item("bad", "p", "f", "good")], None)
    assert (v[0].expected, v[0].actual, v[0].path, v[0].field) == ("good", "bad", "p", "f")


def test_schema_op_names_the_field():
    v = viol("schema", {"nodes": []}, "system-v1.0")
    assert any(x.field == "(top level)" and "networks" in x.actual for x in v)
    assert any(x.field == "nodes" for x in v)


def test_scope_reads_docs_and_sources():
    s = Scope("host", "/r", {"x": 1}, {"x": ("/r/f.json", "fx")}, {"summary": ({"metric": {"a": 2}}, "/r/summary.json")})
    assert s.get("x") == 1 and s.get("summary.metric.a") == 2 and s.get("summary.metric.b") is None
    assert s.source("summary.metric.a") == ("/r/summary.json", "metric.a")
    assert s.source("x") == ("/r/f.json", "fx") and s.source("y") == ("/r", "y")


def test_when_and_missing_fields_skip_the_rule():
    rule = rules.Rule("t", ("host",), "a", "min", 5, ({"field": "b", "op": "eq", "value": True},),
                      "error", "invalid", "m", "f")
    assert rules.applies(rule, Scope("host", "/", {"a": 1, "b": True}), {})
    assert not rules.applies(rule, Scope("host", "/", {"a": 1, "b": False}), {})
    assert not rules.applies(rule, Scope("host", "/", {"a": 1}), {})
    assert rules.violations(rule, Scope("host", "/", {}), {}) is None


def test_none_equal_says_how_many_of_how_many_in_words():
    v = viol("none_equal", [0, 128.0, 0.0, 256], 0, of="hosts", say="report 0 GiB memory")
    assert len(v) == 1 and v[0].expected == "no hosts that report 0 GiB memory"
    assert v[0].actual == "2 of 4 hosts report 0 GiB memory"
    assert viol("none_equal", [Item(1.0, "p"), Item(2.0, "p")], 0) == []
    assert viol("none_equal", [0, 1], 0)[0].actual == "1 of 2 entries equal to 0"
    assert viol("none_equal", "not a list", 0) == [] and viol("none_equal", [False, "0"], 0) == []


def test_words_only_with_none_equal(rule_tree):
    rule_tree("vw/common.yaml", {"schema_version": 1, "rules": [
        {"id": "r-one", "applies_to": "run", "field": "x", "op": "eq", "value": {"value": 0, "of": "hosts"},
         "severity": "error", "effect": "invalid", "message": "m"}]})
    with pytest.raises(RuleError, match="r-one: value: expected of/say only with op none_equal, got op eq"):
        rules.load("vw", None, None)


# --------------------------------------------------------------------------- the fact vocabulary


@pytest.mark.parametrize("rule,match", [
    ({**GOOD, "field": "no_such.fact"}, r"common.yaml: rule x-one: no_such.fact: expected a fact declared in "
                                        r"rules/facts.yaml or a registered kind's facts.yaml, got an unknown fact"),
    ({**GOOD, "when": {"field": "colour", "op": "eq", "value": 1}}, r"common.yaml: rule x-one: colour: expected a fact"),
    ({**GOOD, "value": {"fact": "recomputed.nothing"}}, r"rule x-one: recomputed.nothing: expected a fact declared"),
    ({**GOOD, "explain": "dataset.size_bassis"}, r"rule x-one: dataset.size_bassis: expected a fact declared"),
    ({**GOOD, "field": "runs.count"}, r"rule x-one: runs.count: expected a fact of scope host, got a fact of "
                                      r"benchmark only"),
])
def test_a_rule_naming_an_unknown_fact_is_a_load_error(rule_tree, rule, match):
    rule_tree("vt/common.yaml", {"schema_version": 1, "rules": [rule]})
    with pytest.raises(RuleError, match=match):
        rules.load("vt")


def test_document_facts_cover_their_fields(rule_tree):
    rule_tree("vt/common.yaml", {"schema_version": 1, "rules": [
        {**GOOD, "field": "summary.metric.anything_at_all"}, {**GOOD, "id": "x-two", "field": "summary"}]})
    assert [r.field for r in rules.load("vt").rules] == ["summary.metric.anything_at_all", "summary"]


def test_every_shipped_rule_names_declared_facts_only():
    from suite.rules import vocabulary

    for path in rules.all_rule_files():
        doc = files.load_yaml(path, schema="rules", error=RuleError)
        for r in doc.get("rules") or []:
            scopes = r["applies_to"] if isinstance(r["applies_to"], list) else [r["applies_to"]]
            for name in rules.fact_names(r):
                vocabulary.check(name, tuple(scopes), f"{path}: rule {r['id']}")


def test_the_vocabulary_validates_and_gives_type_unit_and_scope():
    from suite.rules import rulesets, vocabulary

    files.load_yaml(rulesets.root() / vocabulary.FILE, schema="facts", error=RuleError)
    facts = vocabulary.load()
    assert facts["runs.count"] == vocabulary.Fact("runs.count", "integer", "count", ("benchmark",))
    assert vocabulary.lookup("summary.metric.train_au_percentage").type == "document"
    assert vocabulary.lookup("nothing.here") is None


# --------------------------------------------------------------------------- thresholds, required facts


TH = {"metric": "f1_score", "op": "min", "value": 0.65}


@pytest.mark.parametrize("actual,expected,got", [
    ({"metric": "f1_score", "value": 0.7}, None, None),
    ({"metric": "f1_score", "value": 0.6}, "f1_score >= 0.65", 0.6),
    ({"metric": "accuracy_score", "value": 0.9}, "f1_score >= 0.65", "metric accuracy_score"),
    ({"metric": "f1_score", "value": None}, "f1_score >= 0.65", "no value"),
    ({"metric": "f1_score", "value": True}, "f1_score >= 0.65", "no value"),
    (None, "f1_score >= 0.65", "no value"),
])
def test_meets_threshold(actual, expected, got):
    v = viol("meets_threshold", actual, TH)
    assert (v == []) if expected is None else ((v[0].expected, v[0].actual) == (expected, got))
    assert viol("meets_threshold", {"metric": "x", "value": 9.0}, {**TH, "op": "max", "metric": "x"})[0].expected == "x <= 0.65"
    assert viol("meets_threshold", None, {"metric": "none", "op": "none", "value": None}) == []


def test_a_required_fact_that_is_missing_fails_the_rule():
    rule = dict(GOOD, field="status", value="complete")
    assert rules.violations(rule, Scope("run", "/", {}), {}) is None
    v = rules.violations({**rule, "required": True}, Scope("run", "/", {}), {})
    assert (v[0].expected, v[0].actual) == ("complete", None)


def test_evaluate_names_each_problem_items_field_and_note():
    from suite.rules.evaluate import evaluate

    rs = rules.RuleSet("t", None, None, [rules.Rule("x-one", ("run",), "p.problems", "empty", None, (), "error",
                                                    "invalid", "m", "f")], {})
    found = evaluate(rs, "run", Scope("run", "r/a.json", {"p.problems": [Item(3, None, "k", None, note="n",
                                                                             expected_given=True)]}))
    assert [f.message for f in found] == ["r/a.json: k: expected None, got 3; n (x-one)"]


def test_another_kinds_rule_file_is_no_workload_layer(rule_tree):
    """`layer: kind` marks a rule file its kind loads by name (v3.0's kv_cache.yaml): never a
    workload layer; any other layer value is a load error naming the file."""
    rule_tree("vX/common.yaml", {"schema_version": 1, "rules": [GOOD]})
    rule_tree("vX/unet3d.yaml", {"schema_version": 1, "rules": []})
    rule_tree("vX/kv_cache.yaml", {"schema_version": 1, "layer": "kind", "rules": []})
    assert rules.workload_layers("vX") == ["unet3d"]
    rule_tree("vX/bad.yaml", {"schema_version": 1, "layer": "galaxy", "rules": []})
    with pytest.raises(RuleError, match=r"bad.yaml: layer: expected one of kind, got 'galaxy'"):
        rules._load_file("vX/bad.yaml", (), {})


def test_v3_kinds_rule_files_are_marked():
    assert (rules.rules_dir() / "v3.0" / "kv_cache.yaml").is_file()
    assert not {"kv_cache", "vector_database"} & set(rules.workload_layers("v3.0"))
