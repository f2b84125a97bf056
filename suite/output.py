"""Where the suite writes, and how a write of several files stays whole.

- `outside(path, option, inputs)`: an output location (check --output, report --out, submission
  package --out) is refused when it is inside a tree the command reads, is one of its files, or
  holds the tree: writing the report must never replace the evidence it reports on;
- `target_file(path, option, inputs, replace)`: that, plus a file path whose directory exists (never a
  directory, a device, a FIFO or a link) and, unless `replace` (the command's --replace), that is
  new: a user's file is never written over by surprise; checked before any work is done;
- `write_file(target, data, replace)`: the file claimed whole: a temp file (O_EXCL) then a rename
  (--replace) or a link that never replaces (a file that appeared while the command ran is refused,
  left as it was); the user's file is never truncated;
- `locked(root, what)`: one suite command at a time changes a tree (an flock on the directory
  itself, so nothing is written into the tree to take it; released when the process ends,
  however it ends); a second one is refused with one line;
- `interruptible()`: SIGTERM raises KeyboardInterrupt while a multi-file write is under way, so
  its cleanup (temp files removed, earlier files left as they were) runs as it does for Ctrl-C.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
from pathlib import Path

from suite import files
from suite.errors import SuiteError, expected_got


def _real(path) -> str:
    return os.path.realpath(path)


def is_inside(path, root) -> bool:
    """True when `path` (its real path: links resolved) is `root` or below it."""
    real, base = _real(path), _real(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def outside(path, option: str, inputs=()) -> Path:
    """`path`, refused (one line, nothing written) when it is inside, or is, any of `inputs` (the
    trees, or files, the command reads; links resolved, so a link into a tree is inside it)."""
    path = Path(path)
    for given in inputs:
        if given is None:
            continue
        if is_inside(path, given) or is_inside(given, path):
            raise SuiteError(expected_got(f"{option} {path}", "location", f"a path outside {given} (the evidence "
                                          "read is never written over)",
                                          "a path inside it" if is_inside(path, given) else "a directory holding it"))
    return path


REPLACE = "--replace"        # the option that lets an output file replace an existing one (as submission package --out)


def _exists(where: str) -> str:
    return expected_got(where, "file", f"a new path ({REPLACE} replaces it)", "an existing file")


def target_file(path, option: str, inputs=(), replace: bool = False) -> Path:
    """A file to write the output to: a new path (or, with `replace`, a regular file), its directory
    existing, outside every input tree; refused (one line) before any work is done."""
    path = Path(path)
    where = f"{option} {path}"
    if path.is_dir() and not path.is_symlink():
        raise SuiteError(f"{where}: expected a file path, got a directory")
    files.refuse_special_target(path, where)
    mode = os.path.lexists(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise SuiteError(expected_got(where, "directory", f"an existing directory {parent}", "none"))
    if not os.access(parent, os.W_OK | os.X_OK) or (mode and not os.access(path, os.W_OK)):
        raise SuiteError(expected_got(where, "file", "a location we can write", "no write permission"))
    outside(path, option, inputs)
    if mode and not replace:
        raise SuiteError(_exists(where))
    return path


def write_file(target, data, option: str, replace: bool = False) -> None:
    """`data` at `target` (from target_file), whole or not at all: files.write_atomic, which with
    replace=False never replaces a file that appeared while the command ran (refused, one line)."""
    try:
        files.write_atomic(target, data, replace=replace)
    except FileExistsError:
        raise SuiteError(_exists(f"{option} {target}") + " (made while the command ran; left as it was)") from None


@contextlib.contextmanager
def locked(root, what: str):
    """Hold an exclusive lock on directory `root` for the block; another holder: a one-line refusal."""
    root = Path(root)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise SuiteError(expected_got(root, "DIR", "a directory we can open", exc.strerror or exc)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SuiteError(expected_got(root, "DIR", f"no other suite command changing it ({what})",
                                          "one under way: wait for it to end")) from None
        yield root
    finally:
        os.close(fd)        # closes the lock with it


@contextlib.contextmanager
def interruptible():
    """SIGTERM raises KeyboardInterrupt inside the block (main thread only), as SIGINT does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
