"""Our own v3.0 series judged as the reference tool's leaves are, wherever they sit: `suite run` writes the
reference tool's files in every leaf, so the training kind's check of a results dir reads the series with
the layout's reader (suite.layouts.pooled) and hands it to the one judge (suite.training.reference.judge),
with what only our runs record added to its rules' facts (suite.training.check.leaves.more)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from suite.layouts import pooled
from suite.training.reference import judge


def judged(path: Path, round_name: str, division: str | None, root: Path, more: dict) -> list:
    """The findings of the series under `path` (its training/<model> folder or above), paths relative to `root`."""
    tree = pooled.load(path.parent if path.name in pooled.PHASES else path)   # run/ -> its <model> folder
    out: list = []
    for org in tree.orgs:
        if division in pooled.DIVISIONS:                  # what the run recorded (results.json), not a guess
            org = dataclasses.replace(org, division=division)
        for system in org.systems:
            for node in system.benchmarks:
                if isinstance(node, pooled.Training) and tree.in_scope(node.path):
                    out += judge.judge(node, org, system, round_name, root, more=more)[0]
    return out


def rules(round_name: str):
    """The judge's rule set (its rules' messages and files, for the check's text)."""
    return judge.rules(round_name)
