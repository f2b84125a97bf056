"""<checkpoint folder>/suite-checkpoint.json: what the write phase left there, for the read phase.

The write invocation removes it before it writes and writes it (atomically) after its last run,
so a read finds it only after a complete write. The read phase refuses a folder without one, or
one written for another layout (workload, mode, processes, miniature, bytes), or a results
directory that is the write's own (the two phases keep separate results, guidelines §2.2.2).
"""

from __future__ import annotations

import os
from pathlib import Path

from suite import files
from suite.errors import SuiteError

NAME = "suite-checkpoint.json"
SCHEMA = "checkpoint-manifest"
LAYOUT_KEYS = ("workload", "mode", "processes", "miniature", "checkpoint_bytes", "files_per_checkpoint")


def path(folder: Path) -> Path:
    return folder / NAME if _is_object(folder) else Path(folder) / NAME


def _is_object(folder) -> bool:
    from suite.storage.backend.select import ObjectLocation

    return isinstance(folder, ObjectLocation)


def _backend(folder):
    from suite.storage.backend.select import backend_for

    return backend_for("object", folder)


def remove(folder: Path) -> None:
    if _is_object(folder):          # object storage: through the backend (a DELETE)
        _backend(folder).remove(NAME)
        return
    try:
        path(folder).unlink()
    except FileNotFoundError:
        pass


def write(folder: Path, doc: dict) -> None:
    if _is_object(folder):
        from suite.storage.backend import meta
        meta.write_json(_backend(folder), NAME, {"schema_version": 1, **doc}, schema=SCHEMA)
        return
    files.write_json(path(folder), {"schema_version": 1, **doc}, schema=SCHEMA)


def _load(folder, layout: dict) -> dict:
    """The manifest's document (local: the guarded JSON loader; object storage: one bounded GET)."""
    p = path(folder)
    missing = SuiteError(f"{p}: expected the manifest a complete write phase leaves (suite run --workload "
                         f"{layout['workload']} --checkpoints-read 0 ... first), got none")
    if _is_object(folder):
        from suite.storage.backend import meta
        backend = _backend(folder)
        if not meta.exists(backend, NAME):
            raise missing
        return meta.load_json(backend, NAME, schema=SCHEMA)
    if not p.is_file():
        raise missing
    return files.load_json(p, schema=SCHEMA)


def for_read(folder: Path, layout: dict, checkpoints: int, results_dir: Path) -> dict:
    """The write's manifest, checked against this read's layout; SuiteError (exit 2) otherwise."""
    p = path(folder)
    doc = _load(folder, layout)
    for key in LAYOUT_KEYS:
        if doc[key] != layout[key]:
            raise SuiteError(f"{p}: {key}: expected {layout[key]!r} (this read's layout), got {doc[key]!r}: the "
                             f"checkpoints there were written for another configuration")
    if doc["checkpoints"] < checkpoints:
        raise SuiteError(f"{p}: checkpoints: expected at least {checkpoints} written (--checkpoints-read), "
                         f"got {doc['checkpoints']}")
    if Path(doc["results_dir"]).resolve() == Path(results_dir).resolve():
        raise SuiteError(f"--results-dir {results_dir}: expected a directory other than the write phase's, got the same")
    return doc


def reference(doc: dict, results_dir: Path) -> dict:
    """The manifest as a read's results.json records it (written_by): the write's results dir relative
    to the read's (never an absolute path: a reviewer's copy sits elsewhere); write_id (the write's checkpoint_run_set.json phase_id) names the write."""
    here = Path(os.path.abspath(results_dir))
    rel = os.path.relpath(os.path.abspath(doc["results_dir"]), here)
    return {**doc, "results_dir": Path(rel).as_posix()}
