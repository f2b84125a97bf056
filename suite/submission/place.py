"""Putting files into a submission tree without losing any: staged copies, renames, old copies aside.

A target that exists is refused, unless `replace`: then the old copy is moved (renamed, never
copied and deleted) to `<DIR>.replaced/<UTC time>/<same relative path>`, beside the tree so the
checker and the tarball never see it. New content is built in a hidden sibling and renamed into
place, so a failure leaves either the old state or the new one.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from suite.errors import SuiteError, expected_got
from suite.check import manifest


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


@contextmanager
def staged(target: Path):
    """A hidden sibling directory to fill; renamed to `target` when the block ends without error."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.staging-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        yield tmp
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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
