"""The model of a published MLPerf Storage v3.0 tree, read once (suite.layouts.leaf_files for each file).

    <root>/{closed,open}/<Org>/results/<system>/{training,checkpointing,kv_cache,vector_database}/...
    <root>/{closed,open}/<Org>/systems/<system>.{yaml,pdf}
    <root>/<Org>/.mlps-image-pool, <root>/<Org>/code-<hash8>/.code-hash.json   (the code pool)

training: `training/<model>/{datagen,datasize,run}/<YYYYMMDD_HHMMSS>/`; checkpointing:
`checkpointing/<model>/<ts>/` (a write leaf and a read leaf). kv_cache and vector_database leaves
belong to other kinds: the tree records their folders (`Other`) and the checker hands them over.

`load(path)` finds the tree around PATH (the nearest directory above it holding `closed/` or
`open/` organisations), reads it, and keeps in scope only what lies under PATH (a leaf, a
benchmark, a system, an organisation or the whole tree); a PATH outside any such tree is read as
a tree of its own. Links are never followed (each is a problem); every directory listing is bounded.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from suite.layouts import leaf_files as v3load
from suite.layouts import leaves as layout_leaves
from suite.layouts import walk
from suite.harness import leafstamp
from suite import files
from suite.errors import ResultError, SuiteError

DIVISIONS = ("closed", "open")
BENCHMARKS = ("training", "checkpointing", "kv_cache", "vector_database")   # the published v3.0 benchmark folders
KIND_FOLDERS: set = set()     # every registered kind's name (suite.kinds.registry): its folder marks a tree too
PHASES = ("datagen", "datasize", "run")
MAX_ENTRIES = 20_000          # per directory
MAX_UP = 12                   # levels climbed from PATH to find the tree's root
REQUIRED_LEAF = ("summary.json",)

# The kinds' judgements of a benchmark node of reference leaves, by the benchmark folder's name
# ("training", "checkpointing"): filled by suite.kinds.registry from each kind's `reference_judge`
# (the layout names no kind; a node no kind judges is listed, not checked).
JUDGES: dict = {}


@dataclass
class Problem:
    path: Path
    field: str
    expected: str
    actual: str


@dataclass
class Leaf:
    path: Path
    ts: str
    names: set = field(default_factory=set)
    pruned: list = field(default_factory=list)
    summary: v3load.Summary | None = None
    meta: v3load.Metadata | None = None
    fs_present: bool = False
    fs: v3load.FsSeparation | None = None
    pointer: tuple | None = None
    problems: list = field(default_factory=list)

    @property
    def same_fs(self) -> bool | None:
        return self.fs.same_filesystem if self.fs is not None else None


@dataclass
class Training:
    path: Path
    model: str
    runs: list = field(default_factory=list)
    datasize: list = field(default_factory=list)
    datagen: list = field(default_factory=list)
    strays: list = field(default_factory=list)      # names under the model dir that are no phase


@dataclass
class Checkpointing:
    path: Path
    model: str
    leaves: list = field(default_factory=list)
    strays: list = field(default_factory=list)


@dataclass
class Other:
    path: Path
    benchmark: str


@dataclass
class System:
    name: str
    org: str
    division: str
    path: Path | None                  # results/<system>/ (None: a description without results)
    yaml_path: Path | None = None
    pdf_path: Path | None = None
    doc: dict | None = None
    problem: Problem | None = None
    benchmarks: list = field(default_factory=list)
    unknown: list = field(default_factory=list)     # folders under results/<system>/ no benchmark names


@dataclass
class Org:
    name: str
    division: str
    path: Path
    pool_dir: Path
    systems: list = field(default_factory=list)
    extra: list = field(default_factory=list)       # entries beside results/ and systems/
    unpaired_pdfs: list = field(default_factory=list)


@dataclass
class Tree:
    root: Path
    scope: Path
    orgs: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    def in_scope(self, p: Path) -> bool:
        return p == self.scope or self.scope in p.parents or p in self.scope.parents


def _entries(d: Path, problems: list) -> list[os.DirEntry]:
    try:
        with os.scandir(d) as it:
            out = []
            for e in it:
                out.append(e)
                if len(out) > MAX_ENTRIES:
                    problems.append(Problem(d, "(entries)", f"at most {MAX_ENTRIES}", "more"))
                    break
            return sorted(out, key=lambda e: e.name)
    except OSError as exc:
        problems.append(Problem(d, "(directory)", "a readable directory", str(exc.strerror or exc)))
        return []


def _split(d: Path, problems: list) -> tuple[list[Path], list[str]]:
    """(sub-directories, regular file names) of `d`; links and special files are problems."""
    dirs, names = [], []
    for e in _entries(d, problems):
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            problems.append(Problem(Path(e.path), "(link)", "a file or directory of the tree", "a symbolic link"))
        elif stat.S_ISDIR(st.st_mode):
            dirs.append(Path(e.path))
        elif stat.S_ISREG(st.st_mode):
            names.append(e.name)
    return dirs, names


def is_tree_root(d: Path) -> bool:
    """`d` holds a published v3.0 tree: `closed|open/<Org>/results/<system>/<benchmark>/` with a v3.0
    benchmark folder (training, checkpointing, kv_cache, vector_database), or an organisation's code
    pool beside them (`<Org>/.mlps-image-pool`). Earlier rounds' trees (`results/<system>/<workload>...`)
    are not v3.0 ones. Bounded: a few entries of each level are looked at."""
    for div in DIVISIONS:
        p = d / div
        if not p.is_dir() or p.is_symlink():
            continue
        for org in _names(p, dirs=True)[:50]:
            if (d / org / ".mlps-image-pool").is_file():
                return True
            res = p / org / "results"
            for system in _names(res, dirs=True)[:20]:
                if any(b in BENCHMARKS or b in KIND_FOLDERS for b in _names(res / system, dirs=True)):
                    return True
    return False


def find_root(path: Path) -> Path:
    real = Path(os.path.realpath(path))
    d = real if real.is_dir() else real.parent
    for _ in range(MAX_UP):
        if is_tree_root(d):
            return d
        if d.parent == d:
            break
        d = d.parent
    return real if real.is_dir() else real.parent


def read_root(path: Path) -> Path:
    """The directory a check (a page, metrics) of `path` reads: the published tree's root around it
    (its systems/, the code pool, every leaf), or outside a tree the top of the v3.0 structure."""
    scope = Path(os.path.realpath(path))
    root = find_root(scope)
    return root if is_tree_root(root) else _loose_root(scope)


def load(path: Path) -> Tree:
    scope = Path(os.path.realpath(path))
    root = find_root(scope)
    tree = Tree(root, scope)
    for div in DIVISIONS:
        ddir = root / div
        if not ddir.is_dir() or ddir.is_symlink():
            continue
        orgs, _ = _split(ddir, tree.problems)
        for odir in orgs:
            if tree.in_scope(odir):
                tree.orgs.append(_org(odir, div, root, tree))
    if not tree.orgs and not is_tree_root(root):
        tree.root = _loose_root(scope)
        tree.orgs.append(_loose(scope, tree))
    return tree


def _loose_root(scope: Path) -> Path:
    """Outside a published tree: what may be read around PATH, the benchmark folder of the leaf or
    phase folder it is (suite.layouts.walk.node_of: found by the leaves, not by the folders' names),
    else PATH itself."""
    return walk.node_of(scope) or scope


def _org(odir: Path, div: str, root: Path, tree: Tree) -> Org:
    org = Org(odir.name, div, odir, root / odir.name)
    dirs, names = _split(odir, tree.problems)
    org.extra = [d for d in dirs if d.name not in ("results", "systems")] + \
                [odir / n for n in names if not n.startswith(".")]
    yamls, pdfs = {}, {}
    sdir = odir / "systems"
    if sdir.is_dir() and not sdir.is_symlink():
        _, snames = _split(sdir, tree.problems)
        for n in snames:
            stem, ext = os.path.splitext(n)
            if ext.lower() in (".yaml", ".yml"):
                yamls[stem] = sdir / n
            elif ext.lower() == ".pdf":
                pdfs[stem] = sdir / n
    org.unpaired_pdfs = [p for s, p in pdfs.items() if s not in yamls]
    rdir = odir / "results"
    results = _split(rdir, tree.problems)[0] if rdir.is_dir() and not rdir.is_symlink() else []
    seen = set()
    for sysdir in results:
        if not tree.in_scope(sysdir):
            continue
        system = System(sysdir.name, org.name, div, sysdir, yamls.get(sysdir.name), pdfs.get(sysdir.name))
        _benchmarks(system, tree)
        org.systems.append(system)
        seen.add(sysdir.name)
    if tree.scope in (odir, odir.parent, tree.root) or tree.scope in odir.parents or tree.scope == sdir:
        for stem, y in yamls.items():
            if stem not in seen:
                org.systems.append(System(stem, org.name, div, None, y, pdfs.get(stem)))
    for system in org.systems:
        _describe(system, root)
    return org


def _describe(system: System, root: Path) -> None:
    if system.yaml_path is None:
        return
    try:
        system.doc = v3load.system_yaml(system.yaml_path, root)
    except ResultError as exc:
        system.problem = Problem(system.yaml_path, "(file)", "a readable system description", str(exc))


def _benchmarks(system: System, tree: Tree) -> None:
    dirs, _ = _split(system.path, tree.problems)
    for bdir in dirs:
        if not tree.in_scope(bdir):
            continue
        if bdir.name == "training":
            for mdir in _split(bdir, tree.problems)[0]:
                if tree.in_scope(mdir):
                    system.benchmarks.append(_training(mdir, tree))
        elif bdir.name == "checkpointing":
            for mdir in _split(bdir, tree.problems)[0]:
                if tree.in_scope(mdir):
                    system.benchmarks.append(_checkpointing(mdir, tree))
        elif bdir.name in BENCHMARKS:
            system.benchmarks.append(Other(bdir, bdir.name))
        else:
            system.unknown.append(bdir)


def _training(mdir: Path, tree: Tree) -> Training:
    t = Training(mdir, mdir.name)
    dirs, names = _split(mdir, tree.problems)
    t.strays = [mdir / n for n in names]
    for pdir in dirs:
        if pdir.name not in PHASES:
            t.strays.append(pdir)
            continue
        leaves = [_leaf(ldir, tree) for ldir in _split(pdir, tree.problems)[0]]
        getattr(t, "runs" if pdir.name == "run" else pdir.name).extend(sorted(leaves, key=lambda x: x.ts))
    return t


def _checkpointing(mdir: Path, tree: Tree) -> Checkpointing:
    c = Checkpointing(mdir, mdir.name)
    dirs, names = _split(mdir, tree.problems)
    c.strays = [mdir / n for n in names]
    c.leaves = sorted((_leaf(ldir, tree) for ldir in dirs), key=lambda x: x.ts)
    return c


def benchmark_of(mdir: Path, leaf_dirs: list[Path]) -> Checkpointing:
    """The benchmark of the given stamped leaves of `mdir`, read as the tree reads them (a kind's own leaves,
    which the walk leaves to that kind: `suite run`'s, with its evidence beside)."""
    tree = Tree(mdir, mdir)
    return Checkpointing(mdir, mdir.name, sorted((_leaf(d, tree) for d in leaf_dirs), key=lambda x: x.ts))


def _leaf(ldir: Path, tree: Tree) -> Leaf:
    """One timestamped leaf: every file it needs read, each failure a problem of the leaf."""
    leaf = Leaf(ldir, ldir.name)
    _, names = _split(ldir, tree.problems)
    leaf.names = set(names)
    root = tree.root
    for n in names:          # read only what is the placeholder's size (an empty file is none: no read)
        if len(v3load.PRUNED) <= (ldir / n).stat().st_size <= 64 and v3load.is_pruned(ldir / n, root):
            leaf.pruned.append(n)
    meta = [n for n in names if leafstamp.metadata_re().fullmatch(n)]
    steps = [("summary.json", v3load.summary, "summary"),
             (meta[0] if meta else None, v3load.metadata, "meta"),
             ("fs_separation.json", v3load.fs_separation, "fs"),
             (".mlps-code-image", v3load.pointer, "pointer")]
    for name, reader, attr in steps:
        if name is None or name not in leaf.names or name in leaf.pruned:
            continue
        try:
            setattr(leaf, attr, reader(ldir / name, root))
        except ResultError as exc:
            leaf.problems.append(Problem(ldir / name, "(file)", "a readable file", str(exc)))
    leaf.fs_present = "fs_separation.json" in leaf.names and "fs_separation.json" not in leaf.pruned
    return leaf


def _loose(scope: Path, tree: Tree) -> Org:
    """PATH outside a published tree: the benchmarks its reference leaves make (suite.layouts.walk, by
    what each leaf holds, wherever it sits: a results dir, a copy under any name), read as one system's;
    PATH holding none: its benchmark folders by name (kv_cache, vector_database)."""
    found = walk.nodes(scope)
    benchmarks = [_training_node(node, tree) if node.benchmark == "training" else _checkpointing(node.path, tree)
                  for node in found]
    division = _recorded_division(benchmarks)
    org = Org("(none)", division, scope, scope)
    system = System(scope.name, org.name, division, scope, benchmarks=benchmarks)
    if not found:
        _benchmarks(system, tree)
    org.systems.append(system)
    return org


def _recorded_division(benchmarks: list) -> str:
    """The division the leaves recorded for themselves (suite.layouts.leaves.recorded_division: where
    the run wrote, as its metadata says); closed where none says (what a result claims unless it says open)."""
    for b in benchmarks:
        for x in b.runs + b.datasize + b.datagen if isinstance(b, Training) else b.leaves:
            said = layout_leaves.recorded_division({"result_dir": x.meta.result_dir}) if x.meta is not None else None
            said = said or _our_division(x.path)
            if said is not None:
                return said
    return "closed"


def _our_division(leaf: Path) -> str | None:
    """The division our own run recorded in its results.json (`suite run --division`), if it is ours."""
    try:
        doc = files.load_json(leaf / "results.json", limit=1 << 20, root=leaf)
    except (SuiteError, OSError, ValueError):
        return None
    said = doc.get("division") if isinstance(doc, dict) else None
    return said if said in DIVISIONS else None


def _training_node(node, tree: Tree) -> Training:
    """A training benchmark from its node: `<model>/<phase>/<ts>` read by folder as in a tree; leaves
    that sit in no phase folder each in the phase its metadata names."""
    if all(x.path.parent.name in PHASES for x in node.leaves):
        return _training(node.path, tree)
    t = Training(node.path, node.path.name)
    for x in node.leaves:
        getattr(t, "runs" if x.phase == "run" else x.phase).append(_leaf(x.path, tree))
    return t


def leaves(tree: Tree):
    """Every (org, system, benchmark) in scope, in order."""
    for org in tree.orgs:
        for system in org.systems:
            for b in system.benchmarks:
                yield org, system, b


def looks_v3(path: Path) -> bool:
    """Cheap recognition for the kind registry: PATH is in or is a published v3.0 tree, or a benchmark
    of reference leaves, a phase folder of one, or one leaf (suite.layouts.leaves: by what the leaves
    hold, wherever they sit). A folder holding such benchmarks among other things is parted by the
    registry's walk (suite.kinds.registry.results_under offers each leaf)."""
    real = Path(os.path.realpath(path))
    if not real.is_dir():
        return False
    if is_tree_root(find_root(real)):
        return True
    if _ours(real):
        return False                                  # our own runs' leaves: the training/checkpointing kinds'
    return walk.node_of(real) is not None or _is_node(real)


def _is_node(real: Path) -> bool:
    """`real` is a benchmark folder of reference leaves: its phase folders or its own stamped folders hold them."""
    kids = _names(real, dirs=True)
    if any(k in PHASES and walk.node_of(real / k) == real for k in kids):
        return True
    return any(walk.node_of(real / k) == real for k in [k for k in kids if leafstamp.is_stamp(k)][:4])


def _names(d: Path, dirs: bool = False) -> list[str]:
    """A bounded, link-free listing for recognition (at most 200 names)."""
    out = []
    try:
        with os.scandir(d) as it:
            for e in it:
                if len(out) >= 200:
                    break
                if e.is_symlink():
                    continue
                if (e.is_dir(follow_symlinks=False) if dirs else e.is_file(follow_symlinks=False)):
                    out.append(e.name)
    except OSError:
        return []
    return sorted(out)


def _ours(real: Path) -> bool:
    """A benchmark dir of our own runs (results.json in its leaves, run_set.json above them), which the
    training and checkpointing kinds check with everything our runs record."""
    if (real / "run_set.json").is_file() or (real / "results.json").is_file():
        return True
    for sub in [real, real / "run"]:
        for k in _names(sub, dirs=True)[:3]:
            if leafstamp.is_stamp(k) and (sub / k / "results.json").is_file():
                return True
    return False
