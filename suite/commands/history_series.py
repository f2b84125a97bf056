"""The `suite history` subcommands beyond the store's own (suite.commands.history): rerun, trend,
regressions and import."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from suite.errors import ExitCode, SuiteError


def rerun(store, args) -> int:
    """The recorded command line again, in the recorded working directory, into a new results dir;
    the new run records itself. A command line with a redacted credential is refused (pass it again)."""
    from suite.commands.history import _get
    from suite.history import redact
    from suite.report.escape import terminal

    entry = _get(store, args.id)
    argv = list(entry.command[1:])
    if not argv or argv[0] != "run":
        raise SuiteError(f"history #{entry.id}: command: expected a recorded `suite run`, got "
                         f"{terminal(' '.join(entry.command) or 'none (an import)')}")
    if redact.has_redacted(argv):
        raise SuiteError(f"history #{entry.id}: command: expected no redacted value, got a credential stored as "
                         f"{redact.REDACTED}: run it again by hand with the credential")
    argv = _new_results_dir(argv, args.results_dir)
    cwd = entry.cwd if entry.cwd and Path(entry.cwd).is_dir() else None
    if args.history and "--history" not in argv:
        argv += ["--history", args.history]
    print(terminal(f"suite history rerun #{entry.id}: suite {' '.join(argv)}" + (f" (in {cwd})" if cwd else "")),
          file=sys.stderr)
    return subprocess.run([sys.executable, "-m", "suite", *argv], cwd=cwd).returncode


def _new_results_dir(argv: list[str], given: str | None) -> list[str]:
    out, old = [], None
    skip = False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == "--results-dir" and i + 1 < len(argv):
            old, skip = argv[i + 1], True
            continue
        if a.startswith("--results-dir="):
            old = a.partition("=")[2]
            continue
        out.append(a)
    new = given or (f"{old.rstrip('/')}-rerun-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}" if old else None)
    return out + (["--results-dir", new] if new else [])


def _series(store, args, figure: str | None):
    from suite.history import series

    entries = store.entries(workload=args.workload, system=args.system, since=args.since, figure=figure)
    figure = figure or series.default_figure(entries)
    if figure is None:
        raise SuiteError(f"history: figure: expected entries with figures{_filters(args)}, got none")
    return series.build(entries, figure), figure


def _filters(args) -> str:
    said = [f"{k} {getattr(args, k)}" for k in ("workload", "system", "since") if getattr(args, k, None)]
    return f" for {', '.join(said)}" if said else ""


def trend(store, args) -> int:
    from suite.history import page, render

    found, figure = _series(store, args, args.figure)
    if not found:
        raise SuiteError(f"history: --figure: expected entries with {figure}{_filters(args)}, got none")
    if args.format == "json":
        print(render.json_text({"figure": figure, "series": [
            {"series": s.name(), "points": [{"id": p.entry.id, "when": p.entry.when(), "value": p.value,
                                             "lowest_run": p.low, "highest_run": p.high} for p in s.points],
             "changes": [render.change_doc(s, c) for c in s.changes]} for s in found]}), end="")
    else:
        print(render.series_text(found))
    if args.out is not None:
        from suite.report.escape import terminal

        title = f"suite history trend: {figure}" + (f" of {args.workload}" if args.workload else "")
        written = page.write(found, figure, title, args.out, args.force)
        print(terminal(f"suite history: wrote {len(written)} files to {args.out}: {args.out / 'index.html'}"),
              file=sys.stderr)
    return ExitCode.OK


def regressions(store, args) -> int:
    """Every change point of every series (each figure, or --figure); exit 1 when one is a regression."""
    from suite.history import render, series

    entries = store.entries(workload=args.workload, system=args.system, since=args.since, figure=args.figure)
    names = [args.figure] if args.figure else sorted({f.name for e in entries for f in e.figures})
    docs = [render.change_doc(s, c) for name in names for s in series.build(entries, name) for c in s.changes]
    if args.format == "json":
        print(render.json_text(docs), end="")
    else:
        for d in docs:
            print(render.change_line(d))
        worse = sum(d["verdict"] == series.REGRESSION for d in docs)
        print(f"suite history regressions: {len(docs)} change point(s), {worse} regression(s) in "
              f"{len(entries)} entries")
    return ExitCode.FAILED if any(d["verdict"] == series.REGRESSION for d in docs) else ExitCode.OK


def import_(store, args) -> int:
    from suite.history import record
    from suite.report.escape import terminal

    added = known = 0
    for path in args.paths:
        for entry_id, new, entry in record.import_path(store, path):
            added += new
            known += not new
            print(terminal(f"{'recorded' if new else 'already there'} #{entry_id}: {entry.kind} {entry.workload or '-'} "
                           f"{entry.results_path}"))
    print(f"suite history import: {added} recorded, {known} already there")
    return ExitCode.OK
