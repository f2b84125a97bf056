"""Reading and writing the suite's data files safely.

- every load is size-limited, decoded as UTF-8 and, when a schema is named,
  validated against <name>.schema.json: the shared ones in suite/schemas/, each kind's own in
  suite/<kind>/schemas/ (schema_path; a name is one file wherever it sits);
- every JSON write (write_json) is validated against its schema first; every write goes to a
  temporary file in the same directory, is fsync'd and renamed into place, so a reader never
  sees half a file;
- every problem becomes a one-line SuiteError naming the file and field.
"""

import errno
import hashlib
import json
import math
import os
import stat
import tempfile
from contextlib import contextmanager
from importlib import resources
from functools import lru_cache
from pathlib import Path

from suite.errors import SuiteError

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
DATA_NAMES = ("workloads", "rules")
MAX_DATA_FILE_BYTES = 16 * 1024 * 1024  # result, rule and workload files are small


def data_dir(name: str) -> Path:
    """The package data directory `name` (workloads, rules).

    The YAML lives at the top of the repository (workloads/, rules/) where a reader browses it;
    suite/data/<name> links to it, so a wheel or `pip install .` carries it as package data and a
    checkout or editable install reads it in place, both through importlib.resources.
    """
    if name not in DATA_NAMES:
        raise ValueError(f"data directory: expected one of {DATA_NAMES}, got {name!r}")
    return Path(str(resources.files("suite") / "data" / name))


def read_bytes(path: Path, limit: int = MAX_DATA_FILE_BYTES, error=SuiteError, root=None) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them, or a one-line `error`.

    With `root` (the tree a command was given), the file is read only when its real path is inside
    root's: a symbolic link in the tree (the file itself or a directory above it) never makes the
    suite read a file outside it. The file is opened once (no link followed at the last step) and
    its size and type are those of the open file, so a swap between check and read changes nothing.
    """
    path = Path(path)
    try:
        target = inside(path, root, error) if root is not None else path
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)) if root is not None \
            else os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise error(f"{path}: expected a regular file, got a directory or special file")
            if st.st_size > limit:
                raise error(f"{path}: size: expected at most {limit} bytes, got {st.st_size}")
            data = f.read(limit + 1)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{path}: expected a regular file, got a symbolic link") from None
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:                      # it grew while read
        raise error(f"{path}: size: expected at most {limit} bytes, got more")
    return data


def inside(path: Path, root, error=SuiteError) -> Path:
    """`path`'s real path when it is inside `root`'s real path (links inside the tree resolved), else
    a one-line `error`: nothing outside the tree a command was given is read through a link in it."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
        raise error(f"{path}: location: expected a file inside {root}, got a link to {real} outside it")
    return Path(real)


def read_text(path: Path, limit: int = MAX_DATA_FILE_BYTES, error=SuiteError, root=None) -> str:
    data = read_bytes(path, limit, error, root)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: encoding: expected UTF-8, got an invalid byte at offset {exc.start}") from None


def load_json(path: Path, schema: str | None = None, error=SuiteError, limit: int = MAX_DATA_FILE_BYTES,
              root=None):
    text = read_text(path, limit=limit, error=error, root=root)
    try:
        doc = json.loads(text.removeprefix("\ufeff"))  # a UTF-8 BOM is not an error
    except json.JSONDecodeError as exc:
        raise error(f"{path}: line {exc.lineno}: expected valid JSON, got {exc.msg}") from None
    except (RecursionError, ValueError) as exc:  # 5,000-deep nesting, a 5,000-digit integer
        raise error(f"{path}: expected a JSON document within Python's limits (nesting, integer digits), "
                    f"got {type(exc).__name__}") from None
    check_node_budget(doc, path, error)
    if schema:
        validate(doc, schema, path, error)
    return doc


def load_yaml(path: Path, schema: str | None = None, error=SuiteError, root=None):
    doc = parse_yaml(read_text(path, error=error, root=root), path, error)
    if schema:
        validate(doc, schema, path, error)
    return doc


def parse_yaml(text: str, path, error=SuiteError, loader=None):
    """One YAML document (safe tags only), every failure one line naming `path`, alias expansion bounded."""
    import yaml

    try:
        doc = yaml.load(text, Loader=loader or yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{path}: {line}expected valid YAML, got {problem}") from None
    except (RecursionError, ValueError) as exc:
        raise error(f"{path}: expected a YAML document within Python's limits (nesting, integer digits), "
                    f"got {type(exc).__name__}") from None
    check_node_budget(doc, path, error)
    return doc


MAX_NODES = 1_000_000  # values in one document, aliases expanded (a result file has a few thousand)


def check_node_budget(doc, path, error=SuiteError, limit: int = MAX_NODES) -> None:
    """Refuse a document that expands past `limit` values: YAML aliases share one object, so a
    'billion laughs' file parses small but makes every later walk (schema, repr, rules) exponential."""
    stack, seen = [doc], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > limit:
            raise error(f"{path}: size: expected at most {limit:,} values (YAML aliases expanded), got more")
        if isinstance(node, dict):
            stack.extend(node.values())
            stack.extend(node.keys())
        elif isinstance(node, list):
            stack.extend(node)


def schema_path(name: str) -> Path:
    """The file of schema `name`: suite/schemas/<name>.schema.json (shared by several kinds and the
    layers) or suite/<kind>/schemas/<name>.schema.json (one kind's); the shared path where none is."""
    return _schema_files().get(name, SCHEMA_DIR / f"{name}.schema.json")


@lru_cache(maxsize=1)
def _schema_files() -> dict[str, Path]:
    """name -> file, every schema of the package; one name in two folders is a packaging bug."""
    out: dict[str, Path] = {}
    for path in sorted([*SCHEMA_DIR.glob("*.schema.json"), *SCHEMA_DIR.parent.glob("*/schemas/*.schema.json")]):
        name = path.name.removesuffix(".schema.json")
        if name in out:
            raise ValueError(f"schema {name}: expected one file, got {out[name]} and {path}")
        out[name] = path
    return out


@lru_cache(maxsize=None)
def _schema_doc(schema: str) -> dict:
    with open(schema_path(schema), encoding="utf-8") as f:
        return json.load(f)


@lru_cache(maxsize=None)
def _validator(schema: str):
    import jsonschema

    doc = _schema_doc(schema)
    cls = jsonschema.validators.validator_for(doc)
    cls.check_schema(doc)
    return cls(doc)


def schema_errors(doc, schema: str) -> list[str]:
    """Every schema violation of `doc` as `field: expected X, got Y` strings. A valid document is
    judged by suite.schemafast (no jsonschema import, no error objects: most documents read are valid);
    jsonschema answers the rest and words their errors."""
    from suite import schemafast

    if schemafast.valid(doc, _schema_doc(schema)) is True:
        return []
    errors = sorted(_validator(schema).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [_describe(e) for e in errors]


def validate(doc, schema: str, path, error=SuiteError) -> None:
    problems = schema_errors(doc, schema)
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise error(f"{path}: {problems[0]}{more}")


def _describe(err) -> str:
    field = ".".join(str(p) for p in err.absolute_path) or "(top level)"
    if err.validator == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(allowed)) if isinstance(err.instance, dict) else []
        return f"{field}: unknown key {', '.join(map(repr, extra))}; expected one of {', '.join(allowed)}"
    if err.validator == "required":
        return f"{field}: expected key {err.message.split(' ')[0]}, got none"
    if err.validator == "type":
        return f"{field}: expected {err.validator_value}, got {type(err.instance).__name__} {err.instance!r}"[:300]
    if err.validator == "enum":
        return f"{field}: expected one of {err.validator_value}, got {err.instance!r}"
    if err.validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        return f"{field}: expected {err.validator} {err.validator_value}, got {err.instance!r}"
    return f"{field}: {err.message}"[:300]


def write_atomic(path: Path, data: bytes | str, replace: bool = True) -> None:
    """Write `data` to `path` through a temp file + fsync + rename; a failure (a full disk, a file
    size limit, a read-only file system) is one line naming `path` and leaves no temp file. The file
    at `path` is never truncated: a reader sees the old bytes or the new ones.

    With replace=False `path` must still be new when the bytes are complete: the temp file is linked
    there (link(2) never replaces a file), so a file that appeared meanwhile raises FileExistsError
    and is left as it was (output.write_file says which option would replace it). A file system
    without hard links refuses that (one line, EPERM); replace=True needs none."""
    path = Path(path)
    if isinstance(data, str):       # a lone surrogate (a non-UTF-8 file name) is written as \udcff, not an error
        data = data.encode("utf-8", "backslashreplace")
    refuse_special_target(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)   # O_EXCL
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; give what open() would
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)       # the complete file, at a path that must still be new
            os.unlink(tmp)
    except BaseException as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        if isinstance(exc, FileExistsError) and not replace:
            raise
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise


RESOURCE_ERRNOS = {errno.ENOSPC: "ENOSPC", errno.EFBIG: "EFBIG", errno.EDQUOT: "EDQUOT", errno.EROFS: "EROFS"}


class WriteError(SuiteError):
    """A file could not be written (a full disk, a file size limit, a quota, a read-only file system,
    no permission): one line naming the file."""


def write_error(path, exc: OSError) -> WriteError:
    """The one-line error for `exc` raised while writing `path`."""
    name = RESOURCE_ERRNOS.get(exc.errno) or errno.errorcode.get(exc.errno or 0, "")
    return WriteError(f"{path}: cannot write: {exc.strerror or exc}" + (f" ({name})" if name else ""))


def is_resource_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS


def refuse_special_target(path: Path, where=None) -> None:
    """A rename would replace whatever is at `path`: allow only a new path or a regular file.

    `--output /dev/null` as root would otherwise turn the device into a regular file, and a
    symbolic link would be replaced by a file instead of written through.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SuiteError(f"{where or path}: cannot write: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
                else "a device, FIFO or socket")
        raise SuiteError(f"{where or path}: expected a regular file or a new path to write, got {kind}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def finite_or_null(doc):
    """`doc` with every NaN or infinite float replaced by None (JSON has no such numbers)."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: finite_or_null(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [finite_or_null(v) for v in doc]
    return doc


def dump_json(doc, indent: int | None = 4) -> str:
    """RFC 8259 JSON text: sorted keys, non-finite numbers as null (never bare NaN/Infinity)."""
    return json.dumps(finite_or_null(doc), indent=indent, sort_keys=True, allow_nan=False) + "\n"


def write_json(path: Path, doc, schema: str, indent: int | None = 4) -> None:
    """The one way a JSON document is written: validated against its schema (schema_path),
    then written atomically (sorted keys). A document that breaks its own schema is refused."""
    problems = schema_errors(doc, schema)
    if problems:  # our own output breaking our schema is a bug, not user error
        raise ValueError(f"{path}: refusing to write, schema {schema}: {problems[0]}")
    write_atomic(path, dump_json(doc, indent))


def sha256(path: Path, block_bytes: int = 1 << 22) -> str:
    """The sha256 hex digest of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(block_bytes), b""):
            h.update(block)
    return h.hexdigest()


@contextmanager
def into_place(path: Path):
    """Yield a temp path beside `path` for a writer that makes its own file (a parquet writer); on
    success the temp file is fsync'd and renamed onto `path`, on any failure it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
