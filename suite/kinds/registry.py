"""The benchmark kinds and the layouts: the built-in ones, and any registered (a new benchmark, a test's
throwaway).

A workload's kind is its file's `benchmark:` key. A result's owner is the layout or kind whose claim on
it is the most specific (suite.benchmark.Claim; `owner_of`), whatever the order they were registered in:
a layout's tree, division or organisation is the layout's; a kind's own result files are that kind's;
inside a layout's tree what no kind claims is the layout's; training claims any directory (the
catch-all). Two equal claims are a one-line error, exit 2.
"""

from __future__ import annotations

import importlib
import sys
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from suite import files, memo
from suite.benchmark import Claim, Kind, strength
from suite.engines import registry as engines
from suite.errors import ResultError, WorkloadError, expected_got
from suite.layouts import marks, pooled
from suite.layouts.layout import Layout
from suite.layouts.ours import nodes
from suite.layouts.ours.nodes import Found
from suite.rules import vocabulary
from suite.storage import workloads

# The kinds, one module a line (the order decides nothing: claims do). A new kind is its folder
# suite/<kind>/ (kind.py's KIND; beside it, optional: facts.yaml, the facts its rules name; engines.py,
# ENGINES, the engines it drives) and one line here.
KIND_MODULES = (
    "suite.training.kind",
    "suite.checkpointing.kind",
    "suite.tpcx_ai.kind",
    "suite.vector_database.kind",
    "suite.kv_cache.kind",
)

# The layouts, one module a line (its LAYOUT: suite.layouts.layout.Layout; the order decides nothing:
# claims do): the published v3.0 pooled tree; the v0.5-v2.0 benchmark dirs (their tree, divisions and
# organisations; readers, tree-level findings and its check in suite/layouts/benchdirs/: it walks the tree
# once and hands each benchmark node to the kind that claims it); our own `suite run` results dirs (a
# results dir's root and the folders in it above the results: suite/layouts/ours/), which holds no check of
# its own: its nodes are checked by the kinds claiming them, wherever they sit (results_under finds them).
LAYOUT_MODULES = (
    "suite.published.layout",
    "suite.layouts.benchdirs.layout",
    "suite.layouts.ours.layout",
)

LAYOUTS: list[Layout] = [importlib.import_module(m).LAYOUT for m in LAYOUT_MODULES]


def folder(kind: Kind) -> Path | None:
    """The kind's folder: where the module that defines its callables lies (suite/<kind>/ for kind.py's
    KIND; a registered kind's own folder); None where that module has no file."""
    module = sys.modules.get(getattr(kind.run, "__module__", None) or "")
    where = getattr(module, "__file__", None)
    return Path(where).resolve().parent if where else None


def facts_file(kind: Kind) -> Path | None:
    """The kind's facts.yaml beside its kind module (suite.rules.vocabulary), None where it has none."""
    where = folder(kind)
    return where / vocabulary.FILE if where is not None and (where / vocabulary.FILE).is_file() else None


def kind_engines(kind: Kind) -> tuple:
    """The engines the kind drives: ENGINES of the engines.py beside its kind module; () where none."""
    where, module = folder(kind), getattr(kind.run, "__module__", None) or ""
    package = module.rpartition(".")[0]
    if where is None or not package or not (where / "engines.py").is_file():
        return ()
    return tuple(importlib.import_module(f"{package}.engines").ENGINES)


def _hook_up(kind: Kind) -> Kind:
    """What registering a kind tells the layers below (undone by unregister)."""
    if kind.workloads.dir is not None:               # a kind's own workload files, beside workloads/
        workloads.add_dir(kind.workloads.dir)
    if kind.reference_judge is not None:            # the layouts hand it its nodes of reference leaves
        pooled.JUDGES[kind.name] = kind.reference_judge
    pooled.KIND_FOLDERS.add(kind.name)              # a folder named for it marks a pooled tree
    marks.add(kind.name, kind.result_files)         # its result files mark a result (not a results dir's root)
    if (facts := facts_file(kind)) is not None:     # the facts its rules may name join the vocabulary
        vocabulary.add(facts)
    for eng in kind_engines(kind):                  # `suite engine install/list` and --engine know its engines
        engines.add(eng)
    return kind


KINDS: list[Kind] = [_hook_up(importlib.import_module(m).KIND) for m in KIND_MODULES]


def _marked_kind(d: Path, names: set) -> str | None:
    """The kind a directory holding `names` is a result of, by their result files, as results_under
    reads it without asking the layouts: a kind's own files outrank the catch-all's run output (a
    kv_cache leaf's summary.json); several kinds' own files: their names joined by "+"."""
    marking = [k for k in KINDS if k.result_files and marks.marks(names, k.result_files)]
    own = [k for k in marking if not catch_all(k, d)]
    return "+".join(sorted(k.name for k in (own or marking[:1]))) or None


marks.READER[:] = [_marked_kind]


def register(kind: Kind) -> None:
    """Add a kind (its workloads.dir files become workloads too). Its name must be new (no kind or
    layout has it)."""
    if any(k.name == kind.name for k in [*KINDS, *LAYOUTS]):
        raise ValueError(f"benchmark kind {kind.name!r} is registered already")
    KINDS.append(_hook_up(kind))


def unregister(name: str) -> None:
    kind = get(name)
    KINDS.remove(kind)
    pooled.JUDGES.pop(kind.name, None)
    pooled.KIND_FOLDERS.discard(kind.name)
    marks.remove(kind.name)
    if kind.workloads.dir is not None:
        workloads.remove_dir(kind.workloads.dir)
    if (facts := facts_file(kind)) is not None:
        vocabulary.remove(facts)
    for eng in kind_engines(kind):
        engines.remove(eng.name)


def register_layout(layout: Layout) -> None:
    """Add a layout plugin (a test's, a private one). Its name must be new."""
    if any(x.name == layout.name for x in [*KINDS, *LAYOUTS]):
        raise ValueError(f"layout {layout.name!r} is registered already")
    LAYOUTS.append(layout)


def unregister_layout(name: str) -> None:
    LAYOUTS.remove(owner(name))


@contextmanager
def aside(layout: Layout):
    """`layout` left out of every claim while inside (a layout whose nodes' kinds check its tree: the
    partition of PATH as if it were not there)."""
    at = LAYOUTS.index(layout)
    LAYOUTS.remove(layout)
    try:
        yield
    finally:
        LAYOUTS.insert(at, layout)


def get(name: str) -> Kind:
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise WorkloadError(f"benchmark: expected one of {', '.join(k.name for k in KINDS)}, got {name!r}")


def for_workload(name: str) -> Kind:
    """The kind of workload `name`: its file's `benchmark:` (the file checked against the kind's schema)."""
    found = workloads.paths()
    if name not in found:
        raise WorkloadError(f"workload {name!r}: expected one of {', '.join(sorted(found))}")
    benchmark = workloads.benchmark_of(found[name])
    for kind in KINDS:
        if kind.name == benchmark:
            if kind.workloads.schema is not None:
                path = found[name]
                _validated(str(path), path.stat().st_mtime_ns, kind.workloads.schema, name)
            return kind
    raise WorkloadError(f"{found[name]}: benchmark: expected one of {', '.join(k.name for k in KINDS)}, "
                        f"got {benchmark!r}")


@lru_cache(maxsize=64)
def _validated(path: str, mtime_ns: int, schema: str, name: str) -> None:
    """The workload file checked against its kind's schema (which pins `benchmark:`), once per change."""
    doc = files.load_yaml(Path(path), schema=schema, error=WorkloadError)
    if doc["name"] != name:
        raise WorkloadError(f"{path}: name: expected {name!r}, got {doc['name']!r}")


def owner(name: str) -> Kind | Layout:
    """The kind or layout named `name` (a part's owner)."""
    found = next((x for x in LAYOUTS if x.name == name), None)
    return found if found is not None else get(name)


def is_layout(owner) -> bool:
    return isinstance(owner, Layout)


def claim(owner, path: Path) -> int:
    """How specifically `owner` (a kind or a layout) claims `path` (suite.benchmark.Claim); worked out
    once per command that holds suite.memo (the partitioner asks again with a layout set aside)."""
    return memo.kept(("registry.claim", owner.name, id(owner), str(path)), lambda: strength(owner.recognises(path)))


def catch_all(kind, path: Path) -> bool:
    """`kind` takes `path` only as what no other claims (training for any directory)."""
    return not is_layout(kind) and claim(kind, path) == Claim.ANY


def owner_of(path: Path, among=None, least: int = Claim.ANY):
    """The layout or kind whose claim on `path` is the most specific (at least `least`), among the
    layouts and kinds (or `among`); None where none claims it. Two equal best claims: a one-line error,
    exit 2; the order of registration decides nothing."""
    claims = [(claim(o, path), o) for o in (among if among is not None else [*LAYOUTS, *KINDS])]
    best = max((c for c, _ in claims), default=Claim.NONE)
    if best < least:
        return None
    tied = sorted(o.name for c, o in claims if c == best)
    if len(tied) > 1:
        raise ResultError(expected_got(path, "(claim)", "one layout or kind claiming it most specifically",
                                       f"{' and '.join(tied)} claim it alike"))
    return next(o for c, o in claims if c == best)


def for_result(path: Path) -> Kind | Layout:
    """The kind or layout whose results `path` (a file or directory) holds (`owner_of`); a path holding
    several kinds' results is parted by suite.kinds.dispatch (check, metrics, report, compare, history)."""
    path = Path(path)
    if not path.exists():
        raise ResultError(expected_got(path, "path", "an existing file or directory", "nothing there"))
    found = owner_of(path)
    if found is None:
        raise ResultError(expected_got(path, "path", "the results of a benchmark kind", "none recognised"))
    return found


def workload_names(which=lambda kind: True) -> list[str]:
    """The workloads whose kind satisfies `which` (e.g. has a datasize, or sweeps)."""
    wanted = {k.name for k in KINDS if which(k)}
    return sorted(name for name, path in workloads.paths().items() if workloads.benchmark_of(path) in wanted)


def described(kind: Kind) -> str:
    """How an error names the kind: `--workload NAME` for a kind of one workload, else
    `a <kind> workload (its names, or how the kind shows them)`."""
    names = workload_names(lambda k: k is kind)
    if len(names) == 1:
        return f"--workload {names[0]}"
    return f"a {kind.name} workload ({kind.workloads.shown or ', '.join(names)})"


def results_under(path: Path) -> Found:
    """Every result under `path`, by owner: the one walk (suite.layouts.ours.nodes.results_under) asking
    this registry's kinds and layouts; the partitioner parts what it finds (suite.kinds.dispatch)."""
    return nodes.results_under(path, sys.modules[__name__])


def reads_around(path: Path) -> list[Path]:
    """What a check (or report) of `path` reads beyond it, by the kind that recognises it: the tree
    around a leaf (a published leaf: its tree's systems/, code pool and siblings; a checkpointing
    run-<k>: its phase). An output is refused there too (suite.output.outside)."""
    try:
        kind = for_result(path)
    except ResultError:                   # no kind's: the command's own refusal says so
        return []
    return list(kind.check_reads(path)) if kind.check_reads is not None else []
