"""Reading a result tree safely: never outside PATH, never a traceback.

- _Walker lists a tree without following symlinked directories; a symlink that leaves PATH,
  dangles or loops, a special file, or a tree deeper than MAX_DEPTH becomes a Problem;
- _Loader reads JSON/YAML through suite.files (size limit, UTF-8) and turns every failure
  (truncated, empty, non-UTF-8, wrong top-level type) into a Problem;
- directories named `code` or `*_code` hold the benchmark's code (DLIO's own tests/test_data has a
  summary.json; build artefacts nest deep): they are never walked for results, only recorded in
  `code_dirs` (suite.layouts.benchdirs.code hashes them against the reference release);
- a Problem names the file, the field, what was expected and what was found; the checker
  turns them into findings (rules input-readable, input-symlink-inside, input-symlink-dir).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from suite import files, memo
from suite.errors import ResultError
from suite.layouts import leaves
from suite.rules.yamlload import load_yaml_fast

MAX_DEPTH = 24
MAX_ENTRIES = 200_000


@dataclass
class Problem:
    """A file that could not be used: becomes a finding (rule ids in rules/*/common.yaml)."""

    kind: str            # unreadable | outside | loop | not-a-dir | not-a-file | too-deep | special
    path: Path
    field: str
    expected: str
    actual: str


LINK_KINDS = ("outside", "loop")
DIR_LINK_KINDS = ("dir-link",)


def problem_facts(problems: list[Problem]) -> dict:
    """What a walk could not use, as the rules name it (facts problems.unreadable, problems.links,
    problems.dir_links): unreadable entries, links out or looping, linked directories. The layout's
    tree scope and a kind's benchmark and host scopes name theirs the same way."""
    from suite.rules.engine import Item

    def items(kinds=None, exclude=()):
        return [Item(p.actual, p.path, p.field, p.expected) for p in problems
                if (kinds is None or p.kind in kinds) and p.kind not in exclude]
    return {"problems.unreadable": items(exclude=LINK_KINDS + DIR_LINK_KINDS),
            "problems.links": items(LINK_KINDS), "problems.dir_links": items(DIR_LINK_KINDS)}



def listing(d: Path, limit: int) -> tuple[set[str], list[str]]:
    """The names in `d` (files and folders) and its sub-folders (links not followed), the first `limit`
    entries only (a layout's recognition reads a bounded listing); nothing where `d` cannot be listed."""
    names: set[str] = set()
    dirs: list[str] = []
    try:
        with os.scandir(d) as it:
            for n, e in enumerate(it):
                if n >= limit:
                    break
                names.add(e.name)
                if e.is_dir(follow_symlinks=False):
                    dirs.append(e.name)
    except OSError:
        return set(), []
    return names, dirs


def is_code_dir(name: str) -> bool:
    """`code/`, `dlio_code/`, `Storage_code/`: submitted code, never results."""
    low = name.lower()
    return low == "code" or low.endswith("_code")


def walked(root: Path, skip=()) -> "_Walker":
    """`root` walked (`skip` left out), once per command that holds suite.memo (suite report walks its
    input for its results by owner, then for its benchmark dirs)."""
    def make() -> _Walker:
        walker = _Walker(root, skip)
        walker.walk(root)
        return walker
    return memo.kept(("walker.walked", Path(root), tuple(sorted(str(p) for p in skip))), make)


class _Walker:
    def __init__(self, root: Path, skip=()):
        self.root = root
        self.skip = {Path(p) for p in skip}            # what another benchmark kind owns (dirs, files): not walked
        self.skipped: list[Path] = []
        self.problems: list[Problem] = []
        self.dirs: dict[Path, list[str]] = {}        # dir -> names of regular files (links resolved inside root)
        self.subdirs: dict[Path, list[str]] = {}
        self.code_dirs: list[Path] = []
        self.entries = 0

    def inside(self, real: str) -> bool:
        r = str(self.root)
        return real == r or real.startswith(r.rstrip(os.sep) + os.sep)

    def walk(self, d: Path, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            self.problems.append(Problem("too-deep", d, "depth", f"at most {MAX_DEPTH} levels", "deeper"))
            return
        try:
            it = list(os.scandir(d))
        except OSError as exc:
            self.problems.append(Problem("unreadable", d, "directory", "a readable directory",
                                         exc.strerror or str(exc)))
            return
        names, subs = [], []
        for entry in sorted(it, key=lambda e: e.name):
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                self.problems.append(Problem("too-many", d, "entries", f"at most {MAX_ENTRIES}", "more"))
                break
            p = Path(entry.path)
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                self.problems.append(Problem("unreadable", p, "entry", "a readable entry", exc.strerror or str(exc)))
                continue
            if stat.S_ISLNK(st.st_mode):
                kind = self._link(p)
                if kind == "file":
                    names.append(entry.name)
                continue
            if stat.S_ISDIR(st.st_mode):
                if p in self.skip:
                    self.skipped.append(p)
                elif is_code_dir(entry.name):
                    self.code_dirs.append(p)
                else:
                    subs.append(entry.name)
            elif stat.S_ISREG(st.st_mode):
                if p in self.skip:
                    self.skipped.append(p)
                else:
                    names.append(entry.name)
            else:
                self.problems.append(Problem("special", p, "type", "a regular file or directory", "a special file"))
        for n in leaves.reportgen_outputs(d, names):   # the reference tool's report, left beside the runs
            names.remove(n)
            self.skipped.append(d / n)
        self.dirs[d] = names
        self.subdirs[d] = subs
        for s in subs:
            self.walk(d / s, depth + 1)

    def _link(self, p: Path) -> str | None:
        """Classify a symlink: 'file' (inside PATH, usable), else records a Problem and returns None."""
        try:
            target = os.readlink(p)
        except OSError:
            target = "?"
        try:
            real = os.path.realpath(p, strict=True)
        except OSError as exc:  # loop or dangling
            if exc.errno == errno.ELOOP:
                self.problems.append(Problem("loop", p, "symlink", "a link that resolves", f"a symlink loop ({target})"))
            else:
                self.problems.append(Problem("unreadable", p, "symlink", "an existing target",
                                             f"a dangling link to {target}"))
            return None
        if not self.inside(real):
            self.problems.append(Problem("outside", p, "symlink", "a target inside PATH",
                                         f"a link to {target} (outside, not followed)"))
            return None
        if os.path.isdir(real):
            self.problems.append(Problem("dir-link", p, "symlink", "a real directory",
                                         f"a symlinked directory to {target} (not descended)"))
            return None
        return "file"


class _Loader:
    """Reads files under the root through suite.files; failures become Problems on `sink`."""

    def load(self, path: Path, sink: list[Problem], kind: str = "json"):
        try:
            if kind == "json":
                try:
                    return files.load_json(path, error=ResultError)
                except (RecursionError, ValueError) as exc:   # nesting or integers past Python's limits
                    raise ResultError(f"{path}: expected JSON within Python's limits (nesting, digits), "
                                      f"got {type(exc).__name__}: {str(exc)[:80]}") from None
            doc = load_yaml_fast(path, error=ResultError)
            if doc is None:
                sink.append(Problem("unreadable", path, "file", "a non-empty YAML document", "an empty document"))
            return doc
        except ResultError as exc:
            text = str(exc)
            prefix = f"{path}: "
            text = text[len(prefix):] if text.startswith(prefix) else text
            sink.append(Problem("unreadable", path, "file", f"a readable {kind.upper()} file", text))
            return None

    def typed(self, doc, want, path: Path, sink: list[Problem], what: str):
        if doc is None:
            return None
        if not isinstance(doc, want):
            exp = "an object" if want is dict else "a list"
            sink.append(Problem("unreadable", path, "(top level)", f"{exp} ({what})", type(doc).__name__))
            return None
        return doc
