"""Which backend a workload's storage uses: storage.storage_type (the workload file, or
--param storage.storage_type=...) names it; the root is the dataset or checkpoint directory, or an
object-storage location s3://bucket/prefix (which implies storage_type object).

A command resolves its data location once, where it starts (`resolve`: the root and its backend, a
DataLocation), and passes that object down: datagen.scan/generate, prepare.scan_dataset,
separation.probe and the cache clear take it as it is. `RESOLVED.count` counts the resolutions made
(tests hold a command to one)."""

from dataclasses import dataclass

from suite.errors import SuiteError
from suite.storage.backend.base import Backend

POSIX_TYPES = ("local_fs", "parallel_fs", "posix", "local")
OBJECT_TYPES = ("s3", "object")
DEFAULT_TYPE = "local_fs"
SCHEMES = ("s3",)


def is_object_location(root) -> bool:
    """True for s3://...; SuiteError (exit 2) for any other URL scheme (never a local dir named 'x:')."""
    text = str(root)
    scheme, sep, _ = text.partition("://")
    if not sep:
        return False
    if scheme.lower() not in SCHEMES:
        raise SuiteError(f"data location: expected a local path or s3://bucket/prefix, got {text!r} "
                         f"(the scheme {scheme!r} is not supported)")
    return True


def location(text: str):
    """argparse type of --data-dir/--checkpoint-folder: a Path, or an ObjectLocation for s3://
    (argparse's one-line usage error, exit 2, for another scheme: never a local directory named 'x:')."""
    import argparse

    try:
        return as_location(text)
    except SuiteError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def backend_for(storage_type: str | None, root) -> Backend:
    """The backend of `storage_type` rooted at `root`; an s3:// root is object storage whatever the type."""
    if is_object_location(root):
        kind = storage_type if storage_type in OBJECT_TYPES else "object"
        from suite.storage.backend.s3 import S3Backend

        return S3Backend(root, kind)
    kind = check_storage_type(storage_type)
    if kind in OBJECT_TYPES:
        if str(root) in ("", "."):
            from suite.storage.backend.s3 import S3Backend
            return S3Backend("", kind)      # a rank's backend: names are full s3:// URLs
        raise SuiteError(f"storage.storage_type {kind}: expected the data location as s3://bucket/prefix, "
                         f"got the local path {str(root)!r}")
    from suite.storage.backend.posix import PosixBackend

    return PosixBackend(root, kind)


def check_storage_type(storage_type: str | None) -> str:
    """The storage type, when a backend implements it; else the one-line SuiteError (exit 2)."""
    kind = storage_type or DEFAULT_TYPE
    if kind in POSIX_TYPES or kind in OBJECT_TYPES:
        return kind
    raise SuiteError(f"storage.storage_type: expected one of {', '.join(POSIX_TYPES + OBJECT_TYPES)}, got {kind!r}")


def storage_type_of(workload) -> str:
    """The workload's storage.storage_type (after --param), or the default."""
    config = getattr(workload, "config", None) or {}
    return (config.get("storage") or {}).get("storage_type") or DEFAULT_TYPE


class _Count:
    count = 0


RESOLVED = _Count()            # how many data locations `resolve` has made in this process


@dataclass(frozen=True, eq=False)
class DataLocation:
    """A command's data location, resolved once: `root` (a Path, or an ObjectLocation for s3://) and
    the `backend` every reader and writer of it uses. Joins like its root (`data / "train"`), str() is
    the root's; not path-like, so no code takes it for a local path by accident."""

    root: object
    backend: Backend

    def __str__(self) -> str:
        return str(self.root)

    def __truediv__(self, name):
        return self.root / name

    @property
    def is_object(self) -> bool:
        return isinstance(self.root, ObjectLocation)


def resolve(root, workload=None, storage_type: str | None = None) -> DataLocation:
    """`root` (a path, an s3:// URL, a Path or an ObjectLocation) as a DataLocation with the backend of
    `storage_type` (default: the workload's storage.storage_type); a DataLocation is returned as it is."""
    if isinstance(root, DataLocation):
        return root
    location = as_location(root)
    backend = backend_for(storage_type or storage_type_of(workload), location)
    RESOLVED.count += 1
    return DataLocation(location, backend)


class ObjectLocation:
    """An s3:// location that callers join names to as to a Path (`loc / "train"`); str() is the URL.
    Not a str and not path-like: Path(loc) and open(loc) raise TypeError, so no local file is ever made
    under an object location (a directory named 's3:' was what `suite datagen` used to make)."""

    __slots__ = ("url",)

    def __init__(self, url: str):
        self.url = str(url).rstrip("/")

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"ObjectLocation({self.url!r})"

    def __eq__(self, other) -> bool:
        return str(other) == self.url if isinstance(other, (str, ObjectLocation)) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.url)

    def __truediv__(self, name) -> "ObjectLocation":
        return ObjectLocation(f"{self.url}/{str(name).strip('/')}")

    @property
    def name(self) -> str:
        return self.url.rsplit("/", 1)[-1]


def as_location(root):
    """Path(root) for a local path, ObjectLocation for s3:// (SuiteError for another scheme)."""
    from pathlib import Path

    if isinstance(root, ObjectLocation):
        return root
    if is_object_location(root):
        from suite.storage.backend.s3io import split_url
        split_url(str(root))
        return ObjectLocation(str(root))
    return Path(root)
