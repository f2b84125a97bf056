"""The v3.0 pooled layout as a layout plugin (suite.layouts.layout.Layout; registered in
suite.kinds.registry.LAYOUT_MODULES, never as a kind): published MLPerf Storage v3.0 trees
(mlcommons/storage_results_v3.0's layout: `closed|open/<Org>/results/<system>/<benchmark>/...`,
`<Org>/systems/`, the code pool `<Org>/code-<hash8>/`) and the trees `suite submission` makes in it.
Its own rules (rules/<round>/<tree_rules>/) are checked by suite.published.check, the figures by
suite.layouts.solution, shown by suite.published.page. PATH may be the tree, an organisation, a system,
a benchmark or one leaf; every benchmark node goes to its kind (training and checkpointing nodes to
their `reference_judge`, kv_cache and vector_database folders to the kind that claims them:
suite.kinds.tree.handover).
"""

from __future__ import annotations

from pathlib import Path

from suite.errors import ExitCode
from suite.benchmark import Checked, Claim, Submission
from suite.layouts.layout import Layout

NAME = "mlperf-v3-tree"
TREE_DIRS = ("closed", "open")     # what the tree's own walk reads (with its code pools)


def claims(path: Path) -> int:
    """TREE for the tree, a division or an organisation of one (the layout's whatever kinds lie below:
    its system descriptions and code pool are checked even where one kind's results are all there is);
    WITHIN for a system, benchmark or leaf in it, or reference leaves outside any tree (a kind's own
    claim outranks it: a kv_cache or vector_database folder is its kind's, as anywhere)."""
    import os

    from suite.layouts import pooled as v3tree

    p = Path(path)
    if p.is_dir() and ((p / "results.json").is_file() or (p / "run_set.json").is_file()):
        return Claim.NONE                     # our own run's results: its kind's
    if not v3tree.looks_v3(p):
        return Claim.NONE
    if p.is_dir():
        root = Path(os.path.realpath(v3tree.read_root(p)))
        try:
            rel = Path(os.path.realpath(p)).relative_to(root).parts
        except ValueError:
            rel = None
        if rel is not None and (not rel or (rel[0] in TREE_DIRS and len(rel) <= 2)):
            return Claim.TREE
    return Claim.WITHIN


def _result(path: Path, args=None):
    from suite.published import check as v3check

    return v3check.check(Path(path), delegate=getattr(args, "for_result", None),
                         ruleset_name=getattr(args, "ruleset", None))


def check(path: Path, args) -> Checked:
    from suite.published import page as v3tree_text

    res = _result(path, args)
    out = v3tree_text.check_json(res) if getattr(args, "format", "text") == "json" else v3tree_text.check_text(res)
    return Checked(out, v3tree_text.summary_line(res), ExitCode.OK if res.compliant else ExitCode.FAILED, res.verdict)


def defers_check(path: Path, args) -> bool:
    """Another round asked for (one whose rules hold no published-tree folder: --ruleset v1.0, v2.0): the
    catch-all kind's checker holds the tree to it."""
    from suite.published import check as v3check

    return getattr(args, "ruleset", None) not in (None, "auto", *v3check.tree_rounds())


def check_reads(path: Path) -> list[Path]:
    """The tree around PATH: a leaf's check reads its system's YAML, the code pool and its siblings."""
    from suite.layouts import pooled as v3tree

    return [v3tree.read_root(path)]


def metrics(path: Path, form: str) -> int:
    from suite.published import page as v3tree_text

    res = _result(path)
    print(v3tree_text.metrics_json(res) if form == "json" else v3tree_text.metrics_text(res), end="")
    return ExitCode.OK


def report_page(path: Path, args):
    """The page of the tree; `args.for_rows` (the registry's, given by suite report) gives the results
    tables' rows of each folder another kind checked."""
    from suite.published import page as v3tree_text

    res = _result(path, args)
    rows_of = getattr(args, "for_rows", None)
    others = [(d["path"], rows_of(Path(d["path"]))) for d in res.delegated] if rows_of else []
    return v3tree_text.page(res, others)


def measured(path: Path) -> list:
    """Each training and checkpointing benchmark of the tree under PATH (suite.published.compared)."""
    from suite.published import compared

    return compared.measured(path)


def submission(args, ruleset: str, delegate=None) -> list[str]:
    """`suite submission ACTION` on a tree in the published v3.0 layout (timestamped leaves, the code
    pool): init and add by suite.published.submission, describe and package by suite.published.package.
    `delegate(dir)`: the check of a kv_cache / vector_database leaf by its own kind (suite.kinds.tree.handover)."""
    from suite.published import package as v3package
    from suite.published import submission as v3

    if args.action == "init":
        return v3.init(args.dir, args.org, args.division, args.system, args.data_dir, ruleset)
    if args.action == "add":
        return v3.add(args.dir, args.results, args.system, args.replace, delegate,
                      allow_code=getattr(args, "allow_code_mismatch", False))
    if args.action == "describe":
        return v3package.describe(args.dir, args.system, args.replace)
    return v3package.package(args.dir, args.out, args.replace, out=lambda text: print(text, end=""),
                             delegate=delegate)


LAYOUT = Layout(
    name=NAME,
    claims=claims,
    check=check,
    metrics=metrics,
    report_page=report_page,
    defers_check=defers_check,
    measured=measured,
    check_reads=check_reads,
    submission=Submission(make=submission, layout="pooled"))
