"""The v3.0 code pool: `<Org>/code-<hash8>/` images, each with `.code-hash.json`, and the one-line
`.mlps-code-image` pointer in a leaf that names the image its run used.

`tree_md5` is the content hash of a code tree: md5-tree-v2 (suite.codetree, the walker a run's
provenance uses too), with limits on the files and bytes of a tree that comes from another party.
It is the one function the submission side writes a pool with and the checker recomputes an image with.
"""

from __future__ import annotations

from pathlib import Path

from suite import codetree

MAX_FILES = 50_000
MAX_BYTES = 1 << 30


def code_files(top: Path) -> list[tuple[str, Path]]:
    """(POSIX relative path, path) of every regular file the hash covers, in hashing order."""
    return codetree.code_files(top, MAX_FILES)


def tree_md5(top: Path) -> str:
    """The md5-tree-v2 hash of the code tree at `top` (32 lowercase hex digits)."""
    return codetree.tree_md5(top, MAX_FILES, MAX_BYTES)[0]


def image_dir(org_dir: Path, full_hash: str) -> Path:
    """Where the pool keeps the image of `full_hash`: `<Org>/code-<first 8 hex>/`."""
    return Path(org_dir) / f"code-{full_hash[:8]}"
