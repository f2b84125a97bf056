"""A toyio leaf: <results dir>/toyio/<stamp>/ with toyio_result.json (what it claims) and reads.json
(every read's bytes and seconds: the evidence)."""

from __future__ import annotations

from pathlib import Path

from suite import files
from suite.errors import ResultError

RESULT, READS = "toyio_result.json", "reads.json"


def is_leaf(path: Path) -> bool:
    return path.is_dir() and (path / RESULT).is_file()


def write(leaf: Path, result: dict, reads: list) -> None:
    files.write_atomic(leaf / READS, files.dump_json({"reads": reads}))
    files.write_atomic(leaf / RESULT, files.dump_json(result))


def load(leaf: Path) -> tuple[dict, list]:
    result = files.load_json(leaf / RESULT, error=ResultError)
    reads = files.load_json(leaf / READS, error=ResultError)
    if not isinstance(result, dict) or not isinstance(reads, dict) or not isinstance(reads.get("reads"), list):
        raise ResultError(f"{leaf}: {RESULT}/{READS}: expected objects with 'reads', got something else")
    return result, reads["reads"]
