"""The fact vocabulary: every fact a rule may name, with its type, unit and scopes.

Two sources, one vocabulary:
  rules/facts.yaml          the facts the layers below the kinds build: the layouts' tree, organisation,
                            system and reference-leaf facts (suite/layouts, suite/published), the tree walk's
                            (problems.*, code.changed, benchmarks.count, incomplete), the system description's;
  suite/<kind>/facts.yaml   each registered kind's own facts, beside its kind.py: suite.kinds.registry hands
                            the file over when it registers the kind (`add`) and takes it back (`remove`), so a
                            new kind brings its facts with no edit outside its folder.

    vocabulary.load()                     -> {name: Fact} (the shared file and every added one)
    vocabulary.load_file(path)            -> {name: Fact} (one file's own declarations)
    vocabulary.check(name, scopes, where) -> None, or RuleError "<where>: <name>: expected a declared
                                             fact ..., got ..." (the engine calls it for every rule)

A name declared as `summary.*` is a document: `summary` and every dotted path below it are facts.
A fact declared in two files (two kinds, or a kind and the shared file) must be declared alike (type,
unit, scopes; descriptions may differ): else a RuleError naming both files. The shared file is always
the package's (suite/data/rules/facts.yaml, under rulesets.root()): rule files in any tree are held to
the facts the code builds. A process that loads rules without the command line registers the kinds first
(`import suite.kinds.registry`, as tests/conftest.py and the __main__ tools do): else a kind's fact is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from suite import files
from suite.rules.yamlload import load_yaml_fast
from suite.errors import RuleError
from suite.rules import rulesets

FILE = "facts.yaml"

_ADDED: list[Path] = []          # the registered kinds' facts files, in the order they were added


@dataclass(frozen=True)
class Fact:
    name: str                    # "runs.count", or "summary" for the document summary.*
    type: str                    # boolean | integer | number | string | list | mapping | document
    unit: str | None
    scope: tuple[str, ...]       # tree | benchmark | run | host


def add(path: Path) -> None:
    """A kind's facts file joins the vocabulary (read at the next load)."""
    path = Path(path)
    if path not in _ADDED:
        _ADDED.append(path)


def remove(path: Path) -> None:
    if Path(path) in _ADDED:
        _ADDED.remove(Path(path))


def sources() -> list[Path]:
    """The files the vocabulary is made of: the shared one first, then each kind's."""
    return [rulesets.root() / FILE, *_ADDED]


def load() -> dict[str, Fact]:
    return _merged(tuple((str(p), _stamp(p)) for p in sources()))


def load_file(path) -> dict[str, Fact]:
    """One facts file's declarations (checked against the facts schema), keyed as written (`summary.*`)."""
    return _load(str(path), _stamp(Path(path)))


def _stamp(path: Path) -> int:
    return path.stat().st_mtime_ns if path.is_file() else 0


@lru_cache(maxsize=8)
def _merged(stamped: tuple[tuple[str, int], ...]) -> dict[str, Fact]:
    out: dict[str, Fact] = {}
    where: dict[str, str] = {}
    for path, mtime_ns in stamped:
        for key, fact in _load(path, mtime_ns).items():
            if key in out and not _alike(out[key], fact):
                raise RuleError(f"{path}: facts: {key}: expected {_said(out[key])} as {where[key]} declares it, "
                                f"got {_said(fact)}")
            out.setdefault(key, fact)
            where.setdefault(key, path)
    return out


def _alike(a: Fact, b: Fact) -> bool:
    return (a.type, a.unit, frozenset(a.scope)) == (b.type, b.unit, frozenset(b.scope))


def _said(f: Fact) -> str:
    return f"type {f.type}, unit {f.unit or '(none)'}, scope {', '.join(f.scope)}"


@lru_cache(maxsize=16)
def _load(path: str, mtime_ns: int) -> dict[str, Fact]:
    doc = load_yaml_fast(Path(path), error=RuleError)             # libyaml: every command reads them all
    files.validate(doc, "facts", path, RuleError)
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
        raise RuleError(f"{where}: {name}: expected a fact declared in rules/{FILE} or a registered kind's "
                        f"{FILE}, got an unknown fact")
    outside = [s for s in scopes if s not in fact.scope]
    if outside:
        raise RuleError(f"{where}: {name}: expected a fact of scope {', '.join(outside)}, got a fact of "
                        f"{', '.join(fact.scope)} only")
