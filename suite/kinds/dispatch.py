"""The one dispatch of `suite metrics`, `suite report` and `suite compare`: every result under PATH,
each handed to its kind, none dropped.

A PATH that is one result (a leaf, a phase, a TPCx-AI run), or holds one kind's results only that the
kind takes at once (a training or a vector_database results dir), is that kind's, as before. Otherwise
PATH holds several results, or another kind's results below it (a `suite run` results dir, a mixed
published v3.0 tree, an organisation of one): suite.kinds.registry.results_under finds them, and each
is one part: a result directory of a kind whose check takes one result at a time (kv_cache, TPCx-AI),
else the highest directory above that kind's results holding no other kind's results (R/training,
R/checkpointing). A layout (a published v3.0 tree) keeps PATH and the kinds it does not read itself
(kv_cache, vector_database folders) get their own parts. The commands combine the parts
(suite.kinds.combine). `suite check` starts from the same owner (suite.kinds.tree).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from suite.benchmark import Kind
from suite.kinds import registry
from suite.layouts.layout import Layout


@dataclass(frozen=True)
class Part:
    kind: Kind | Layout            # its owner: a kind, or a layout (it hands its nodes to their kinds)
    path: Path                     # what the owner's callable is given


@dataclass
class Parts:
    root: Path                     # PATH, real
    parts: list[Part]
    unclassified: list = field(default_factory=list)    # (file, why): what no kind takes
    single: bool = False           # PATH is one kind's: its callable's output as it is

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.parts:
            out[p.kind.name] = out.get(p.kind.name, 0) + 1
        return out


def parts(path: Path) -> Parts:
    """Every result under `path` as the parts its kinds are called on (see the module's docstring)."""
    path = Path(path)
    kind = registry.for_result(path)              # the most specific claim; a path that is not there refused
    if not path.is_dir() or path.is_symlink():
        return Parts(path, [Part(kind, path)], single=True)
    found = registry.results_under(path)
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
    if not registry.catch_all(kind, root) and (root in found.by_kind[kind.name]
                                          or set(getattr(kind, "result_files", ())) & {p.name for p in _entries(root.parent)}):
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

