"""The POSIX backend: a directory of a local or parallel file system.

The one place that opens, lists, preallocates, renames and syncs dataset and checkpoint files:
O_DIRECT and posix_fadvise on open, os.preadv bound to the fd for the reader's hot loop,
fallocate(FALLOC_FL_KEEP_SIZE) before a write, writev, rename on commit, syncfs at the end, statvfs
for free space, /proc/self/mountinfo for the evidence, the page-cache drop for clear_cache().
A name is a path relative to the root; an absolute name (a run plan's resolved path) is taken as is.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
from functools import lru_cache, partial
from pathlib import Path

from suite.storage.backend.base import PATCH_WINDOW_BYTES, Backend, Entry, ReadHandle, Writer

MOUNTINFO = "/proc/self/mountinfo"


@lru_cache(maxsize=None)
def _libc_function(name: str, argtypes):
    function = getattr(ctypes.CDLL(None, use_errno=True), name, None)
    if function is not None:
        function.argtypes = list(argtypes)
    return function


def preallocate(fd: int, nbytes: int) -> None:
    """Reserve the file's blocks up front (fallocate, keeping the size 0) as fio does before writing:
    contiguous extents, and a full disk fails here rather than mid-file. No-op where unsupported."""
    fallocate = _libc_function("fallocate", (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64))
    if fallocate is None or not nbytes:
        return
    if fallocate(fd, 1, 0, nbytes) != 0:          # 1 = FALLOC_FL_KEEP_SIZE
        err = ctypes.get_errno()
        if err in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
            raise OSError(err, os.strerror(err))


class PosixReadHandle(ReadHandle):
    __slots__ = ("name", "path", "fd", "key", "_file")
    readinto_at = staticmethod(os.preadv)       # the syscall itself, with key = the fd

    def __init__(self, name: str, path: str, fd: int):
        self.name, self.path, self.fd, self.key, self._file = name, path, fd, fd, None

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def read_at(self, nbytes: int, offset: int) -> bytes:
        return os.pread(self.fd, nbytes, offset)

    def fileobj(self):
        if self._file is None:
            self._file = open(self.fd, "rb", closefd=False)   # noqa: SIM115 - closed with the handle
        return self._file

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = self.key = -1


class PosixWriter(Writer):
    """Writes `temp` (or `path` in place), renamed to `path` on commit."""

    def __init__(self, name: str, path: str, temp: str | None, fd: int, fsync: bool):
        self.name, self.path, self.temp, self.fd, self.fsync = name, path, temp, fd, fsync
        self.writev = partial(os.writev, fd)

    def patch(self, offset: int, data: bytes) -> None:
        if offset + len(data) > PATCH_WINDOW_BYTES:
            raise ValueError(f"patch at byte {offset}: expected within the first {PATCH_WINDOW_BYTES} bytes")
        os.pwrite(self.fd, data, offset)

    def _close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def commit(self) -> None:
        try:
            if self.fsync:
                os.fsync(self.fd)
        finally:
            self._close()
        if self.temp is not None:
            os.replace(self.temp, self.path)

    def abort(self) -> None:
        self._close()
        try:
            os.unlink(self.temp if self.temp is not None else self.path)
        except FileNotFoundError:
            pass


class PosixBackend(Backend):
    def __init__(self, root, storage_type: str = "local_fs"):
        self.root, self.storage_type = os.fspath(root), storage_type

    def path(self, name: str) -> str:
        return os.path.join(self.root, name) if name else self.root

    def list(self, prefix: str = "", recursive: bool = True) -> list[Entry]:
        top = self.path(prefix)
        os.stat(top)                           # FileNotFoundError: no such prefix
        out: list[Entry] = []
        self._scan(top, prefix.rstrip("/") + "/" if prefix else "", recursive, out)
        out.sort(key=lambda e: e.name)
        return out

    def _scan(self, folder: str, base: str, recursive: bool, out: list) -> None:
        with os.scandir(folder) as it:         # NotADirectoryError: the prefix is a file
            entries = list(it)
        for e in entries:
            name = base + e.name
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not recursive:
                    out.append(Entry(name, -1, True))
                elif not e.is_symlink():       # as os.walk: never into a linked folder
                    self._scan(e.path, name + "/", True, out)
                continue
            try:
                size = e.stat().st_size
            except OSError:
                size = -1                      # a dangling link: listed, unreadable
            out.append(Entry(name, size))

    def size(self, name: str) -> int:
        return os.stat(self.path(name)).st_size

    def open_read(self, name: str, direct: bool = False, sequential: bool = True) -> PosixReadHandle:
        path = os.path.join(self.root, name) if self.root else name      # once per file read: inline
        fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
        if sequential and not direct:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
        return PosixReadHandle(name, path, fd)

    def create(self, name: str, size_hint: int = 0, fsync: bool = False, atomic: bool = True,
               temp_tag: str = "") -> PosixWriter:
        path = self.path(name)
        folder, base = os.path.split(path)
        temp = os.path.join(folder, f".{base}.{temp_tag or os.getpid()}.tmp") if atomic else None
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        try:
            fd = os.open(temp or path, flags, 0o644)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(temp or path, flags, 0o644)
        try:            # from here a failure or an interrupt (Ctrl-C) leaves no file behind
            preallocate(fd, size_hint)
            return PosixWriter(name, path, temp, fd, fsync)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp or path)
            raise

    def remove(self, name: str) -> None:
        try:
            os.unlink(self.path(name))
        except FileNotFoundError:
            pass

    def make_prefix(self, prefix: str) -> None:
        os.makedirs(self.path(prefix), exist_ok=True)

    def sync(self, names: list[str]) -> None:
        """syncfs(2) of each file system holding the names (data and metadata), or fsync of every
        file and folder where syncfs is missing. OSError names the file or folder."""
        syncfs = _libc_function("syncfs", (ctypes.c_int,))
        paths = [self.path(n) for n in names]
        folders = sorted({os.path.dirname(p) for p in paths})
        targets = list({os.stat(f).st_dev: f for f in folders}.values()) if syncfs else paths + folders
        for target in targets:
            fd = os.open(target, os.O_RDONLY)
            try:
                if not syncfs:
                    os.fsync(fd)
                elif syncfs(fd) != 0:
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(target))
            finally:
                os.close(fd)

    def _existing(self) -> str:
        """The root, or its nearest existing ancestor (a dataset directory not made yet)."""
        path = os.path.abspath(self.root)
        while not os.path.exists(path) and path != os.path.dirname(path):
            path = os.path.dirname(path)
        return path

    def free_bytes(self) -> int | None:
        st = os.statvfs(self._existing())
        return st.f_bavail * st.f_frsize

    def locate(self, name: str) -> str:
        return os.path.realpath(self.path(name))

    def evidence(self) -> dict:
        where = self._existing()
        real = os.path.realpath(where)
        st, vfs = os.stat(real), os.statvfs(real)
        mount = mount_of(real, os.major(st.st_dev), os.minor(st.st_dev))
        return {"storage_type": self.storage_type, "backend": "posix", "path": self.root,
                "real_path": os.path.realpath(self.root), "device_id": f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}",
                "fs_type": mount[1] if mount else None, "mount_point": mount[0] if mount else None,
                "mount_source": mount[2] if mount else None,
                "free_bytes": vfs.f_bavail * vfs.f_frsize, "size_bytes": vfs.f_blocks * vfs.f_frsize}

    def clear_cache(self):
        """The page-cache drop (sync; echo 3 > /proc/sys/vm/drop_caches): its CacheDrop record."""
        from suite.enforce.cache import drop_caches

        return drop_caches()


def unescape_mountinfo(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as \\ooo octal."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mountinfo_entries(text: str):
    """(device "major:minor", mount point, fs type, source, [options]) of each well-formed line of
    a /proc/<pid>/mountinfo text, the point and source unescaped."""
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if not sep or len(a) < 6 or len(b) < 2:
            continue
        opts = a[5].split(",") + [o for o in (b[2].split(",") if len(b) > 2 else []) if o]
        yield a[2], unescape_mountinfo(a[4]), b[0], unescape_mountinfo(b[1]), opts


def mount_of(real: str, major: int, minor: int, mountinfo: str = MOUNTINFO) -> tuple[str, str, str] | None:
    """(mount point, fs type, source) of the mount holding `real`: the longest mount point above it,
    preferring mounts of its device (major:minor); None when mountinfo is unreadable."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    best, dev = None, f"{major}:{minor}"
    for device, point, fs_type, source, _ in mountinfo_entries(text):
        if not (real == point or real.startswith(point.rstrip("/") + "/")):
            continue
        key = (device == dev, len(point))
        if best is None or key >= best[0]:
            best = (key, (point, fs_type, source))
    return best[1] if best else None


def listing_stamp(root: Path, folder: str, log_name: str) -> tuple | None:
    """(path, size, mtime_ns, inode, ctime_ns) of every entry below root/folder, sorted, and the same of
    root/log_name (None when absent): what changes when a file of the dataset does. None when unreadable."""
    def stamp(st) -> tuple:
        return st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns

    entries, todo = [], [Path(root) / folder]
    try:
        while todo:                     # the folder and its subfolders (a large dataset's)
            with os.scandir(todo.pop()) as it:
                for e in it:
                    entries.append((e.path, *stamp(e.stat(follow_symlinks=False))))
                    if e.is_dir(follow_symlinks=False):
                        todo.append(Path(e.path))
        log = Path(root) / log_name
        return tuple(sorted(entries)), (stamp(log.stat()) if log.exists() else None)
    except OSError:
        return None
