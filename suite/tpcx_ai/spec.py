"""The contract between the TPCx-AI driver, the table generators and the use cases.

Three roles, each in its own modules, meeting only through what is defined here:

- table groups (`suite/tpcx_ai/tables/<group>.py`, each exposing `GROUP: TableGroup`): make the
  kit's tables for one split of the data at a scale factor, in independent chunks;
- the driver (generate, load, jobs, phases, result): writes the chunks as raw files, loads them
  into parquet, runs each use case's stages in their own processes, times and scores them;
- use cases (`suite/tpcx_ai/usecases/ucNN.py`, each exposing `train`, `serve`, `truth`), defined as
  data by `workloads/tpcx-ai/ucNN.yaml`, with thresholds in `rules/tpcx-ai/`.

Determinism: every random draw of a chunk comes from `rng(seed, group, split, chunk, ...)`, and
the chunk boundaries depend only on the scale factor and split, never on the number of processes,
so the same command writes the same bytes for any `--processes`.
"""

import hashlib
import math
from dataclasses import dataclass
from typing import Callable, Mapping

SPLITS = ("training", "serving", "scoring")
SERVING_FRACTION = 0.1  # the kit's TTVF: serving and scoring sets are ~10% of training
CHUNK_ROWS = 1 << 17  # a guide for groups: rows of the group's main table per chunk

# The kit's user SF (about GB) -> internal PDGF scale s, from its size estimator (reference 2.3).
# Between and beyond these points s is interpolated linearly in log-log space.
_SF_TO_INTERNAL = ((1.0, 0.458), (10.0, 12.90), (100.0, 463.1), (1000.0, 13037.0), (10000.0, 225302.0))


def internal_scale(sf: float) -> float:
    """The generator's internal scale s for a user scale factor (SF 1 -> 0.458)."""
    if not (sf > 0 and math.isfinite(sf)):
        raise ValueError(f"scale factor: expected a finite number > 0, got {sf!r}")
    pts = _SF_TO_INTERNAL
    x = math.log(sf)
    if sf <= pts[0][0]:
        (x0, y0), (x1, y1) = pts[0], pts[1]
    elif sf >= pts[-1][0]:
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
    else:
        i = next(k for k in range(1, len(pts)) if sf <= pts[k][0])
        (x0, y0), (x1, y1) = pts[i - 1], pts[i]
    lx0, lx1, ly0, ly1 = math.log(x0), math.log(x1), math.log(y0), math.log(y1)
    return math.exp(ly0 + (x - lx0) * (ly1 - ly0) / (lx1 - lx0))


def estimator_weeks(s: float) -> float:
    """The weeks the kit's size estimator multiplies orders and transactions by: (log10 s + 2) x 52,
    without the schema's floor() and 104-week minimum (SF 1: 86.4 -> 2.92 M orders; SF 10: 161.8
    -> 29.1 M), so the counts are the estimator's published ones. The estimator's table starts at
    SF 1 (s 0.458); below it (where the formula would fall towards zero weeks) SF 1's 86.4 holds."""
    return (math.log10(max(s, _SF_TO_INTERNAL[0][1])) + 2.0) * 52.0


def row_drivers(sf: float) -> dict[str, float]:
    """The reference schema's row-count drivers at a user SF (floats; groups round them).

    Row counts follow the kit's size estimator (the reference's table at SF 1, 10, 100, 1000,
    10000; `estimator_weeks`); `weeks`, the calendar the orders span, is the schema's
    max(104, (floor(log10 s) + 2) x 52), so UC03 always has two 52-week seasons to fit.

    Groups scale their training tables from these, and the serving and scoring splits by
    SERVING_FRACTION. Counts are the reference's formulas; minimums that keep a tiny SF usable
    (a few rows per class) are each group's business and documented there.
    """
    s = internal_scale(sf)
    root = math.sqrt(s)
    customers = 100_000 * root
    weeks = max(104, (math.floor(math.log10(s)) + 2) * 52)
    rows_weeks = estimator_weeks(s)
    orders = customers * 0.5 * rows_weeks
    return {
        "s": s,
        "customers": customers,
        "weeks": float(weeks),
        "rows_weeks": rows_weeks,
        "orders": orders,
        "lineitems_per_order": 6.5,
        "order_returns": 0.1 * orders,
        "products": 1000 * root,
        "stores": root + 10,
        "departments": max(1.0, (math.log(s) + 1) * 11),
        "financial_accounts": 0.1 * customers,
        "financial_transactions": 0.1 * customers * rows_weeks * 10,
        "disks": 1000 * root,
        "failure_samples_per_disk": 100 * root,
        "failures": 1000 * root * 100 * root,  # disks x samples per disk (reference table: 45.8 k at SF 1)
        "marketplace": customers,
        "product_ratings": 0.1 * customers * (math.log10(s) + 20),
        "face_identities": max(10.0, 1e-4 * customers),
        "face_images_per_identity": 10 * root,
        "face_images": max(10.0, 100 * s),  # the reference table's count (46 at SF 1)
        "audio_clips": max(100.0, 100 * math.sqrt(30 * s)),
    }


def split_rows(full: float, split: str, minimum: int = 1) -> int:
    """Rows of a table in a split: the training count, or SERVING_FRACTION of it."""
    if split not in SPLITS:
        raise ValueError(f"split: expected one of {SPLITS}, got {split!r}")
    rows = full if split == "training" else full * SERVING_FRACTION
    return max(minimum, int(round(rows)))


def rng(seed: int, *keys):
    """A numpy Generator for (seed, keys...): the same keys give the same stream anywhere."""
    import numpy as np

    digest = hashlib.sha256(repr((int(seed),) + tuple(keys)).encode()).digest()
    return np.random.default_rng(np.random.SeedSequence(list(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 32, 4))))


@dataclass(frozen=True)
class TableGroup:
    """Tables generated together (they share keys), chunk by chunk.

    `schemas()` gives each table's pyarrow schema. Field metadata marks:
      b"label": b"1"  -- a label column: written for training and scoring, dropped for serving,
                         hidden from `serve` (the driver's Data view removes it);
      b"ext": b"wav"  -- a binary column holding one whole file per row (WAV audio, PGM image):
                         the raw writer stores each value as its own file (as the kit does) and
                         the loader reads it back into the parquet column.
    `chunks(sf, split)` is the number of chunks; `generate(sf, split, seed, chunk)` returns
    {table name: pyarrow.Table} for that chunk (a table may be absent from some chunks, e.g. a
    dimension table made whole by chunk 0). Concatenating the chunks in order gives the table.
    `rows(sf, split)` (optional) is {table: row count} for the tables whose count the sizing fixes
    exactly (a table with a random count is left out): what a checker re-derives a result's
    generation record from, to tell which scale factor made the data.
    """

    name: str
    schemas: Callable[[], Mapping[str, object]]
    chunks: Callable[[float, str], int]
    generate: Callable[[float, str, int, int], Mapping[str, object]]
    description: str = ""
    rows: Callable[[float, str], Mapping[str, int]] | None = None


def is_label(field) -> bool:
    """A pyarrow field marked as a label column (b"label": b"1" in its metadata)."""
    return bool(field.metadata) and field.metadata.get(b"label") == b"1"


class MemoryData:
    """A Data view over in-memory pyarrow tables: what `train`, `serve` and `truth` receive.

    The driver gives them a view of the loaded parquet files with the same two methods; tests
    use this one over `generate_split(...)`. With hide_labels, label columns are not there.
    """

    def __init__(self, tables: Mapping[str, object], hide_labels: bool = False):
        self._tables = dict(tables)
        self.hide_labels = hide_labels

    def arrow(self, name: str, columns=None):
        if name not in self._tables:
            raise KeyError(f"table {name!r}: not in this data set (have {sorted(self._tables)})")
        table = self._tables[name]
        if self.hide_labels:
            table = table.select([f.name for f in table.schema if not is_label(f)])
        if columns is not None:
            missing = [c for c in columns if c not in table.column_names]
            if missing:
                raise KeyError(f"table {name!r}: no column(s) {missing}")
            table = table.select(list(columns))
        return table

    def table(self, name: str, columns=None):
        return self.arrow(name, columns).to_pandas()


def generate_split(group: TableGroup, sf: float, split: str, seed: int) -> dict[str, object]:
    """All chunks of a group's split, concatenated in chunk order (tests and small runs)."""
    import pyarrow as pa

    parts: dict[str, list] = {}
    for chunk in range(group.chunks(sf, split)):
        for name, table in group.generate(sf, split, seed, chunk).items():
            parts.setdefault(name, []).append(table)
    schemas = group.schemas()
    return {name: pa.concat_tables(parts[name]).cast(schemas[name]) if name in parts
            else schemas[name].empty_table() for name in schemas}
