"""Loading the files of a published MLPerf Storage v3.0 tree, as untrusted input.

Every reader here takes the tree's root (`root=`): nothing outside it is read through a link in it,
sizes are bounded (suite.files), YAML nesting is bounded (suite.rules.yamlload), non-finite numbers
are refused, and a failure is one SuiteError (ResultError) line `<file>: <field>: expected X, got Y`.
The checker turns such an error into a finding; no reader raises anything else.

- `summary.json` (DLIO's, per leaf): `summary()`;
- `<benchmark>_<ts>_metadata.json` (mlpstorage's, per leaf): `metadata()`;
- `fs_separation.json` (data and results on different file systems, v3.0): `fs_separation()`;
- `.mlps-code-image` (one line `md5-tree-v2:<32 hex>`): `pointer()`;
- `<Org>/code-<hash8>/.code-hash.json`: `code_hash()`;
- `<Org>/systems/<system>.yaml`: `system_yaml()`;
- the staff's 16-byte `PRUNED BY STAFF` placeholder: `is_pruned()`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from suite import files
from suite.errors import ResultError, expected_got
from suite.numbers import is_number

PRUNED = b"PRUNED BY STAFF"
POINTER_RE = re.compile(r"^(?P<alg>md5-tree-v2):(?P<hash>[0-9a-f]{32})$")
HASH_RE = re.compile(r"^[0-9a-f]{32}$")
MAX_JSON_BYTES = 8 * 1024 * 1024       # a published metadata file is ~300 KB
MAX_YAML_BYTES = 4 * 1024 * 1024       # the largest published system YAML is ~100 KB


def is_pruned(path: Path, root: Path) -> bool:
    """The staff's placeholder (`PRUNED BY STAFF`, maybe a newline): a file deliberately pruned."""
    try:
        data = files.read_bytes(path, limit=64, error=ResultError, root=root)
    except ResultError:
        return False
    return data.strip() == PRUNED


def _json(path: Path, root: Path) -> dict:
    doc = files.load_json(path, error=ResultError, limit=MAX_JSON_BYTES, root=root)
    if not isinstance(doc, dict):
        raise ResultError(expected_got(path, "(top level)", "a JSON object", type(doc).__name__))
    _finite(doc, path, "")
    return doc


def _finite(doc, path: Path, where: str, depth: int = 0) -> None:
    """JSON allows NaN and Infinity; a result never may (every figure must be a real number)."""
    if depth > 64:
        raise ResultError(expected_got(path, where or "(top level)", "at most 64 levels of nesting", "more"))
    if isinstance(doc, float) and not math.isfinite(doc):
        raise ResultError(expected_got(path, where or "(top level)", "a finite number", doc))
    if isinstance(doc, dict):
        for k, v in doc.items():
            key = str(k).encode("unicode_escape").decode("ascii")[:60]     # a key is untrusted text: one line
            _finite(v, path, f"{where}.{key}" if where else key, depth + 1)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            _finite(v, path, f"{where}[{i}]", depth + 1)


def _timestamp(value, path: Path, name: str) -> datetime:
    if not isinstance(value, str) or len(value) > 40:
        raise ResultError(expected_got(path, name, "an ISO 8601 time", repr(value)[:60]))
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ResultError(expected_got(path, name, "an ISO 8601 time", repr(value)[:60])) from None
    return t.replace(tzinfo=None)            # DLIO writes naive local times; compare like with like


def _number(doc: dict, key: str, path: Path, where: str, minimum: float | None = 0.0):
    v = doc.get(key)
    if v is None:
        return None
    if not is_number(v) or (minimum is not None and v < minimum):
        bound = f"a number >= {minimum}" if minimum is not None else "a number"
        raise ResultError(expected_got(path, f"{where}{key}", bound, repr(v)[:60]))
    return float(v)


@dataclass
class Summary:
    """What the v3.0 checks and figures read from one leaf's summary.json."""

    path: Path
    start: datetime
    end: datetime
    metric: dict                       # numbers and lists of numbers only
    num_files_train: int | None
    num_hosts: int | None
    num_accelerators: int | None
    host_memory_gib: list[float] = field(default_factory=list)   # DLIO's host_memory_GB is GiB
    meminfo_cached_bytes: int | None = None
    meminfo_total_bytes: int | None = None
    hostname: str | None = None        # the host DLIO ran on (a run from another system is a finding)

    @property
    def duration_s(self) -> float:
        return (self.end - self.start).total_seconds()


def summary(path: Path, root: Path) -> Summary:
    doc = _json(path, root)
    start = _timestamp(doc.get("start"), path, "start")
    end = _timestamp(doc.get("end"), path, "end")
    if end < start:
        raise ResultError(expected_got(path, "end", f"a time after start ({doc['start']})", doc["end"]))
    metric = doc.get("metric")
    if not isinstance(metric, dict):
        raise ResultError(expected_got(path, "metric", "an object of figures", type(metric).__name__))
    clean = {}
    for k, v in metric.items():
        if isinstance(v, list) and all(is_number(x) for x in v):
            clean[k] = [float(x) for x in v]
        elif is_number(v):
            clean[k] = float(v)
        elif isinstance(v, str):
            clean[k] = v[:64]
    mem = doc.get("host_memory_GB") or []
    if not isinstance(mem, list) or not all(is_number(x) and x >= 0 for x in mem):
        raise ResultError(expected_got(path, "host_memory_GB", "a list of GiB figures >= 0", repr(mem)[:60]))
    meminfo = doc.get("host_meminfo") if isinstance(doc.get("host_meminfo"), dict) else {}
    return Summary(path, start, end, clean, _count(doc, "num_files_train", path), _count(doc, "num_hosts", path),
                   _count(doc, "num_accelerators", path), [float(x) for x in mem],
                   _kb(meminfo.get("Cached"), path, "host_meminfo.Cached"),
                   _kb(meminfo.get("MemTotal"), path, "host_meminfo.MemTotal"), _str(doc, "hostname"))


def _count(doc: dict, key: str, path: Path) -> int | None:
    v = doc.get(key)
    if v is None:
        return None
    if isinstance(v, str) and v.isdigit() and len(v) < 16:
        v = int(v)                                     # mlpstorage records some counts as strings
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ResultError(expected_got(path, key, "a count >= 0", repr(v)[:60]))
    return v


def _kb(value, path: Path, name: str) -> int | None:
    """A /proc/meminfo line's value ("1212480 kB") in bytes."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d{1,15})\s*kB\s*", value) if isinstance(value, str) else None
    if not m:
        raise ResultError(expected_got(path, name, "'<n> kB'", repr(value)[:60]))
    return int(m.group(1)) * 1024


@dataclass
class Metadata:
    path: Path
    benchmark_type: str | None
    model: str | None
    command: str | None
    num_processes: int | None
    accelerator: str | None
    num_checkpoints_write: int | None
    num_checkpoints_read: int | None
    subset: bool
    num_files_train: int | None
    data_folder: str | None
    invocation_start: datetime | None = None     # mlpstorage's bookends of the whole invocation (4.7.1)
    invocation_end: datetime | None = None
    fsync: bool | None = None                    # parameters.checkpoint.fsync (4.3.2)
    override_keys: tuple = ()                    # override_parameters' keys: what the run changed (3.6.2, 4.6.3)
    params: dict | None = None                   # `parameters`: the run's dlio_config (3.1.2, 3.6.2 re-derived)
    result_dir: str | None = None                # where mlpstorage wrote the leaf (against fs_separation.json)
    memory_bytes: tuple | None = None            # system_info (total, min, max)_memory_bytes over the hosts


def metadata(path: Path, root: Path) -> Metadata:
    doc = _json(path, root)
    params = doc.get("parameters") if isinstance(doc.get("parameters"), dict) else {}
    ckpt = params.get("checkpoint") if isinstance(params.get("checkpoint"), dict) else {}
    ds = params.get("dataset") if isinstance(params.get("dataset"), dict) else {}
    over = doc.get("override_parameters") if isinstance(doc.get("override_parameters"), dict) else {}
    args = doc.get("args") if isinstance(doc.get("args"), dict) else {}
    subset = (args.get("checkpoint_subset") is True or over.get("checkpoint.mode") == "subset"
              or ckpt.get("mode") == "subset")
    bookends = [_timestamp(doc[k], path, k) if doc.get(k) is not None else None
                for k in ("invocation_start_time", "invocation_end_time")]
    fsync = ckpt.get("fsync")
    return Metadata(path, _str(doc, "benchmark_type"), _str(doc, "model"), _str(doc, "command"),
                    _count(doc, "num_processes", path), _str(doc, "accelerator"),
                    _count(ckpt, "num_checkpoints_write", path), _count(ckpt, "num_checkpoints_read", path),
                    subset, _count(ds, "num_files_train", path), _str(ds, "data_folder"), *bookends,
                    fsync if isinstance(fsync, bool) else None, tuple(str(k)[:200] for k in list(over)[:500]),
                    params if isinstance(doc.get("parameters"), dict) else None, _str(doc, "result_dir"),
                    _memory(doc, path))


def _memory(doc: dict, path: Path) -> tuple | None:
    """system_info's (total, min, max)_memory_bytes, mlpstorage's record of the hosts' memory."""
    info = doc.get("system_info") if isinstance(doc.get("system_info"), dict) else {}
    got = tuple(_count(info, f"{k}_memory_bytes", path) for k in ("total", "min", "max"))
    return None if got[0] is None else got


def _str(doc: dict, key: str) -> str | None:
    v = doc.get(key)
    return v[:200] if isinstance(v, str) else None


@dataclass
class FsSeparation:
    """fs_separation.json: where the data (or checkpoints) and the results were, and whether they
    share a file system (True: they do)."""

    path: Path
    same_filesystem: bool
    data_path: str | None
    results_path: str | None


def fs_separation(path: Path, root: Path) -> FsSeparation:
    doc = _json(path, root)
    same = doc.get("same_filesystem")
    if same is None and isinstance(doc.get("separate"), bool):     # the suite's own probe (suite.storage.separation)
        same = not doc["separate"]
    if not isinstance(same, bool):
        raise ResultError(expected_got(path, "same_filesystem", "true or false", repr(same)[:60]))
    return FsSeparation(path, same, _str(doc, "data_or_chkpt_path"), _str(doc, "results_path"))


def pointer(path: Path, root: Path) -> tuple[str, str]:
    """(algorithm, 32-hex hash) of a leaf's `.mlps-code-image`."""
    text = files.read_text(path, limit=256, error=ResultError, root=root).strip()
    m = POINTER_RE.match(text)
    if not m:
        raise ResultError(expected_got(path, "(line 1)", "'md5-tree-v2:<32 lowercase hex>'", repr(text)[:80]))
    return m.group("alg"), m.group("hash")


@dataclass
class CodeHash:
    path: Path
    hash: str
    algorithm: str
    captured_at: str | None
    tool_version: str | None
    git_sha: str | None


def code_hash(path: Path, root: Path) -> CodeHash:
    doc = files.load_json(path, error=ResultError, limit=64 * 1024, root=root)
    if not isinstance(doc, dict):
        raise ResultError(expected_got(path, "(top level)", "a JSON object", type(doc).__name__))
    h, alg = doc.get("hash"), doc.get("algorithm")
    if not isinstance(h, str) or not HASH_RE.match(h):
        raise ResultError(expected_got(path, "hash", "32 lowercase hex digits", repr(h)[:60]))
    if alg != "md5-tree-v2":
        raise ResultError(expected_got(path, "algorithm", "'md5-tree-v2'", repr(alg)[:60]))
    at = doc.get("captured_at")
    if at is not None:
        _timestamp(at, path, "captured_at")
    return CodeHash(path, h, alg, at, _str(doc, "mlpstorage_version") or _str(doc, "suite_version"),
                    _str(doc, "git_sha"))


def system_yaml(path: Path, root: Path) -> dict:
    """A system description, bounded: one mapping with `system_under_test`. Parsed by libyaml where
    present (the nesting bounded first, as suite.rules.yamlload does): the pure-Python parser, 5x slower,
    was half of a published tree's check."""
    import yaml

    from suite.rules.yamlload import MAX_INDENT, MAX_NESTING, _nesting

    text = files.read_text(path, limit=MAX_YAML_BYTES, error=ResultError, root=root)
    deepest, indent = _nesting(text)
    if deepest > MAX_NESTING or indent > MAX_INDENT:
        raise ResultError(expected_got(path, "nesting", f"at most {MAX_NESTING} levels", f"{deepest} levels"))
    doc = files.parse_yaml(text, path, ResultError, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(doc, dict) or not isinstance(doc.get("system_under_test"), dict):
        raise ResultError(expected_got(path, "system_under_test", "a mapping", type(doc).__name__))
    _finite(doc, path, "")
    return doc
