"""The published v0.5-v2.0 benchmark-dir layout as a layout plugin (suite.layouts.layout.Layout; registered
in suite.kinds.registry.LAYOUT_MODULES): `<Closed|open>/<Org>/{results/<system>/<benchmark>/...,
systems/, code/, generation_logs/}` (mlcommons/storage_results_v0.5-v2.0, and the trees `suite submission`
makes in that layout). Its readers are this package's (tree, identify, systems, code, genlogs); its own
findings, the tree's (facts: unusable entries, aborted benchmark dirs, the code dirs, SHA256SUMS, TODOs).

It claims the tree, a division and an organisation (Claim.TREE), never what lies below them (a system, a
benchmark, a run: the kind that claims it, as anywhere). Its check (check: the walk once, each benchmark
node handed to the kind that claims it, its own findings beside theirs) reads the catch-all kind's results
wherever they sit (`walks_catch_all`): `suite check` of its tree, of a system or a benchmark dir in it, or of
loose benchmark dirs and our numbered results dirs is this layout's check, the nodes judged by their kind
(the round of a node comes from its leaves or --ruleset, never from this layout). It has no figures of its
own: `suite metrics`, `report`, `compare` take its nodes' kinds' (suite.kinds.dispatch.parts).
"""

from __future__ import annotations

from pathlib import Path

from suite.benchmark import Claim
from suite.layouts.layout import Layout
from suite.layouts.walker import listing

NAME = "mlperf-benchmark-dirs"
DIVISIONS = ("closed", "open")         # division folders, in any case (v1.0's Closed/, v0.5's closed/)
ORG_DIRS = ("results", "systems")       # an organisation's folders: its results, its system descriptions
MAX_NAMES = 200                         # a listing for recognition is bounded


def _dirs(d: Path) -> list[str]:
    """The sub-folders of `d` (links not followed; at most MAX_NAMES entries looked at)."""
    return listing(d, MAX_NAMES)[1]


def _is_org(d: Path, in_division: bool = False) -> bool:
    """An organisation: its results/ folder, with its systems/ beside it or a division above it."""
    names = {n.lower() for n in _dirs(d)}
    return "results" in names and (in_division or "systems" in names)


def _is_division(d: Path) -> bool:
    return d.name.lower() in DIVISIONS and any(_is_org(d / n, True) for n in _dirs(d)[:20])


def claims(path: Path) -> int:
    """TREE for a tree of benchmark dirs, a division or an organisation of one (not a published v3.0
    tree: suite.published.layout's); NONE for anything else (what lies below is its kinds')."""
    from suite.layouts import pooled

    p = Path(path)
    if p.is_symlink() or not p.is_dir() or (p / "results.json").is_file() or (p / "run_set.json").is_file():
        return Claim.NONE
    mine = (_is_org(p, p.parent.name.lower() in DIVISIONS) or _is_division(p)
            or any(n.lower() in DIVISIONS and _is_division(p / n) for n in _dirs(p)))
    if not mine or pooled.looks_v3(p):
        return Claim.NONE
    return Claim.TREE


def check(path: Path, args):
    from suite.layouts.benchdirs import check as tree_check

    return tree_check.check(path, args)


LAYOUT = Layout(name=NAME, claims=claims, check=check, walks_catch_all=True)
