"""What is recorded of a result: one Entry per benchmark under a path, through the path's kind (the
registry: `measured(path)` gives the figures and the system as `suite compare` reads them), with a
content hash of the benchmark's files and a fingerprint of its system.

`after_run` is the hook of `suite run`: whatever the run's end (a result, a failure, an interrupt),
its results dir is recorded with the command line (credentials redacted), and a failure of the
history is one warning line, never the run's failure. `import_path` records existing results and
published trees, idempotent by content hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from suite.history import redact
from suite.history.entry import FAILED, INTERRUPTED, OK, Entry, Figure

MAX_HASHED_FILES = 200_000          # a benchmark's files hashed (a hostile tree could hold millions)
SKIPPED = (".suite-claim",)         # the harness's claim file: there while a run writes, gone after
# system keys that change from run to run on one unchanged system: not part of its fingerprint
VOLATILE = ("free_bytes", "params", "path", "real_path", "total_bytes", "mem_available_bytes", "load")


def now() -> str:
    """UTC, ISO 8601 without a zone (as the results' own start times are written)."""
    return datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")


def content_hash(path: Path) -> str | None:
    """sha256 over a benchmark's files (relative names and bytes, sorted; links hashed as their target
    text, never followed); None when the path is gone."""
    path = Path(path)
    if not path.exists():
        return None
    h = hashlib.sha256()
    if path.is_file():
        _file(h, path, path.name)
        return h.hexdigest()
    count = 0
    for root, dirs, names in os.walk(path, followlinks=False):
        dirs.sort()
        for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            if name in SKIPPED:
                continue
            count += 1
            if count > MAX_HASHED_FILES:
                h.update(b"...more files than hashed")
                return h.hexdigest()
            full = Path(root) / name
            _file(h, full, full.relative_to(path).as_posix())
    return h.hexdigest()


def _file(h, full: Path, rel: str) -> None:
    h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
    if full.is_symlink():
        h.update(b"link:" + os.readlink(full).encode("utf-8", "surrogateescape") + b"\0")
        return
    try:
        with open(full, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        h.update(f"unreadable:{exc.errno}".encode())
    h.update(b"\0")


def fingerprint(system: dict) -> str:
    """A short hex digest of the system's description, less what varies on one system (free bytes,
    the run's paths and parameters): the same hosts, storage and versions give the same one."""
    kept = {k: v for k, v in system.items() if k.rsplit(".", 1)[-1] not in VOLATILE}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:16]


def label(system: dict, fallback: str) -> str:
    return str(system.get("host.hostname") or system.get("hostnames") or system.get("system.system_name")
               or fallback)[:120]


def _figures(measured) -> tuple[Figure, ...]:
    return tuple(Figure(s.name, s.label, bool(s.higher_is_better), tuple(float(x) for x in s.per_run),
                        tuple(tuple(float(x) for x in e) for e in s.per_epoch)) for s in measured.figures)


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def entries_for(path: Path, base: dict) -> list[Entry]:
    """One Entry per benchmark under `path`, each through its kind (suite.kinds.dispatch: a results dir
    of `suite run` holding kv_cache or checkpointing leaves, a mixed tree); one without figures where
    the kind reads none or the result holds no numbers (a failed run). `base`: the fields the caller
    knows (source, status, verdict, command ...)."""
    from suite.errors import SuiteError
    from suite.kinds import dispatch

    path = Path(path)
    out: list[Entry] = []
    parts = dispatch.parts(path).parts
    for part in parts:
        measured = []
        if part.kind.measured is not None:
            try:
                measured = list(part.kind.measured(part.path))
            except (SuiteError, OSError, ValueError, RecursionError):
                measured = []       # a run that failed before writing numbers: recorded without figures
        if not measured:
            if not (part.kind.whole_tree and len(parts) > 1):     # a tree kind's part whose leaves others read
                out.append(_entry(part.path, part.kind.name, {}, {}, (), None, base))
            continue
        out += [_entry(m.path, m.kind, redact.mapping(m.system), m.identity, _figures(m), m.when, base, m.label)
                for m in measured]
    return out


def _entry(path, kind, system, identity, figures, when, base, shown=None) -> Entry:
    """The Entry of one benchmark: what its result says first, what the caller knew (the run's
    options) where the result says nothing."""
    path = Path(os.path.realpath(path))
    fields = dict(base)
    known = {k: fields.pop(k, None) for k in ("workload", "accelerator", "accelerators", "ruleset", "division")}
    said = {"workload": identity.get("workload"), "accelerator": identity.get("accelerator"),
            "accelerators": _int(system.get("accelerators")), "ruleset": identity.get("ruleset"),
            "division": identity.get("division")}
    merged = {k: said[k] if said[k] is not None else known[k] for k in said}
    for k in ("workload", "accelerator", "ruleset", "division"):
        merged[k] = None if merged[k] is None else str(merged[k])
    merged["accelerators"] = _int(merged["accelerators"])
    return Entry(recorded_at=now(), kind=kind, system_fp=fingerprint(system),
                 system_label=label(system, shown or path.name), results_path=str(path),
                 content_hash=content_hash(path), started_at=when, system=system,
                 identity={k: v for k, v in identity.items() if v is not None}, figures=figures,
                 **merged, **fields)


def import_path(store, path: Path) -> list[tuple[int, bool, Entry]]:
    """Existing results (a results dir, a published tree): each benchmark recorded once; (id, added, entry)."""
    from suite.kinds import registry

    path = Path(path)
    kind = registry.for_result(path)
    verdict_of = getattr(kind, "verdict", None)      # a kind may say a result's verdict cheaply
    out = []
    for entry in entries_for(path, {"source": "import", "status": OK, "verdict": "unknown", "command": ()}):
        if verdict_of is not None:
            entry = _with(entry, verdict=str(verdict_of(Path(entry.results_path))))
        new_id, added = store.add(entry, unique_hash=True)
        out.append((new_id, added, entry))
    return out


def _with(entry: Entry, **changes) -> Entry:
    from dataclasses import replace

    return replace(entry, **changes)


# ---------------------------------------------------------------------------------- the run's hook

class RunRecord:
    """Begun before a kind's run (the time, the results dirs already claimed in this process);
    `finish` records what the run left."""

    def __init__(self, args):
        from suite.harness import resultsdir

        self.args = args
        self.started = time.monotonic()
        self.claimed_before = len(resultsdir.CLAIMED)

    def results_dir(self) -> Path | None:
        from suite.harness import resultsdir

        new = resultsdir.CLAIMED[self.claimed_before:]
        if new:
            return Path(new[-1])
        given = getattr(self.args, "results_dir", None)
        return Path(given) if given and Path(given).is_dir() and any(Path(given).iterdir()) else None

    def finish(self, code: int | None, status: str) -> None:
        """Record the run; a failure of the history is one warning line on stderr."""
        from suite.errors import SuiteError

        try:
            path = self.results_dir()
            if path is None or not path.exists():
                return                         # refused before a results dir was claimed: no run to remember
            self._record(path, code, status)
        except (SuiteError, OSError) as exc:
            from suite.report.escape import terminal

            print(terminal(f"suite run: warning: not recorded in the history: {exc}"), file=sys.stderr)

    def _record(self, path: Path, code, status) -> None:
        from suite.history import db

        args = self.args
        verdict = {0: "compliant", 1: "non-compliant"}.get(code, "failed") if status == OK else status
        base = {"source": "run", "status": status, "verdict": verdict, "exit_code": code,
                "command": redact.command(["suite", *getattr(args, "argv", sys.argv[1:])]), "cwd": os.getcwd(),
                "duration_s": round(time.monotonic() - self.started, 3), "workload": getattr(args, "workload", None),
                "accelerator": getattr(args, "accelerator_type", None),
                "accelerators": getattr(args, "accelerators", None), "ruleset": getattr(args, "ruleset", None),
                "division": getattr(args, "division", None)}
        entries = entries_for(path, base)
        with db.open_store(getattr(args, "history", None)) as store:
            for entry in entries:
                store.add(entry)


def status_of(exc: BaseException | None) -> str:
    if exc is None:
        return OK
    if isinstance(exc, KeyboardInterrupt) or "interrupted" in str(exc):
        return INTERRUPTED
    return FAILED
