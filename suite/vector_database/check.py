"""Checking vector_database leaves against vector_database.yaml of their round (rules/<round>/: the
round --ruleset or the leaves' metadata name, else the default round covering vector_database;
suite.rules.rulesets.for_kind): the facts of each
benchmark (one <engine>/<INDEX>) and each run leaf, evaluated by the one rule engine
(suite.rules.evaluate). Published leaves and ours give the same facts (suite.vector_database.leaf).
"""

from __future__ import annotations

from pathlib import Path

from suite.check import hostcpu, hostrun
from suite.errors import ResultError
from suite.rules import engine as rules
from suite.rules import rulesets
from suite.rules.engine import Item, Scope
from suite.rules.evaluate import evaluate
from suite.rules.findings import Finding
from suite.vector_database import leaf as leafmod

RULE_FILES = ("vector_database.yaml",)
DEFAULT_CLAIMED_FLOOR = 0.90    # a round whose rules state no floor: big-ann-benchmarks' convention (recall@10 >= 0.90)


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
                                           for r in loads if r.num_vectors is not None and r.inserted_vectors != r.num_vectors],
             "vdb.runs_duplicate": duplicates(runs, root)}
    return Scope("benchmark", _rel(bdir, root), facts)


RECORD_FILES = ("summary.json", "vectordb/simple/vdb_multi_node_summary.json", "vectordb/engine/result.json")
MAX_RECORD_BYTES = 64 << 20


def _fingerprints(r, root: Path) -> list:
    """What makes a run its own: its claimed figures (three or more numbers) and each record file's bytes."""
    import hashlib

    from suite import files

    nums = tuple(sorted((k, v) for k, v in (r.claimed or {}).items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool)))
    out = [("figures", nums)] if len(nums) >= 3 else []
    for name in RECORD_FILES:
        p = Path(r.path) / name
        if p.is_file() and not p.is_symlink():
            try:
                out.append((name, hashlib.sha256(files.read_bytes(p, MAX_RECORD_BYTES, ResultError, root=root)).hexdigest()))
            except (ResultError, OSError):
                continue        # unreadable: the leaf's reader has said so
    return out


def duplicates(runs: list, root: Path) -> list:
    """Run leaves whose claimed figures or record files repeat an earlier run's (a copied run is not a run)."""
    seen: dict = {}
    out = []
    for r in sorted(runs, key=lambda x: x.ts):
        keys = _fingerprints(r, root)
        first = next((seen[k] for k in keys if k in seen), None)
        if first is not None:
            what = next(k[0] for k in keys if k in seen)
            out.append(_p(f"{_rel(r.path, root)}/summary.json: {'(figures)' if what == 'figures' else what}",
                          "a run's own figures and records", f"those of run {first}"))
        for k in keys:
            seen.setdefault(k, r.ts)
    return out


def run_scope(r, root: Path, params: dict | None = None) -> Scope:
    rel = _rel(r.path, root) + "/" + r.summary_file
    gt = r.ground_truth
    problems = []
    if gt is not None and not gt.get("complete"):
        cov = gt.get("coverage_vectors", gt.get("coverage_fraction"))
        want = gt.get("num_vectors") or r.num_vectors or "1.0 (every vector)"
        problems.append(_p(f"{rel}: ground_truth.coverage", want, cov, f"from {gt.get('source')}"))
    problems += [x for x in r.rederive_problems if x.field in ("sha256", "ground_truth.sha256")]
    cache = r.cache_dropped if r.source == "published" else r.cache_dropped is True   # ours must record it
    facts = {"vdb.metrics_missing": [_p(f"{rel}: {k}", "a finite number", None) for k in r.missing],
             "vdb.source": r.source,
             "vdb.recall": r.recall, "vdb.recall_floor": recall_floor(r, params or {}), "vdb.ground_truth_problems": problems,
             "vdb.ground_truth_recorded": gt is not None, "vdb.cache_dropped": cache,
             "vdb.figures_not_rederived": [x for x in r.rederive_problems if x.field not in ("sha256", "ground_truth.sha256")],
             "vdb.recall_claimed": claimed_recall(r), "vdb.recall_claimed_floor": claimed_floor(r, params or {})}
    return Scope("run", rel, facts, {"vdb.recall_claimed": (rel, "recall"), "vdb.recall_claimed_floor": (rel, "recall")})


def claimed_recall(r):
    """The recall summary.json claims (a number, else None: vdb-metrics-reported says it is missing)."""
    v = r.claimed.get("recall") if r.claimed else None
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else r.recall


def claimed_floor(r, params: dict) -> float:
    """The floor a claimed recall is held to: our run's workload's; a published run's the round's
    `vdb_claimed_recall_floor` (rules/<round>/vector_database.yaml), DEFAULT_CLAIMED_FLOOR where the round
    states none. A claim below it is the result's own admission of non-compliance, re-derivable or not."""
    own = recall_floor(r, params) if r.source == "suite" else None
    return own if own is not None else round_floor(params)


def round_floor(params: dict) -> float:
    """The round's floor (`vdb_claimed_recall_floor`, rules/<round>/vector_database.yaml), else 0.90."""
    v = params.get("vdb_claimed_recall_floor")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else DEFAULT_CLAIMED_FLOOR


def recall_floor(r, params: dict | None = None) -> float | None:
    """The floor from the rules' data, never from the result: the higher of the round's and our run's
    workload's (workloads/<name>.yaml); None (the rule then fails) where our run names no known workload.
    A published run's recall is claimed only: vdb-recall-claimed-floor holds the claim to the round's."""
    if r.source != "suite":
        return None             # a published run's recall is claimed, not re-derivable (vdb-recall-claimed-floor)
    from suite.errors import SuiteError
    from suite.vector_database import workload

    try:
        return max(round_floor(params or {}), float(workload.load(r.workload).recall_floor)) if r.workload else None
    except SuiteError:
        return None


def round_of(recs: list, ruleset: str | None = None) -> str:
    """--ruleset, else the one round the leaves' metadata name (leaves naming two are refused), else
    the default round covering vector_database; a round that does not cover it is refused (exit 2)."""
    if ruleset not in (None, "auto"):
        return rulesets.for_kind("vector_database", ruleset).name
    named = {r.ruleset: r.path for r in recs if r.ruleset}
    if len(named) > 1:
        (a, pa), (b, pb) = sorted(named.items())[:2]
        raise ResultError(f"{pb}: vector_database_*_metadata.json: ruleset: expected {a} (as {pa}), got {b}")
    name, where = next(iter(named.items()), (None, None))
    return rulesets.for_kind("vector_database", name, f"{where}: vector_database_*_metadata.json: ruleset",
                             ResultError).name


def check(recs: list, root: Path, ruleset: str | None = None) -> list[Finding]:
    rs = rules.load_layers(round_of(recs, ruleset), RULE_FILES)
    out: list[Finding] = []
    for bdir, group in benchmarks(recs).items():
        out += evaluate(rs, "benchmark", benchmark_scope(bdir, group, root))
        for r in group:
            if r.phase == "run":
                out += evaluate(rs, "run", run_scope(r, root, rs.params))
    return out + hostcpu.findings([_sampled(r, root) for r in recs], root)     # each leaf's host_metrics.json


def _sampled(r, root: Path) -> hostrun.Run:
    """What a leaf's host_metrics.json is checked against: a run leaf's summary.json start_unix_s,
    end_unix_s and hosts (a datagen leaf, a published one or an older one records none)."""
    if r.phase != "run" or r.source != "suite":
        return hostrun.run(r.path)
    where = Path(r.path) / "summary.json"
    shown = str(where.relative_to(root)) if root is not None and where.is_relative_to(root) else str(where)
    return hostrun.run(r.path, r.start_unix_s, r.end_unix_s, r.hosts, f"{shown}: start_unix_s, end_unix_s, hosts")


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


def load_and_check(path: Path, ruleset: str | None = None) -> tuple[list, list[Finding], Path]:
    path = Path(path)
    root = path if path.is_dir() else path.parent
    recs = leafmod.load_tree(path)
    return recs, check(recs, root, ruleset), root
