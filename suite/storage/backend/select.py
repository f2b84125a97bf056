"""Which backend a workload's storage uses: storage.storage_type (the workload file, or
--param storage.storage_type=...) names it; the root is the dataset or checkpoint directory."""

from suite.errors import SuiteError
from suite.storage.backend.base import Backend

POSIX_TYPES = ("local_fs", "parallel_fs", "posix", "local")
OBJECT_TYPES = ("s3", "object")
DEFAULT_TYPE = "local_fs"


def backend_for(storage_type: str | None, root) -> Backend:
    """The backend of `storage_type` rooted at `root`; SuiteError (exit 2) for object storage and unknown types."""
    kind = check_storage_type(storage_type)
    from suite.storage.backend.posix import PosixBackend

    return PosixBackend(root, kind)


def check_storage_type(storage_type: str | None) -> str:
    """The storage type, when a backend implements it; else the one-line SuiteError (exit 2)."""
    kind = storage_type or DEFAULT_TYPE
    if kind in POSIX_TYPES:
        return kind
    if kind in OBJECT_TYPES:
        raise SuiteError(f"storage.storage_type: expected one of {', '.join(POSIX_TYPES)}, got {kind}: "
                         f"object storage is not implemented yet")
    raise SuiteError(f"storage.storage_type: expected one of {', '.join(POSIX_TYPES + OBJECT_TYPES)}, got {kind!r}")


def storage_type_of(workload) -> str:
    """The workload's storage.storage_type (after --param), or the default."""
    config = getattr(workload, "config", None) or {}
    return (config.get("storage") or {}).get("storage_type") or DEFAULT_TYPE


def for_workload(workload, root) -> Backend:
    return backend_for(storage_type_of(workload), root)
