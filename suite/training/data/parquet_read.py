"""A Parquet reader built for storage: the footer, then byte-range reads of the needed column chunks only.

What the reference decodes: DLIO's ParquetReader (argonne-lcf/dlio_benchmark
dlio_benchmark/reader/parquet_reader.py, the row-group version the staged configs' `read_mode: row_group`
names) opens each file with pyarrow.parquet.ParquetFile and, per row group a sample falls in, calls
`read_row_group(i, columns=<the columns with read: true>)`: it decodes the read columns of the row group
into Arrow arrays (page headers, levels, values) and keeps the table; it converts nothing to pandas or
numpy. This reader decodes exactly that, with the same pyarrow call, and no more.

What it does not do that pyarrow's own file reader does: it never reads a byte it does not decode. Per
file, one ranged read of the tail (FOOTER_TAIL_BYTES; a second when the footer is longer); per row group,
one ranged read per run of adjacent needed column chunks (flux: its five columns are adjacent, one read a
row group; dlrm: 40 scattered chunks of 200, about 40 reads), each through the storage backend's
`readinto_at` (POSIX preadv, S3 a ranged GET: suite.storage.backend), into a buffer the reader reuses.
pyarrow then decodes from those bytes in place: the reader's buffer is an anonymous memory map the size
of the file, the chunks read into it at their own offsets (untouched pages cost no memory; files of one
layout touch the same pages again, so they stay mapped until RELEASE_BYTES have been read into them, then
are given back, MADV_DONTNEED: a page faulted in afresh for every row group costs more CPU than the
decode saves), handed to pyarrow as an in-memory file, so the decode runs
in pyarrow's C++ without the GIL and without a copy. A read of pyarrow's outside the fetched chunks would
see zeros and decode other values: the tests compare every decoded value with pyarrow's own reader. The I/O and the decode are timed apart (ReadStats): the
reads in wall seconds (the storage's time), the decode in the thread's CPU seconds (its cost).
"""

from __future__ import annotations

import mmap
import time
from dataclasses import dataclass, field

from suite.training.data import parquet

RELEASE_BYTES = 256 << 20       # bytes read into a thread's map before its pages are given back


@dataclass
class ReadStats:
    """What reading did: bytes and requests to storage, column chunks, and the time in each part."""

    bytes_read: int = 0
    requests: int = 0
    column_chunks: int = 0
    row_groups: int = 0
    rows: int = 0
    io_s: float = 0.0          # wall seconds in storage reads (waiting for the storage is the point)
    decode_s: float = 0.0      # the thread's CPU seconds decoding (time.thread_time: not the time it
    #                            waited for a core, which threads on a busy host would otherwise count)

    def add(self, other: "ReadStats") -> None:
        for k in self.__dataclass_fields__:
            setattr(self, k, getattr(self, k) + getattr(other, k))


@dataclass
class FilePlan:
    """One file's footer, and per row group the merged byte ranges of its needed column chunks."""

    size: int
    metadata: object
    ranges: list[list[tuple[int, int]]]          # per row group: [(offset, length)], adjacent chunks merged
    chunk_bytes: list[int]                       # per row group: the needed chunks' bytes together
    chunks: list[int]                            # per row group: how many needed chunks
    footer_bytes: int = 0
    footer_requests: int = 0
    rows: list[int] = field(default_factory=list)


def plan(metadata, size: int, columns: tuple[str, ...]) -> FilePlan:
    """The byte ranges of `columns`' chunks in every row group, from the footer (FileMetaData)."""
    want = set(columns)
    found = {metadata.schema.column(j).path.split(".")[0] for j in range(metadata.num_columns)}
    missing = sorted(want - found)
    if missing:
        raise ValueError(f"parquet columns: expected {', '.join(missing[:3])} in the file, got none of that name")
    ranges, totals, counts, rows = [], [], [], []
    for i in range(metadata.num_row_groups):
        rg = metadata.row_group(i)
        spans = []
        for j in range(rg.num_columns):
            cc = rg.column(j)
            if cc.path_in_schema.split(".")[0] not in want:
                continue
            start = cc.dictionary_page_offset if cc.has_dictionary_page else cc.data_page_offset
            if start < 0 or cc.total_compressed_size <= 0 or start + cc.total_compressed_size > size:
                raise ValueError(f"parquet column chunk {cc.path_in_schema}: expected a range inside "
                                 f"{size} bytes, got {start}+{cc.total_compressed_size}")
            spans.append((start, cc.total_compressed_size))
        spans.sort()
        merged: list[list[int]] = []
        for start, length in spans:
            if merged and merged[-1][0] + merged[-1][1] == start:
                merged[-1][1] += length
            else:
                merged.append([start, length])
        ranges.append([(a, b) for a, b in merged])
        totals.append(sum(b for _, b in spans))
        counts.append(len(spans))
        rows.append(rg.num_rows)
    return FilePlan(size, metadata, ranges, totals, counts, rows=rows)


class ColumnReader:
    """Reads the `columns` of Parquet files through a storage backend; one per reader thread (it owns
    its buffer). `after_decode`: a callable run on each decoded row group (tests and benchmarks: a
    planted slow decode); None keeps pyarrow's decode alone."""

    def __init__(self, backend, columns: tuple[str, ...], after_decode=None):
        self.backend, self.columns, self.after_decode = backend, tuple(columns), after_decode
        self.map: mmap.mmap | None = None
        self.unreleased = 0             # bytes read into the map since its pages were last given back
        self.plans: dict[str, FilePlan] = {}

    def open_plan(self, handle, name: str, stats: ReadStats) -> FilePlan:
        """The file's plan, from its footer (read once per file and reader, then kept)."""
        found = self.plans.get(name)
        if found is not None:
            return found
        t0 = time.perf_counter()
        size = handle.size()
        tail_len = min(size, parquet.FOOTER_TAIL_BYTES)
        tail = handle.read_at(tail_len, size - tail_len)
        requests, got = 1, len(tail)
        n = parquet.footer_length(tail)
        if n + 8 > len(tail):
            if n + 8 > size - 4:
                raise ValueError(f"parquet footer: length {n} longer than the file ({size} bytes)")
            tail = handle.read_at(n + 8, size - n - 8)
            requests, got = 2, got + len(tail)
        stats.io_s += time.perf_counter() - t0
        t1 = time.thread_time()
        meta = parquet.parse_footer(tail)
        found = plan(meta, size, self.columns)
        stats.decode_s += time.thread_time() - t1
        found.footer_bytes, found.footer_requests = got, requests
        stats.bytes_read += got
        stats.requests += requests
        self.plans[name] = found
        return found

    def _file_map(self, size: int) -> mmap.mmap:
        """The thread's anonymous map, at least `size` bytes (address space; pages only where written)."""
        if self.map is None or len(self.map) < size:
            if self.map is not None:
                self.map.close()
            self.map = mmap.mmap(-1, max(size, mmap.PAGESIZE), flags=mmap.MAP_PRIVATE)   # DONTNEED frees (not shmem)
        return self.map

    def read_file(self, name: str, stats: ReadStats | None = None) -> ReadStats:
        """Every row group of `name`: its needed chunks read, then decoded; the stats of this file."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        stats = stats if stats is not None else ReadStats()
        with self.backend.open_read(name, sequential=False) as handle:
            fp = self.open_plan(handle, name, stats)
            area = self._file_map(fp.size)
            whole = pa.py_buffer(area)
            try:
                pf = pq.ParquetFile(pa.BufferReader(whole.slice(0, fp.size)), metadata=fp.metadata, pre_buffer=False)
                for i, spans in enumerate(fp.ranges):
                    self._fetch(handle, area, spans, fp.chunk_bytes[i], stats)
                    stats.column_chunks += fp.chunks[i]
                    t1 = time.thread_time()
                    table = pf.read_row_group(i, columns=list(self.columns), use_threads=False)
                    if self.after_decode is not None:
                        self.after_decode(table)
                    del table
                    stats.decode_s += time.thread_time() - t1
                    stats.row_groups += 1
                    stats.rows += fp.rows[i]
                    self.unreleased += fp.chunk_bytes[i]
                    if self.unreleased > RELEASE_BYTES:
                        _release(area, spans)
                        self.unreleased = 0
            finally:
                del pf, whole           # the map's exports, before a later resize may close it
        return stats

    @staticmethod
    def _fetch(handle, area: mmap.mmap, spans, total: int, stats: ReadStats) -> None:
        """Read `spans` into `area` at their own file offsets."""
        t0 = time.perf_counter()
        view = memoryview(area)
        readinto, key = handle.readinto_at, handle.key
        try:
            for start, length in spans:
                done = 0
                while done < length:
                    n = readinto(key, [view[start + done:start + length]], start + done)
                    stats.requests += 1
                    if n <= 0:
                        raise OSError(f"parquet: column chunk at byte {start + done}: expected {length - done} "
                                      f"more bytes, got the end of the file")
                    done += n
        finally:
            view.release()
        stats.bytes_read += total
        stats.io_s += time.perf_counter() - t0


def _release(area: mmap.mmap, spans) -> None:
    """Give the map's pages back (they read as zeros until written again)."""
    area.madvise(mmap.MADV_DONTNEED)
