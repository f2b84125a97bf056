"""Putting files into a submission tree without losing any: staged copies, renames, old copies aside.

A target that exists is refused, unless `replace`: then the old copy is moved (renamed, never
copied and deleted) to `<DIR>.replaced/<UTC time>/<same relative path>`, beside the tree so the
checker and the tarball never see it. New content is built in one hidden staging folder inside the
tree (`Staging`) and renamed into place together, so a failure leaves the old state or the new one.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

from suite.errors import SuiteError, expected_got
from suite.layouts import manifest


def aside_root(root: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return root.parent / f"{root.name}.replaced" / stamp


def refuse_existing(targets: list[Path], replace: bool) -> None:
    seen = set()
    for t in targets:
        if t in seen:
            raise SuiteError(expected_got(t, "target", "one RESULTS per benchmark", "two RESULTS for it"))
        seen.add(t)
        if (t.exists() or t.is_symlink()) and not replace:
            raise SuiteError(expected_got(t, "target", "a new path (or --replace, which keeps the old copy aside)",
                                          "an existing " + ("directory" if t.is_dir() else "file")))


def move_aside(root: Path, target: Path, aside: Path) -> Path | None:
    if not (target.exists() or target.is_symlink()):
        return None
    dest = aside / target.relative_to(root)
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(target, dest)
    return dest


def copy_tree(src: Path, dest: Path) -> int:
    """Copy every regular file of src into dest (no links: refused before anything is copied)."""
    names = manifest.listing(src)
    for rel in names:
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, out)
    return len(names)


def readable(path: Path) -> None:
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise SuiteError(expected_got(path, "file", "readable evidence", exc.strerror or str(exc))) from None


class Staging:
    """All that one command puts into a tree, or none of it (issue 36: an add refused or stopped half-way
    leaves the tree as it was). Each new file or folder is built under one hidden folder inside the tree
    (`stage(target)`, same file system, so placing it is a rename); `commit()` then renames every one
    into place with SIGTERM/SIGINT held off, moving what a target held aside first (`--replace`). A
    rename that fails undoes the ones made. Leaving the block without commit removes the staging folder,
    and the tree never saw it (no parent folder is made before commit either). Use it under the tree's
    lock (suite.output.locked): a staging folder found on entry is a killed command's, and removed."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.work = self.root / f".suite-staging-{os.getpid()}"
        self.items: list[tuple[Path, Path]] = []          # (staged, target)

    def __enter__(self) -> "Staging":
        for old in self.root.glob(".suite-staging-*"):    # one a killed add (SIGKILL) left: the caller holds
            if old.is_dir() and not old.is_symlink():      # the tree's lock, so no command of ours is using it
                shutil.rmtree(old)
        self.work.mkdir()
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    def stage(self, target: Path) -> Path:
        """Where to build `target` (a file or a folder: the caller makes it)."""
        staged = self.work / str(len(self.items))
        self.items.append((staged, Path(target)))
        return staged

    def adopt(self, built: Path, target: Path) -> None:
        """Place `built` (already under the staging folder) at `target` on commit."""
        self.items.append((Path(built), Path(target)))

    def targets(self) -> list[Path]:
        return [t for _, t in self.items]

    def commit(self, aside: Path | None = None) -> list[Path]:
        """Rename everything staged into place; with `aside`, an existing target is first moved there
        (else an existing target is refused: nothing placed). The old copies' paths. Once the last
        rename is done the command is complete, and a stop pending is dropped (output.interruptible
        restores the handler when the command ends)."""
        import signal
        import threading

        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        done: list[tuple[Path, Path, Path | None, list[Path]]] = []   # staged, target, moved, dirs made
        complete = False
        try:
            for staged, target in self.items:
                if not (staged.exists() or staged.is_symlink()):
                    continue
                if (target.exists() or target.is_symlink()) and aside is None:
                    raise SuiteError(expected_got(target, "target", "a new path", "an existing "
                                                  + ("directory" if target.is_dir() else "file")))
                made = _missing_parents(target)
                target.parent.mkdir(parents=True, exist_ok=True)
                moved = move_aside(self.root, target, aside) if aside is not None else None
                done.append((staged, target, moved, made))
                os.rename(staged, target)
            complete = True
        except BaseException:
            _undo(done)
            raise
        finally:
            if complete and threading.current_thread() is threading.main_thread() \
                    and callable(signal.getsignal(signal.SIGTERM)):         # output.interruptible's: it restores
                signal.signal(signal.SIGTERM, signal.SIG_IGN)      # complete: a pending stop is dropped
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return [m for _, _, m, _ in done if m]


def _missing_parents(target: Path) -> list[Path]:
    out, p = [], target.parent
    while not p.exists():
        out.append(p)
        p = p.parent
    return out


def _undo(done) -> None:
    """Put back what a failed commit moved: each placed target back to its staging path, each old copy
    back to its target, each parent folder made removed (deepest first)."""
    for staged, target, moved, made in reversed(done):
        if target.exists() or target.is_symlink():
            try:
                os.rename(target, staged)
            except OSError:
                pass
        if moved is not None:
            try:
                os.rename(moved, target)
            except OSError:
                pass
        for d in made:
            try:
                d.rmdir()
            except OSError:
                pass
