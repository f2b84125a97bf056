"""`suite history`: every result remembered (suite/history/): list, show, rm, gc, rerun, trend,
regressions, import. The store: --history PATH|URL, else $SUITE_HISTORY, else
$XDG_DATA_HOME/suite/history.sqlite (docs/history.md)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from suite.errors import ExitCode, SuiteError


def _out(text: str, file=None) -> None:
    """A line (or several) of text output, each wrapped at suite.terminal.WIDTH columns."""
    from suite.terminal import fit

    print(fit(text), file=file or sys.stdout)


def _since(text: str) -> str:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text).replace(tzinfo=None).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date or time (ISO 8601, e.g. 2026-11-01), got {text!r}") from None


GUARDED = ("--launcher", "--hostfile")     # a program run, a path read: only as the user says on the rerun


def _id(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 2 ** 62:
        raise argparse.ArgumentTypeError(f"expected an entry id (a positive number from suite history list), got {text!r}")
    return int(text)


def add_parser(sub) -> None:
    p = sub.add_parser("history", help="every result remembered: list, show, trend, regressions, rerun",
                       description="The results store every suite run records itself in (docs/history.md).")
    hs = p.add_subparsers(dest="history_command", metavar="SUBCOMMAND")
    hs.required = True
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--history", metavar="PATH|URL", help="the store (default $SUITE_HISTORY, else "
                        "$XDG_DATA_HOME/suite/history.sqlite); a postgresql:// URL for a shared one")
    filters = argparse.ArgumentParser(add_help=False)
    filters.add_argument("--workload", metavar="W")
    filters.add_argument("--system", metavar="S", help="a system fingerprint prefix or part of its name")
    filters.add_argument("--since", type=_since, metavar="DATE", help="entries from this date or time on (UTC)")
    fmt = argparse.ArgumentParser(add_help=False)
    fmt.add_argument("--format", choices=["text", "json"], default="text")
    x = hs.add_parser("list", parents=[common, filters, fmt], help="the entries, oldest first")
    x.add_argument("--figure", metavar="F", help="the figure shown per entry (default: each entry's headline, "
                                                 "its kind's first figure)")
    x = hs.add_parser("show", parents=[common, fmt], help="one entry in full; flags results changed since")
    x.add_argument("id", type=_id)
    x = hs.add_parser("rm", parents=[common], help="forget entries (their results stay where they are)")
    x.add_argument("ids", type=_id, nargs="+", metavar="ID")
    x = hs.add_parser("gc", parents=[common], help="forget entries whose results directory is gone")
    x.add_argument("--dry-run", action="store_true", help="say which, forget none")
    x = hs.add_parser("rerun", parents=[common], help="run an entry's recorded command line again, into a new "
                                                      "results dir")
    x.add_argument("id", type=_id)
    x.add_argument("--results-dir", metavar="DIR", help="default: the recorded one with -rerun-<UTC time>, or the "
                                                        "kind's default when none was given")
    x.add_argument("--yes", action="store_true", help="run without asking (needed where there is no terminal)")
    for option in GUARDED:
        x.add_argument(option, metavar="PATH", help=f"the {option} to run with, where the recorded command has one "
                                                    f"(a store's word is not enough to run a program or read a path)")
    x = hs.add_parser("trend", parents=[common, filters, fmt], help="a figure over time per system, change "
                                                                     "points marked (--out: an HTML page)")
    x.add_argument("--figure", metavar="F", default=None, help="default samples_per_second, else the first")
    x.add_argument("--out", type=Path, metavar="DIR", help="write the HTML page (plots, tables) here")
    x.add_argument("--force", action="store_true", help="replace a non-empty --out that is not an earlier page")
    x = hs.add_parser("regressions", parents=[common, filters, fmt],
                      help="the change points of every series; exit 1 when one is a regression")
    x.add_argument("--figure", metavar="F", help="one figure (default: each the series has)")
    x = hs.add_parser("import", parents=[common], help="record existing results and published trees (each "
                                                       "benchmark once: idempotent by content hash)")
    x.add_argument("paths", type=Path, nargs="+", metavar="PATH")


def run(args) -> int:
    from suite.history import db

    handler = {"list": _list, "show": _show, "rm": _rm, "gc": _gc, "rerun": rerun, "trend": trend,
               "regressions": regressions, "import": import_}[args.history_command]
    with db.open_store(args.history, create=args.history_command == "import") as store:
        return handler(store, args)


def _list(store, args) -> int:
    from suite.history import render

    entries = store.entries(workload=args.workload, system=args.system, since=args.since,
                            figure=args.figure if args.format == "text" else None,
                            headline=args.format == "text" and args.figure is None)
    if args.format == "json":
        print(render.json_text([e.to_dict() for e in entries]), end="")
    else:
        _out(render.list_text(entries, args.figure))
    return ExitCode.OK


def integrity(entry) -> tuple[str, bool]:
    """(what the results are now, tampered?): unchanged, changed since recorded, or gone. The hash is
    made again by the algorithm the entry was recorded with (suite.history.digest), over its scope."""
    from suite.history import digest

    if not entry.results_path or not entry.content_hash:
        return "not checked (no results recorded)", False
    root = Path(entry.hash_scope.get("root") or entry.results_path)
    try:
        now = digest.check(entry.content_hash, root, entry.hash_scope.get("exclude", ()))
    except digest.HashError as exc:
        return f"TAMPERED: the results can no longer be hashed as recorded: {exc}", True
    if now is None:
        return f"results gone: {entry.results_path} no longer exists (suite history gc forgets it)", False
    if now != entry.content_hash:
        return (f"TAMPERED: the results changed after they were recorded (content hash now {_short(now)}, "
                f"recorded {_short(entry.content_hash)})"), True
    return "unchanged since recorded (content hash matches)", False


def _short(stored: str) -> str:
    algorithm, colon, hexdigest = stored.rpartition(":")
    return f"{algorithm}{colon}{hexdigest[:16]}"


def _show(store, args) -> int:
    from suite.history import render

    entry = store.require(args.id)
    said, tampered = integrity(entry)
    if args.format == "json":
        print(render.json_text({**entry.to_dict(), "integrity": said, "tampered": tampered}), end="")
    else:
        _out(render.show_text(entry, said))
    return ExitCode.FAILED if tampered else ExitCode.OK


def _rm(store, args) -> int:
    for i in args.ids:
        store.require(i)
    n = store.remove(args.ids)
    _out(f"suite history: forgot {n} entr{'y' if n == 1 else 'ies'} ({', '.join(map(str, args.ids))})")
    return ExitCode.OK


def _gc(store, args) -> int:
    gone = [e for e in store.entries(figures=False) if e.results_path and not Path(e.results_path).exists()]
    if not args.dry_run:
        store.remove([e.id for e in gone])
    from suite.report.escape import terminal

    for e in gone:
        _out(terminal(f"{'would forget' if args.dry_run else 'forgot'} #{e.id}: {e.results_path} is gone"))
    _out(f"suite history gc: {len(gone)} entr{'y' if len(gone) == 1 else 'ies'} "
          f"{'would be ' if args.dry_run else ''}forgotten")
    return ExitCode.OK


def rerun(store, args) -> int:
    """The recorded command line again, in the recorded working directory, into a new results dir;
    the new run records itself. Refused: a command with a redacted credential (pass it again by hand),
    a recorded --launcher or --hostfile the user does not repeat on this command line, a working
    directory that is gone, and no terminal to confirm on without --yes."""
    import os
    import shlex

    from suite import redact
    from suite.history import db
    from suite.report.escape import terminal

    entry = store.require(args.id)
    argv = list(entry.command[1:])
    if not argv or argv[0] != "run":
        raise SuiteError(f"history #{entry.id}: command: expected a recorded `suite run`, got "
                         f"{terminal(shlex.join(entry.command) or 'none (an import)')}")
    if redact.has_redacted(argv):
        raise SuiteError(f"history #{entry.id}: command: expected no redacted value, got a credential stored as "
                         f"{redact.REDACTED}: run it again by hand with the credential")
    argv, _old = _take(argv, "--history")           # the rerun records in the store it was read from
    for option in GUARDED:
        argv, recorded = _take(argv, option)
        given = getattr(args, option[2:])
        if recorded is not None and given is None:
            raise SuiteError(f"history #{entry.id}: {option}: expected it on this command line, got "
                             f"{terminal(shlex.quote(recorded))} from the store only (a store's word does not "
                             f"run a program or read a path): repeat it, e.g. --yes {option} {terminal(shlex.quote(recorded))}")
        if given is not None:
            argv += [option, given]
    argv = _new_results_dir(argv, args.results_dir)
    if not entry.cwd or not Path(entry.cwd).is_dir():
        raise SuiteError(f"history #{entry.id}: cwd: expected the recorded working directory, got "
                         f"{terminal(entry.cwd or 'none recorded')} gone: cd where it should run and run the command by hand")
    shown = terminal(shlex.join(["suite", *argv]))
    if not _confirmed(args, f"suite history rerun #{entry.id}: {shown} (in {terminal(entry.cwd)})"):
        return ExitCode.FAILED
    env = dict(os.environ)
    if args.history is not None:                    # by the environment: a URL's password never on an argv
        env["SUITE_HISTORY"] = db.location(args.history)
    return subprocess.run([sys.executable, "-m", "suite", *argv], cwd=entry.cwd, env=env).returncode


def _confirmed(args, said: str) -> bool:
    """--yes, or `y` typed on a terminal after the command is shown; no terminal and no --yes: refused."""
    if args.yes:
        _out(said, file=sys.stderr)
        return True
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise SuiteError(f"history rerun: --yes: expected --yes or a terminal to confirm on, got neither "
                         f"({said.partition(': ')[2]})")
    _out(said, file=sys.stderr)
    print("run it? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().lower()
    if answer in ("y", "yes"):
        return True
    _out("suite history rerun: not run", file=sys.stderr)
    return False


def _take(argv: list[str], option: str) -> tuple[list[str], str | None]:
    """argv without `option VALUE` / `option=VALUE` (every one), and its last value."""
    out, value, skip = [], None, False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == option and i + 1 < len(argv):
            value, skip = argv[i + 1], True
            continue
        if a.startswith(option + "="):
            value = a.partition("=")[2]
            continue
        out.append(a)
    return out, value


def _new_results_dir(argv: list[str], given: str | None) -> list[str]:
    out, old = _take(argv, "--results-dir")
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
        _out(render.series_text(found))
    if args.out is not None:
        from suite.report.escape import terminal

        title = f"suite history trend: {figure}" + (f" of {args.workload}" if args.workload else "")
        written = page.write(found, figure, title, args.out, args.force)
        _out(terminal(f"suite history: wrote {len(written)} files to {args.out}: {args.out / 'index.html'}"),
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
            _out(render.change_line(d))
        worse = sum(d["verdict"] == series.REGRESSION for d in docs)
        _out(f"suite history regressions: {len(docs)} change point(s), {worse} regression(s) in "
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
            _out(terminal(f"{'recorded' if new else 'already there'} #{entry_id}: {entry.kind} {entry.workload or '-'} "
                           f"{entry.results_path}"))
    _out(f"suite history import: {added} recorded, {known} already there")
    return ExitCode.OK
