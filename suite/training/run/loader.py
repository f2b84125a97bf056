"""The per-rank reader: read_threads threads reading whole files into reused buffers.

Every byte of every file a rank needs is read for real (the storage backend's ranged read,
POSIX's os.preadv, into a preallocated buffer, page-aligned for O_DIRECT), then dropped: the
simulated accelerator needs to know *when* a batch is there, not its contents. Threads run ahead
of the consumer by at most prefetch_size batches. Files are checked while they stream through the buffer, at
a cost that does not grow per sample: the size must match what was planned (a file
truncated mid-run is caught), npz files must carry the zip signatures, JPEG files SOI and EOI, and TFRecord
files are walked record by record through their length framing (8-byte length, 4-byte
CRC, data, 4-byte CRC) so a file with the wrong record count or a torn record fails.
Parquet files are the exception: a thread reads only the needed column chunks and decodes them as the
reference's reader does (suite.training.data.parquet_read), timing the I/O and the decode apart.
"""

import bisect
import mmap
import struct
import threading
import time
from dataclasses import dataclass

from suite.errors import RunError

DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024   # transfer_size 0: whole files in 4 MiB reads
ALIGN = 4096                             # O_DIRECT alignment (offset, length, buffer)
_U64 = struct.Struct("<Q")


class LoaderError(RunError):
    """A file could not be read as planned (missing, unreadable, truncated, malformed)."""


@dataclass(frozen=True)
class FileSpec:
    path: str
    size_bytes: int
    samples: int          # records in the file (checked for TFRecord)
    take: int = -1        # samples this rank uses from it (-1: all)

    @property
    def used(self) -> int:
        return self.samples if self.take < 0 else self.take


@dataclass(frozen=True)
class ReaderConfig:
    read_threads: int = 1
    prefetch_size: int = 2           # batches the threads may read ahead of the consumer
    transfer_size_bytes: int = 0     # one read request; 0 = DEFAULT_CHUNK_BYTES
    odirect: bool = False
    format: str = "npz"
    samples_per_file: int = 1
    batch_size: int = 1
    delay_per_file_s: float = 0.0    # benchmarks only (a storage path with a known delay)
    max_file_bytes: int = 0          # the largest file the rank reads (0: unknown): caps each buffer
    parquet_columns: tuple = ()      # format parquet: the columns read (suite.training.data.parquet_read)
    decode_delay_s: float = 0.0      # tests only: CPU burnt per Parquet row group decoded

    @property
    def chunk_bytes(self) -> int:
        """One read's size and each thread's buffer: transfer_size (else 4 MiB), never more than the
        largest file rounded up to a page (a 316 KiB JPEG needs no 4 MiB buffer: 8 threads would hold
        32 MiB of the rank's memory for nothing; the reads are the same one call per file)."""
        size = self.transfer_size_bytes or DEFAULT_CHUNK_BYTES
        if self.max_file_bytes > 0:
            size = min(size, max(ALIGN, -(-self.max_file_bytes // ALIGN) * ALIGN))
        if self.odirect:
            size = max(ALIGN, (size + ALIGN - 1) // ALIGN * ALIGN)
        return size

    @property
    def columnar(self) -> bool:
        return self.format == "parquet"

    @property
    def buffers_bytes(self) -> int:
        """The rank's read buffers together (read_threads of chunk_bytes): its own memory beside Python's."""
        return max(1, self.read_threads) * self.chunk_bytes


class _TFRecordWalk:
    """Follow TFRecord length framing across buffer chunks; count records."""

    __slots__ = ("next", "count", "carry", "size")

    def __init__(self, size: int):
        self.next, self.count, self.carry, self.size = 0, 0, b"", size

    def feed(self, view, offset: int) -> None:
        end = offset + len(view)
        nxt = self.next
        if self.carry:                       # a length header split across two reads
            need = 8 - len(self.carry)
            self.carry += bytes(view[:need])
            if len(self.carry) < 8:
                return
            nxt += 16 + _U64.unpack(self.carry)[0]
            self.count += 1
            self.carry = b""
        unpack = _U64.unpack_from
        count = self.count
        while nxt + 8 <= end:
            length = unpack(view, nxt - offset)[0]
            nxt += 16 + length
            count += 1
            if nxt > self.size:
                break
        if offset <= nxt < end:
            self.carry = bytes(view[nxt - offset:])
        self.next, self.count = nxt, count

    def problem(self, expected_records: int) -> str | None:
        if self.carry or self.next != self.size:
            return f"TFRecord framing: expected records ending at byte {self.size}, got a record ending at {self.next}"
        if self.count != expected_records:
            return f"TFRecord records: expected {expected_records}, got {self.count}"
        return None


class Reader:
    """One rank's reader: owns read_threads reused buffers; runs epochs of file lists.

    `backend` (suite.storage.backend) opens the files; FileSpec.path is a name it knows (POSIX: a
    path, absolute in a run plan). Default: POSIX, names taken as paths."""

    def __init__(self, config: ReaderConfig, backend=None):
        if backend is None:
            from suite.storage.backend.posix import PosixBackend
            backend = PosixBackend("")
        self.config = config
        self.backend = backend
        threads = max(1, config.read_threads)
        self.columnar: dict[int, object] = {}   # format parquet: each thread's ColumnReader, by its buffer
        if config.columnar:
            from suite.training.data.parquet_read import ColumnReader

            burn = _burner(config.decode_delay_s) if config.decode_delay_s > 0 else None
            self.buffers = [bytearray(0) for _ in range(threads)]
            self.columnar = {id(b): ColumnReader(self.backend, tuple(config.parquet_columns), burn)
                             for b in self.buffers}
        elif config.odirect:
            self.buffers = [mmap.mmap(-1, config.chunk_bytes) for _ in range(threads)]
        else:
            self.buffers = [bytearray(config.chunk_bytes) for _ in range(threads)]
        self.walked: set[str] = set()      # TFRecord files whose framing this rank has checked

    def epoch(self, files: list[FileSpec], samples_needed: int) -> "Epoch":
        return Epoch(self, files, samples_needed)

    def read_columns(self, spec: FileSpec, buffer, clock: list | None = None):
        """Format parquet: the file's needed column chunks, read and decoded; its ReadStats (a benchmark's
        delay_per_file_s, a storage of a known service time, counts as I/O)."""
        from suite.training.data.parquet_read import ReadStats

        stats, called = ReadStats(), time.perf_counter()
        try:
            self.columnar[id(buffer)].read_file(spec.path, stats)
        except FileNotFoundError:
            raise LoaderError(f"{spec.path}: cannot open: no such file") from None
        except (OSError, ValueError) as exc:
            raise LoaderError(f"{spec.path}: {str(exc).splitlines()[0][:200]}") from None
        if stats.rows != spec.samples:
            raise LoaderError(f"{spec.path}: parquet rows: expected {spec.samples}, got {stats.rows}")
        if self.config.delay_per_file_s > 0:
            paced = time.perf_counter()
            _pace(called, clock if clock is not None else [0.0], self.config.delay_per_file_s)
            stats.io_s += time.perf_counter() - paced
        return stats

    def read_file(self, spec: FileSpec, buffer, clock: list | None = None) -> int:
        """Read every byte of `spec` through `buffer`; check it; return the bytes read.

        `clock` (benchmarks' delay_per_file_s only): the thread's [time its storage is free];
        each file completes delay_per_file_s after max(now, that time), so a late wake-up
        of one sleep does not push back the next file: a storage path of a fixed service time.
        """
        cfg = self.config
        called = time.perf_counter()
        try:
            handle = self.backend.open_read(spec.path, cfg.odirect)
        except OSError as exc:
            raise LoaderError(f"{spec.path}: cannot open: {exc.strerror}") from None
        # TFRecord framing is walked the first time this rank reads a file; after that the
        # size check alone catches a file cut short (every byte is still read)
        walk = _TFRecordWalk(spec.size_bytes) if cfg.format == "tfrecord" and spec.path not in self.walked else None
        try:
            offset = self._read(handle.readinto_at, handle.key, spec, memoryview(buffer), walk)
        finally:
            handle.close()
        if walk is not None:
            problem = walk.problem(spec.samples)
            if problem:
                raise LoaderError(f"{spec.path}: {problem}")
            self.walked.add(spec.path)
        if cfg.delay_per_file_s > 0:
            _pace(called, clock if clock is not None else [0.0], cfg.delay_per_file_s)
        return offset

    def _read(self, preadv, fd, spec: FileSpec, view: memoryview, walk) -> int:
        """The reads of one open file (`preadv(fd, buffers, offset)`: the handle's readinto_at and
        key, POSIX's os.preadv and the fd), checking npz signatures and TFRecord framing (`walk`) as the
        bytes stream by; returns the file's size, or raises LoaderError naming the byte."""
        fmt = self.config.format
        size, offset, n = spec.size_bytes, 0, 0
        bufs = [view]
        try:
            n = preadv(fd, bufs, 0)
            if fmt == "npz" and bytes(view[:4]) != b"PK\x03\x04":
                raise LoaderError(f"{spec.path}: npz header: expected a zip local header 'PK\\x03\\x04', "
                                  f"got {bytes(view[:min(n, 4)])!r}")
            if fmt == "jpeg" and bytes(view[:2]) != b"\xff\xd8":
                raise LoaderError(f"{spec.path}: jpeg header: expected SOI ff d8, got {bytes(view[:min(n, 2)]).hex(' ')}")
            if walk is not None and n > 0:
                walk.feed(view[:min(n, size)], 0)
            offset = n
            if walk is None:       # the hot loop: one syscall per transfer_size, nothing else
                while n > 0 and offset < size:
                    n = preadv(fd, bufs, offset)
                    offset += n
            else:
                while n > 0 and offset < size:
                    n = preadv(fd, bufs, offset)
                    if n > 0:
                        walk.feed(view[:min(n, size - offset)], offset)
                    offset += n
        except OSError as exc:
            raise LoaderError(f"{spec.path}: read at byte {offset}: {exc.strerror}") from None
        if offset < size:
            raise LoaderError(f"{spec.path}: size: expected {size} bytes, got {offset} (truncated)")
        last = n - (offset - size)      # bytes of the file's end still in the buffer
        if fmt == "npz" and last >= 22 and bytes(view[last - 22:last - 18]) != b"PK\x05\x06":
            raise LoaderError(f"{spec.path}: npz end: expected a zip end-of-directory record, got none (truncated?)")
        if fmt == "jpeg" and last >= 2 and bytes(view[last - 2:last]) != b"\xff\xd9":
            raise LoaderError(f"{spec.path}: jpeg end: expected EOI ff d9, got none (truncated?)")
        return size


def _burner(delay_s: float):
    """A planted slow decode (tests): burn `delay_s` of CPU after each row group decoded."""
    def burn(_table) -> None:
        end = time.thread_time() + delay_s
        while time.thread_time() < end:
            pass
    return burn


def _pace(called: float, clock: list, delay_s: float) -> None:
    """Benchmarks' read delay: the file completes delay_s after max(called, the storage's free time)."""
    done = max(called, clock[0]) + delay_s
    clock[0] = done
    left = done - time.perf_counter()
    while left > 0:
        time.sleep(left)
        left = done - time.perf_counter()


class Epoch:
    """One epoch of one rank: threads read `files` in order, ahead of the consumer.

    wait_batch(i) blocks until every sample of batch i has been read, and lets the
    threads read on up to prefetch_size batches past it -- or read_threads files past it,
    whichever is further (a file of 1,251 resnet50 samples spans three batches).
    """

    def __init__(self, reader: Reader, files: list[FileSpec], samples_needed: int):
        self.reader = reader
        cfg = reader.config
        self.batch = cfg.batch_size
        self.window = cfg.prefetch_size + 1
        # only the files the epoch's batches need, and where each one's samples start
        self.files, self.first_sample = [], []
        total = 0
        for spec in files:
            if total >= samples_needed:
                break
            self.files.append(spec)
            self.first_sample.append(total)
            total += spec.used
        if total < samples_needed:
            raise LoaderError(f"shard: samples: expected at least {samples_needed}, got {total}")
        self.samples_needed = samples_needed
        self.cond = threading.Condition()
        self.next_file = 0          # next file a thread may take
        self.done = [False] * len(self.files)
        self.ready_files = 0        # contiguous prefix of files read
        self.ready_samples = 0
        self.consumed = 0           # batches handed to the accelerator
        self.consumed_file = 0      # the file holding the next sample the accelerator will take
        self.in_flight = len(reader.buffers)
        self.error: BaseException | None = None
        self.stopping = False
        self.bytes_read = 0
        self.files_read = 0
        self.requests = 0           # format parquet: storage requests, and the threads' time in I/O and decode
        self.io_s = 0.0
        self.decode_s = 0.0
        self.threads = [threading.Thread(target=self._work, args=(buf,), daemon=True, name=f"reader-{k}")
                        for k, buf in enumerate(reader.buffers)]
        for t in self.threads:
            t.start()

    def _work(self, buffer) -> None:
        cond = self.cond
        clock = [0.0]
        while True:
            with cond:
                while True:
                    if self.stopping or self.error or self.next_file >= len(self.files):
                        return
                    j = self.next_file
                    # prefetch_size batches past the consumer, and never fewer than one file per
                    # thread past it (TF's interleave keeps read_threads files open at once)
                    if self.first_sample[j] < (self.consumed + self.window) * self.batch \
                            or j < self.consumed_file + self.in_flight:
                        self.next_file += 1
                        break
                    cond.wait()
            stats = None
            try:
                if self.reader.columnar:
                    stats = self.reader.read_columns(self.files[j], buffer, clock)
                    n = stats.bytes_read
                else:
                    n = self.reader.read_file(self.files[j], buffer, clock)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                with cond:
                    self.error = self.error or exc
                    cond.notify_all()
                return
            with cond:
                if stats is not None:
                    self.requests += stats.requests
                    self.io_s += stats.io_s
                    self.decode_s += stats.decode_s
                self.bytes_read += n
                self.files_read += 1
                self.done[j] = True
                k = self.ready_files
                while k < len(self.files) and self.done[k]:
                    self.ready_samples = self.first_sample[k] + self.files[k].used
                    k += 1
                self.ready_files = k
                cond.notify_all()

    def wait_batch(self, i: int) -> None:
        need = min((i + 1) * self.batch, self.samples_needed)
        with self.cond:
            while self.ready_samples < need and self.error is None:
                self.cond.wait()
            if self.error is not None:
                err = self.error
                raise err if isinstance(err, LoaderError) else LoaderError(f"reader thread: {err!r}")
            self.consumed = i + 1
            self.consumed_file = bisect.bisect_right(self.first_sample, self.consumed * self.batch) - 1
            self.cond.notify_all()

    def counters(self) -> tuple[int, int, float, float]:
        """(bytes read, requests, I/O s, decode s) so far: a step records the difference."""
        with self.cond:
            return self.bytes_read, self.requests, self.io_s, self.decode_s

    def close(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        for t in self.threads:
            t.join()
