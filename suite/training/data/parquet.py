"""Parquet training files (flux, dlrm): the workload's table layout, the writer datagen uses, the check.

The layout is the workload file's `dataset.parquet` (workloads/flux.yaml, dlrm.yaml): columns with a
dtype (int8, float16, float32, float64), a width (`size`: 1 a scalar column, more a list column of that
many values a row, as DLIO's generator writes list<float32> columns) and whether the reader reads it;
rows per row group; no compression. Every column is written, only the `read: true` ones are read
(mlcommons/storage parquet_selective_read_example.yaml).

Writing: pyarrow's ParquetWriter, one write per row group, PLAIN encoding (no dictionary, no statistics,
no compression), straight into the storage backend's writer (suite.storage.backend: POSIX or S3) through a
small file adapter. The values are the process's seeded random pool (suite.training.data.formats.Content)
XOR-ed per piece with a seeded key, so a file's bytes depend only on (seed, file index) and the pyarrow
version; producing them costs a memory pass, well below a disk's write time. The size is pyarrow's
(no closed form): the check reads the footer instead (rows, row groups, column names and types).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WIDTHS = {"int8": 1, "float16": 2, "float32": 4, "float64": 8}
FOOTER_TAIL_BYTES = 64 * 1024        # the first read of a file's end: the footer of up to ~1,000 columns
MAGIC = b"PAR1"


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str
    size: int = 1          # values a row (1: a scalar column)
    read: bool = True

    @property
    def row_bytes(self) -> int:
        return WIDTHS[self.dtype] * self.size


@dataclass(frozen=True)
class Layout:
    """A workload's Parquet table: its columns, rows a row group, the codec."""

    columns: tuple[Column, ...]
    row_group_size: int
    compression: str = "none"

    @property
    def row_bytes(self) -> int:
        """Bytes of one row's values (the workload's record_length: flux 2,164,832, dlrm 761)."""
        return sum(c.row_bytes for c in self.columns)

    @property
    def read_columns(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.read)

    @property
    def read_row_bytes(self) -> int:
        return sum(c.row_bytes for c in self.columns if c.read)

    def arrow_schema(self):
        import pyarrow as pa

        return pa.schema([(c.name, _arrow_type(c)) for c in self.columns])


def _arrow_type(column: Column):
    import pyarrow as pa

    value = {"int8": pa.int8(), "float16": pa.float16(), "float32": pa.float32(), "float64": pa.float64()}[column.dtype]
    return value if column.size == 1 else pa.list_(value)


def layout(workload) -> Layout:
    """The Parquet layout of a resolved workload (format parquet); its row_group_size defaults to one row
    group a file (what pyarrow's default gives DLIO's generator for files under 1,048,576 rows)."""
    spec = workload.config["dataset"].get("parquet") or {}
    columns = tuple(Column(c["name"], c["dtype"], int(c.get("size", 1)), bool(c.get("read", True)))
                    for c in spec.get("columns", ()))
    rows = int(spec.get("row_group_size") or workload.num_samples_per_file)
    return Layout(columns, max(1, min(rows, workload.num_samples_per_file)), spec.get("compression", "none"))


def mismatch(workload) -> str | None:
    """Why the workload's Parquet columns do not add up to its record_length (None when they do)."""
    lay = layout(workload)
    if not lay.columns:
        return "dataset.parquet.columns: expected at least one column, got none"
    names = [c.name for c in lay.columns]
    if len(set(names)) != len(names):
        return f"dataset.parquet.columns: expected distinct names, got {len(names) - len(set(names))} repeated"
    if not lay.read_columns:
        return "dataset.parquet.columns: expected at least one column with read: true, got none"
    wide = max(lay.columns, key=lambda c: c.size)
    if lay.row_group_size * wide.size >= 2**31:
        return (f"dataset.parquet.row_group_size: expected under {2**31 // wide.size} rows ({wide.name} is "
                f"{wide.size} values wide; a list column's row group holds under 2**31), got {lay.row_group_size}")
    if lay.row_bytes != int(workload.record_length_bytes):
        return (f"dataset.record_length: expected the columns' bytes a row ({lay.row_bytes}), "
                f"got {int(workload.record_length_bytes)}")
    return None


# --------------------------------------------------------------------------- writing


class _Out:
    """The file object pyarrow writes to: the backend writer's write(), with the position it needs."""

    def __init__(self, writer):
        self.writer, self.pos, self.closed = writer, 0, False

    def write(self, data) -> int:
        view = memoryview(data)
        self.writer.write(view)
        self.pos += view.nbytes
        return view.nbytes

    def tell(self) -> int:
        return self.pos

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False


def _fill(content, rng, out: np.ndarray) -> None:
    """Fill the uint64 array `out` with pool slices at seeded offsets, each XOR-ed with a seeded key."""
    pool = content.pool
    piece, pos, total = 1 << 17, 0, out.size        # 1 MiB of words at a time
    while pos < total:
        n = min(piece, total - pos)
        raw = rng.random_raw(2)
        start = int(raw[0] % np.uint64(pool.size - n + 1))
        np.bitwise_xor(pool[start:start + n], raw[1], out=out[pos:pos + n])
        pos += n


def _row_group(lay: Layout, rows: int, content, rng):
    """One row group's table: every column's values drawn from the pool."""
    import pyarrow as pa

    arrays = []
    for c in lay.columns:
        count = rows * c.size
        words = np.empty(-(-count * WIDTHS[c.dtype] // 8), dtype=np.uint64)
        _fill(content, rng, words)
        values = words.view(np.uint8)[:count * WIDTHS[c.dtype]].view(np.dtype(c.dtype))
        flat = pa.array(values, type=_arrow_type(Column(c.name, c.dtype)))
        if c.size == 1:
            arrays.append(flat)
        else:          # list<...> offsets are int32: a row group holds under 2**31 values a column
            arrays.append(pa.ListArray.from_arrays(pa.array(np.arange(0, count + 1, c.size, dtype=np.int32)), flat))
    return pa.Table.from_arrays(arrays, schema=lay.arrow_schema())


def write(writer, lay: Layout, rows: int, content, index: int) -> None:
    """Write one file of `rows` rows through the backend `writer` (not committed here)."""
    import pyarrow.parquet as pq

    rng = content.file_rng(index)
    out = _Out(writer)
    pw = pq.ParquetWriter(out, lay.arrow_schema(), compression=lay.compression, use_dictionary=False,
                          write_statistics=False, write_page_index=False, store_schema=False)
    try:
        done = 0
        while done < rows:
            n = min(lay.row_group_size, rows - done)
            pw.write_table(_row_group(lay, n, content, rng), row_group_size=n)
            done += n
    finally:
        pw.close()


def size_hint(lay: Layout, rows: int) -> int:
    """About the bytes of a file (the values; headers and footer are small): the storage's preallocation."""
    return lay.row_bytes * rows


# --------------------------------------------------------------------------- footer and check


def footer_length(tail: bytes) -> int:
    """The footer's length from a file's last 8 bytes (`tail` ends with them); ValueError when not Parquet."""
    if len(tail) < 8 or tail[-4:] != MAGIC:
        raise ValueError(f"parquet end: expected the magic 'PAR1', got {bytes(tail[-4:])!r}")
    return int.from_bytes(tail[-8:-4], "little")


def parse_footer(tail: bytes):
    """pyarrow's FileMetaData of the footer at the end of `tail` (the file's last bytes, footer included)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = footer_length(tail)
    if n + 8 > len(tail):
        raise ValueError(f"parquet footer: expected {n} bytes before the end, got {len(tail) - 8}")
    return pq.read_metadata(pa.BufferReader(MAGIC + bytes(tail[-(n + 8):])))


def read_metadata(handle, size: int):
    """The footer of the open backend `handle` of `size` bytes: one ranged read of the tail, a second
    when the footer is longer (dlrm's 200 columns fit the first)."""
    tail = handle.read_at(min(size, FOOTER_TAIL_BYTES), max(0, size - FOOTER_TAIL_BYTES))
    n = footer_length(tail)
    if n + 8 > len(tail):
        if n + 8 > size - 4:
            raise ValueError(f"parquet footer: length {n} longer than the file ({size} bytes)")
        tail = handle.read_at(n + 8, size - n - 8)
    return parse_footer(tail)


def check(backend, name: str, lay: Layout | None, rows: int, deep: bool = False) -> str | None:
    """None when `name` is a complete Parquet file of `rows` rows in the layout, else what is wrong
    (its footer: rows, row groups, columns and types; deep: pyarrow reads every row group)."""
    try:
        with backend.open_read(name, sequential=False) as handle:
            size = handle.size()
            if handle.read_at(4, 0) != MAGIC:
                return "parquet header: expected the magic 'PAR1', got something else"
            meta = read_metadata(handle, size)
            problem = _shape_problem(meta, lay, rows) if lay is not None else None
            if problem or not deep:
                return problem
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(handle.fileobj())
            for i in range(pf.num_row_groups):
                pf.read_row_group(i)
    except (OSError, ValueError) as exc:
        return f"not a readable parquet file ({str(exc).splitlines()[0][:160]})"
    return None


def _shape_problem(meta, lay: Layout, rows: int) -> str | None:
    if meta.num_rows != rows:
        return f"parquet rows: expected {rows}, got {meta.num_rows}"
    groups = -(-rows // lay.row_group_size)
    if meta.num_row_groups != groups:
        return f"parquet row groups: expected {groups} of {lay.row_group_size} rows, got {meta.num_row_groups}"
    schema = meta.schema.to_arrow_schema()
    want = lay.arrow_schema()
    if schema.names != want.names:
        return f"parquet columns: expected {want.names[:3]}... ({len(want)}), got {schema.names[:3]}... ({len(schema)})"
    for got, expected in zip(schema, want):
        if not got.type.equals(expected.type) and str(got.type).replace("element", "item") != str(expected.type):
            return f"parquet column {got.name}: expected {expected.type}, got {got.type}"
    return None
