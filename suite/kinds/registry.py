"""The benchmark kinds: the built-in ones, and any registered (a new benchmark, a test's throwaway).

A workload's kind is its file's `benchmark:` key; a result's kind is the first kind, newest first,
that recognises it (training, the first built in, takes what no other does).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from suite import files
from suite.errors import ResultError, WorkloadError, expected_got
from suite.kinds import checkpointing, tpcxai, training
from suite.kinds.base import Kind
from suite.storage import workloads

KINDS: list[Kind] = [training.KIND, checkpointing.KIND, tpcxai.KIND]


def register(kind: Kind) -> None:
    """Add a kind (its workload_dir's files become workloads too). Its name must be new."""
    if any(k.name == kind.name for k in KINDS):
        raise ValueError(f"benchmark kind {kind.name!r} is registered already")
    KINDS.append(kind)
    if kind.workload_dir is not None:
        workloads.add_dir(kind.workload_dir)


def unregister(name: str) -> None:
    kind = get(name)
    KINDS.remove(kind)
    if kind.workload_dir is not None:
        workloads.remove_dir(kind.workload_dir)


def get(name: str) -> Kind:
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise WorkloadError(f"benchmark: expected one of {', '.join(k.name for k in KINDS)}, got {name!r}")


def for_workload(name: str) -> Kind:
    """The kind of workload `name`: its file's `benchmark:` (the file checked against the kind's schema)."""
    found = workloads.paths()
    if name not in found:
        raise WorkloadError(f"workload {name!r}: expected one of {', '.join(sorted(found))}")
    benchmark = workloads.benchmark_of(found[name])
    for kind in KINDS:
        if kind.name == benchmark:
            if kind.workload_schema is not None:
                path = found[name]
                _validated(str(path), path.stat().st_mtime_ns, kind.workload_schema, name)
            return kind
    raise WorkloadError(f"{found[name]}: benchmark: expected one of {', '.join(k.name for k in KINDS)}, "
                        f"got {benchmark!r}")


@lru_cache(maxsize=64)
def _validated(path: str, mtime_ns: int, schema: str, name: str) -> None:
    """The workload file checked against its kind's schema (which pins `benchmark:`), once per change."""
    doc = files.load_yaml(Path(path), schema=schema, error=WorkloadError)
    if doc["name"] != name:
        raise WorkloadError(f"{path}: name: expected {name!r}, got {doc['name']!r}")


def for_result(path: Path) -> Kind:
    """The kind whose results `path` (a file or directory) holds."""
    path = Path(path)
    if not path.exists():
        raise ResultError(expected_got(path, "path", "an existing file or directory", "nothing there"))
    for kind in reversed(KINDS):
        if kind.recognises(path):
            return kind
    raise ResultError(expected_got(path, "path", "the results of a benchmark kind", "none recognised"))


def workload_names(which=lambda kind: True) -> list[str]:
    """The workloads whose kind satisfies `which` (e.g. has a datasize, or sweeps)."""
    wanted = {k.name for k in KINDS if which(k)}
    return sorted(name for name, path in workloads.paths().items() if workloads.benchmark_of(path) in wanted)


def described(kind: Kind) -> str:
    """How an error names the kind: `--workload NAME` for a kind of one workload, else
    `a <kind> workload (its names, or how the kind shows them)`."""
    names = workload_names(lambda k: k is kind)
    if len(names) == 1:
        return f"--workload {names[0]}"
    return f"a {kind.name} workload ({kind.workloads_shown or ', '.join(names)})"
