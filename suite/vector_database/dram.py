"""A query run at a DRAM:index ratio: the memory the run may hold for the index, as a fraction of the
disk-resident index's bytes, enforced by a memory cgroup (suite.enforce.cgroup) around the engine's worker.

The limit is the worker's headroom (the interpreter, numpy, the engine's code, its PQ tables and buffers:
HEADROOM_BYTES, recorded) plus ratio x the index's bytes. DiskANN's DRAM for the index is its node cache:
num_nodes_to_cache = ratio x the index's nodes (cache_mechanism 1: the nodes the build's sample queries
visit), so the reads a query needs from the storage fall as the ratio rises. DiskANN reads with O_DIRECT,
so the page cache never serves it: the cgroup bounds what the process and the kernel may hold for it.
Milvus HNSW holds the whole graph in memory: a ratio under 100 % cannot load it and is refused.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from suite.errors import SuiteError

HEADROOM_BYTES = 384 << 20        # a DiskANN worker's own memory, measured here: peak 150-250 MiB (docs/vector-database.md)
DEFAULT_PERCENTS = (10, 25, 100)


def parse_percents(text: str) -> tuple[float, ...]:
    """--dram-ratios "10,25,100" (percent of the index, each in (0, 100])."""
    out = []
    for part in str(text).split(","):
        try:
            v = float(part.strip().rstrip("%"))
        except ValueError:
            raise SuiteError(f"--dram-ratios: expected percentages of the index in (0, 100] like 10,25,100, got {text!r}") from None
        if not 0 < v <= 100:
            raise SuiteError(f"--dram-ratios: expected each in (0, 100], got {part.strip()!r}")
        out.append(v)
    if len(set(out)) != len(out) or not out:
        raise SuiteError(f"--dram-ratios: expected distinct percentages, got {text!r}")
    return tuple(out)


def index_bytes(index_dir: Path, engine: str) -> int:
    """The disk-resident index's bytes: DiskANN's *_disk.index (what a query reads), else every file."""
    files = sorted(Path(index_dir).glob("*_disk.index")) if engine == "diskann" else []
    files = files or [p for p in Path(index_dir).rglob("*") if p.is_file() and not p.is_symlink()]
    return sum(p.stat().st_size for p in files)


def plan(percent: float, index_dir: Path, engine: str, index: str, num_vectors: int) -> dict:
    if engine == "milvus" and index == "HNSW" and percent < 100:
        raise SuiteError(f"--dram-ratios {percent:g}: expected 100 with --index hnsw (Milvus holds the whole HNSW "
                         "graph in memory; under 100 % it cannot load), got it")
    ib = index_bytes(index_dir, engine)
    return {"percent": percent, "index_bytes": ib, "headroom_bytes": HEADROOM_BYTES,
            "limit_bytes": HEADROOM_BYTES + int(ib * percent / 100),
            "cache_nodes": int(num_vectors * percent / 100) if engine == "diskann" else None}


@contextlib.contextmanager
def cgroup(p: dict | None, k: int):
    """The memory cgroup of run k at plan `p` (None: no ratio asked, nothing made): yields (join file,
    evidence getter)."""
    if p is None:
        yield None, (lambda: None)
        return
    from suite.enforce import cgroup as cg
    from suite.harness import enforced

    with cg.MemoryCgroup(p["limit_bytes"], cg.unique_name(f"{enforced.CGROUP_PREFIX}vdb{k}")) as mem:
        join = mem.backend.join_file(mem.path)
        if join is None:
            raise SuiteError(f"--dram-ratios: expected a v1 or v2 memory cgroup to join, got {mem.version}")
        yield join, mem.evidence
