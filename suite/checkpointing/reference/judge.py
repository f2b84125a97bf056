"""The checkpointing kind's judgement of a v3.0 checkpointing result in the reference tool's leaves
(`checkpointing/<model>/<ts>/`: a write leaf and a read leaf, or one combined), wherever a layout found
it: in a published tree, copied into a results dir, or written by `suite run`. The rules are
rules/<round>/checkpointing-leaves.yaml over the facts of suite.checkpointing.reference.facts."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from suite.checkpointing.reference import facts as rfacts
from suite.layouts import pooled_facts
from suite.rules import engine
from suite.rules.engine import Scope
from suite.rules.evaluate import evaluate

RULE_FILES = ("reference-leaves.yaml", "checkpointing-leaves.yaml")   # a leaf's own files, then the kind's


@lru_cache(maxsize=8)
def rules(round_name: str):
    return engine.load_layers(round_name, RULE_FILES)


def judge(node, org, system, round_name: str, root: Path, rules_too: bool = True,
          more: dict | None = None) -> tuple[list, dict]:
    """(findings, row of published figures) of one checkpointing benchmark node. `more`: items our own
    evidence adds to a benchmark fact (each rank's records against its shards): the same rule, more evidence."""
    rs = rules(round_name)
    if not rules_too:                    # the row alone: a tree's table of a result its kind checked
        return [], rfacts.checkpointing(node, org, system, rs.params)[2]
    out: list = []

    def run(kind: str, scope: Scope) -> None:
        out.extend(evaluate(rs, kind, scope, root))
    facts, phases, row = rfacts.checkpointing(node, org, system, rs.params)
    for leaf in node.leaves:
        f = pooled_facts.leaf_scope(leaf, "checkpointing", phases.get(leaf.ts, "run"), org.division, True)
        f.update(pooled_facts.leaf_facts(leaf))
        run("run", Scope("run", leaf.path, f, pooled_facts.leaf_sources(leaf)))
    for name, items in (more or {}).items():
        facts[name] = list(facts.get(name) or []) + list(items)
    run("benchmark", Scope("benchmark", node.path, facts, {k: (node.path, k.split(".", 2)[-1]) for k in facts}))
    return out, row
