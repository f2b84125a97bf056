"""suite/training/check/facts.py (and checkpointing's check) and the layout's tree facts
(suite/layouts/benchdirs/facts.py): every fact built is declared for its scope and type in its kind's own
facts.yaml (suite/training/facts.yaml, suite/checkpointing/facts.yaml) or the shared rules/facts.yaml (the
layers' facts), never only in another kind's."""

import pytest

from check_builders import dlio_benchmark, dlio_run, ours_results, rank_outputs, storage_report, submission
from suite.layouts.benchdirs import facts as tree_facts, tree as layout
from suite.training.check import checker
from suite.training.check import facts
from suite.kinds import registry
from suite.rules import rulesets, vocabulary

TYPES = {"boolean": (bool,), "integer": (int,), "number": (int, float), "string": (str,), "list": (list, tuple),
         "mapping": (dict,)}


def own(kind: str) -> dict:
    """The facts `kind`'s builders may build: the shared file's and its own facts.yaml's."""
    return {**vocabulary.load_file(rulesets.root() / vocabulary.FILE),
            **vocabulary.load_file(registry.facts_file(registry.get(kind)))}


def declared(scope, kind: str = "training") -> list[str]:
    """Problems: facts of `scope` not declared for its scope by `kind` (or the shared file), or of another type
    than declared."""
    out = []
    facts = own(kind)
    for name, value in scope.facts.items():
        fact = vocabulary.lookup(name, facts)
        if fact is None or scope.kind not in fact.scope:
            out.append(f"{scope.kind}: {name}: not declared for this scope")
        elif value is not None and fact.type in TYPES and (
                not isinstance(value, TYPES[fact.type]) or (isinstance(value, bool) and fact.type != "boolean")):
            out.append(f"{scope.kind}: {name}: declared {fact.type}, got {type(value).__name__}")
    for prefix in scope.docs:
        fact = vocabulary.lookup(prefix, facts)
        if fact is None or fact.type != "document" or scope.kind not in fact.scope:
            out.append(f"{scope.kind}: {prefix}.*: not declared as a document of this scope")
    return out


def with_ranks(tmp):
    b = dlio_benchmark(tmp / "bench", accelerators=2, files=7000)
    for k in range(1, 6):
        rank_outputs(b / f"run{k}")
    storage_report(b)
    return b


def with_warmup(tmp):
    b = dlio_benchmark(tmp / "bench")
    dlio_run(b / "warmup")
    return b


@pytest.mark.parametrize("build", [lambda t: submission(t / "tree"), lambda t: ours_results(t / "R"), with_ranks,
                                   with_warmup])
def test_every_fact_built_is_declared(tmp_path, build):
    root = build(tmp_path)
    tree = layout.discover_tree(root)
    problems = declared(tree_facts.tree_scope(tree, tree.benchmarks[0].ruleset))
    for b in tree.benchmarks:
        rs = checker.rule_set(b.ruleset, b.division, b.workload, b.accelerator)
        _, bscope = facts.benchmark_scope(b, tree, rs.params)
        problems += declared(bscope)
        for run in b.runs + ([b.warmup] if b.warmup else []):
            problems += declared(facts.run_scope(b, run, rs.params))
            for host in run.hosts:
                problems += declared(facts.host_scope(b, run, host, rs.params))
    assert sorted(set(problems)) == []


def test_every_checkpointing_fact_is_declared(tmp_path):
    import checkpoint_builders
    from suite.checkpointing import check as checkpoint

    checkpoint_builders.checkpoint_tree(tmp_path)
    root = tmp_path / "ck"
    phases = [checkpoint.Phase(d) for d in checkpoint.phase_dirs(root)]
    problems = declared(checkpoint.tree_scope(root, phases), "checkpointing")
    for ph in phases:
        problems += declared(checkpoint.benchmark_scope(ph), "checkpointing")
        problems += [p for path, doc in ph.runs for p in declared(checkpoint.run_scope(path, doc), "checkpointing")]
    assert phases and sorted(set(problems)) == []
