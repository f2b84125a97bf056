"""What a layout is: how results sit on disk around the benchmarks (a published v3.0 pooled tree: its
organisations, systems, code pool and SHA256SUMS; the v0.5-v2.0 benchmark dirs: suite.layouts.benchdirs;
our own `suite run` results dirs: suite.layouts.ours), as a plugin the one partitioner asks first
(suite.kinds.registry.LAYOUT_MODULES, suite.kinds.dispatch). A
layout claims a path, checks only what is its own (system descriptions, code pool, folder structure,
checksums) and hands every benchmark node it finds to the kind that claims it; it names no kind.

A claim is a strength (`Claim`): the most specific claim on a path wins, wherever its owner sits in the
registry; two equal claims are a one-line error (exit 2). A kind's `recognises` answers with one too
(True is `Claim.OWN`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from suite.benchmark import Checked, Claim, Submission

__all__ = ["Claim", "Layout"]


@dataclass(frozen=True)
class Layout:
    """One layout plugin. `claims(path)`: a Claim (TREE for the tree, a division or an organisation of
    it: the layout's whatever kinds lie below; WITHIN for a system, node or leaf inside it, which a kind's
    own claim outranks). check, metrics, report_page and measured take what a kind's do (its check's
    `args.for_result(dir)` is the check of a folder by the kind that claims it, suite.kinds.tree.handover;
    its page's `args.for_rows(dir)` that kind's results-table rows). check_reads: the tree around PATH
    that a check reads (an output is refused inside it). defers_check(path, args): True where the rules
    asked for hold no such tree (another round's): the catch-all kind checks it. submission: the tree
    `suite submission` makes in this layout (ruleset.yaml's submission.layout). check None: a layout that
    holds no check of its own beside its nodes' kinds' (our results dirs): the one partitioner parts PATH
    among those kinds, as if the layout were not there (suite.kinds.dispatch.parts). walks_catch_all: its
    walk reads the catch-all kind's results wherever they sit, in its tree or loose (the v0.5-v2.0
    benchmark dirs' walk: a tree, a system, a benchmark dir, our numbered results dirs): the partitioner
    parts PATH as if it were not there and gives it every part of the catch-all kind's to check (its check
    hands the nodes it finds to their kinds: `args.for_nodes(tree)`, suite.kinds.tree.node_handover); for
    the other commands (no figures of its own) PATH is its nodes' kinds'."""

    name: str
    claims: Callable[[Path], int]
    check: Callable[[Path, object], Checked] | None = None
    metrics: Callable[[Path, str], int] | None = None
    report_page: Callable[[Path, object], object] | None = None
    measured: Callable[[Path], list] | None = None
    check_reads: Callable[[Path], list[Path]] | None = None
    defers_check: Callable[[Path, object], bool] | None = None
    submission: Submission | None = None
    walks_catch_all: bool = False

    def recognises(self, path: Path) -> int:
        return self.claims(path)

    @property
    def checks_trees(self) -> bool:    # a layout's check takes every result of it under PATH at once
        return True
