"""The walk of a results dir (or of any tree) into its results, by owner: one walk (suite.layouts.walker:
links not followed, code dirs skipped, bounded) that asks the registered kinds and layouts which directory
each holds. They are handed in by the registry (suite.kinds.registry.results_under, `among`: its KINDS,
LAYOUTS, `owner_of` and `catch_all`), so this layer names no kind; the registry parts what it finds
(suite.kinds.dispatch)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from suite import files
from suite.benchmark import Claim
from suite.errors import ResultError, expected_got
from suite.layouts import marks
from suite.storage import workloads


@dataclass
class Found:
    """What a tree holds: each kind's result directories (real paths), and what no kind could take."""

    root: Path
    by_kind: dict[str, list[Path]] = field(default_factory=dict)
    unclassified: list[tuple[Path, str]] = field(default_factory=list)   # (file, why)

    def kinds(self) -> list[str]:
        """The owners with results here, in the order their results sit (the first result's path, then
        the name): never the order of registration."""
        return sorted((k for k, dirs in self.by_kind.items() if dirs), key=lambda k: (str(min(self.by_kind[k])), k))


def results_under(path: Path, among) -> Found:
    """Every result under `path`, by kind: a tree walk (suite.layouts.walker: links not followed, code
    dirs skipped, bounded) that asks each kind whether a directory it meets holds one of its results
    (its `result_files`); below a claimed directory nothing is asked again. Where several kinds' files
    are there, the most specific claim takes it (`owner_of`). A directory with run output only (the
    catch-all's files) is first offered to the layouts' and the other kinds' claims (a published
    vector_database leaf has no file of its own; a leaf inside a pooled tree is the layout's); training,
    the catch-all, takes what none claims. A file naming a kind (its `kind` key) that no kind claimed is
    unclassified."""
    from suite.layouts.walker import walked

    kinds, layouts, owner_of, catch_all = among.KINDS, among.LAYOUTS, among.owner_of, among.catch_all
    root = Path(os.path.realpath(path))
    found = Found(root, {o.name: [] for o in sorted([*kinds, *layouts], key=lambda o: o.name)})
    if not root.is_dir():
        return found
    walker = walked(root)
    claimed: list[Path] = []
    for d in sorted(walker.dirs, key=lambda p: (len(p.parts), str(p))):
        if any(c == d or c in d.parents for c in claimed):
            continue
        names = set(walker.dirs[d]) | set(walker.subdirs.get(d, ()))
        marking = [k for k in kinds if k.result_files and marks.marks(names, k.result_files)]
        own = [k for k in marking if not catch_all(k, d)]
        if own:
            kind = own[0] if len(own) == 1 else owner_of(d, own, Claim.NONE)
            if "results.json" in names:
                _one_claim(d, kind)
        elif marking:                              # run output: another's leaf by its own claim first
            other = owner_of(d, [o for o in [*layouts, *kinds] if o not in marking], Claim.WITHIN)
            if other is None:                      # the catch-all's; two catch-alls alike: one line, exit 2
                alone = marking[0] if len(marking) == 1 else owner_of(d, marking, Claim.NONE)
                found.by_kind[alone.name].append(d)
                continue
            kind = other
        else:
            continue
        found.by_kind[kind.name].append(d)
        claimed.append(d)
    for name, dirs in found.by_kind.items():          # the catch-all's: none inside a claimed directory
        dirs[:] = [d for d in dirs if not any(c != d and c in d.parents for c in claimed)]
    for d, names in walker.dirs.items():
        if not any(c == d or c in d.parents for c in claimed):
            found.unclassified += [(d / n, why) for n in names if (why := _foreign(d / n, among))]
    return found


RECORD_BYTES = 1 << 20


def _one_claim(d: Path, kind) -> None:
    """A directory claimed by `kind`'s result file whose own run record (our results.json, naming its
    workload) is another kind's: two claims, neither more specific (a stray result file in a run would
    otherwise hide the run): a one-line error naming both, exit 2."""
    try:
        doc = files.load_json(d / "results.json", limit=RECORD_BYTES, error=ResultError)
    except (ResultError, OSError, RecursionError, ValueError):
        return
    name = doc.get("workload") if isinstance(doc, dict) else None
    paths = workloads.paths() if isinstance(name, str) else {}
    own = workloads.benchmark_of(paths[name]) if name in paths else None
    if own is not None and own != kind.name:
        theirs = ", ".join(sorted(n for n in os.listdir(d) if marks.marks({n}, kind.result_files)))[:120]
        raise ResultError(expected_got(d, "(results)", "one kind's results in one directory",
                                       f"a {own} run (results.json workload {name!r}) and {kind.name}'s {theirs}"))


def _foreign(p: Path, among) -> str:
    """Why a result file outside every claimed directory is no kind's result ('' when it is not one)."""
    if not (p.name == "results.json" or (p.suffix == ".json" and "result" in p.name.lower())):
        return ""
    try:
        doc = files.load_json(p, error=ResultError)
    except (ResultError, RecursionError, ValueError):
        return ""                                   # unreadable: the training checker reports it
    named = doc.get("kind") if isinstance(doc, dict) else None
    if not isinstance(named, str):
        return ""
    kind = next((k for k in among.KINDS if (named == k.name or named.startswith(k.name + "-"))
                 and not among.catch_all(k, p.parent)), None)
    if kind is None:
        return ""
    return (f"kind: {named!r}, but no {kind.name} result directory around it (expected "
            f"{' or '.join(kind.result_files)} beside it or above it)")


