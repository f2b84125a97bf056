"""The cache-operation trace (issue 48): `suite run --workload kv-cache --io-trace FILE` writes every
cache operation of every rank, and `suite run --workload kv-cache --replay FILE --cache-dir D` replays
one against a cache dir.

FILE is CSV, one row an operation, COLUMNS: option, trial, rank, time_s (its issue, seconds since the
trial's start), op (read, write, evict_write, delete), key (the KV entry's name), bytes, tier (gpu,
cpu, storage). Rows are grouped by option and trial, and within them each rank's in issue order. Each
rank writes its part (`write_part`, into the run's .suite dir); the run merges the parts into FILE,
written atomically (`merge`).

A replay runs each trial in the file's order, its ranks in parallel (one thread a rank, the rank's
rows one after another in the file's order, as fast as they go: the timing is the replay's own),
each against <D>/rank_<R>/ as the run's rank does: a storage write is the entry's file written whole
and fsync'd (the rank's seeded bytes), a storage read the file read whole after its pages are dropped
(its size must be the row's bytes), a delete the file removed, a GPU or CPU operation a copy of the
entry's bytes in memory; entry files are removed after each trial. It records the operation stream it
made (the same columns, its own times), which `--io-trace` writes: two replays of one trace give the
same operations, keys, bytes and order per rank, whatever the file system (tests/kv_cache/test_kv_trace.py).
"""

from __future__ import annotations

import math
import re
import threading
import time
from pathlib import Path

from suite.errors import SuiteError

COLUMNS = ("option", "trial", "rank", "time_s", "op", "key", "bytes", "tier")
OPS = ("read", "write", "evict_write", "delete")
TIERS = ("gpu", "cpu", "storage")
KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")     # an entry's file name: no '/', no leading '.'
MAX_ROWS = 5_000_000
MAX_BYTES = 512 << 20
MAX_ENTRY_BYTES = 1 << 44
MAX_RANK = 100_000
MAX_REPLAY_RANKS = 1024


def rows_of(ops: list, option: int, trial: int, rank: int) -> list[tuple]:
    """A rank's operations as trace rows, in issue order."""
    return [(option, trial, rank, round(o.issue_s, 6), o.kind, o.key, int(o.nbytes), o.tier)
            for o in sorted(ops, key=lambda o: o.issue_s)]


def csv_text(rows: list[tuple], header: bool = True) -> str:
    out = [",".join(COLUMNS)] if header else []
    out += [f"{r[0]},{r[1]},{r[2]},{r[3]:.6f},{r[4]},{r[5]},{r[6]},{r[7]}" for r in rows]
    return "\n".join(out) + ("\n" if out else "")


def write_part(folder: Path, option: int, trial: int, rank: int, ops: list) -> Path:
    """A rank's part of the trace: <folder>/option_<O>_trial_<T>_rank_<R>.csv (no header)."""
    from suite import files

    path = Path(folder) / f"option_{option}_trial_{trial}_rank_{rank}.csv"
    files.write_atomic(path, csv_text(rows_of(ops, option, trial, rank), header=False))
    return path


PART = re.compile(r"option_([0-9]{1,2})_trial_([0-9]{1,4})_rank_([0-9]{1,6})\.csv")


def merge(folder: Path, out: Path, order: list[tuple[int, int]]) -> int:
    """The parts under `folder` as one trace at `out` (atomic), trials in `order`, ranks ascending:
    the number of operations."""
    from suite import files

    parts: dict = {}
    for p in Path(folder).glob("*.csv"):
        m = PART.fullmatch(p.name)
        if m:
            parts[tuple(int(x) for x in m.groups())] = p
    chunks, n = [",".join(COLUMNS) + "\n"], 0
    for o, t in order:
        for key in sorted(k for k in parts if k[:2] == (o, t)):
            text = parts[key].read_text()
            chunks.append(text)
            n += text.count("\n")
    files.write_atomic(out, "".join(chunks))
    return n


def _int(text: str, at: str, field: str, upper: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise SuiteError(f"{at}: {field}: expected an integer, got {text[:40]!r}") from None
    if not 0 <= v <= upper:
        raise SuiteError(f"{at}: {field}: expected 0 to {upper}, got {v}")
    return v


def parse(text: str, where) -> list[tuple]:
    """A trace's rows; SuiteError (one line: file, line, field, expected, got) at the first bad one."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != ",".join(COLUMNS):
        raise SuiteError(f"{where}: header: expected {','.join(COLUMNS)}, got {(lines[0][:80] if lines else 'an empty file')!r}")
    if len(lines) - 1 > MAX_ROWS:
        raise SuiteError(f"{where}: rows: expected at most {MAX_ROWS}, got {len(lines) - 1}")
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        at = f"{where}: line {n}"
        c = line.split(",")
        if len(c) != len(COLUMNS):
            raise SuiteError(f"{at}: columns: expected {len(COLUMNS)}, got {len(c)}")
        try:
            t = float(c[3])
        except ValueError:
            t = math.nan
        if not math.isfinite(t) or t < 0:
            raise SuiteError(f"{at}: time_s: expected a finite number of seconds, at least 0, got {c[3][:40]!r}")
        if c[4] not in OPS:
            raise SuiteError(f"{at}: op: expected one of {', '.join(OPS)}, got {c[4][:40]!r}")
        if not KEY.fullmatch(c[5]):
            raise SuiteError(f"{at}: key: expected 1-200 of A-Z a-z 0-9 _ . - (not starting with '.'), got {c[5][:40]!r}")
        if c[7] not in TIERS:
            raise SuiteError(f"{at}: tier: expected one of {', '.join(TIERS)}, got {c[7][:40]!r}")
        rows.append((_int(c[0], at, "option", 99), _int(c[1], at, "trial", 9999), _int(c[2], at, "rank", MAX_RANK), t,
                     c[4], c[5], _int(c[6], at, "bytes", MAX_ENTRY_BYTES), c[7]))
    return rows


def load(path: Path) -> list[tuple]:
    from suite import files

    return parse(files.read_text(Path(path), limit=MAX_BYTES, error=SuiteError), path)


def streams(rows: list[tuple]) -> dict:
    """{(option, trial, rank): [(op, key, bytes, tier), ...]}: what two replays must agree on."""
    out: dict = {}
    for r in rows:
        out.setdefault(r[:3], []).append((r[4], r[5], r[6], r[7]))
    return out


def replay_rank(rows: list[tuple], cache_dir: Path, seed: int, t0: float, out: list) -> None:
    """One rank's rows of one trial, in order, against <cache_dir>/rank_<R>/ (see the module's doc)."""
    import numpy as np

    from suite.kv_cache.tier import WRITE_CHUNK, MemoryTier, Pattern, StorageTier, clear_entries
    from suite.storage.backend.select import backend_for

    option, trial, rank = rows[0][:3]
    backend = backend_for("local_fs", Path(cache_dir) / f"rank_{rank}")
    backend.make_prefix("")
    clear_entries(backend)
    stop, pattern = threading.Event(), Pattern(seed)
    tiers = {"storage": StorageTier(backend, pattern, seed, stop), "gpu": MemoryTier("gpu", pattern, seed, stop),
             "cpu": MemoryTier("cpu", pattern, seed, stop)}
    chunk = np.empty(WRITE_CHUNK, dtype=np.uint8)
    try:
        for r in rows:
            op, key, nbytes, tier = r[4], r[5], r[6], tiers[r[7]]
            issued = time.perf_counter() - t0
            if op == "read":
                tier.read(key, nbytes)
            elif op == "delete":
                tier.delete(key)
            else:
                tier.write(key, nbytes, chunk)
            out.append((option, trial, rank, round(issued, 6), op, key, nbytes, r[7]))
    finally:
        clear_entries(backend)


def replay(rows: list[tuple], cache_dir: Path, seed_base: int = 42) -> tuple[list[tuple], float]:
    """Every trial of the trace in its order, its ranks in parallel: (the operations made, seconds)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r[:2], {}).setdefault(r[2], []).append(r)
    made: list = []
    start = time.perf_counter()
    for (o, t), ranks in groups.items():
        if len(ranks) > MAX_REPLAY_RANKS:
            raise SuiteError(f"--replay: option {o} trial {t}: ranks: expected at most {MAX_REPLAY_RANKS} (one thread "
                             f"each), got {len(ranks)}")
        outs = {rank: [] for rank in ranks}
        errors: list = []
        t0 = time.perf_counter()

        def one(rank, mine):
            try:
                replay_rank(mine, cache_dir, seed_base + rank, t0, outs[rank])
            except BaseException as exc:          # noqa: BLE001 - raised below, after the other ranks end
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(rank, mine)) for rank, mine in sorted(ranks.items())]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if errors:
            exc = errors[0]
            if isinstance(exc, OSError):
                raise SuiteError(f"--replay: {exc.filename or cache_dir}: {exc.strerror or exc}") from None
            raise exc
        for rank in sorted(outs):
            made += outs[rank]
    return made, time.perf_counter() - start


def writable(path: str, option: str = "--io-trace") -> Path:
    """FILE for a trace: its folder must exist and FILE must not be a folder (refused up front, exit 2)."""
    p = Path(path)
    if p.is_dir():
        raise SuiteError(f"{option} {path}: expected a file to write, got a directory")
    if not p.parent.is_dir():
        raise SuiteError(f"{option} {path}: expected an existing folder for it, got none at {p.parent}")
    return p


def command(trace_file: str, cache_dir: str | None, io_trace: str | None, seed_base: int = 42) -> int:
    """`suite run --workload kv-cache --replay FILE --cache-dir D [--io-trace OUT]`: the replay, a summary
    line, the stream it made in OUT (atomic). Exit 0; bad input (no --cache-dir, a bad trace) exit 2."""
    from suite import files
    from suite.errors import ExitCode

    if not cache_dir:
        raise SuiteError("--replay: expected --cache-dir D (the cache dir to replay against), got none")
    out = writable(io_trace) if io_trace else None
    rows = load(Path(trace_file))
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    made, seconds = replay(rows, Path(cache_dir), seed_base)
    moved = {op: sum(r[6] for r in made if r[4] == op and r[7] == "storage") for op in ("read", "write", "evict_write")}
    gib = 1 << 30
    print(f"suite run: kv-cache replay of {trace_file}: {len(made)} operations over "
          f"{len({r[:3] for r in made})} rank trial(s) in {seconds:.2f} s against {cache_dir}; storage read "
          f"{moved['read'] / gib:.3f} GiB, written {(moved['write'] + moved['evict_write']) / gib:.3f} GiB")
    if out is not None:
        files.write_atomic(out, csv_text(made))
        print(f"  io trace: {len(made)} cache operations in {out}")
    return ExitCode.OK
