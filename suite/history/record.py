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
import math
import os
import stat
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from suite import redact
from suite.history import digest
from suite.history.entry import FAILED, INTERRUPTED, OK, Entry, Figure

# system keys that change from run to run on one unchanged system: not part of its fingerprint
VOLATILE = ("free_bytes", "params", "path", "real_path", "total_bytes", "mem_available_bytes", "load")


def now() -> str:
    """UTC, ISO 8601 without a zone (as the results' own start times are written)."""
    return datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")


def content_hash(path: Path, exclude=()) -> str | None:
    """The content hash of the result at `path` (suite.history.digest: Merkle, lengths framed, bounded)."""
    return digest.content_hash(path, exclude)


def scope(path: Path, root: Path, others) -> dict:
    """What the hash of the result at `path` covers: {} for `path` itself; {root, exclude} when `path`
    is one part of a result `root` (a kv_cache option of its leaf): every file of `root` but the other
    parts (`others`), so the leaf's own summary and metadata are covered too."""
    path, root = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    if path == root or root not in path.parents:
        return {}
    exclude = []
    for other in map(lambda p: Path(os.path.realpath(p)), others):
        if other != path and root in other.parents and other not in path.parents:
            exclude.append(other.relative_to(root).as_posix())
    return {"root": str(root), "exclude": sorted(set(exclude))}


def hash_of(path: Path, hash_scope: dict) -> str | None:
    """The content hash of a result as recorded: over its scope's root less its excluded parts."""
    if hash_scope:
        return content_hash(Path(hash_scope["root"]), hash_scope.get("exclude", ()))
    return content_hash(path)


def fingerprint(system: dict) -> str:
    """A short hex digest of the system's description, less what varies on one system (free bytes,
    the run's paths and parameters): the same hosts, storage and versions give the same one."""
    kept = {k: v for k, v in system.items() if k.rsplit(".", 1)[-1] not in VOLATILE}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:16]


def label(system: dict, fallback: str) -> str:
    return str(system.get("host.hostname") or system.get("hostnames") or system.get("system.system_name")
               or fallback)[:120]


def _finite(values) -> tuple[float, ...]:
    """The finite values (a store holds no NaN or infinity: it could not be read back as JSON)."""
    return tuple(v for v in (float(x) for x in values) if math.isfinite(v))


def _figures(measured) -> tuple[Figure, ...]:
    return tuple(Figure(s.name, s.label, bool(s.higher_is_better), _finite(s.per_run),
                        tuple(_finite(e) for e in s.per_epoch)) for s in measured.figures)


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def entries_for(path: Path, base: dict, judge=None) -> list[Entry]:
    """One Entry per benchmark under `path`, each through its kind (suite.kinds.dispatch: a results dir
    of `suite run` holding kv_cache or checkpointing leaves, a mixed tree); one without figures where
    the kind reads none or the result holds no numbers (a failed run). `base`: the fields the caller
    knows (source, status, verdict, command ...); `judge(part path)`: each part's verdict (an import's)."""
    from suite.errors import SuiteError
    from suite.kinds import dispatch, registry

    path = Path(path)
    out: list[Entry] = []
    parts = dispatch.parts(path).parts
    for part in parts:
        if judge is not None:
            base = {**base, "verdict": judge(part.path)}
        measured = []
        if part.kind.measured is not None:
            try:
                measured = list(part.kind.measured(part.path))
            except (SuiteError, OSError, ValueError, RecursionError):
                measured = []       # a run that failed before writing numbers: recorded without figures
        if not measured:
            if not (registry.is_layout(part.kind) and len(parts) > 1):   # a layout's part whose leaves others read
                out.append(_entry(part.path, part.kind.name, {}, {}, (), None, base))
            continue
        others = [m.path for m in measured] + [p.path for p in parts if p is not part]
        for m in measured:
            covers = {} if registry.is_layout(part.kind) else scope(m.path, part.path, others)
            out.append(_entry(m.path, m.kind, redact.mapping(m.system), m.identity, _figures(m), m.when,
                              {**base, "hash_scope": covers}, m.label))
    return out


def _entry(path, kind, system, identity, figures, when, base, shown=None) -> Entry:
    """The Entry of one benchmark: what its result says first, what the caller knew (the run's
    options) where the result says nothing."""
    path = Path(os.path.realpath(path))
    fields = dict(base)
    covers = fields.pop("hash_scope", {})
    known = {k: fields.pop(k, None) for k in ("workload", "accelerator", "accelerators", "ruleset", "division")}
    said = {"workload": identity.get("workload"), "accelerator": identity.get("accelerator"),
            "accelerators": _int(system.get("accelerators")), "ruleset": identity.get("ruleset"),
            "division": identity.get("division")}
    merged = {k: said[k] if said[k] is not None else known[k] for k in said}
    for k in ("workload", "accelerator", "ruleset", "division"):
        merged[k] = None if merged[k] is None else str(merged[k])
    if _runs_on(kind) != "accelerators":   # a kind without accelerators (tpcx-ai, vector database, kv-cache,
        merged["accelerator"] = merged["accelerators"] = None      # checkpointing) records no type, whoever said one
    merged["accelerators"] = _int(merged["accelerators"])
    return Entry(recorded_at=now(), kind=kind, system_fp=fingerprint(system),
                 system_label=label(system, shown or path.name), results_path=str(path),
                 content_hash=hash_of(path, covers), hash_scope=covers, started_at=when, system=system,
                 identity={k: v for k, v in identity.items() if v is not None}, figures=figures,
                 **merged, **fields)


def _runs_on(kind: str) -> str | None:
    """What the kind counts a result's hardware in (Kind.runs_on): its accelerators, processes, or nothing."""
    from suite.errors import SuiteError
    from suite.kinds import registry

    try:
        return registry.get(kind).runs_on
    except SuiteError:
        return None


def import_path(store, path: Path) -> list[tuple[int, bool, Entry]]:
    """Existing results (a results dir, a published tree): each benchmark recorded once, with the verdict
    `suite check` gives its result (verdict_of); (id, added, entry)."""
    path = Path(path)
    _refuse_special(path)
    out = []
    for entry in entries_for(path, {"source": "import", "status": OK, "verdict": "unknown", "command": ()},
                             judge=verdict_of):
        known = _recorded_before(store, entry)
        new_id, added = (known, False) if known is not None else store.add(entry, unique_hash=True)
        out.append((new_id, added, entry))
    return out


def verdict_of(path: Path) -> str:
    """What `suite check PATH` says of a result, through its kind's check as that command asks it
    (suite.kinds.tree.check, the rules' round detected): compliant (exit 0) or non-compliant (exit 1);
    unknown where the check cannot use the result (its one-line error, exit 2)."""
    import argparse

    from suite.errors import SuiteError
    from suite.kinds import tree

    args = argparse.Namespace(path=str(path), ruleset="auto", format="json", output=None)
    try:
        checked = tree.check(Path(path), args)
    except (SuiteError, OSError, RecursionError):
        return "unknown"
    return {0: "compliant", 1: "non-compliant"}.get(int(checked.code), "unknown")


def _recorded_before(store, entry: Entry) -> int | None:
    """The id of an entry of the same results hashed by the first algorithm (recorded by an older suite)
    whose hash they still have: importing them again adds nothing."""
    for entry_id, stored in store.legacy_hashes(entry.results_path):
        if stored == digest.legacy(Path(entry.results_path)):
            return entry_id
    return None


def _refuse_special(path: Path) -> None:
    """A results path is a directory or a regular file: a FIFO, a device or a socket is refused before
    any kind looks at it (none is a result, and reading one could block)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return                              # the registry says "nothing there"
    except OSError as exc:
        raise digest.HashError(f"{path}: expected a results directory or file we can read, got "
                               f"{exc.strerror or exc}") from None
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise digest.HashError(f"{path}: path: expected a results directory or a regular file, got "
                               f"{digest.kind_of(mode)}")


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
                "accelerator": accelerator_of(args),
                "accelerators": getattr(args, "accelerators", None), "ruleset": getattr(args, "ruleset", None),
                "division": getattr(args, "division", None)}
        entries = entries_for(path, base)
        with db.open_store(getattr(args, "history", None)) as store:
            for entry in entries:
                store.add(entry)


def accelerator_of(args) -> str | None:
    """--accelerator-type where the workload has accelerator types (its file's `accelerators:` block);
    None for one without (tpcx-ai, vector database, kv-cache, checkpointing), whose --accelerator-type
    is only the option's default."""
    from suite.storage import workloads

    given, name = getattr(args, "accelerator_type", None), getattr(args, "workload", None)
    if given is None or name is None:
        return given
    found = workloads.paths().get(name)
    return given if found is not None and workloads.accelerator_types(found) else None


def status_of(exc: BaseException | None) -> str:
    if exc is None:
        return OK
    if isinstance(exc, KeyboardInterrupt) or "interrupted" in str(exc):
        return INTERRUPTED
    return FAILED
