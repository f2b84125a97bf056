"""A vector_database workload (workloads/vdb-*.yaml, schema vdb-workload): the dataset, the index
build and search parameters per index type, the query load and the recall floor, as a typed record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.errors import WorkloadError

SCHEMA = "vdb-workload"
INDEXES = ("DISKANN", "HNSW")          # what our engines build; v3.0 closed also names AISAQ (Rules.md 5.6.3)
CLOSED_INDEXES = ("DISKANN", "HNSW", "AISAQ")


@dataclass(frozen=True)
class VdbWorkload:
    name: str
    path: str
    num_vectors: int
    dimension: int
    distribution: str
    metric: str                 # L2 | COSINE | IP
    num_queries: int
    seed: int
    index: dict                 # {"DISKANN": {...}, "HNSW": {...}}
    k: int
    search_list: int
    beam_width: int
    ef: int
    mode: str                   # timed | query_count
    duration_s: float
    query_count: int
    clients: int
    runs: int
    recall_floor: float
    sweep: dict | None = None   # {"search_list": [...], "ef": [...]}: suite run --sweep's ladder (suite.vector_database.sweep)

    @property
    def vector_bytes(self) -> int:
        return self.num_vectors * self.dimension * 4

    def index_params(self, index: str) -> dict:
        if index not in self.index:
            raise WorkloadError(f"{self.path}: index.{index}: expected build parameters for --index "
                                f"{index.lower()}, got none (has {', '.join(self.index) or 'none'})")
        return dict(self.index[index])


def load(name: str) -> VdbWorkload:
    """The workload file `name` (`benchmark: vector_database`), checked against its schema."""
    from suite.storage import workloads

    found = workloads.paths()
    if name not in found or workloads.benchmark_of(found[name]) != "vector_database":
        have = workloads.names("vector_database")
        raise WorkloadError(f"workload {name!r}: expected one of {', '.join(have)}")
    return from_doc(files.load_yaml(found[name], schema=SCHEMA, error=WorkloadError), str(found[name]))


def from_doc(doc: dict, path: str) -> VdbWorkload:
    ds, search, run = doc["dataset"], doc["search"], doc["run"]
    if run["mode"] == "timed" and "duration_s" not in run:
        raise WorkloadError(f"{path}: run.duration_s: expected seconds for mode timed, got none")
    if run["mode"] == "query_count" and "query_count" not in run:
        raise WorkloadError(f"{path}: run.query_count: expected a count for mode query_count, got none")
    if search["k"] > ds["num_vectors"]:
        raise WorkloadError(f"{path}: search.k: expected at most num_vectors ({ds['num_vectors']}), got {search['k']}")
    return VdbWorkload(
        name=doc["name"], path=path, num_vectors=ds["num_vectors"], dimension=ds["dimension"],
        distribution=ds["distribution"], metric=ds["metric"], num_queries=ds["num_queries"], seed=ds["seed"],
        index=doc["index"], k=search["k"], search_list=search["search_list"], beam_width=search.get("beam_width", 2),
        ef=search["ef"], mode=run["mode"], duration_s=float(run.get("duration_s", 0.0)),
        query_count=int(run.get("query_count", 0)), clients=run["clients"], runs=run["runs"],
        recall_floor=float(doc["recall_floor"]), sweep=doc.get("sweep"))


def names() -> list[str]:
    from suite.storage import workloads

    return workloads.names("vector_database")


def default_data_dir(name: str) -> Path:
    """Where `suite run` finds (and for the miniature, makes) the dataset without --data-dir."""
    return Path("results") / "data" / name
