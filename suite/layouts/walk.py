"""The one walk that finds benchmark nodes by their leaves (suite.layouts.leaves), whatever the folders
around them are named: a published tree's `results/<system>/training/<model>/`, a results dir's
`R/training/<model>/`, a copy under any name. Bounded, link-free, breadth first; below a leaf
nothing is looked at again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from suite.layouts import leaves

MAX_DIRS = 20_000          # folders looked at in one walk
MAX_DEPTH = 10             # levels below PATH
SKIP = ("code-",)          # a published code image holds DLIO's own test data, never a result


@dataclass
class Node:
    """One benchmark: its folder, its benchmark kind's name and its leaves in name order."""

    path: Path
    benchmark: str
    leaves: list = field(default_factory=list)


def node_of(path: Path) -> Path | None:
    """The benchmark folder around PATH when PATH is a reference leaf or a training phase folder of
    them; None otherwise."""
    path = Path(path)
    leaf = leaves.reference(path)
    if leaf is not None:
        return leaf.node
    if path.name in leaves.PHASES:
        kids = [path / k for k in leaves.names(path, dirs=True)[:8]]
        if any(leaves.reference(k) is not None for k in kids):
            return path.parent
    return None


def nodes(path: Path) -> list[Node]:
    """Every benchmark node of reference leaves at or below PATH (PATH a leaf or a phase folder: its
    node), in path order."""
    path = Path(path)
    top = node_of(path) or path
    found: dict[Path, Node] = {}
    level, seen = [top], 0
    for _ in range(MAX_DEPTH + 1):
        nxt = []
        for d in level:
            seen += 1
            if seen > MAX_DIRS:
                return _ordered(found)
            leaf = leaves.reference(d)
            if leaf is not None:
                node = found.setdefault(leaf.node, Node(leaf.node, leaf.benchmark))
                node.leaves.append(leaf)
                continue
            nxt += [d / k for k in leaves.names(d, dirs=True) if not k.startswith(SKIP)]
        if not nxt:
            break
        level = nxt
    return _ordered(found)


def _ordered(found: dict) -> list[Node]:
    out = sorted(found.values(), key=lambda n: str(n.path))
    for n in out:
        n.leaves.sort(key=lambda x: str(x.path))
    return out


def holds_reference(path: Path) -> bool:
    """PATH is, or holds, at least one reference leaf."""
    return bool(nodes(path))
