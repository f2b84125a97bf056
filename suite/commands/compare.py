"""`suite compare A B [C ...]`: is B really faster than A? Per figure the ratio, its interval and a
verdict at a stated level; refusals of results that are not like for like; the systems side by side."""

import argparse
from pathlib import Path

from suite.errors import ExitCode, ResultError

MAX_RESULTS = 200          # results in one comparison (a tree of every org's runs has a few dozen)


def level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a confidence level between 0.5 and 0.999, got {text!r}") from None
    if not 0.5 <= value <= 0.999:
        raise argparse.ArgumentTypeError(f"expected a confidence level between 0.5 and 0.999, got {text!r}")
    return value


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="results side by side: ratio B/A, interval and verdict per figure",
                       description="Compare results of one kind (our runs, published results, whole trees): per "
                                   "figure the ratio B/A of the geometric means, a Welch interval on the logarithms "
                                   "(per-run values with 3 or more runs a side, else per-epoch) and a verdict: "
                                   "faster, slower or not significant at --level. Results that differ in kind, workload, "
                                   "accelerator, dataset size, ruleset, division, scale factor (or a kind's own "
                                   "identity: phase, option, index ...) are refused "
                                   "(exit 2) unless --allow-different. See docs/compare.md.")
    p.add_argument("paths", type=Path, nargs="+", metavar="RESULT",
                   help="results directories, published benchmarks or trees; the first is the baseline A")
    p.add_argument("--format", choices=["text", "json", "markdown"], default="text")
    p.add_argument("--out", type=Path, metavar="DIR", help="also write an HTML page with plots (and compare.json) here")
    p.add_argument("--force", action="store_true", help="replace a non-empty --out that is not an earlier page")
    p.add_argument("--allow-different", action="store_true",
                   help="compare results that are not like for like; the differences are listed at the top")
    p.add_argument("--figure", metavar="F", help="the figure the many-results table is sorted by "
                                                 "(default samples_per_second, else the kind's first)")
    p.add_argument("--baseline", choices=["history"], help="history: compare RESULT with its series in the "
                   "history (the entries since the series' last change point, RESULT itself left out) as A")
    p.add_argument("--history", metavar="PATH|URL", help="the store --baseline history reads (docs/history.md)")
    p.add_argument("--level", type=level, default=0.95, help="confidence level of the intervals (default 0.95)")
    p.add_argument("--only", action="append", type=only, metavar="FIELD=VALUE", default=[],
                   help="keep the results whose FIELD (workload, accelerator, dataset_size, ruleset, division, "
                        "scale_factor; phase, option, index ... of the storage kinds) is VALUE, e.g. workload=unet3d "
                        "(repeatable): every org's unet3d in a tree")


def only(text: str) -> tuple[str, str]:
    from suite.compare.comparable import NAMES

    key, sep, value = text.partition("=")
    if not sep or key not in NAMES:
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE with FIELD one of {', '.join(NAMES)}, got {text!r}")
    return key, value


def gather(paths, left_out: list | None = None) -> list:
    """Every result under the paths, in order, through each result's kind (suite.kinds.dispatch);
    `left_out` gets one line per part whose kind has no figures suite compare reads, where the path
    has others that it reads (a path with none is refused)."""
    from suite.kinds import dispatch

    out = []
    for path in paths:
        found = dispatch.parts(path)
        readable = [p for p in found.parts if p.kind.measured is not None]
        if not readable:
            from suite.kinds import registry

            names = ", ".join(k.name for k in [*registry.KINDS, *registry.LAYOUTS] if k.measured is not None)
            raise ResultError(f"{path}: kind: expected a benchmark kind whose figures suite compare reads "
                              f"({names}), got {found.parts[0].kind.name}")
        if left_out is not None:
            left_out += [f"{p.path}: {p.kind.name} (no figures suite compare reads)"
                         for p in found.parts if p.kind.measured is None]
        found = [m for p in readable for m in p.kind.measured(p.path) if m.figures]
        if not found:
            raise ResultError(f"{path}: figures: expected at least one run with numbers, got none")
        out += found
        if len(out) > MAX_RESULTS:
            raise ResultError(f"{path}: results: expected at most {MAX_RESULTS} in one comparison, got more")
    return out


def history_baseline(results: list, args) -> list:
    """The first result's series in the history, as one result A (suite.history.series.baseline)."""
    from suite.history import db, series

    if not results:
        return []
    with db.open_store(args.history, create=False) as store:
        found = series.baseline(store, results[0])
    if found is None:
        raise ResultError(f"{results[0].path}: history: expected earlier entries of its series (same kind, "
                          f"workload, accelerator, dataset, round, division and system) in the history, got none")
    return [found]


def run(args) -> int:
    from suite.compare import analysis, comparable, render

    import sys

    from suite.report.escape import terminal

    left_out: list = []
    results = [r for r in gather(args.paths, left_out) if all(str(r.identity.get(k)) == v for k, v in args.only)]
    for line in left_out:
        print(terminal(f"suite compare: left out {line}"), file=sys.stderr)
    if getattr(args, "baseline", None) == "history":
        results = history_baseline(results, args) + results
    if len(results) < 2:
        raise ResultError(f"{args.paths[0]}: results: expected at least two to compare, got {len(results)}")
    differences = comparable.check(results, args.allow_different)
    names = analysis.figure_names(results)
    if not names:
        raise ResultError(f"{results[1].path}: figures: expected some in common with "
                          f"{comparable.shown(results[0])}, got none")
    if args.figure is not None and args.figure not in names:
        raise ResultError(f"--figure: expected one of {', '.join(names)}, got {args.figure!r}")
    doc = render.build(results, args.level, args.figure, differences)
    if args.out is not None:
        from suite.compare import page

        written = page.write(doc, results, args.out, args.force, [r.path for r in results])
    if args.format == "json":
        print(render.json_text(doc), end="")
    elif args.format == "markdown":
        print(render.markdown(doc), end="")
    else:
        print(render.text(doc))
    if args.out is not None:
        print(terminal(f"suite compare: wrote {len(written)} files to {args.out}: {args.out / 'index.html'}"),
              file=sys.stderr)
    return ExitCode.OK
