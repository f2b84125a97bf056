"""Reading vector_database leaves, published (MLPerf Storage v3.0) and ours, the same way.

A leaf is vector_database/<engine>/<INDEX>/{datagen,run}/<ts>/ with summary.json and
vector_database_<ts>_metadata.json. The figures are re-derived from the run's records (ours: the engine's
query records; published: the ranks' records in vectordb/simple/vdb_multi_node_summary.json), what
they cannot give kept as claimed, not re-derivable (suite.vector_database.rederive); the ground-truth
record from ours (summary.json ground_truth) or a published result_verdict.json (flat_setup).
Every read is bounded and stays inside the tree (suite.files, root=).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from suite import files
from suite.errors import ResultError
from suite.harness import leafstamp

PHASES = ("datagen", "run")
MAX_LEAVES = 10000
MAX_DEPTH = 12
PUBLISHED_KEYS = ("throughput_qps", "mean_latency_ms", "p95_latency_ms", "p99_latency_ms", "p999_latency_ms")


@dataclass
class Leaf:
    path: str
    phase: str                      # datagen | run
    engine: str                     # the <engine> level (milvus, diskann)
    index_type: str                 # the <INDEX> level
    ts: str
    source: str                     # suite (our summary.json) | published
    num_vectors: int | None = None
    dimension: int | None = None
    inserted_vectors: int | None = None
    summary_index_type: str | None = None
    database: str | None = None
    throughput_qps: float | None = None
    total_time_seconds: float | None = None
    query_count: int | None = None
    mean_latency_ms: float | None = None
    p50_latency_ms: float | None = None
    p95_latency_ms: float | None = None
    p99_latency_ms: float | None = None
    p999_latency_ms: float | None = None
    recall: float | None = None
    recall_floor: float | None = None
    bytes_read_per_query: float | None = None
    read_ops_per_query: float | None = None
    cached_fraction_before: float | None = None
    mean_io_bytes: float | None = None            # ours: the cold pass's bytes / I/Os (io.mean_io_bytes)
    warm_read_ops_per_query: float | None = None  # ours: the warm pass's (the same queries again at once)
    warm_bytes_read_per_query: float | None = None
    search_param: str | None = None         # ours: search_list (DiskANN) | ef (Milvus HNSW): a sweep point's axis
    search_value: float | None = None
    dram_percent: float | None = None       # ours: the DRAM:index ratio the run was held to (--dram-ratios)
    cache_dropped: bool | None = None
    ground_truth: dict | None = None        # {complete, coverage_vectors, num_vectors, source} or None
    engine_version: str | None = None
    ruleset: str | None = None              # the round its metadata names (ours: the round the run was held to)
    status: str | None = None
    client_hosts: int | None = None         # disk_io.host_count (summary.json, else the published native stats)
    read_bytes_per_s: float | None = None   # disk_io.total_bytes_read_per_sec, likewise
    missing: list = field(default_factory=list)     # published keys absent or not finite
    cdf: dict | None = None
    workload: str | None = None             # ours: the workload it ran (its recall floor and k, workloads/)
    claimed: dict = field(default_factory=dict)             # summary.json's figures as written
    not_rederivable: list = field(default_factory=list)     # figures its records cannot give (shown None)
    rederive_problems: list = field(default_factory=list)   # figures that differ, a ground truth not the recorded one
    division: str | None = None             # ours: the division the run was asked (None: not recorded)
    miniature: bool = False                 # ours: the embedded miniature
    start_unix_s: float | None = None       # ours: the query run's window and host (host_metrics.json's run)
    end_unix_s: float | None = None
    hosts: tuple = ()
    summary_file: str = "summary.json"      # the leaf's figures file (a VectorDBBench leaf: statistics.json)

    def to_dict(self) -> dict:
        return asdict(self)


def _num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def _load(path: Path, root: Path):
    try:
        doc = files.load_json(path, error=ResultError, root=root)
    except (ResultError, RecursionError, ValueError) as exc:
        raise ResultError(f"{path}: expected a JSON document, got {str(exc)[:200]}") from None
    return doc


SUMMARY_KEYS = ("num_vectors", "dimension", "index_type")   # what every vector_database summary.json holds
PROBE_BYTES = 1 << 20


STATISTICS = ("statistics.json", "config.json")    # the reference's VectorDBBench run leaf (no summary.json: SAMSUNG)


def is_leaf(d: Path) -> bool:
    """A stamped run or datagen folder whose summary.json is a vector database's (its own keys), wherever
    it sits: what it holds decides, not the folders above it (issue 44); or a run folder the reference's
    VectorDBBench wrote, statistics.json and config.json and no summary.json."""
    d = Path(d)
    if not (leafstamp.is_stamp(d.name) and d.parent.name in PHASES):
        return False
    if not (d / "summary.json").is_file():
        return d.parent.name == "run" and all((d / f).is_file() and not (d / f).is_symlink() for f in STATISTICS)
    if (d / f"vector_database_{d.name}_metadata.json").is_file():
        return True
    try:
        doc = files.load_json(d / "summary.json", limit=PROBE_BYTES, root=d)
    except (ResultError, OSError, ValueError, RecursionError):
        return len(d.parents) >= 4 and d.parents[3].name == "vector_database"   # unreadable: its check says why
    return isinstance(doc, dict) and all(k in doc for k in SUMMARY_KEYS)


def find(path: Path) -> list[Path]:
    """Every leaf at or below `path` (links not followed, bounded in count and depth)."""
    path = Path(path)
    if path.is_file():
        path = path.parent
    if is_leaf(path):
        return [path]
    out: list[Path] = []
    base_depth = len(path.parts)
    for root, dirs, _ in os.walk(path, followlinks=False):
        r = Path(root)
        if len(r.parts) - base_depth >= MAX_DEPTH:
            dirs[:] = []
            continue
        dirs.sort()
        if is_leaf(r):
            out.append(r)
            dirs[:] = [d for d in dirs if d != "vectordb"]
            if len(out) >= MAX_LEAVES:
                raise ResultError(f"{path}: leaves: expected at most {MAX_LEAVES} vector_database leaves, got more")
    return out


def read(leaf: Path, root: Path | None = None) -> Leaf:
    """One leaf's figures (published or ours) as one record."""
    leaf = Path(leaf)
    root = Path(root or leaf)
    stats = not (leaf / "summary.json").is_file() and all((leaf / f).is_file() for f in STATISTICS)
    doc = from_statistics(leaf, root) if stats else _load(leaf / "summary.json", root)
    if not isinstance(doc, dict):
        raise ResultError(f"{leaf / 'summary.json'}: expected a JSON object, got {type(doc).__name__}")
    ours = doc.get("schema_version") == 1 or "engine" in doc or (leaf / "vectordb" / "engine").is_dir() \
        or any(leaf.glob("vector_database_*_metadata.json")) and _suite_metadata(leaf, root)   # not by one key
    ours = ours and not stats
    rec = Leaf(path=str(leaf), phase=leaf.parent.name, engine=leaf.parents[2].name, index_type=leaf.parents[1].name,
               ts=leaf.name, source="suite" if ours else "published", summary_file="statistics.json" if stats else "summary.json")
    for key in ("num_vectors", "dimension", "inserted_vectors", "query_count"):
        v = _num(doc.get(key))
        setattr(rec, key, int(v) if v is not None else None)
    for key in ("throughput_qps", "total_time_seconds", "mean_latency_ms", "p50_latency_ms", "p95_latency_ms",
                "p99_latency_ms", "p999_latency_ms", "recall", "recall_floor"):
        setattr(rec, key, _num(doc.get(key)))
    rec.summary_index_type = doc.get("index_type") if isinstance(doc.get("index_type"), str) else None
    db = doc.get("database")
    rec.database = db.get("database") if isinstance(db, dict) and isinstance(db.get("database"), str) else None
    rec.status = doc.get("status") if isinstance(doc.get("status"), str) else None
    _disk_io(rec, doc)
    if rec.phase == "run":
        rec.missing = [k for k in (*PUBLISHED_KEYS, "recall") if _num(doc.get(k)) is None]
    if ours:
        _ours(rec, doc, leaf, root)
    else:
        _published(rec, leaf, root)
        if rec.phase == "run":
            _rederive_published(rec, doc, leaf, root)
    return rec


def from_statistics(leaf: Path, root: Path) -> dict:
    """A VectorDBBench run leaf's published figures as summary.json's keys: statistics.json's QPS, wall time,
    query count, latencies (median as p50) and recall (recall.mean_recall, recall@k), config.json's dimension
    and index type."""
    st, cfg = (_load(leaf / f, root) for f in STATISTICS)
    for f, d in zip(STATISTICS, (st, cfg)):
        if not isinstance(d, dict):
            raise ResultError(f"{leaf / f}: expected a JSON object, got {type(d).__name__}")
    rc = st.get("recall") if isinstance(st.get("recall"), dict) else {}
    doc = {k: st.get(k) for k in ("throughput_qps", "total_time_seconds", "mean_latency_ms", "p95_latency_ms",
                                  "p99_latency_ms", "p999_latency_ms", "disk_io")}
    return {**doc, "query_count": st.get("total_queries"), "p50_latency_ms": st.get("median_latency_ms"),
            "recall": rc.get("mean_recall", rc.get("recall_at_k")), "dimension": cfg.get("vector_dim"),
            "index_type": cfg.get("index_type"), "num_vectors": None}


def _disk_io(rec: Leaf, doc: dict) -> None:
    """The client hosts and read bytes per second a document's disk_io block gives, where still unknown."""
    io = doc.get("disk_io") if isinstance(doc.get("disk_io"), dict) else {}
    hosts = _num(io.get("host_count"))
    if rec.client_hosts is None and hosts is not None and hosts == int(hosts) and hosts > 0:
        rec.client_hosts = int(hosts)
    if rec.read_bytes_per_s is None:
        rec.read_bytes_per_s = _num(io.get("total_bytes_read_per_sec"))


def _suite_metadata(leaf: Path, root: Path) -> bool:
    meta = sorted(leaf.glob("vector_database_*_metadata.json"))[:1]
    d = _load(meta[0], root) if meta else None
    return isinstance(d, dict) and "suite_version" in d


def _rederive(rec: Leaf, doc: dict, leaf: Path, root: Path) -> None:
    """The run's figures from its own records (suite.vector_database.rederive): the re-derived value
    replaces the claimed one, a figure the records cannot give is None (claimed, not re-derivable)."""
    from suite.vector_database import rederive

    from suite.errors import SuiteError
    from suite.vector_database import workload

    k = None
    try:
        k = workload.load(rec.workload).k if rec.workload else None
    except SuiteError:          # an unknown or unreadable workload: k and the floor are not known
        pass
    if k is None:
        rec.rederive_problems.append(rederive._item(leaf / "summary.json", "workload", "a workload of workloads/ "
                                                    "(its k and recall floor)", str(rec.workload)[:80]))
    derived, rec.not_rederivable, problems = rederive.derive(leaf, doc, root, k)
    rec.claimed = {f: doc.get(f) for f in rederive.FIGURES}
    rec.rederive_problems += problems + rederive.mismatches(str(leaf / "summary.json"), doc, derived)
    for name in rederive.FIGURES:
        value = derived.get(name)
        setattr(rec, name, int(value) if name == "query_count" and value is not None else value)


def _rederive_published(rec: Leaf, doc: dict, leaf: Path, root: Path) -> None:
    """A published run's figures from its ranks' records (suite.vector_database.rederive.derive_published):
    re-derived ones replace the claims; the latencies and recall, which no record in the leaf gives, are
    None here and kept in `claimed` (shown as claimed, not re-derivable; counted in no verdict)."""
    from suite.vector_database import rederive

    derived, rec.not_rederivable, problems, rec.claimed = rederive.derive_published(leaf, doc, root)
    rec.rederive_problems += problems + rederive.mismatches(str(leaf / "summary.json"), doc, derived)
    for name in rederive.FIGURES:
        value = derived.get(name)
        setattr(rec, name, int(value) if name == "query_count" and value is not None else value)


def _ours(rec: Leaf, doc: dict, leaf: Path, root: Path) -> None:
    rec.workload = doc.get("workload") if isinstance(doc.get("workload"), str) else None
    rec.division = doc.get("division") if doc.get("division") in ("closed", "open") else None
    rec.miniature = doc.get("miniature") is True
    rec.start_unix_s, rec.end_unix_s = _num(doc.get("start_unix_s")), _num(doc.get("end_unix_s"))
    hosts = doc.get("hosts")
    rec.hosts = tuple(h for h in hosts if isinstance(h, str))[:4096] if isinstance(hosts, list) else ()
    rec.engine_version = doc.get("engine_version") if isinstance(doc.get("engine_version"), str) else None
    io = doc.get("io") if isinstance(doc.get("io"), dict) else {}
    rec.bytes_read_per_query = _num(io.get("bytes_read_per_query"))
    rec.read_ops_per_query = _num(io.get("read_ops_per_query"))
    rec.mean_io_bytes = _num(io.get("mean_io_bytes"))
    rec.warm_read_ops_per_query = _num(io.get("warm_read_ops_per_query"))
    rec.warm_bytes_read_per_query = _num(io.get("warm_bytes_read_per_query"))
    search = doc.get("search") if isinstance(doc.get("search"), dict) else {}
    if search.get("param") in ("search_list", "ef"):
        rec.search_param, rec.search_value = search["param"], _num(search.get(search["param"]))
    dram = doc.get("dram") if isinstance(doc.get("dram"), dict) else {}
    rec.dram_percent = _num(dram.get("percent"))
    cache = doc.get("page_cache_before") if isinstance(doc.get("page_cache_before"), dict) else {}
    rec.cached_fraction_before = _num(cache.get("cached_fraction"))
    drop = doc.get("cache_drop") if isinstance(doc.get("cache_drop"), dict) else {}
    rec.cache_dropped = drop.get("succeeded") if isinstance(drop.get("succeeded"), bool) else None
    gt = doc.get("ground_truth") if isinstance(doc.get("ground_truth"), dict) else None
    if gt is not None:
        rec.ground_truth = {"complete": gt.get("complete") is True, "coverage_vectors": _num(gt.get("coverage_vectors")),
                            "num_vectors": _num(gt.get("num_vectors")), "source": "summary.json ground_truth"}
    cdf_path = leaf / "vectordb" / "latency_cdf.json"
    if cdf_path.is_file():
        c = _load(cdf_path, root)
        if isinstance(c, dict) and isinstance(c.get("latency_ms"), list) and isinstance(c.get("percentile"), list):
            pairs = [(p, v) for p, v in zip(c["percentile"], c["latency_ms"]) if _num(p) is not None and _num(v) is not None]
            rec.cdf = {"percentile": [p for p, _ in pairs], "latency_ms": [v for _, v in pairs]}
    if rec.phase == "run":
        _rederive(rec, doc, leaf, root)


def _published(rec: Leaf, leaf: Path, root: Path) -> None:
    """The published leaf's run-level files: the client hosts, the ground-truth record, the version (the
    figures: _rederive_published)."""
    for name in ("vdb_multi_node_summary.json", "statistics.json"):
        p = leaf / "vectordb" / "simple" / name
        if p.is_file():
            d = _load(p, root)
            if isinstance(d, dict):
                _disk_io(rec, d)
    verdict = leaf / "result_verdict.json"
    if verdict.is_file():
        d = _load(verdict, root)
        flat = d.get("flat_setup") if isinstance(d, dict) and isinstance(d.get("flat_setup"), dict) else {}
        cov = _num(flat.get("coverage"))
        rec.ground_truth = {"complete": flat.get("ok") is True and cov is not None and cov >= 1.0,
                            "coverage_fraction": cov, "source": "result_verdict.json flat_setup"}
    meta = [p for p in leaf.glob("vector_database_*_metadata.json")][:1]
    if meta:
        d = _load(meta[0], root)
        if isinstance(d, dict):
            rec.engine_version = str(d.get("mlpstorage_version") or d.get("version") or "") or None
            rec.ruleset = d["ruleset"] if isinstance(d.get("ruleset"), str) else None


def load_tree(path: Path) -> list[Leaf]:
    path = Path(path)
    root = path if path.is_dir() else path.parent
    found = find(path)
    if not found:
        raise ResultError(f"{path}: expected vector_database leaves (vector_database/<engine>/<INDEX>/"
                          f"{{datagen,run}}/<YYYYMMDD_HHMMSS>/summary.json), got none")
    return [read(leaf, root) for leaf in found]
