"""The results dir of a run, claimed atomically: two invocations started together never share one.

`claim(given, name)` returns the directory a run writes into: `given` (a new path, or an existing
empty directory) or the default ./results/<name>-<UTC time>, built here and nowhere else, made
when new. The claim itself is CLAIM_NAME created in the directory with O_CREAT|O_EXCL (of racing
invocations exactly one succeeds), then a check that nothing else is there (an invocation that
finished in between left its results). When the default name is taken (two runs
in the same second), the next free name (<name>-<time>-2, -3, ...) is taken instead. `release`
removes the claim file at the end of the invocation; its results keep the directory non-empty.
`check(given)` is the same refusal without claiming (before anything else is done).
"""

import os
import time
from pathlib import Path

from suite.errors import SuiteError

ROOT = Path("results")                 # the default's parent, relative to the working directory
CLAIM_NAME = ".suite-claim"            # in a claimed existing directory while the invocation runs
OPTION = "--results-dir"
MAX_TRIES = 1000                       # <name>-<time>-2 .. -1000 when the default name is taken
CLAIMED: list[Path] = []               # every dir this process claimed, in order (suite history records the last)


def default(name: str, stamp: str | None = None) -> Path:
    """./results/<name>-<UTC time> (second resolution, e.g. unet3d_h100-2acc-20260101T120000)."""
    return ROOT / f"{name}-{stamp or time.strftime('%Y%m%dT%H%M%S', time.gmtime())}"


def check(path, option: str = OPTION) -> None:
    """A new or empty, writable directory: an earlier run's results are never overwritten or mixed
    with this run's (a reused R with fewer runs left the old run-2/3 beside a 1-run run_set.json)."""
    path = Path(path)
    where = f"{option} {path}"
    if path.exists() and not path.is_dir():
        raise SuiteError(f"{where}: expected a directory (or a new path), got a file")
    if path.is_dir():
        names = _entries(path, where)
        if names:
            raise SuiteError(f"{where}: expected a new or empty directory, got {len(names)} entries "
                             f"(e.g. {names[0]!r}); an earlier run's results are never overwritten: "
                             f"choose another {option}")
    parent = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise SuiteError(f"{where}: expected a writable location, got {parent} "
                         f"({'a file, not a directory' if not parent.is_dir() else 'not writable'})")


def claim(given, name: str, option: str = OPTION, planned=None) -> Path:
    """The results dir of this invocation, made or claimed (as given, not resolved): `given` when set,
    else the default for `name` (`planned`: the default the invocation already named, e.g. in the
    fs_separation record its prepare probed, tried first, so what it names is the dir claimed);
    refused (SuiteError, exit 2) when `given` is a file, holds anything, is not writable, or another
    invocation claimed it first."""
    if given:
        path = Path(given)
        check(path, option)
        if not _take(path, option):
            raise SuiteError(f"{option} {path}: expected a new or empty directory, got one another "
                             f"invocation claimed first: choose another {option}")
        CLAIMED.append(path)
        return path
    first = Path(planned) if planned else default(name)
    for k in range(1, MAX_TRIES + 1):
        path = first if k == 1 else first.with_name(f"{first.name}-{k}")
        if path.exists():
            continue
        try:
            check(path, option)
        except SuiteError:
            if path.exists():        # another invocation took this name between our two looks
                continue
            raise
        if _take(path, option):
            CLAIMED.append(path)
            return path
    raise SuiteError(f"{option}: expected a free default name under {ROOT}, got {first}-2..{MAX_TRIES} "
                     f"all taken: pass {option}")


def release(path) -> None:
    """The claim file of `path` removed (at the end of the invocation; a no-op when it is gone)."""
    try:
        os.unlink(Path(path) / CLAIM_NAME)
    except FileNotFoundError:
        pass


def abandon(path, written: bool = False) -> None:
    """A claim given up (a refusal after the claim): the claim file removed, and the directory too
    when this claim made it. `written`: what this invocation wrote into it before the refusal goes
    too (the claim found the directory new or empty, so everything in it is this invocation's);
    a directory the claim found stays, emptied of it. Nothing is followed through a link."""
    path = Path(path)
    try:
        made = (path / CLAIM_NAME).read_text().split()[-1] == "made"
    except (OSError, IndexError):
        return                       # not (or no longer) our claim: nothing of it is ours to remove
    if written:
        import shutil

        for name in _entries(path, str(path)):
            entry = path / name
            if name == CLAIM_NAME:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    release(path)
    if made:
        try:
            path.rmdir()
        except OSError:
            pass


def _take(path: Path, option: str) -> bool:
    """True when this process now owns `path`: the directory made (or found) and CLAIM_NAME created
    in it with O_EXCL (of racing invocations exactly one succeeds), nothing else in it then."""
    made = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path / CLAIM_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:      # the claim file (another invocation's), or a file where the dir would be
        return False
    except OSError as exc:
        raise SuiteError(f"{option} {path}: expected a directory we can create and write, got "
                         f"{exc.strerror or exc}") from None
    with os.fdopen(fd, "w") as f:
        f.write(f"{os.getpid()} {time.time():.3f} {'made' if made else 'found'}\n")
    if _entries(path, f"{option} {path}") != [CLAIM_NAME]:   # another run came and went in between
        release(path)
        return False
    return True


def _entries(path: Path, where: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        raise SuiteError(f"{where}: expected a readable directory, got {exc.strerror or exc}") from None
