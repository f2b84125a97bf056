"""Small JSON documents beside the data (generation_log.json, a checkpoint's manifest) through the
backend that holds the data: a local directory keeps suite/files.py's guarded, atomic reads and writes;
object storage reads them with one bounded GET and writes them with one PUT (visible only complete).
The same bounds and schema checks either way: size, JSON within Python's limits, node budget, schema."""

from __future__ import annotations

import json

from suite import files as suite_files
from suite.errors import SuiteError


def _is_object(backend) -> bool:
    return getattr(backend, "bucket", None) is not None and backend.storage_type in ("object", "s3")


def exists(backend, name: str) -> bool:
    if not _is_object(backend):
        from pathlib import Path
        return Path(backend.root, name).is_file()
    try:
        backend.size(name)
    except FileNotFoundError:
        return False
    return True


def load_json(backend, name: str, schema: str | None = None, error=SuiteError,
              limit: int = suite_files.MAX_DATA_FILE_BYTES):
    """The document `name` under the backend's root, checked; a one-line `error` naming its location."""
    if not _is_object(backend):
        from pathlib import Path
        return suite_files.load_json(Path(backend.root, name), schema=schema, error=error, limit=limit)
    where = backend.locate(name)
    try:
        with backend.open_read(name, sequential=False) as handle:
            data = handle.read_at(limit + 1, 0)
    except OSError as exc:
        raise error(f"{where}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{where}: size: expected at most {limit} bytes, got more")
    try:
        doc = json.loads(data.decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError:
        raise error(f"{where}: expected UTF-8 text, got undecodable bytes") from None
    except json.JSONDecodeError as exc:
        raise error(f"{where}: line {exc.lineno}: expected valid JSON, got {exc.msg}") from None
    except (RecursionError, ValueError) as exc:
        raise error(f"{where}: expected a JSON document within Python's limits, got {type(exc).__name__}") from None
    suite_files.check_node_budget(doc, where, error)
    if schema:
        suite_files.validate(doc, schema, where, error)
    return doc


def write_json(backend, name: str, doc, schema: str) -> None:
    """Validated against its schema, then written whole (local: temp + rename; S3: one PUT)."""
    if not _is_object(backend):
        from pathlib import Path
        suite_files.write_json(Path(backend.root, name), doc, schema=schema)
        return
    problems = suite_files.schema_errors(doc, schema)
    if problems:
        raise ValueError(f"{backend.locate(name)}: refusing to write, schema {schema}: {problems[0]}")
    with backend.create(name) as writer:
        writer.write(suite_files.dump_json(doc).encode("utf-8"))
        writer.commit()
