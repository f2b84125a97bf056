"""Phase 2, load (TLD): the raw files of a split into one parquet file per table, schema-checked.

    raw/<split>/<table>/part-*.csv  ->  <split>/<table>.parquet

Each CSV is read with the table's declared types (a column missing, extra or not convertible is
a one-line error naming the file and column); binary columns written one file per row are read
back into the column. Each parquet file is written under a temporary name, fsync'd and renamed,
and the directory fsync'd, before the load clock stops. `ParquetData` is the Data view the use
cases receive (`table()`/`arrow()` like spec.MemoryData).
"""

import csv
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.errors import SuiteError, expected_got
from suite.tpcx_ai import generate
from suite.tpcx_ai import spec


class DataError(SuiteError):
    """Generated or loaded data that is missing or does not match its schema."""


@dataclass
class LoadStats:
    split: str
    rows: int = 0
    raw_bytes: int = 0
    parquet_bytes: int = 0
    duration_s: float = 0.0

    @property
    def mb_per_s(self) -> float:
        return self.raw_bytes / 1e6 / self.duration_s if self.duration_s > 0 else 0.0

    def to_dict(self) -> dict:
        return {"split": self.split, "rows": self.rows, "raw_bytes": self.raw_bytes,
                "parquet_bytes": self.parquet_bytes, "duration_s": round(self.duration_s, 3),
                "mb_per_s": round(self.mb_per_s, 3)}


def parquet_path(data_dir: Path, split: str, table: str) -> Path:
    return Path(data_dir) / split / f"{table}.parquet"


def _header(path: Path) -> list[str]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return next(csv.reader(f), [])
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None


def read_part(path: Path, schema):
    """One raw CSV as a pyarrow Table of `schema` (binary ext columns read from their files)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    header = _header(path)
    missing = [n for n in schema.names if n not in header]
    if missing:
        raise DataError(expected_got(path, f"column {missing[0]}", f"a column of type {schema.field(missing[0]).type}",
                                     "none"))
    extra = [n for n in header if n not in schema.names]
    if extra:
        raise DataError(expected_got(path, f"column {extra[0]}", f"only the columns {', '.join(schema.names)}", "another"))
    exts = generate.ext_columns(schema)
    types = {f.name: (pa.string() if f.name in exts else f.type) for f in schema}
    try:
        table = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(
            column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        msg = str(exc).splitlines()[0]
        m = re.search(r"column #(\d+)", msg)
        col = header[int(m.group(1))] if m and int(m.group(1)) < len(header) else "?"
        got = msg.split(": ", 1)[-1]
        raise DataError(expected_got(path, f"column {col}", f"values of type {types.get(col, '?')}", got)) from None
    for name in exts:
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pa.array(_read_blobs(path.parent, table.column(name).to_pylist(), path), pa.binary()))
    return table.select(schema.names).cast(schema)


def _read_blobs(folder: Path, rels, csv_path) -> list:
    out = []
    root = folder.resolve()
    for rel in rels:
        if rel is None:
            out.append(None)
            continue
        p = (folder / rel).resolve()
        if root not in p.parents:
            raise DataError(expected_got(csv_path, "file path", "a file under the table's directory", repr(rel)))
        try:
            out.append(p.read_bytes())
        except OSError as exc:
            raise DataError(f"{folder / rel}: cannot read: {exc.strerror or exc}") from None
    return out


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_parquet(table, path: Path) -> int:
    """Write, fsync and rename into place; returns the file size."""
    import pyarrow.parquet as pq

    with files.into_place(path) as tmp:
        pq.write_table(table, tmp)
    return path.stat().st_size


def _load_table(data_dir: Path, split: str, name: str, schema, chunks: dict, listed: set) -> tuple[int, int, int]:
    """One table raw -> parquet: (rows, raw bytes, parquet bytes)."""
    import pyarrow as pa

    schema = generate.raw_schema(schema, split)
    if name not in chunks and name not in listed:
        raise DataError(expected_got(generate.raw_table_dir(data_dir, split, name), "data",
                                     f"generated chunks of table {name}", "none in the manifest"))
    parts, raw = [], 0       # a generated table no chunk made rows for (a tiny SF) loads empty
    for chunk in chunks.get(name, {}).get("chunks", []):
        path = generate.raw_table_dir(data_dir, split, name) / generate.part_name(chunk)
        if not path.is_file():
            raise DataError(expected_got(path, "data", "a generated chunk file", "no such file"))
        parts.append(read_part(path, schema))
        raw += path.stat().st_size
    table = pa.concat_tables(parts) if parts else schema.empty_table()
    return table.num_rows, raw, write_parquet(table, parquet_path(data_dir, split, name))


def load_split(data_dir: Path, split: str, schemas: dict, manifest: dict | None = None) -> LoadStats:
    """Every table of one split, raw -> parquet; the clock covers the fsyncs. (Tables on two threads
    measured no faster at SF 1 on 2 cores: pyarrow's CSV reader already uses the cores.)"""
    manifest = manifest or generate.read_manifest(data_dir)
    chunks = manifest["chunks"].get(split, {})
    listed = {t for g in manifest.get("groups", []) for t in g.get("tables", [])}
    stats = LoadStats(split)
    start = time.perf_counter()
    for name, schema in sorted(schemas.items()):
        rows, raw, written = _load_table(data_dir, split, name, schema, chunks, listed)
        stats.rows, stats.raw_bytes, stats.parquet_bytes = (stats.rows + rows, stats.raw_bytes + raw,
                                                            stats.parquet_bytes + written)
    if (Path(data_dir) / split).is_dir():
        _fsync_dir(Path(data_dir) / split)
    stats.duration_s = time.perf_counter() - start
    return stats


class ParquetData:
    """A Data view over <data>/<split>/*.parquet: `arrow(name, columns)` and `table(name, columns)`."""

    def __init__(self, folder: Path, hide_labels: bool = False):
        self.folder = Path(folder)
        self.hide_labels = hide_labels

    def _path(self, name: str) -> Path:
        path = self.folder / f"{name}.parquet"
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or not path.is_file():
            have = sorted(p.stem for p in self.folder.glob("*.parquet"))
            raise KeyError(f"table {name!r}: not in this data set (have {have})")
        return path

    def schema(self, name: str):
        import pyarrow.parquet as pq

        schema = pq.read_schema(self._path(name))
        if self.hide_labels:
            import pyarrow as pa

            schema = pa.schema([f for f in schema if not spec.is_label(f)], metadata=schema.metadata)
        return schema

    def arrow(self, name: str, columns=None):
        import pyarrow.parquet as pq

        visible = self.schema(name).names
        if columns is not None:
            missing = [c for c in columns if c not in visible]
            if missing:
                raise KeyError(f"table {name!r}: no column(s) {missing}")
        # ParquetFile, not read_table: it does not import pyarrow.dataset (a second of start-up per job)
        return pq.ParquetFile(self._path(name)).read(columns=list(columns) if columns is not None else visible)

    def table(self, name: str, columns=None):
        return self.arrow(name, columns).to_pandas()
