"""The kv_cache workload as data (workloads/kv-cache.yaml): models (KV bytes per token), the three
closed options, the closed locks, user types, request shape and the miniature; and one trial's
parameters (`Params`), the values a rank runs with and the command line records."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from functools import lru_cache

from suite.errors import SuiteError

WORKLOAD = "kv-cache"
GIB = 1 << 30
SCHEMA = "kvcache-workload"


@dataclass(frozen=True)
class Params:
    """One trial's parameters: what `python -m suite.kv_cache.rank` is given (and metadata records)."""

    option: int
    model: str
    users: int
    duration_s: float
    gpu_mem_gb: float
    cpu_mem_gb: float
    max_concurrent_allocs: int
    seed_base: int
    generation_mode: str = "none"
    storage_capacity_gb: float = 0.0          # 0: 95 % of the cache dir's free space (the reference's)
    token_bytes_divisor: int = 1              # the miniature's smaller entries (1: real size)

    def to_dict(self) -> dict:
        return asdict(self)


def load(name: str = WORKLOAD) -> dict:
    """The workload file, checked against its schema (parsed once per change of the file)."""
    import copy

    from suite.errors import WorkloadError
    from suite.storage import workloads

    path = workloads.paths().get(name)
    if path is None or workloads.benchmark_of(path) != "kv_cache":
        raise WorkloadError(f"workload {name!r}: expected a kv_cache workload (kv-cache)")
    return copy.deepcopy(_load(str(path), path.stat().st_mtime_ns, name))


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, name: str) -> dict:
    from pathlib import Path

    from suite import files
    from suite.errors import WorkloadError

    doc = files.load_yaml(Path(path), schema=SCHEMA, error=WorkloadError)
    for key, opt in doc["options"].items():
        if opt["model"] not in doc["models"]:
            raise SuiteError(f"{name}: options.{key}.model: expected one of {', '.join(doc['models'])}, "
                             f"got {opt['model']!r}")
    return doc


def bytes_per_token(doc: dict, model: str) -> int:
    """layers x kv_heads x head_dim x 2 (K and V) x dtype bytes (llama3.1-8b: 131,072)."""
    try:
        m = doc["models"][model]
    except KeyError:
        raise SuiteError(f"--model: expected one of {', '.join(sorted(doc['models']))}, got {model!r}") from None
    return m["layers"] * m["kv_heads"] * m["head_dim"] * 2 * m["dtype_bytes"]


def closed_params(doc: dict, option: int) -> Params:
    """Option `option`'s closed-division parameters (Table KVCache-1)."""
    o, c = doc["options"][str(option)], doc["closed"]
    return Params(option=option, model=o["model"], users=o["users"], duration_s=float(c["duration_s"]),
                  gpu_mem_gb=float(o["gpu_mem_gb"]), cpu_mem_gb=float(o["cpu_mem_gb"]),
                  max_concurrent_allocs=o["max_concurrent_allocs"], seed_base=c["seed"],
                  generation_mode=c["generation_mode"])


def miniature(doc: dict, p: Params) -> Params:
    """The miniature's trial: fewer users, smaller entries, a short duration."""
    m = doc["miniature"]
    return replace(p, users=min(p.users, m["users"]), duration_s=float(m["duration_s"]),
                   token_bytes_divisor=m["token_bytes_divisor"])


def entry_bytes(doc: dict, p: Params, tokens: int) -> int:
    """One KV entry's bytes: tokens x bytes/token (/ the miniature's divisor), at least 4 KiB."""
    return max(4096, tokens * bytes_per_token(doc, p.model) // p.token_bytes_divisor)


OPEN_FIELDS = ("model", "users", "duration_s", "gpu_mem_gb", "cpu_mem_gb", "storage_capacity_gb")  # Rules 6.6.2
CLOSED_FIELDS = ("model", "users", "gpu_mem_gb", "cpu_mem_gb", "max_concurrent_allocs", "seed_base",
                 "generation_mode", "duration_s")                                              # Rules 6.6.1
