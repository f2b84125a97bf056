"""The training kind's judgement of a v3.0 training result in the reference tool's leaves
(`training/<model>/{datagen,datasize,run}/<ts>/`), wherever a layout found it: in a published tree, copied
into a results dir, or written by `suite run` (ours carry the same files). The rules are
rules/<round>/training-leaves.yaml over the facts of suite.training.reference.facts; the layout adds
only its own rules (the system description, the code pool)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from suite.layouts import pooled_facts
from suite.rules import engine
from suite.rules.engine import Scope
from suite.rules.evaluate import evaluate
from suite.training.reference import facts as rfacts

RULE_FILES = ("reference-leaves.yaml", "training-leaves.yaml")   # a leaf's own files, then the kind's


@lru_cache(maxsize=8)
def rules(round_name: str):
    return engine.load_layers(round_name, RULE_FILES)


def judge(node, org, system, round_name: str, root: Path, rules_too: bool = True,
          more: dict | None = None) -> tuple[list, dict]:
    """(findings, row of published figures) of one training benchmark node; finding paths relative to
    `root` (the tree's, or the results dir's). `more`: items our own evidence adds to a benchmark fact
    (the warm-up flags, the hosts results.json records): the same rule, more evidence."""
    rs = rules(round_name)
    if not rules_too:                    # the row alone: a tree's table of a result its kind checked
        return [], rfacts.training(node, org, system, rs.params, rs.ruleset)[2]
    out: list = []

    def run(kind: str, scope: Scope) -> None:
        out.extend(evaluate(rs, kind, scope, root))
    facts, leaf_facts, row = rfacts.training(node, org, system, rs.params, rs.ruleset)
    for leaf, phase, measured, extra in leaf_facts:
        f = pooled_facts.leaf_scope(leaf, "training", phase, org.division, measured)
        f.update(pooled_facts.leaf_facts(leaf))
        f.update(extra)
        run("run", Scope("run", leaf.path, f, pooled_facts.leaf_sources(leaf)))
    for name, items in (more or {}).items():
        facts[name] = list(facts.get(name) or []) + list(items)
    run("benchmark", Scope("benchmark", node.path, facts))
    return out, row
