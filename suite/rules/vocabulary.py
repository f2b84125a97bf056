"""The fact vocabulary (rules/facts.yaml): every fact a rule may name, with its type, unit and scopes.

    vocabulary.load()                     -> {name: Fact}
    vocabulary.check(name, scopes, where) -> None, or RuleError "<where>: <name>: expected a declared
                                             fact ..., got ..." (the engine calls it for every rule)

A name declared as `summary.*` is a document: `summary` and every dotted path below it are facts.
Always the package's vocabulary (suite/data/rules/facts.yaml, under rulesets.root()): rule files
in any tree are held to the facts the code builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from suite import files
from suite.errors import RuleError
from suite.rules import rulesets

FILE = "facts.yaml"


@dataclass(frozen=True)
class Fact:
    name: str                    # "runs.count", or "summary" for the document summary.*
    type: str                    # boolean | integer | number | string | list | mapping | document
    unit: str | None
    scope: tuple[str, ...]       # tree | benchmark | run | host


def load() -> dict[str, Fact]:
    path = rulesets.root() / FILE
    return _load(str(path), path.stat().st_mtime_ns if path.is_file() else 0)


@lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int) -> dict[str, Fact]:
    doc = files.load_yaml(path, schema="facts", error=RuleError)
    out: dict[str, Fact] = {}
    for e in doc["facts"]:
        if e["name"] in out:
            raise RuleError(f"{path}: facts: expected each name once, got {e['name']!r} twice")
        if e["name"].endswith(".*") != (e["type"] == "document"):
            raise RuleError(f"{path}: facts: {e['name']}: expected type document exactly for a name "
                            f"ending in .*, got type {e['type']}")
        out[e["name"]] = Fact(e["name"].removesuffix(".*"), e["type"], e.get("unit"), tuple(e["scope"]))
    return out


def lookup(name: str, facts: dict[str, Fact] | None = None) -> Fact | None:
    """The declared fact `name` is, or lies in (a document's field); None when undeclared."""
    facts = load() if facts is None else facts
    if name in facts:
        return facts[name]
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        doc = facts.get(".".join(parts[:i]) + ".*")
        if doc is not None:
            return doc
    return None


def check(name, scopes: tuple[str, ...], where: str) -> None:
    """RuleError naming `where` (file and rule id) when `name` is not a declared fact of every scope."""
    if not isinstance(name, str):
        raise RuleError(f"{where}: expected a fact name, got {name!r}")
    fact = lookup(name)
    if fact is None:
        raise RuleError(f"{where}: {name}: expected a fact declared in rules/{FILE}, got an unknown fact")
    outside = [s for s in scopes if s not in fact.scope]
    if outside:
        raise RuleError(f"{where}: {name}: expected a fact of scope {', '.join(outside)}, got a fact of "
                        f"{', '.join(fact.scope)} only")
