"""Workload files as data: every workloads/<name>.yaml and those a registered kind brings.

Every workload file names its benchmark kind (`benchmark:` training, checkpointing, tpcx-ai, ...;
suite.kinds.registry maps it to the kind); paths() lists them all, from workloads/ and from the
folders a registered kind adds, and names() those of one kind. load() reads and validates a storage
workload file (training or checkpointing) against its kind's schema. What a training workload
means (the typed `Workload`, resolved for an accelerator) is suite.training.workloads.
"""

import copy
import re
from functools import lru_cache
from pathlib import Path

from suite import files
from suite.errors import WorkloadError

TRAINING, CHECKPOINTING = "training", "checkpointing"
SCHEMAS = {TRAINING: "workload", CHECKPOINTING: "checkpoint-workload"}   # the storage benchmarks' workload files
_extra_dirs: list[Path] = []     # workload files a registered benchmark kind brings (suite.kinds.registry)


def workload_dir() -> Path:
    return files.data_dir("workloads")


def add_dir(path: Path) -> None:
    """Read workload files from `path` too (a benchmark kind's own, beside the package's)."""
    if Path(path) not in _extra_dirs:
        _extra_dirs.append(Path(path))


def remove_dir(path: Path) -> None:
    if Path(path) in _extra_dirs:
        _extra_dirs.remove(Path(path))


def paths() -> dict[str, Path]:
    """Every workload file, any benchmark: name -> path (workloads/*.yaml, then the added dirs)."""
    out: dict[str, Path] = {}
    for folder in [workload_dir(), *_extra_dirs]:
        for path in sorted(folder.glob("*.yaml")):
            if path.stem in out:
                raise WorkloadError(f"{path}: name: expected a workload name not taken, got {path.stem!r} "
                                    f"(also {out[path.stem]})")
            out[path.stem] = path
    return out


def benchmark_of(path: Path) -> str:
    """A workload file's `benchmark:` (training, checkpointing, tpcx-ai, ...), read without a YAML
    parser so building the command line stays instant; load() checks it against the schema."""
    return _benchmark(str(path), path.stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _benchmark(path: str, mtime_ns: int) -> str:
    for line in files.read_text(Path(path), error=WorkloadError).splitlines():
        found = re.fullmatch(r"""benchmark:\s*(["']?)([a-z0-9][a-z0-9_-]*)\1\s*(#.*)?""", line)
        if found:
            return found.group(2)
    raise WorkloadError(f"{path}: benchmark: expected a benchmark kind (training, checkpointing, ...), got none")


def accelerator_types(path: Path) -> list[str]:
    """The keys of a workload file's top-level `accelerators:` block, sorted, read without a YAML parser
    (for --help, like benchmark_of; tests check it against load()); [] when it has none."""
    return list(_accelerator_types(str(path), path.stat().st_mtime_ns))


@lru_cache(maxsize=64)
def _accelerator_types(path: str, mtime_ns: int) -> tuple[str, ...]:
    found, inside = [], False
    for line in files.read_text(Path(path), error=WorkloadError).splitlines():
        if re.fullmatch(r"accelerators:\s*(#.*)?", line):
            inside = True
        elif inside and re.match(r"[^\s#]", line):       # the next top-level key ends the block
            break
        elif inside and (key := re.match(r"  ([a-z0-9][a-z0-9_.-]*):", line)):
            found.append(key.group(1))
    return tuple(sorted(found))


def names(benchmark: str = TRAINING) -> list[str]:
    """The workloads of one benchmark kind (default: training, the storage workloads datagen writes for)."""
    return sorted(name for name, path in paths().items() if benchmark_of(path) == benchmark)


def checkpoint_names() -> list[str]:
    """The checkpointing workloads (`benchmark: checkpointing`: suite.checkpointing)."""
    return names(CHECKPOINTING)


def load(name: str) -> dict:
    """The validated workload file `name` (no accelerator applied): a training workload, or with
    `benchmark: checkpointing` a checkpointing one (checkpoint-workload schema)."""
    storage = names() + checkpoint_names()
    if name not in storage:
        raise WorkloadError(f"workload {name!r}: expected one of {', '.join(storage)}")
    path = paths()[name]
    return copy.deepcopy(_load(str(path), path.stat().st_mtime_ns, name))


@lru_cache(maxsize=32)
def _load(path: str, mtime_ns: int, name: str) -> dict:
    """The parsed and validated file, once per modification (a report resolves per benchmark)."""
    benchmark = _benchmark(path, mtime_ns)
    doc = files.load_yaml(Path(path), schema=SCHEMAS[benchmark], error=WorkloadError)
    if doc["name"] != name:
        raise WorkloadError(f"{path}: name: expected {name!r}, got {doc['name']!r}")
    return doc


def setting(name: str | None, accelerator: str | None, section: str, key: str):
    """`section.key` of a workload file for one accelerator (the accelerator's block over the base:
    dataset.record_length, train.computation_time), read as written: None for a workload or
    accelerator we do not ship, or a key it does not set."""
    if not (name and accelerator and name in paths()):
        return None
    try:
        doc = load(name)
    except WorkloadError:
        return None
    block = (doc.get("accelerators") or {}).get(accelerator)
    if not isinstance(block, dict):
        return None
    return {**(doc.get(section) or {}), **(block.get(section) or {})}.get(key)


def record_size(lengths) -> str | None:
    """A result's record size as `suite compare` and `suite history` identify it (the same text for
    every kind that reads one): its runs' mean bytes per sample, "1000 B"; "mixed: ..." where its runs
    differ; None unknown."""
    found = sorted({int(x) for x in lengths if x})
    if not found:
        return None
    return f"{found[0]} B" if len(found) == 1 else "mixed: " + ", ".join(f"{n} B" for n in found)
