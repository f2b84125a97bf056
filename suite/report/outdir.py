"""Where `suite report --out DIR` writes: a fresh directory, swapped in whole when complete.

The report is built in a new sibling temp directory (`.DIR.report-*`), so nothing is followed
through a link inside DIR, a failure or a signal leaves no half report and no empty DIR, and an
earlier report of ours is replaced whole (no stale plots). DIR must be new, empty, or an earlier
report of ours (it holds MARKER); anything else needs --force, which replaces it whole too.
"""

import os
import shutil
import signal
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from suite.errors import ResultError, expected_got

MARKER = ".suite-report"


def _refuse(out: Path, force: bool) -> None:
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ResultError(expected_got(out, "--out", "a directory we can read", exc.strerror or exc)) from None
    if stat.S_ISLNK(st.st_mode):
        raise ResultError(expected_got(out, "--out", "a directory, not a symbolic link", "a symbolic link"))
    if not stat.S_ISDIR(st.st_mode):
        raise ResultError(expected_got(out, "--out", "a directory", "a file"))
    names = os.listdir(out)
    if names and MARKER not in names and not force:
        raise ResultError(expected_got(out, "--out", "a new or empty directory, or an earlier suite report "
                                       "(--force replaces it whole)", f"a directory holding {len(names)} other entries"))


class _Terminated(BaseException):        # not an Exception: no `except Exception` in the report swallows it
    pass


def _on_term(signum, frame):
    raise _Terminated()


@contextmanager
def report_dir(out: Path, force: bool = False):
    """Yield a fresh temp directory; on success it becomes `out` (the old one removed)."""
    out = Path(out)
    _refuse(out, force)
    parent = out.parent if str(out.parent) else Path(".")
    old_term = signal.signal(signal.SIGTERM, _on_term)  # before the temp dir exists: no window to leak it
    tmp = None
    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})   # made and named as one step
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.report-", dir=parent))
        except OSError as exc:
            raise ResultError(expected_got(out, "--out", "a directory we can create", exc.strerror or exc)) from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        yield tmp
        (tmp / MARKER).write_text("a report written by `suite report`; the next report replaces this directory\n")
        os.chmod(tmp, 0o755)
        _swap(tmp, out)
    except OSError as exc:
        raise ResultError(expected_got(out, "--out", "a directory we can write", exc.strerror or exc)) from None
    except _Terminated:
        raise KeyboardInterrupt from None
    finally:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})   # a second SIGTERM waits for the cleanup
        try:
            signal.signal(signal.SIGTERM, old_term)
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _swap(tmp: Path, out: Path) -> None:
    if not os.path.lexists(out):
        os.rename(tmp, out)
        return
    trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=tmp.parent))
    os.rename(out, trash / "old")
    os.rename(tmp, out)
    shutil.rmtree(trash, ignore_errors=True)
