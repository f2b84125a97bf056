"""The storage backend interface: what the suite asks of the storage that holds datasets and checkpoints.

Objects are named, not pathed: a name is a '/'-separated key under the backend's root (POSIX: a
path relative to the root directory; S3: a key under the bucket/prefix). The calls are the ones an
object store has too: one listing of a prefix (with sizes), the size of one object, ranged reads
into the caller's buffer, a write that becomes visible only when committed (POSIX: a temporary name
renamed on completion; S3: a multipart upload completed), free space, evidence of what the storage
is, and what "clear the cache" means for it.

The read hot path: `ReadHandle.readinto_at(handle.key, buffers, offset)` has preadv's shape and is the
implementation's call itself (POSIX: os.preadv, key = the open fd), so a reader loop that hoists
both into locals pays exactly the syscall per read: no Python frame, no bound-argument object.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Protocol

PATCH_WINDOW_BYTES = 64 * 1024   # Writer.patch may rewrite bytes only this close to the start (S3: held back)


@dataclass(frozen=True)
class Entry:
    """One listed object: its name under the backend's root and its size (a prefix: size -1)."""

    name: str
    size_bytes: int
    is_prefix: bool = False


class ClearRecord(Protocol):
    """The evidence of one cache clear (POSIX: suite.enforce.cache.CacheDrop)."""

    succeeded: bool
    error: str | None

    def to_dict(self) -> dict: ...


class ReadHandle(ABC):
    """One object opened for ranged reads; close() it (or use it as a context manager)."""

    __slots__ = ()

    name: str
    # preadv-shaped: readinto_at(key, list of writable buffers, offset) -> bytes read (0 at the end)
    readinto_at: Callable[[object, list, int], int]
    key: object             # what readinto_at reads from (POSIX: the fd; S3: the object's key)

    @abstractmethod
    def size(self) -> int:
        """The object's size in bytes now."""

    def read_at(self, nbytes: int, offset: int) -> bytes:
        """Up to `nbytes` from `offset` (fewer at the end): small header reads of the checks."""
        buf = bytearray(nbytes)
        got = self.readinto_at(self.key, [buf], offset)
        return bytes(buf[:got])

    @abstractmethod
    def fileobj(self):
        """A seekable binary file object over the object (for zipfile and h5py); closed with the handle."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Writer(ABC):
    """One object being written sequentially; invisible under its name until commit()."""

    name: str
    # writev-shaped: writev(list of buffers) -> bytes taken (may be fewer than queued)
    writev: Callable[[list], int]

    def write(self, data) -> None:
        """Write all of `data` at the current end."""
        view = memoryview(data)
        while len(view):
            view = view[self.writev([view]):]

    @abstractmethod
    def patch(self, offset: int, data: bytes) -> None:
        """Rewrite bytes already written, within PATCH_WINDOW_BYTES of the start (a zip CRC field)."""

    @abstractmethod
    def commit(self) -> None:
        """Make the object visible under its name, complete (fsync first when asked at create)."""

    @abstractmethod
    def abort(self) -> None:
        """Discard what was written; the name keeps what it had (nothing, or an earlier object)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, _value, _tb) -> None:
        if kind is not None:
            self.abort()


class Backend(ABC):
    """The storage under one root: a dataset directory, a checkpoint directory, a bucket prefix."""

    storage_type: str       # the workload's storage.storage_type it was chosen for
    root: str

    @abstractmethod
    def list(self, prefix: str = "", recursive: bool = True) -> list[Entry]:
        """Every object under `prefix` with its size, names relative to the root, sorted, in one
        listing (S3: ListObjectsV2 pages). recursive=False: the direct children only, sub-prefixes
        as Entry(name, -1, True) (S3: CommonPrefixes with delimiter "/"). An entry that cannot be
        sized (a dangling link) has size -1. Raises FileNotFoundError when the prefix does not
        exist (an object store: nothing under it), NotADirectoryError when it is an object."""

    @abstractmethod
    def size(self, name: str) -> int:
        """The object's size; FileNotFoundError when it does not exist."""

    @abstractmethod
    def open_read(self, name: str, direct: bool = False, sequential: bool = True) -> ReadHandle:
        """Open for ranged reads; `direct` bypasses the client cache (POSIX: O_DIRECT; buffers,
        offsets and lengths must then be 4096-aligned); `sequential` hints a front-to-back read."""

    @abstractmethod
    def create(self, name: str, size_hint: int = 0, fsync: bool = False, atomic: bool = True,
               temp_tag: str = "") -> Writer:
        """Start writing `name`. `size_hint` preallocates (a full disk fails here, not mid-file);
        `fsync` makes commit() durable; atomic=False writes in place (a checkpoint shard, as the
        reference writes it); `temp_tag` makes the temporary name unique to a writer (host.pid)."""

    @abstractmethod
    def remove(self, name: str) -> None:
        """Delete an object; no error when it is absent."""

    @abstractmethod
    def make_prefix(self, prefix: str) -> None:
        """Make `prefix` exist (POSIX: the directories; object stores: nothing to do)."""

    @abstractmethod
    def sync(self, names: list[str]) -> None:
        """Make committed objects durable once, at the end (fio's end_fsync)."""

    @abstractmethod
    def free_bytes(self) -> int | None:
        """Bytes still free for writing under the root (None: no bound known)."""

    @abstractmethod
    def locate(self, name: str) -> str:
        """The full locator of `name` (POSIX: its real absolute path; S3: s3://bucket/key), which a
        backend of the same type with root "" opens: what a run plan hands the ranks, a result records."""

    @abstractmethod
    def evidence(self) -> dict:
        """What this storage is, as results record it (type, path, real path, device, file-system type, mount)."""

    @abstractmethod
    def clear_cache(self) -> ClearRecord:
        """Empty the caches between this storage and the reader; never raises for "not permitted":
        the record says whether it succeeded, and the caller decides what that means for the division."""
