"""md5-tree-v2: the content hash of a code tree, as mlcommons/storage's submission checker defines it
(facts, not code, from its code_checksum module and constants): walk ROOT without following links;
leave out every entry whose POSIX path relative to ROOT (a directory's with a trailing "/") starts
with one of EXCLUDED_PREFIXES (so a prefix names a top-level directory only: a nested `pkg/tests/`
is hashed), every directory whose name ends in ".egg-info", every file whose name matches one of
EXCLUDED_NAMES (fnmatch) and every symbolic link; sort what is left by its relative path's UTF-8
bytes; one md5 over, per file, its relative path's UTF-8 bytes and then its bytes.

The one walker both sides use: a run's provenance (suite.harness.provenance) and the v3.0 code pool
the submission side writes and the checker re-hashes (suite.layouts.pool), which passes limits for
trees that come from other parties.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from pathlib import Path

from suite.errors import ResultError, expected_got

ALGORITHM = "md5-tree-v2"
EXCLUDED_PREFIXES = (".git/", ".idea/", ".vscode/", ".claude/", ".agent/", ".agents/", ".roo/", ".planning/",
                     ".gsd-tmp/", "__pycache__/", ".pytest_cache/", ".venv/", "node_modules/", "build/", "dist/",
                     ".tox/", "test/", "tests/")
EXCLUDED_NAMES = (".code-hash.json", "*.pyc", "*.pyo", ".DS_Store", "Thumbs.db")   # .code-hash.json: an image's own record
CHUNK_BYTES = 64 * 1024


def _excluded(rel: str) -> bool:
    return any(rel.startswith(p) for p in EXCLUDED_PREFIXES)


def code_files(root, max_files: int | None = None) -> list[tuple[str, Path]]:
    """The files md5-tree-v2 hashes under `root`, in hashing order: [(relative POSIX path, path)].
    More than max_files: a ResultError (a tree from another party)."""
    root = Path(root)
    if not root.is_dir():
        raise ResultError(expected_got(root, "code image", "a directory of code",
                                       "nothing" if not root.exists() else "a file"))
    found = []

    def unreadable(exc: OSError):
        raise ResultError(expected_got(exc.filename or root, "code image", "a readable directory",
                                       exc.strerror or exc))

    for top, dirs, names in os.walk(root, followlinks=False, onerror=unreadable):
        here = Path(top)
        rel_top = here.relative_to(root).as_posix()
        prefix = "" if rel_top == "." else rel_top + "/"
        dirs[:] = [d for d in dirs if not d.endswith(".egg-info") and not _excluded(f"{prefix}{d}/")
                   and not (here / d).is_symlink()]
        for name in names:
            rel = prefix + name
            if _excluded(rel) or any(fnmatch.fnmatch(name, p) for p in EXCLUDED_NAMES) or (here / name).is_symlink():
                continue
            found.append((rel, here / name))
            if max_files is not None and len(found) > max_files:
                raise ResultError(expected_got(root, "code image", f"at most {max_files} files", "more"))
    return sorted(found, key=lambda e: e[0].encode("utf-8", "surrogateescape"))


def tree_md5(root, max_files: int | None = None, max_bytes: int | None = None, under: str = "") -> tuple[str, int]:
    """(md5-tree-v2 hex digest of `root`, how many files it covers); files opened without following
    a link swapped in after the walk; more than max_bytes of content: a ResultError. `under`: the
    digest of the same files laid out below a directory of that name (a pool image holds a package
    as <image>/<package>/...: the run's provenance hashes what the image will hold)."""
    entries = code_files(root, max_files)
    md5 = hashlib.md5(usedforsecurity=False)
    total = 0
    lead = f"{under.strip('/')}/" if under.strip("/") else ""
    for rel, path in entries:
        md5.update((lead + rel).encode("utf-8", "surrogateescape"))
        try:
            with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as fh:
                while chunk := fh.read(CHUNK_BYTES):
                    total += len(chunk)
                    if max_bytes is not None and total > max_bytes:
                        raise ResultError(expected_got(root, "code image", f"at most {max_bytes} bytes of code", "more"))
                    md5.update(chunk)
        except OSError as exc:
            raise ResultError(expected_got(path, "code image", "a readable file", exc.strerror or exc)) from None
    return md5.hexdigest(), len(entries)
