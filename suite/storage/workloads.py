"""Workload files as data: every workloads/<name>.yaml and those a registered kind brings.

Every workload file names its benchmark kind (`benchmark:` training, checkpointing, tpcx-ai, ...;
suite.kinds.registry maps it to the kind); paths() lists them all, from workloads/ and from the
folders a registered kind adds, and names() those of one kind. load() reads a workload file and
validates it against the schema its kind names; what a workload means is its kind's
(suite.training.workloads resolves a training one for an accelerator, suite.checkpointing.workloads).
"""

import copy
import re
from functools import lru_cache
from pathlib import Path

from suite import files
from suite.errors import WorkloadError

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


def names(benchmark: str) -> list[str]:
    """The workloads of one benchmark kind (the files whose `benchmark:` names it)."""
    return sorted(name for name, path in paths().items() if benchmark_of(path) == benchmark)


def load(name: str, schema: str, benchmark: str) -> dict:
    """The workload file `name` of kind `benchmark`, validated against `schema` (its kind's:
    suite.training.workloads, suite.checkpointing.workloads); no accelerator applied."""
    mine = names(benchmark)
    if name not in mine:
        raise WorkloadError(f"workload {name!r}: expected one of {', '.join(mine)}")
    path = paths()[name]
    return copy.deepcopy(_load(str(path), path.stat().st_mtime_ns, name, schema))


@lru_cache(maxsize=32)
def _load(path: str, mtime_ns: int, name: str, schema: str | None) -> dict:
    """The parsed (and, with a schema, validated) file, once per modification."""
    doc = files.load_yaml(Path(path), schema=schema, error=WorkloadError)
    got = doc.get("name") if isinstance(doc, dict) else doc
    if got != name:
        raise WorkloadError(f"{path}: name: expected {name!r}, got {got!r}")
    return doc


def setting(name: str | None, accelerator: str | None, section: str, key: str):
    """`section.key` of a workload file for one accelerator (the accelerator's block over the base:
    dataset.record_length, train.computation_time), read as written: None for a workload or
    accelerator we do not ship, or a key it does not set."""
    if not (name and accelerator and name in paths()):
        return None
    path = paths()[name]
    try:
        doc = _load(str(path), path.stat().st_mtime_ns, name, None)   # its kind's load() validates it
    except (WorkloadError, OSError):
        return None
    accelerators = doc.get("accelerators")
    block = accelerators.get(accelerator) if isinstance(accelerators, dict) else None
    if not isinstance(block, dict):
        return None
    base, over = doc.get(section), block.get(section)
    merged = {**(base if isinstance(base, dict) else {}), **(over if isinstance(over, dict) else {})}
    return merged.get(key)


def record_size(lengths) -> str | None:
    """A result's record size as `suite compare` and `suite history` identify it (the same text for
    every kind that reads one): its runs' mean bytes per sample, "1000 B"; "mixed: ..." where its runs
    differ; None unknown."""
    found = sorted({int(x) for x in lengths if x})
    if not found:
        return None
    return f"{found[0]} B" if len(found) == 1 else "mixed: " + ", ".join(f"{n} B" for n in found)
