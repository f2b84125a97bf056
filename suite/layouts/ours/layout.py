"""Our own results dirs as a layout plugin (suite.layouts.layout.Layout; registered in
suite.kinds.registry.LAYOUT_MODULES): what `suite run` writes, and any folder of such results, whatever
kinds they are: numbered runs (R/run-<k>/ with results.json, run_set.json beside them: v0.5-v2.0 rounds),
timestamped leaves (R/<kind>/<model>/{run,datagen,datasize}/<ts>/: v3.0), kv_cache and vector_database
leaves, a TPCx-AI run's tpcxai-result.json; a results dir may hold several kinds.

It claims a folder holding several kinds' results below it and none of its own (a mixed results dir's
root, and the folders in it above more than one kind's results) with Claim.WITHIN, the weakest claim a
layout has: a folder of one kind's results stays that kind's (its own results dir, the catch-all's too);
any kind's own claim outranks it (a vector_database or kv_cache folder, a checkpointing phase, a TPCx-AI
run); it never claims inside a published tree (a division's folders: the v3.0 pooled tree's or the
v0.5-v2.0 benchmark dirs' layout) nor a benchmark of reference leaves (suite.published.layout's). A
directory that is a result itself (a kind's result files in it: suite.layouts.marks) is never its.

It holds no check of its own beside its nodes' kinds' (`check` None): the one partitioner
(suite.kinds.dispatch.parts) parts PATH among the kinds whose results lie below, each judging its own
where they sit (the round of a node comes from its leaves or --ruleset, never from this layout).
"""

from __future__ import annotations

import os
from pathlib import Path

from suite.benchmark import Claim
from suite.layouts import marks
from suite.layouts.layout import Layout
from suite.layouts.walker import is_code_dir, listing

NAME = "suite-results-dir"
DIVISIONS = ("closed", "open")     # a published tree's division folders (its layout's, whatever lies below)
MAX_NAMES = 200                    # a listing for recognition is bounded
MAX_DEPTH = 8                      # how deep below a folder its results are looked for
MAX_DIRS = 2000                    # how many folders below it are looked at


def _names(d: Path) -> tuple[set[str], list[str]]:
    """The names in `d` and its sub-folders (links not followed); bounded (suite.layouts.walker.listing)."""
    return listing(d, MAX_NAMES)


def _kinds_below(d: Path, dirs: list[str]) -> set[str]:
    """The kinds whose results the folders below `d` are, by their result files (suite.layouts.marks:
    the registry's reading; links not followed, code dirs skipped, bounded; the walk stops at the second)."""
    todo = [(d / n, 1) for n in sorted(dirs) if not is_code_dir(n)]
    found: set[str] = set()
    seen = 0
    while todo and seen < MAX_DIRS and len(found) < 2:
        sub, depth = todo.pop()
        seen += 1
        names, below = _names(sub)
        if (kind := marks.kind_of(sub, names)) is not None:
            found.add(kind)                   # a result: nothing below it is asked (as results_under)
        elif depth < MAX_DEPTH:
            todo += [(sub / n, depth + 1) for n in sorted(below) if not is_code_dir(n)]
    return found


def claims(path: Path) -> int:
    """WITHIN for a folder holding several kinds' results below it and none of its own, outside any
    published tree; NONE for anything else (a result is its kind's; a folder of one kind's results, that
    kind's, as its own results dir; a published tree, and what lies in it, its layout's)."""
    from suite.layouts import pooled

    p = Path(path)
    if p.is_symlink() or not p.is_dir():
        return Claim.NONE
    names, dirs = _names(p)
    if not dirs or len(names) >= MAX_NAMES or marks.any_kind(names):
        return Claim.NONE                     # a result (or a listing too long to tell): its kind's
    if any(n.lower() in DIVISIONS for n in [*Path(os.path.realpath(p)).parts, *dirs]):
        return Claim.NONE                     # a published tree (its divisions), or inside one: its layout's
    if len(_kinds_below(p, dirs)) < 2 or pooled.looks_v3(p):
        return Claim.NONE
    return Claim.WITHIN


LAYOUT = Layout(name=NAME, claims=claims)
