"""Checking vector_database leaves against rules/v3.0/vector_database.yaml: the facts of each
benchmark (one <engine>/<INDEX>) and each run leaf, evaluated by the one rule engine
(suite.rules.evaluate). Published leaves and ours give the same facts (suite.vector_database.leaf).
"""

from __future__ import annotations

from pathlib import Path

from suite.rules import engine as rules
from suite.rules.engine import Item, Scope
from suite.rules.evaluate import evaluate
from suite.rules.findings import Finding
from suite.vector_database import leaf as leafmod

RULESET = "v3.0"
RULE_FILES = ("vector_database.yaml",)
PUBLISHED_FLOOR = 1e-9          # mlpstorage 3.0.46: recall 0.0 is invalid (the per-scale table is deferred)


def _p(where: str, expected, actual, note="") -> Item:
    """A problem item; `where` is "<file>: <field>"."""
    path, _, fld = where.partition(": ")
    return Item(actual, path, fld, expected, note=note, expected_given=True)


def benchmarks(recs: list) -> dict[tuple[str, str], list]:
    """Leaves grouped by their <engine>/<INDEX> directory (the benchmark's path)."""
    out: dict = {}
    for r in recs:
        out.setdefault(str(Path(r.path).parents[1]), []).append(r)
    return out


def benchmark_scope(bdir: str, recs: list, root: Path) -> Scope:
    runs = [r for r in recs if r.phase == "run"]
    loads = [r for r in recs if r.phase == "datagen"]
    dims = {r.dimension for r in loads if r.dimension is not None}
    index = recs[0].index_type
    facts = {"vdb.run_count": len(runs), "vdb.index_type": index,
             "vdb.database": next((r.database for r in runs + loads if r.database), None),
             "vdb.dimension_mismatches": [_p(f"{_rel(r.path, root)}/summary.json: dimension", sorted(dims), r.dimension)
                                          for r in runs if dims and r.dimension not in dims],
             "vdb.index_type_mismatches": [_p(f"{_rel(r.path, root)}/summary.json: index_type", index, r.summary_index_type)
                                           for r in recs if r.summary_index_type and r.summary_index_type.upper() != index],
             "vdb.population_shortfalls": [_p(f"{_rel(r.path, root)}/summary.json: inserted_vectors", r.num_vectors,
                                              r.inserted_vectors)
                                           for r in loads if r.num_vectors is not None and r.inserted_vectors != r.num_vectors]}
    return Scope("benchmark", _rel(bdir, root), facts)


def run_scope(r, root: Path) -> Scope:
    rel = _rel(r.path, root) + "/summary.json"
    gt = r.ground_truth
    problems = []
    if gt is not None and not gt.get("complete"):
        cov = gt.get("coverage_vectors", gt.get("coverage_fraction"))
        want = gt.get("num_vectors") or r.num_vectors or "1.0 (every vector)"
        problems.append(_p(f"{rel}: ground_truth.coverage", want, cov, f"from {gt.get('source')}"))
    floor = r.recall_floor if r.source == "suite" and r.recall_floor is not None else PUBLISHED_FLOOR
    facts = {"vdb.metrics_missing": [_p(f"{rel}: {k}", "a finite number", None) for k in r.missing],
             "vdb.recall": r.recall, "vdb.recall_floor": floor, "vdb.ground_truth_problems": problems,
             "vdb.ground_truth_recorded": gt is not None, "vdb.cache_dropped": r.cache_dropped}
    return Scope("run", rel, facts)


def check(recs: list, root: Path) -> list[Finding]:
    rs = rules.load_layers(RULESET, RULE_FILES)
    out: list[Finding] = []
    for bdir, group in benchmarks(recs).items():
        out += evaluate(rs, "benchmark", benchmark_scope(bdir, group, root))
        for r in group:
            if r.phase == "run":
                out += evaluate(rs, "run", run_scope(r, root))
    return out


def verdict(found: list[Finding]) -> str:
    if any(f.effect == "invalid" for f in found):
        return "invalid"
    if any(f.effect == "open" for f in found):
        return "open"
    return "closed"


def _rel(p, root: Path) -> str:
    try:
        return str(Path(p).relative_to(root)) or "."
    except ValueError:
        return str(p)


def load_and_check(path: Path) -> tuple[list, list[Finding], Path]:
    path = Path(path)
    root = path if path.is_dir() else path.parent
    recs = leafmod.load_tree(path)
    return recs, check(recs, root), root
