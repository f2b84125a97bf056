"""The per-request records of a rank's storage tier and the P95 split they give (issue 48).

A storage request is one operation on the storage tier (a prefill write, a read, an eviction write
into storage, an eviction delete). For each the rank records, in
option_<O>/trial_<T>/rank_<R>/kvcache_requests_<ts>.csv (one row a request, in issue order, at most
MAX_RECORDS of a trial):

- issue_s: when it was issued, seconds since the trial's start;
- queue_s: how long it waited before it was issued, from the moment it was due (a prefill write: from
  before it waited for an allocation slot, then the evictions it had to make first; an eviction: from
  the start of the eviction; a read: the cache's lock);
- device_s: its own service time, from its issue to its completion (the system calls, plus for a
  write the stamping of each 4 KiB block between them);
- total_s = queue_s + device_s (each rounded to the microsecond: they add up within TOLERANCE_S).

The split (`split`) is three percentiles of three series over the same requests: P95 of total_s,
of device_s and of queue_s. Percentiles do not add: P95(total) is not P95(device) + P95(queue). What
adds is each request's own decomposition and the sums: `device_share` = sum(device_s) / sum(total_s).
"""

from __future__ import annotations

import math
from pathlib import Path

from suite.errors import ResultError

COLUMNS = ("seq", "issue_s", "op", "bytes", "queue_s", "device_s", "total_s")
OPS = ("read", "write", "evict_write", "delete")
MAX_RECORDS = 100_000          # rows per rank and trial (about 6 MB); the split is over the rows kept
MAX_BYTES = 32 << 20           # a records file is read up to 32 MiB
MAX_ENTRY_BYTES = 1 << 44      # 16 TiB: no KV entry is larger
TOLERANCE_S = 2e-6             # total_s against queue_s + device_s (microsecond rounding of three values)
PREFIX, SUFFIX = "kvcache_requests_", ".csv"


def rows_of(ops: list) -> tuple[list[tuple], int]:
    """(the records of the storage tier's operations, in issue order, at most MAX_RECORDS; how many
    there were). Each row as COLUMNS, times rounded to the microsecond."""
    storage = sorted((o for o in ops if o.tier == "storage"), key=lambda o: o.issue_s)
    rows = []
    for seq, o in enumerate(storage[:MAX_RECORDS]):
        queue, device = round(o.queue_s, 6), round(o.total_s, 6)
        rows.append((seq, round(o.issue_s, 6), o.kind, int(o.nbytes), queue, device, round(queue + device, 6)))
    return rows, len(storage)


def csv_text(rows: list[tuple]) -> str:
    lines = [",".join(COLUMNS)]
    lines += [f"{r[0]},{r[1]:.6f},{r[2]},{r[3]},{r[4]:.6f},{r[5]:.6f},{r[6]:.6f}" for r in rows]
    return "\n".join(lines) + "\n"


def write(path: Path, rows: list[tuple]) -> None:
    from suite import files

    files.write_atomic(path, csv_text(rows))


def _number(text: str, where: str, field: str, integer: bool = False, upper: float = math.inf):
    try:
        v = int(text) if integer else float(text)
    except ValueError:
        raise ResultError(f"{where}: {field}: expected {'an integer' if integer else 'a number'}, got {text[:40]!r}") from None
    if not math.isfinite(v) or v < 0 or v > upper:
        raise ResultError(f"{where}: {field}: expected a finite number from 0 to {upper:g}, got {text[:40]!r}")
    return v


def parse(text: str, where) -> list[tuple]:
    """The rows of a records file's text; ResultError (one line: file, line, field, expected, got) at
    the first bad one. Bounded: at most MAX_RECORDS rows."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != ",".join(COLUMNS):
        got = lines[0][:80] if lines else "an empty file"
        raise ResultError(f"{where}: header: expected {','.join(COLUMNS)}, got {got!r}")
    if len(lines) - 1 > MAX_RECORDS:
        raise ResultError(f"{where}: rows: expected at most {MAX_RECORDS}, got {len(lines) - 1}")
    rows = []
    for n, line in enumerate(lines[1:], start=2):
        at = f"{where}: line {n}"
        cells = line.split(",")
        if len(cells) != len(COLUMNS):
            raise ResultError(f"{at}: columns: expected {len(COLUMNS)}, got {len(cells)}")
        if cells[2] not in OPS:
            raise ResultError(f"{at}: op: expected one of {', '.join(OPS)}, got {cells[2][:40]!r}")
        rows.append((_number(cells[0], at, "seq", True, MAX_RECORDS), _number(cells[1], at, "issue_s", upper=1e7),
                     cells[2], _number(cells[3], at, "bytes", True, MAX_ENTRY_BYTES),
                     *(_number(cells[k], at, COLUMNS[k], upper=1e7) for k in (4, 5, 6))))
    return rows


def load(path: Path, root=None) -> list[tuple]:
    from suite import files

    return parse(files.read_text(path, limit=MAX_BYTES, error=ResultError, root=root), path)


def file_of(rank_json: Path) -> Path:
    """The records file beside a rank's kvcache_results_<ts>.json."""
    stamp = rank_json.name.removeprefix("kvcache_results_").removesuffix(".json")
    return rank_json.with_name(f"{PREFIX}{stamp}{SUFFIX}")


def p95_ms(values: list) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=float), 95) * 1000.0) if values else 0.0


def split(rows: list[tuple]) -> dict:
    """P95 of total_s, device_s and queue_s (ms; numpy's linear percentile) over the same requests, and
    the share of the summed total that is device time and that is queueing."""
    total = sum(r[6] for r in rows)
    device = sum(r[5] for r in rows)
    return {"requests": len(rows), "total_p95_ms": p95_ms([r[6] for r in rows]),
            "device_p95_ms": p95_ms([r[5] for r in rows]), "queue_p95_ms": p95_ms([r[4] for r in rows]),
            "device_share": device / total if total > 0 else 0.0,
            "queue_share": sum(r[4] for r in rows) / total if total > 0 else 0.0}


SPLIT_KEYS = ("total_p95_ms", "device_p95_ms", "queue_p95_ms", "device_share", "queue_share")


def not_adding_up(rows: list[tuple]) -> list[tuple]:
    """The rows whose total_s is not queue_s + device_s (within TOLERANCE_S): (line, total, queue + device)."""
    return [(k + 2, r[6], r[4] + r[5]) for k, r in enumerate(rows) if abs(r[6] - (r[4] + r[5])) > TOLERANCE_S]
