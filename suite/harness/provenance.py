"""Provenance of a run: which code ran (an md5 tree hash, MLPerf Storage v3.0's "md5-tree-v2"),
the tool's name and version, the git commit when there is one, and when it was captured.

    image = provenance.code_image(root)      # {"hash", "algorithm", "captured_at", "tool", ...}
    provenance.code_files(root)              # [(relative POSIX path, Path)]: exactly what is hashed
    provenance.pointer(image)                # "md5-tree-v2:<32 hex>" (a leaf's .mlps-code-image line)
    provenance.for_run()                     # the image of the code running now (cached per process)
    provenance.record(run_dir, image)        # a run's .mlps-code-image and provenance.json, written
    provenance.recorded(run_dir)             # (the pointer line, the provenance.json doc): None where absent

md5-tree-v2 itself: suite.codetree (the walker the v3.0 code pool and its checker use too).

Which ROOT a run hashes (for_run): the installed `suite` package directory, the code that ran, as a
pool image holds it (<image>/suite/...: IMAGE_DIR), so a run's pointer names the image `suite submission
add` makes of the same code (issue 46, class 9: the code that ran, not the code present at add).
In a checkout its data/rules and data/workloads are links to the repository's rules/ and
workloads/, which the algorithm leaves out; the git commit (and whether the work tree had
changes: `git_dirty`) covers them there. A code pool copies code_files(root) and nothing else,
so the copy hashes to the same value.
"""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from suite import codetree
from suite.codetree import ALGORITHM

TOOL = "suite"
POINTER_FILE = ".mlps-code-image"
IMAGE_DIR = "suite"                        # where a pool image holds the package: the hash covers that layout
RECORD_FILE = "provenance.json"            # a run's code image in full (schema code-image), beside the pointer
GIT_TIMEOUT_S = 5
code_files, tree_md5 = codetree.code_files, codetree.tree_md5


def git_commit(root) -> tuple[str | None, bool | None]:
    """(HEAD's sha, whether the work tree has changes) of the checkout holding `root`; (None, None)
    when it is not in one, or git is not there."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return None, None
        status = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None, None
    sha = head.stdout.strip()
    return (sha if len(sha) == 40 else None), (bool(status.stdout.strip()) if status.returncode == 0 else None)


def code_image(root, under: str = "") -> dict:
    """`root`'s code image: the hash (of its files laid out below `under`, codetree.tree_md5) and what a
    `.code-hash.json` records (hash, algorithm, captured_at, the tool and its version, git_sha) plus the
    file count and git_dirty."""
    from suite import __version__

    digest, n = tree_md5(root, under=under)
    sha, dirty = git_commit(root)
    return {"hash": digest, "algorithm": ALGORITHM, "files": n,
            "captured_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tool": TOOL, "tool_version": __version__, "git_sha": sha, "git_dirty": dirty}


def pointer(image: dict) -> str:
    """A leaf's .mlps-code-image line: `md5-tree-v2:<32 hex>`."""
    return f"{image['algorithm']}:{image['hash']}"


def package_root() -> Path:
    """The `suite` package directory: the code a run runs."""
    return Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def for_run() -> dict:
    """The image of the code running in this process (hashed once per process)."""
    return code_image(package_root(), under=IMAGE_DIR)


def write_pointer(leaf_dir) -> dict:
    """The run's code image, and its `.mlps-code-image` in `leaf_dir` (one line)."""
    from suite import files

    image = for_run()
    files.write_atomic(Path(leaf_dir) / POINTER_FILE, pointer(image) + "\n")
    return image


def record(run_dir, image: dict | None = None) -> dict:
    """A run's code image (`image`, else the code running now) in `run_dir`: `.mlps-code-image` (one line)
    and provenance.json (schema code-image), each written atomically."""
    from suite import files

    image = image or for_run()
    files.write_atomic(Path(run_dir) / POINTER_FILE, pointer(image) + "\n")
    files.write_json(Path(run_dir) / RECORD_FILE, {"schema_version": 1, **image}, schema="code-image")
    return image


POINTER_BYTES = 200      # a pointer line is 45 bytes: anything much longer is not one


def recorded(run_dir) -> tuple[str | None, dict | None]:
    """(the `.mlps-code-image` line, the provenance.json document) of a run directory, each None where the
    file is absent (a link is not followed: absent). A pointer file past POINTER_BYTES, or a record that is
    not valid JSON of schema code-image, is a ResultError naming it."""
    from suite import files
    from suite.errors import ResultError, expected_got

    run_dir = Path(run_dir)
    line = None
    p = run_dir / POINTER_FILE
    if p.is_file() and not p.is_symlink():
        if p.stat().st_size > POINTER_BYTES:
            raise ResultError(expected_got(p, "(line 1)", f"one md5-tree-v2 pointer line (<= {POINTER_BYTES} bytes)",
                                           f"{p.stat().st_size} bytes"))
        line = p.read_text(errors="replace").strip()
    r = run_dir / RECORD_FILE
    doc = None
    if r.is_file() and not r.is_symlink():
        doc = files.load_json(r, error=ResultError, schema="code-image", root=run_dir)
    return line, doc
