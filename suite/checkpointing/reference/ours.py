"""Our own checkpointing pairs judged as the reference tool's leaves are, wherever they sit: `suite run` writes
the reference tool's files in every leaf (`checkpointing/<model>/<ts>/`: summary.json, the per-rank records,
the metadata with the model's configuration, fs_separation.json), so the checkpointing kind's check hands
the leaves it found to the one judge (suite.checkpointing.reference.judge: rules/<round>/checkpointing-
leaves.yaml, one rule per Rules.md clause), with what only our runs record added to its rules' facts (each
rank's records against its own shards). The rules only our runs' evidence meets stay the round's
checkpointing*.yaml (the handoff, the cache clear, the run set, the ranks)."""

from __future__ import annotations

from pathlib import Path

from suite.checkpointing import size
from suite.checkpointing.reference import judge
from suite.harness import leafstamp
from suite.layouts import pooled
from suite.rules import engine
from suite.rules.evaluate import relative

RULE_FILE = "checkpointing-leaves.yaml"


def judges(round_name: str) -> bool:
    """The round has the reference leaves' checkpointing rules (its own file or one it extends)."""
    return engine.rule_file(round_name, RULE_FILE) is not None


def rules(round_name: str):
    """The judge's rule set (its rules' messages and files, for the check's text)."""
    return judge.rules(round_name)


def judged(phases: list, root: Path) -> dict[Path, list]:
    """The judge's findings of our phases in timestamped leaves (their round's, when it has the judge's
    rules), by phase directory: a finding in a leaf goes to that leaf's phase; one of the pair (the gap,
    the structure) to its last leaf, the read. `phases`: suite.checkpointing.check.Phase, each with its
    `ruleset` and its `run_set`."""
    pairs: dict[tuple[Path, str], list] = {}
    for ph in phases:
        if leafstamp.is_stamp(ph.path.name) and judges(ph.ruleset):
            pairs.setdefault((ph.path.parent, ph.ruleset), []).append(ph)
    out: dict[Path, list] = {}
    for (mdir, round_name), group in pairs.items():
        group.sort(key=lambda ph: ph.path.name)
        division = group[0].run_set["division"]              # what the run recorded (checkpoint_run_set.json)
        node = pooled.benchmark_of(mdir, [ph.path for ph in group])
        org = pooled.Org("(none)", division, mdir, mdir)
        system = pooled.System(mdir.name, org.name, division, mdir)
        more = {"checkpoint.size_mismatches": [i for ph in group for i in size.rank_items(ph.path, ph.run_set)]}
        found = judge.judge(node, org, system, round_name, root, more=more)[0]
        where = {relative(ph.path, root): ph.path for ph in group}
        for f in found:
            leaf = next((p for rel, p in where.items() if f.path == rel or f.path.startswith(rel + "/")),
                        group[-1].path)
            out.setdefault(leaf, []).append(f)
    return out
