"""suite/rules/vocabulary.py: the facts rules may name are the shared rules/facts.yaml (the layers below the
kinds) and each registered kind's own facts.yaml beside its kind.py, handed over by suite/kinds/registry.py;
a kind's engines (engines.py beside it) reach suite.engines.registry the same way. A kind registered from
outside suite/ brings both with no edit outside its folder; two files declaring one fact differently is a
load-time error naming both."""

import importlib
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from suite.engines import registry as engines
from suite.errors import RuleError
from suite.kinds import registry
from suite.rules import engine as rules, rulesets, vocabulary

KIND_PY = '''
from suite.benchmark import Checked, Kind

def run(args):
    return 0

KIND = Kind(name="{name}", run=run, recognises=lambda path: False, check=lambda path, args: Checked("", "", 0),
            metrics=lambda path, form: 0, report_page=lambda path, args: None)
'''
ENGINES_PY = '''
from suite.engines.registry import Engine

ENGINES = (Engine(name="{name}-engine", version="0.1", description="a throwaway engine", first=("x==0.1",),
                  packages=(), executable="x", framework="x"),)
'''


def _kind_folder(root: Path, name: str, facts: list[dict], with_engine: bool = True) -> Path:
    """A kind's folder outside suite/: kind.py, facts.yaml, engines.py (an importable package)."""
    pkg = root / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kind.py").write_text(KIND_PY.format(name=name))
    (pkg / "facts.yaml").write_text(yaml.safe_dump({"schema_version": 1, "facts": facts}, sort_keys=False))
    if with_engine:
        (pkg / "engines.py").write_text(ENGINES_PY.format(name=name))
    return pkg


@pytest.fixture
def kind_outside(tmp_path, monkeypatch):
    """register(a kind whose folder is tmp_path/<name>/): yields its folder; unregistered afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def make(name, facts, with_engine=True):
        pkg = _kind_folder(tmp_path, name, facts, with_engine)
        made.append(name)
        registry.register(importlib.import_module(f"{name}.kind").KIND)
        return pkg

    yield make
    for name in made:
        if any(k.name == name for k in registry.KINDS):
            registry.unregister(name)
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[mod]


def test_the_shared_file_holds_the_layers_facts_and_each_kind_its_own():
    shared = vocabulary.load_file(rulesets.root() / vocabulary.FILE)
    assert "problems.unreadable" in shared and "pool.content" in shared and "leaf.overrides" in shared
    assert not [n for n in shared if n.startswith(("vdb.", "kvcache.", "recomputed.", "checkpoint.size"))]
    by_kind = {k.name: registry.facts_file(k) for k in registry.KINDS}
    assert by_kind == {k.name: registry.folder(k) / "facts.yaml" for k in registry.KINDS}
    assert "runs.count" in vocabulary.load_file(by_kind["training"])
    assert "vdb.recall" in vocabulary.load_file(by_kind["vector_database"])
    assert "kvcache.commands" in vocabulary.load_file(by_kind["kv_cache"])
    assert "scale_factor" in vocabulary.load_file(by_kind["tpcx-ai"])
    assert "handoff.cleared" in vocabulary.load_file(by_kind["checkpointing"])
    assert vocabulary.sources() == [rulesets.root() / vocabulary.FILE, *by_kind.values()]
    every = {}
    for path in vocabulary.sources():
        for name, fact in vocabulary.load_file(path).items():
            every.setdefault(name, fact)
    assert vocabulary.load() == every


def test_each_kinds_engines_are_its_own_and_registered_through_it():
    assert engines.names() == ["dlio", "diskann", "milvus"]
    owners = {e.name: k.name for k in registry.KINDS for e in registry.kind_engines(k)}
    assert owners == {"dlio": "training", "diskann": "vector_database", "milvus": "vector_database"}
    assert engines.engine("dlio").download == "about 1.7 GB" and engines.engine("dlio").shims[0][0] == "tfrecord2idx"


def test_a_kind_registered_from_its_own_folder_brings_its_facts_and_engine(kind_outside, tmp_path, monkeypatch,
                                                                           run_cli):
    rules_root = tmp_path / "rules"
    monkeypatch.setattr(rules, "rules_dir", lambda: rules_root)
    (rules_root / "vt").mkdir(parents=True)
    rule = {"id": "toyfacts-widgets", "applies_to": "run", "field": "toyfacts.widgets", "op": "min", "value": 1,
            "severity": "error", "effect": "invalid", "message": "m"}
    (rules_root / "vt" / "common.yaml").write_text(yaml.safe_dump({"schema_version": 1, "rules": [rule]}))
    rules.load.cache_clear()
    with pytest.raises(RuleError, match=r"vt/common.yaml: rule toyfacts-widgets: toyfacts.widgets: expected a fact "
                                        r"declared"):
        rules.load("vt")
    pkg = kind_outside("toyfacts", [{"name": "toyfacts.widgets", "type": "integer", "unit": "count",
                                     "scope": ["run"]}])
    assert vocabulary.lookup("toyfacts.widgets") == vocabulary.Fact("toyfacts.widgets", "integer", "count", ("run",))
    assert pkg / "facts.yaml" in vocabulary.sources()
    assert [r.id for r in rules.load("vt").rules] == ["toyfacts-widgets"]
    assert "toyfacts-engine" in engines.names()
    code, out, _ = run_cli("engine", "list")
    assert code == 0 and "toyfacts-engine" in out and "not installed (suite engine install toyfacts-engine)" in out
    registry.unregister("toyfacts")
    assert vocabulary.lookup("toyfacts.widgets") is None and "toyfacts-engine" not in engines.names()
    rules.load.cache_clear()
    with pytest.raises(RuleError, match="rule toyfacts-widgets"):
        rules.load("vt")


def test_a_fact_declared_twice_differently_names_both_files(kind_outside):
    pkg = kind_outside("toyclash", [{"name": "runs.count", "type": "string", "scope": ["benchmark"]}],
                       with_engine=False)
    training = registry.facts_file(registry.get("training"))
    with pytest.raises(RuleError) as err:
        vocabulary.load()
    msg = str(err.value)
    assert str(pkg / "facts.yaml") in msg and str(training) in msg and "runs.count" in msg
    assert "type integer" in msg and "got type string" in msg and len(msg.splitlines()) == 1


def test_a_fact_declared_twice_alike_is_one_fact(kind_outside):
    kind_outside("toyalike", [{"name": "runs.count", "type": "integer", "unit": "count", "scope": ["benchmark"],
                               "description": "its own words"}], with_engine=False)
    assert vocabulary.load()["runs.count"] == vocabulary.Fact("runs.count", "integer", "count", ("benchmark",))


NAMES = st.from_regex(r"zq[a-z]{1,6}(\.[a-z_]{1,6}){0,2}", fullmatch=True)
DECL = st.fixed_dictionaries({"type": st.sampled_from(["boolean", "integer", "number", "string", "list"]),
                              "scope": st.lists(st.sampled_from(["tree", "benchmark", "run", "host"]), min_size=1,
                                                max_size=4, unique=True)},
                             optional={"unit": st.sampled_from(["count", "s", "MiB/s"])})


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(NAMES, DECL, min_size=1, max_size=12), st.data())
def test_files_merge_into_one_vocabulary_or_refuse_naming_both(decls, data):
    """Declarations split over two kind files (some in both): alike, one vocabulary of every name; one of
    them changed in the second file, a RuleError naming the name and both files."""
    names = sorted(decls)
    first = data.draw(st.lists(st.sampled_from(names), unique=True))
    second = [n for n in names if n not in first] + data.draw(st.lists(st.sampled_from(names), unique=True))
    second = sorted(set(second))
    clash = data.draw(st.sampled_from([None, *[n for n in second if n in first]]))
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, chosen in enumerate((first, second)):
            facts = []
            for n in chosen:
                d = dict(decls[n])
                if i == 1 and n == clash:
                    d["type"] = "mapping"
                facts.append({"name": n, **d})
            path = Path(tmp) / f"k{i}" / "facts.yaml"
            path.parent.mkdir()
            path.write_text(textwrap.dedent(yaml.safe_dump({"schema_version": 1, "facts": facts or
                                                             [{"name": "zz_filler", "type": "string",
                                                               "scope": ["run"]}]})))
            paths.append(path)
        for p in paths:
            vocabulary.add(p)
        try:
            if clash is None:
                merged = vocabulary.load()
                for n in names:
                    assert merged[n].type == decls[n]["type"] and set(merged[n].scope) == set(decls[n]["scope"])
            else:
                with pytest.raises(RuleError) as err:
                    vocabulary.load()
                assert str(paths[0]) in str(err.value) and str(paths[1]) in str(err.value) and clash in str(err.value)
        finally:
            for p in paths:
                vocabulary.remove(p)


FIXTURES = ("v3/tree", "v3/vector_database_TTA", "v3/kv_cache_FarmGPU", "checkpoint/llama3-8b-miniature",
            "tpcxai-sf0.01", "check/valid/dlio-unet3d-h100")


def test_every_fact_a_kind_builds_is_declared_in_its_own_file_or_the_shared_one(monkeypatch, run_cli):
    """`suite check` over real leaves of every kind (the published v3.0 tree's too): each fact a kind's module
    hands its rules is declared in that kind's facts.yaml or rules/facts.yaml, for that scope; a layer's
    module (suite/published, suite/layouts) in rules/facts.yaml alone."""
    import inspect

    import paths
    from suite.rules.engine import Scope

    built: set = set()
    init = Scope.__init__

    def recording(self, kind, path, facts, sources=None, docs=None):
        module = inspect.stack()[1].frame.f_globals.get("__name__", "")
        built.update((module, kind, n) for n in [*facts, *[f"{d}.x" for d in docs or {}]])
        init(self, kind, path, facts, sources, docs)

    monkeypatch.setattr(Scope, "__init__", recording)
    for rel in FIXTURES:
        code, _, err = run_cli("check", paths.DATA / rel)
        assert code in (0, 1), err
    shared = vocabulary.load_file(rulesets.root() / vocabulary.FILE)
    owner = {registry.folder(k).name: {**shared, **vocabulary.load_file(registry.facts_file(k))} for k in registry.KINDS}
    problems = []
    for module, scope, name in sorted(built):
        folder = module.split(".")[1]
        fact = vocabulary.lookup(name, owner.get(folder, shared))
        if fact is None or scope not in fact.scope:
            problems.append(f"{module}: {scope}: {name}")
    assert {m.split(".")[1] for m, _, _ in built} >= {"training", "checkpointing", "tpcx_ai", "vector_database",
                                                      "kv_cache", "published"}
    assert problems == []
