"""`suite submission {init, add, describe, package}`: the parser `suite.cli.build_parser` adds, and
the one command it dispatches to (`run`). Imports of the work itself happen inside the commands.
"""

from __future__ import annotations

from pathlib import Path

from suite.errors import ExitCode
from suite.rules import rulesets


def add_parser(sub) -> None:
    """Add `submission` and its subcommands to the top-level subparsers `sub`."""
    p = sub.add_parser("submission", help="assemble a submission tree: init, add, describe, package",
                       description="Prepare an MLPerf Storage-style submission: init the tree and the system "
                                   "description, add `suite run` results, describe the system, package it.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    actions.required = True

    a = actions.add_parser("init", help="make the ruleset's layout and a system description from this host")
    a.add_argument("dir", type=Path, metavar="DIR")
    a.add_argument("--org", required=True, help="submitting organisation (a directory name)")
    a.add_argument("--division", required=True, choices=["closed", "open"])
    a.add_argument("--system", required=True, metavar="NAME", help="system name (systems/NAME.json)")
    a.add_argument("--ruleset", type=rulesets.argtype(submission=True), default=None, metavar="RULESET",
                   help="a ruleset with a submission layout (rules/*/ruleset.yaml submission:; layout pooled: the "
                        "published layout, timestamped leaves and the code pool <org>/code-<hash8>/); default: the "
                        "base round")
    a.add_argument("--data-dir", type=Path, default=None,
                   help="the benchmark's data dir, whose mount (file system, options) is described; default DIR")

    a = actions.add_parser("add", help="copy `suite run` results dirs and their generation log into the tree")
    a.add_argument("dir", type=Path, metavar="DIR")
    a.add_argument("results", type=Path, nargs="+", metavar="RESULTS")
    a.add_argument("--system", required=True, metavar="NAME")
    a.add_argument("--replace", action="store_true", help="replace existing targets (old copies kept aside)")
    a.add_argument("--allow-code-mismatch", action="store_true",
                   help="add runs whose recorded code (provenance.json) is not the code this add stamps, or that "
                        "recorded none (refused otherwise, exit 1); suite check then finds them")

    a = actions.add_parser("describe", help="render the system description document (Markdown, HTML, PDF)")
    a.add_argument("dir", type=Path, metavar="DIR")
    a.add_argument("--system", required=True, metavar="NAME")
    a.add_argument("--replace", action="store_true", help="replace earlier documents (old copies kept aside)")

    a = actions.add_parser("package", help="check, add the code, write SHA256SUMS and a tarball")
    a.add_argument("dir", type=Path, metavar="DIR")
    a.add_argument("--out", type=Path, default=None, metavar="FILE", help="the tarball; default DIR.tar.gz")
    a.add_argument("--replace", action="store_true", help="replace an existing tarball (old copy kept aside)")


def run(args) -> int:
    """One subcommand; those that change an existing tree hold its lock (one at a time) and turn
    SIGTERM into an interrupt, so a stopped command leaves no temp file and the tree as it was or
    as it is complete (suite.output)."""
    from suite import output
    from suite.report.escape import terminal
    from suite.submission.layout import layout_of, open_tree

    ruleset = (args.ruleset or _init_default()) if args.action == "init" else None
    owner = _layout_kind(layout_of(ruleset)) if ruleset else None
    if owner is not None:                    # a layout a kind owns (pooled: timestamped leaves, code pool)
        with output.interruptible():
            lines = owner.submission.make(args, ruleset, _handover(owner, args))
    elif args.action == "init":
        from suite.submission import create
        with output.interruptible():
            lines = create.init(args.dir, args.org, args.division, args.system,
                                ruleset, args.data_dir)
    else:
        root = open_tree(args.dir).root
        with output.locked(root, f"suite submission {args.action}"), output.interruptible():
            lines = _change(args)
    from suite.terminal import wrap

    for line in lines:          # a long TODO wraps under its own text, within 100 columns (issue 47)
        print("\n".join(wrap(terminal(line), hang=len(line) - len(line.lstrip()) + 9)))
    return ExitCode.OK


def _init_default() -> str:
    """The round `init` makes without --ruleset: the base round (v1.0), as before v3.0 became the
    default for runs (a run without --ruleset on h100/a100 is still a v1.0 run; a v3.0 tree is asked
    for by name)."""
    return rulesets.base().name


def _layout_kind(layout):
    """The layout plugin (or kind) that makes and packages a round's submission layout (ruleset.yaml's
    submission.layout: pooled is suite.published.layout's), through the registry; None for the layout
    suite.submission makes itself."""
    from suite.kinds import registry

    name = "pooled" if layout.pooled else "benchmark_dirs"
    return next((k for k in [*registry.LAYOUTS, *registry.KINDS]
                 if k.submission is not None and k.submission.layout == name), None)


def _handover(owner, args):
    """The check of a leaf the layout's kind does not know itself (kv_cache, vector_database), by the
    kind that recognises it (suite.kinds.tree.handover: {kind, verdict, compliant, summary}; None when
    no kind takes it): `submission add` vets those leaves with it, `package` checks them with it."""
    import argparse

    from suite.kinds import tree

    return tree.handover(owner, argparse.Namespace(**{"format": "text", "ruleset": "auto", **vars(args)}))


def _change(args) -> list[str]:
    from suite.submission.layout import open_tree

    tree = open_tree(args.dir)
    owner = _layout_kind(tree.layout)
    if owner is not None:
        return owner.submission.make(args, tree.ruleset, _handover(owner, args))
    if args.action == "add":
        from suite.submission import add
        return add.add(args.dir, args.results, args.system, args.replace, getattr(args, "allow_code_mismatch", False))
    if args.action == "describe":
        from suite.submission import describe
        return describe.describe(args.dir, args.system, args.replace)
    from suite.submission import package
    return package.package(args.dir, args.out, args.replace, _check_tree, out=lambda text: print(text, end=""))


def _check_tree(root: Path, args):
    """`suite check` on a tree through the one partitioner (suite.kinds.dispatch, as `suite check`)."""
    from suite.kinds import tree

    return tree.check(root, args)

