"""The closed codebase unchanged: a submitted `code/` (or `*_code/`) hashed against the reference
release's files (rules/<ruleset>/reference/code-sha256.json, data not code).

Only the reference's own paths are compared, and only where the submitted code carries them (a
submission packaging other code, e.g. `suite`'s source archive, is not judged here). Each changed
file is one item: a warning in the closed division, a note in the open one (rules code-unchanged,
code-unchanged-open). Never follows a link, never reads a file over the size limit.
"""

from __future__ import annotations

import hashlib
import os
import stat
from functools import lru_cache
from pathlib import Path

from suite import files
from suite.rules import engine as rules
from suite.rules.engine import Item

MAX_HASH_BYTES = 64 * 1024 * 1024


@lru_cache(maxsize=8)
def reference(ruleset: str) -> dict | None:
    path = rules.rules_dir() / ruleset / "reference" / "code-sha256.json"
    if not path.is_file():
        return None
    return files.load_json(path, schema="code-reference")


def _sha256(path: Path) -> str | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HASH_BYTES:
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _no_link_on_the_way(code_dir: Path, rel: str) -> bool:
    p = code_dir
    for part in Path(rel).parts[:-1]:
        p = p / part
        try:
            if stat.S_ISLNK(os.lstat(p).st_mode):
                return False
        except OSError:
            return False
    return True


def changed(code_dirs: list[Path], ruleset: str, root: Path) -> dict[str, list[Item]]:
    """{'closed': [...], 'open': [...]}: one Item per reference file whose submitted copy differs."""
    ref = reference(ruleset)
    out: dict[str, list[Item]] = {"closed": [], "open": []}
    if ref is None:
        return out
    for d in code_dirs:
        division = "open" if any(p.lower() == "open" for p in d.relative_to(root).parts) else "closed"
        for rel, want in ref["files"].items():
            path = d / rel
            if not _no_link_on_the_way(d, rel):
                continue
            have = _sha256(path)
            if have is not None and have != want:
                out[division].append(Item(f"sha256 {have[:16]}...", path, "(file content)",
                                          f"the reference release's file (sha256 {want[:16]}...)"))
    return out
