"""The v3.0 code pool: `<Org>/code-<hash8>/` images, each with `.code-hash.json`, and the one-line
`.mlps-code-image` pointer in a leaf that names the image its run used.

`tree_md5` is the content hash of a code tree ("md5-tree-v2" as the v3.0 round describes it: the
files, links skipped, VCS/IDE/agent/cache/test directories and *.egg-info pruned at any depth, *.pyc,
*.pyo, .DS_Store and Thumbs.db left out, sorted by the UTF-8 bytes of their POSIX relative path, fed
to one MD5 as path bytes then content bytes; the same list as suite.harness.provenance, issue 25). It is the one function the
submission side writes a pool with and the checker recomputes an image with; swap it here.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from suite.errors import ResultError, expected_got

EXCLUDED_DIRS = {".git", ".idea", ".vscode", ".claude", ".agent", ".agents", ".roo", ".planning", ".gsd-tmp",
                 "__pycache__", ".pytest_cache", ".venv", "node_modules", "build", "dist", ".tox", "test", "tests"}
EXCLUDED_FILES = {".code-hash.json", ".DS_Store", "Thumbs.db"}     # .code-hash.json: the image's own record
MAX_FILES = 50_000
MAX_BYTES = 1 << 30


def _excluded_dir(name: str) -> bool:
    return name in EXCLUDED_DIRS or name.endswith(".egg-info")


def _excluded_file(name: str) -> bool:
    return name in EXCLUDED_FILES or name.endswith((".pyc", ".pyo"))


def code_files(top: Path) -> list[tuple[bytes, Path]]:
    """(POSIX relative path as UTF-8 bytes, path) of every regular file the hash covers, sorted."""
    out: list[tuple[bytes, Path]] = []
    stack = [Path(top)]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError as exc:
            raise ResultError(expected_got(d, "(directory)", "a readable directory", exc.strerror or exc)) from None
        for e in entries:
            st = e.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                continue                                  # links are skipped, never followed
            if stat.S_ISDIR(st.st_mode):
                if not _excluded_dir(e.name):
                    stack.append(Path(e.path))
            elif stat.S_ISREG(st.st_mode) and not _excluded_file(e.name):
                rel = Path(e.path).relative_to(top).as_posix().encode("utf-8", "surrogateescape")
                out.append((rel, Path(e.path)))
                if len(out) > MAX_FILES:
                    raise ResultError(expected_got(top, "(files)", f"at most {MAX_FILES} files in a code image", "more"))
    out.sort(key=lambda x: x[0])
    return out


def tree_md5(top: Path) -> str:
    """The md5-tree-v2 hash of the code tree at `top` (32 lowercase hex digits)."""
    h = hashlib.md5(usedforsecurity=False)
    total = 0
    for rel, path in code_files(top):
        h.update(rel)
        try:
            with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as fh:
                while chunk := fh.read(1 << 20):
                    total += len(chunk)
                    if total > MAX_BYTES:
                        raise ResultError(expected_got(top, "(bytes)", f"at most {MAX_BYTES} bytes of code", "more"))
                    h.update(chunk)
        except OSError as exc:
            raise ResultError(expected_got(path, "(file)", "a readable file", exc.strerror or exc)) from None
    return h.hexdigest()


def image_dir(org_dir: Path, full_hash: str) -> Path:
    """Where the pool keeps the image of `full_hash`: `<Org>/code-<first 8 hex>/`."""
    return Path(org_dir) / f"code-{full_hash[:8]}"
