"""The one partitioner of `suite check`, `suite metrics`, `suite report`, `suite compare`, `suite
history` and `suite submission`: every result under PATH, each handed to its owner (the layout or kind
whose claim is the most specific: suite.kinds.registry.owner_of), none dropped.

A PATH that is one result (a leaf, a phase, a TPCx-AI run), or holds one kind's results only that the
kind takes at once (a training or a vector_database results dir), is that kind's, as before. Otherwise
PATH holds several results, or another kind's results below it (a `suite run` results dir, a mixed
published v3.0 tree, an organisation of one): suite.kinds.registry.results_under finds them, and each
is one part: a result directory of a kind whose check takes one result at a time (kv_cache, TPCx-AI),
else the highest directory above that kind's results holding no other kind's results (R/training,
R/checkpointing). A layout (a published v3.0 tree) keeps PATH and the kinds it does not read itself
(kv_cache, vector_database folders) get their own parts; a layout's tree holding no node the layout
reads, that a kind claims as a whole (a vector-DB-only tree), is that kind's for its figures (its check
is still the layout's: its systems and code pool). The commands combine the parts
(suite.kinds.combine).

`suite check` (`parts(path, args)`) parts a mixed tree by what each check takes: the catch-all kind once
over PATH with the other owners' directories left out (`Part.exclude`), a kind whose check takes a tree
once over PATH, the others once per result; a layout keeps PATH (its check hands each folder it does not
read to its kind) and what lies beside its divisions is checked apart (suite.kinds.tree runs the checks).
Every part of the catch-all kind's is checked by the layout whose walk reads them (`walked`: the v0.5-v2.0
benchmark dirs' layout, a tree of them or loose): its own findings, and its benchmark nodes handed to the
kinds that claim them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from suite.benchmark import Claim, Kind
from suite.kinds import registry
from suite.layouts.layout import Layout


@dataclass(frozen=True)
class Part:
    kind: Kind | Layout            # its owner: a kind, or a layout (it hands its nodes to their kinds)
    path: Path                     # what the owner's callable is given
    exclude: tuple | None = None   # suite check: the directories the catch-all leaves to the other owners
    of: str | None = None          # suite check: the kind whose results a layout's part holds (its name said)


@dataclass
class Parts:
    root: Path                     # PATH, real
    parts: list[Part]
    unclassified: list = field(default_factory=list)    # (file, why): what no kind takes
    single: bool = False           # PATH is one kind's: its callable's output as it is
    found: registry.Found | None = None   # suite check: what the walk found (the counts it says)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.parts:
            out[p.kind.name] = out.get(p.kind.name, 0) + 1
        return out


def parts(path: Path, args=None) -> Parts:
    """Every result under `path` as the parts its owners are called on (see the module's docstring);
    `args` given: the parts of `suite check` with those arguments."""
    path = Path(path)
    kind = registry.for_result(path)              # the most specific claim; a path that is not there refused
    if registry.is_layout(kind) and (kind.check is None or kind.walks_catch_all):   # its nodes' kinds' parts
        with registry.aside(kind):
            split = parts(path, args)
        return split if args is None else walked(split)
    if args is not None:
        return walked(_for_check(path, kind, args))
    if not path.is_dir() or path.is_symlink():
        return Parts(path, [Part(kind, path)], single=True)
    found = registry.results_under(path)
    if registry.is_layout(kind) and not found.by_kind.get(kind.name):
        other = registry.owner_of(path, registry.KINDS, Claim.WITHIN)
        kind = other if other is not None else kind   # no node of the layout's: the figures are that kind's
    if registry.is_layout(kind):                  # it reads PATH itself; the kinds it does not read, apart
        names = [k for k in found.kinds() if not registry.is_layout(registry.owner(k))
                 and not registry.catch_all(registry.owner(k), found.root)]
        if not names:
            return Parts(path, [Part(kind, path)], single=True)
        return Parts(found.root, [Part(kind, path)] + [Part(registry.owner(n), d) for n in names
                                                        for d in _tops(found, n)])
    sole = taker(kind, found)
    if sole is not None:
        return Parts(path, [Part(sole, path)], single=True)
    return Parts(found.root, [Part(registry.owner(n), d) for n in found.kinds() for d in _tops(found, n)],
                 found.unclassified)


def walked(split: Parts) -> Parts:
    """`suite check`'s parts with every directory of the catch-all kind's given to the layout whose walk
    reads them (`walks_catch_all`: the v0.5-v2.0 benchmark dirs'): it checks what is its own there and
    hands the benchmark nodes it finds to the kinds that claim them. A file stays its owner's."""
    walker = next((x for x in registry.LAYOUTS if x.walks_catch_all), None)
    if walker is None:
        return split
    out = [Part(walker, p.path, p.exclude, p.kind.name) if p.path.is_dir() and registry.catch_all(p.kind, p.path)
           else p for p in split.parts]
    return replace(split, parts=out)


def taker(kind: Kind, found: registry.Found) -> Kind | None:
    """The one kind that takes PATH at once (`single`): the kind that recognised it, or the only kind whose
    results the walk found there (PATH a results dir of reference leaves, recognised by no kind as a
    whole); None where PATH holds several."""
    if single(kind, found):
        return kind
    kinds = found.kinds()
    if len(kinds) == 1 and not found.unclassified:
        other = registry.owner(kinds[0])
        if other.checks_trees and single(other, found):
            return other
    return None


def single(kind: Kind, found: registry.Found) -> bool:
    """PATH (found.root) is one result of `kind` (or a run inside one), or holds one kind's results
    only, which that kind takes at once, and nothing unclassified."""
    root = found.root
    marks = set(getattr(kind, "result_files", ()))       # a layout has none
    if not registry.catch_all(kind, root) and (root in found.by_kind[kind.name]
                                               or marks & {p.name for p in _entries(root.parent)}):
        return True
    kinds = found.kinds()
    if found.unclassified:
        return False
    if not kinds:
        return True                               # nothing found: the kind says why
    return kinds == [kind.name] and (kind.checks_trees or found.by_kind[kind.name] == [root])


def _entries(d: Path) -> list[Path]:
    try:
        return list(d.iterdir())
    except OSError:
        return []


def _tops(found: registry.Found, name: str) -> list[Path]:
    """The directories kind `name` is called on: each of its result directories where its check takes
    one result at a time, else the highest directories above them holding no other kind's results
    (and no file no kind takes)."""
    mine = found.by_kind[name]
    kind = registry.owner(name)
    if not kind.checks_trees:
        return list(mine)
    foreign = [d for k, dirs in found.by_kind.items() if k != name for d in dirs]
    foreign += [f.parent for f, _ in found.unclassified]
    tops: list[Path] = []
    for d in mine:
        top = d
        while top != found.root and not _holds(top.parent, foreign):
            top = top.parent
        if not any(t == top or t in top.parents for t in tops):
            tops = [t for t in tops if top not in t.parents] + [top]
    return sorted(tops)


def _holds(d: Path, foreign: list[Path]) -> bool:
    return any(f == d or d in f.parents for f in foreign)



WHOLE_TREE_DIRS = ("closed", "open")     # what a layout's own walk reads (with its code pools)


def _for_check(path: Path, kind, args) -> Parts:
    if kind.defers_check is not None and kind.defers_check(path, args):   # another round's rules asked for
        d = path if path.is_dir() else path.parent
        return Parts(path, [Part(next(k for k in registry.KINDS if registry.catch_all(k, d)), path)], single=True)
    if registry.is_layout(kind):
        beside = _beside(path) if path.is_dir() and not path.is_symlink() else []
        found = registry.Found(Path(os.path.realpath(path)), {kind.name: [path]})
        for name, d in beside:
            found.by_kind.setdefault(name, []).append(d)
        return Parts(found.root, [Part(kind, path)] + [Part(registry.owner(n), d) for n, d in beside],
                     single=not beside, found=found)
    if path.is_dir() and not path.is_symlink():
        found = registry.results_under(path)
        sole = taker(kind, found)
        if sole is None:
            return _mixed(found)
        kind = sole
    return Parts(path, [Part(kind, path)], single=True)


def _beside(path: Path) -> list[tuple[str, Path]]:
    """Results under PATH that a layout's walk does not read (outside closed/ and open/, not in a code
    image), each its owner's (a top-level folder holding one owner's results as one part; else each
    result), so that a result beside a published tree counts in the verdict and is never left out."""
    root = Path(os.path.realpath(path))
    if any(p in WHOLE_TREE_DIRS for p in root.parts) or not any((root / d).is_dir() for d in WHOLE_TREE_DIRS):
        return []                        # inside a division, or a result read out of its tree: all the layout's
    found = registry.results_under(root)
    tops: dict[Path, dict[str, list]] = {}
    for name in found.kinds():
        for d in found.by_kind[name]:
            rel = d.relative_to(root).parts if d != root else ()
            if not rel or rel[0] in WHOLE_TREE_DIRS or any(p.startswith("code-") for p in rel):
                continue
            tops.setdefault(root / rel[0], {}).setdefault(name, []).append(d)
    out = []
    for top, owners in sorted(tops.items()):
        if len(owners) == 1:
            out.append((next(iter(owners)), top))
        else:
            out += [(name, d) for name, dirs in owners.items() for d in dirs]
    return out


def _mixed(found: registry.Found) -> Parts:
    out: list[Part] = []
    catch_alls = {k.name for k in registry.KINDS if registry.catch_all(k, found.root)}
    others = [d for name, dirs in found.by_kind.items() if name not in catch_alls for d in dirs]
    foreign = _foreign(found, catch_alls)
    for name in found.kinds():
        kind = registry.owner(name)
        if name in catch_alls:
            if not [d for d in found.by_kind[name] if not any(f == d or f in d.parents for f in foreign)]:
                continue
            out.append(Part(kind, found.root, tuple(others) + tuple(sorted(foreign))))
        elif kind.checks_trees:
            out.append(Part(kind, found.root))
        else:
            out += [Part(kind, d) for d in found.by_kind[name]]
    return Parts(found.root, out, found.unclassified, found=found)


def _foreign(found: registry.Found, catch_alls: set) -> list[Path]:
    """What the catch-all kind must not take: an unclassified file's directory, or only the file where
    other results sit below that directory."""
    caught = [d for name in catch_alls for d in found.by_kind[name]]
    out = []
    for f, _ in found.unclassified:
        below = [d for d in caught if f.parent in d.parents]
        out.append(f if below or f.parent == found.root else f.parent)
    return out
