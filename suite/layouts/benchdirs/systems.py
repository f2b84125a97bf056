"""System descriptions: where they are and which one describes a benchmark.

Found in any `systems/` directory (`<org>/systems/`, `<org>/results/<system>/systems/`), with any
case of extension (`.json`, `.JSON`, `.yaml`). A benchmark's description is, in this order:
`<system>.json`; the benchmark's own (`systems/<benchmark-dir>.json`, for a benchmark directly
under results/); the unique near-match of the system name (`Nclient1` for `Nclients1`: used, with
a naming warning); the organisation's only description (naming warning). A description that is
not valid JSON keeps its syntax error (line and column) as `syntax`: a fix-required finding, not
an unreadable result.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from suite.layouts.walker import Problem

SUFFIXES = (".json", ".yaml", ".yml")
NEAR_EDITS = 2                       # at most this many edits (after lower-casing) is a near-match


@dataclass
class SystemFile:
    path: Path
    org: str | None
    name: str
    doc: object | None              # parsed JSON/YAML, None when unreadable
    problems: list[Problem] = field(default_factory=list)
    syntax: str | None = None       # "line L column C: <what>" when the JSON does not parse
    org_dir: Path | None = None


def discover(root: Path, walker, loader) -> list[SystemFile]:
    out = []
    for d, names in walker.dirs.items():
        if d.name.lower() != "systems":
            continue
        org_dir = _org_dir(d, root)
        org = org_dir.name if org_dir is not None and org_dir != root else (d.parent.name if d != root else None)
        for n in names:
            low = n.lower()
            if not low.endswith(SUFFIXES) or n.startswith("."):
                continue
            sink: list[Problem] = []
            syntax = None
            if low.endswith(".json"):
                doc, syntax = _json(d / n, sink, loader)
            else:
                doc = loader.load(d / n, sink, "yaml")
            out.append(SystemFile(d / n, org, n.rsplit(".", 1)[0], doc, sink, syntax, org_dir))
    return sorted(out, key=lambda s: s.path)


def _org_dir(systems_dir: Path, root: Path) -> Path | None:
    """<org>/systems -> <org>; <org>/results/<system>/systems -> <org>."""
    rel = systems_dir.relative_to(root).parts
    parts = [p.lower() for p in rel]
    if "results" in parts:
        i = len(parts) - 1 - parts[::-1].index("results")
        return root.joinpath(*rel[:i])
    return systems_dir.parent if systems_dir != root else None


def _json(path: Path, sink: list[Problem], loader):
    """(document, syntax error): a JSON syntax error is kept with its line and column, not a Problem;
    anything else (size, encoding, nesting) is the loader's Problem."""
    from suite import files
    from suite.errors import SuiteError
    try:
        text = files.read_text(path)
        doc = json.loads(text.removeprefix("\ufeff"))
        files.check_node_budget(doc, path)
        return doc, None
    except json.JSONDecodeError as exc:
        return None, f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    except (SuiteError, RecursionError, ValueError):
        return loader.load(path, sink, "json"), None


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, giving up (limit + 1) once it must exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return min(prev[-1], limit + 1)


def for_benchmark(b, systems: list[SystemFile]) -> tuple[SystemFile | None, str]:
    """(description, how it was found): exact | benchmark | near | only | none."""
    mine = [s for s in systems if s.org == b.org or (b.org_dir is not None and s.org_dir == b.org_dir)]
    if b.system is not None:
        exact = [s for s in mine if s.name == b.system]
        if exact:
            return _prefer_json(exact), "exact"
    own = [s for s in mine if s.name == b.path.name]
    if own:
        return _prefer_json(own), "benchmark"
    if b.system is not None:
        near = [s for s in mine if _edits(_norm(s.name), _norm(b.system), NEAR_EDITS) <= NEAR_EDITS]
        if len({s.name for s in near}) == 1:
            return _prefer_json(near), "near"
    names = {s.name for s in mine}
    if len(names) == 1:
        return _prefer_json(mine), "only"
    return None, "none"


def _prefer_json(cands: list[SystemFile]) -> SystemFile:
    return sorted(cands, key=lambda s: (not s.path.name.lower().endswith(".json"), str(s.path)))[0]


def pdf_beside(s: SystemFile, walker) -> Path | None:
    """systems/<name>.pdf (any case) beside the description, or None."""
    names = walker.dirs.get(s.path.parent, [])
    return next((s.path.parent / n for n in names if n.lower() == f"{s.name.lower()}.pdf"), None)
