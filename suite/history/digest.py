"""The content hash of a result: a Merkle hash with lengths, over every file of the result, bounded.

Each file is a leaf: sha256 over its kind, its relative path (length first), its size and its
content's sha256. A link is a leaf of the text it points to (never followed); anything that is neither
a regular file, a directory nor a link (a FIFO, a device, a socket) is a leaf of its type and is never
opened. The result's hash is sha256 over the algorithm's name, the number of leaves and the leaves in
the order of their paths. Moving bytes from one file into another, renaming a file or splitting one
changes it: no framing of names and bytes can be read two ways.

A file is checked with lstat before it is opened and opened with O_NOFOLLOW | O_NONBLOCK (a FIFO swapped
in between neither hangs the open nor is read: fstat must still say a regular file). A result bigger
than MAX_FILE_BYTES in one file, MAX_TOTAL_BYTES in all or MAX_FILES files is a HashError (one line).

Hashes are stored as `<ALGORITHM>:<hex>`. A stored hash without a prefix was made by the first
algorithm (LEGACY: names and bytes, unframed), which `legacy` still computes so that entries recorded
before stay checkable.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from suite.errors import SuiteError

ALGORITHM = "merkle-sha256-v1"
LEGACY = "sha256-v0"
MAX_FILE_BYTES = 8 << 30            # one file of a result (kv_cache traces are the largest we know: MiBs)
MAX_TOTAL_BYTES = 32 << 30          # all files of one result
MAX_FILES = 200_000                 # a hostile tree could hold millions
SKIPPED = (".suite-claim",)         # the harness's claim file: there while a run writes, gone after
BLOCK = 1 << 20


class HashError(SuiteError):
    """A result that cannot be hashed within the bounds, or is not a file or directory (one line, exit 2)."""


def kind_of(mode: int) -> str:
    """What a file is, in words (for messages and the leaves of non-regular files)."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a link"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "a special file"


def _u64(n: int) -> bytes:
    return n.to_bytes(8, "big")


def _framed(*parts: bytes) -> bytes:
    return b"".join(_u64(len(p)) + p for p in parts)


def _name(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")


class _Budget:
    def __init__(self, root: Path):
        self.root, self.files, self.bytes = root, 0, 0

    def count(self, full: Path) -> None:
        self.files += 1
        if self.files > MAX_FILES:
            raise HashError(f"{self.root}: files: expected at most {MAX_FILES} in a result to hash, got more")

    def take(self, full: Path, size: int) -> None:
        if size > MAX_FILE_BYTES:
            raise HashError(f"{full}: size: expected at most {MAX_FILE_BYTES} bytes in one file of a result, got {size}")
        self.bytes += size
        if self.bytes > MAX_TOTAL_BYTES:
            raise HashError(f"{self.root}: size: expected at most {MAX_TOTAL_BYTES} bytes in a result, got more")


def read_regular(full: Path, update, budget: _Budget | None = None) -> int:
    """Feed a regular file's bytes to `update`, never opening anything else; its size. OSError passes."""
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise HashError(f"{full}: expected a regular file, got {kind_of(st.st_mode)}")
        if budget is not None:
            budget.take(full, st.st_size)
        size = 0
        while block := os.read(fd, BLOCK):
            size += len(block)
            if budget is not None and size > st.st_size:      # grew while read: bound what it grew by
                budget.take(full, size - st.st_size)
            update(block)
        return size
    finally:
        os.close(fd)


def _leaf(full: Path, rel: str, budget: _Budget) -> bytes:
    try:
        st = os.lstat(full)
    except OSError as exc:                  # gone while walked, or unreadable
        return hashlib.sha256(b"unreadable\0" + _framed(_name(rel), str(exc.errno).encode())).digest()
    if stat.S_ISLNK(st.st_mode):
        return hashlib.sha256(b"link\0" + _framed(_name(rel), os.fsencode(os.readlink(full)))).digest()
    if not stat.S_ISREG(st.st_mode):
        return hashlib.sha256(b"other\0" + _framed(_name(rel), kind_of(st.st_mode).encode())).digest()
    content = hashlib.sha256()
    try:
        size = read_regular(full, content.update, budget)
    except OSError as exc:
        return hashlib.sha256(b"unreadable\0" + _framed(_name(rel), str(exc.errno).encode())).digest()
    return hashlib.sha256(b"file\0" + _framed(_name(rel), _u64(size), content.digest())).digest()


def _walk(top: Path, exclude: frozenset[str]):
    """(full path, relative posix path) of every non-directory under `top`, links not followed."""
    stack = [(top, "")]
    while stack:
        here, prefix = stack.pop()
        try:
            with os.scandir(here) as found:
                items = sorted(found, key=lambda d: d.name)
        except OSError as exc:
            raise HashError(f"{here}: expected a directory of the result we can list, got "
                            f"{exc.strerror or exc}") from None
        for d in items:
            rel = prefix + d.name
            if rel in exclude or d.name in SKIPPED:
                continue
            if d.is_dir(follow_symlinks=False):
                stack.append((Path(d.path), rel + "/"))
            else:
                yield Path(d.path), rel


def content_hash(path: Path, exclude=()) -> str | None:
    """`<ALGORITHM>:<hex>` over every file of the result at `path` (a directory or a regular file),
    less the sub-paths in `exclude` (relative, posix: another result's part of the same directory);
    None when the path is gone; HashError when it is something else or too big."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HashError(f"{path}: expected a result we can read, got {exc.strerror or exc}") from None
    budget = _Budget(path)
    if stat.S_ISREG(st.st_mode):
        leaves = [(path.name, _leaf(path, path.name, budget))]
    elif stat.S_ISDIR(st.st_mode):
        leaves = []
        for full, rel in _walk(path, frozenset(exclude)):
            budget.count(full)
            leaves.append((rel, _leaf(full, rel, budget)))
        leaves.sort(key=lambda x: _name(x[0]))
    else:
        raise HashError(f"{path}: expected a results directory or a regular file, got {kind_of(st.st_mode)}")
    h = hashlib.sha256(ALGORITHM.encode() + b"\0" + _u64(len(leaves)))
    for _rel, leaf in leaves:
        h.update(leaf)
    return f"{ALGORITHM}:{h.hexdigest()}"


def algorithm_of(stored: str) -> str:
    return stored.partition(":")[0] if ":" in stored else LEGACY


def legacy(path: Path) -> str | None:
    """The first algorithm (names and bytes, unframed, 200,000 files), for entries recorded with it;
    only regular files are opened (a FIFO is hashed as nothing, as that algorithm read it)."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    h = hashlib.sha256()
    if not stat.S_ISDIR(st.st_mode):
        if stat.S_ISREG(st.st_mode):
            _legacy_file(h, path, path.name)
        return h.hexdigest()
    for count, (full, rel) in enumerate(_legacy_names(path), 1):
        if count > MAX_FILES:
            h.update(b"...more files than hashed")
            break
        _legacy_file(h, full, rel)
    return h.hexdigest()


def _legacy_names(path: Path):
    for root, dirs, names in os.walk(path, followlinks=False):
        dirs.sort()
        for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            if name not in SKIPPED:
                full = Path(root) / name
                yield full, full.relative_to(path).as_posix()


def _legacy_file(h, full: Path, rel: str) -> None:
    h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
    if full.is_symlink():
        h.update(b"link:" + os.readlink(full).encode("utf-8", "surrogateescape") + b"\0")
        return
    try:
        if stat.S_ISREG(os.lstat(full).st_mode):
            read_regular(full, h.update)
    except (OSError, HashError) as exc:
        h.update(f"unreadable:{getattr(exc, 'errno', None)}".encode())
    h.update(b"\0")


def check(stored: str, path: Path, exclude=()) -> str | None:
    """The hash of `path` now, by the algorithm `stored` was made with; HashError for one we do not know."""
    algorithm = algorithm_of(stored)
    if algorithm == ALGORITHM:
        return content_hash(path, exclude)
    if algorithm == LEGACY:
        return legacy(path)
    raise HashError(f"{path}: content hash: expected algorithm {ALGORITHM} or {LEGACY}, got {algorithm!r}")
