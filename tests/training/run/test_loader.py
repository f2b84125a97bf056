import os
import struct
import time

import pytest

from suite.training.run.loader import FileSpec, LoaderError, Reader, ReaderConfig


def write_tfrecord(path, records: int, payload: int) -> int:
    """Real TFRecord framing: u64 length, u32 length CRC, data, u32 data CRC (CRCs not checked here)."""
    with open(path, "wb") as f:
        for i in range(records):
            data = bytes([i % 251]) * payload
            f.write(struct.pack("<Q", len(data)) + b"\0\0\0\0" + data + b"\0\0\0\0")
    return os.path.getsize(path)


def write_npz_like(path, size: int) -> int:
    body = b"PK\x03\x04" + os.urandom(size - 26) + b"PK\x05\x06" + b"\0" * 18
    with open(path, "wb") as f:
        f.write(body)
    return size


def run_epoch(reader, specs, need, batch):
    ep = reader.epoch(specs, need)
    try:
        for i in range(-(-need // batch)):
            ep.wait_batch(i)
    finally:
        ep.close()
    return ep


@pytest.mark.parametrize("threads,transfer", [(1, 0), (4, 4096), (3, 1000)])
def test_reads_every_byte_of_npz_files(tmp_path, threads, transfer):
    specs = [FileSpec(str(tmp_path / f"f{i}.npz"), write_npz_like(tmp_path / f"f{i}.npz", 10_000 + 777 * i), 1)
             for i in range(12)]
    reader = Reader(ReaderConfig(read_threads=threads, transfer_size_bytes=transfer, format="npz", batch_size=3))
    ep = run_epoch(reader, specs, 12, 3)
    assert ep.bytes_read == sum(s.size_bytes for s in specs)
    assert ep.files_read == 12


def test_only_the_files_the_batches_need_are_read(tmp_path):
    specs = [FileSpec(str(tmp_path / f"f{i}.npz"), write_npz_like(tmp_path / f"f{i}.npz", 5000), 1) for i in range(10)]
    reader = Reader(ReaderConfig(read_threads=2, format="npz", batch_size=2))
    ep = run_epoch(reader, specs, 6, 2)
    assert ep.files_read == 6 and ep.bytes_read == 6 * 5000


@pytest.mark.parametrize("transfer", [0, 64, 4099])   # 64 and 4099 split length headers across reads
def test_tfrecord_framing_walked_across_chunks(tmp_path, transfer):
    p = tmp_path / "a.tfrecord"
    size = write_tfrecord(p, records=50, payload=333)
    reader = Reader(ReaderConfig(read_threads=1, transfer_size_bytes=transfer, format="tfrecord",
                                 samples_per_file=50, batch_size=10))
    ep = run_epoch(reader, [FileSpec(str(p), size, 50)], 50, 10)
    assert ep.bytes_read == size


def test_tfrecord_with_wrong_record_count_fails(tmp_path):
    p = tmp_path / "a.tfrecord"
    size = write_tfrecord(p, records=49, payload=100)
    reader = Reader(ReaderConfig(format="tfrecord", samples_per_file=50, batch_size=10))
    with pytest.raises(LoaderError, match="records: expected 50, got 49"):
        run_epoch(reader, [FileSpec(str(p), size, 50)], 50, 10)


def test_torn_tfrecord_fails(tmp_path):
    p = tmp_path / "a.tfrecord"
    size = write_tfrecord(p, records=10, payload=100)
    os.truncate(p, size - 50)
    reader = Reader(ReaderConfig(format="tfrecord", samples_per_file=10, batch_size=10))
    with pytest.raises(LoaderError, match="framing"):
        run_epoch(reader, [FileSpec(str(p), size - 50, 10)], 10, 10)


def test_file_truncated_after_planning_is_named(tmp_path):
    specs = [FileSpec(str(tmp_path / f"f{i}.npz"), write_npz_like(tmp_path / f"f{i}.npz", 8000), 1) for i in range(4)]
    os.truncate(specs[2].path, 3000)
    reader = Reader(ReaderConfig(read_threads=2, format="npz", batch_size=1))
    with pytest.raises(LoaderError, match=r"f2.npz: size: expected 8000 bytes, got 3000 \(truncated\)"):
        run_epoch(reader, specs, 4, 1)


def test_missing_file_and_foreign_content(tmp_path):
    reader = Reader(ReaderConfig(format="npz", batch_size=1))
    with pytest.raises(LoaderError, match="cannot open"):
        run_epoch(reader, [FileSpec(str(tmp_path / "nope.npz"), 10, 1)], 1, 1)
    p = tmp_path / "x.npz"
    p.write_bytes(b"\x89HDF" + b"\0" * 100)
    with pytest.raises(LoaderError, match="npz header"):
        run_epoch(reader, [FileSpec(str(p), 104, 1)], 1, 1)


def test_odirect_reads_into_aligned_buffers(tmp_path):
    specs = [FileSpec(str(tmp_path / f"f{i}.npz"), write_npz_like(tmp_path / f"f{i}.npz", 70_001 + i), 1) for i in range(3)]
    reader = Reader(ReaderConfig(read_threads=2, transfer_size_bytes=10_000, odirect=True, format="npz", batch_size=1))
    assert reader.config.chunk_bytes % 4096 == 0
    try:
        ep = run_epoch(reader, specs, 3, 1)
    except LoaderError as exc:   # a filesystem without O_DIRECT (tmpfs) says so in one line
        assert "Invalid argument" in str(exc)
        pytest.skip(f"O_DIRECT not supported here: {exc}")
    assert ep.bytes_read == sum(s.size_bytes for s in specs)


def test_prefetch_bounds_how_far_readers_run_ahead(tmp_path):
    specs = [FileSpec(str(tmp_path / f"f{i}.npz"), write_npz_like(tmp_path / f"f{i}.npz", 2000), 1) for i in range(40)]
    reader = Reader(ReaderConfig(read_threads=4, prefetch_size=1, format="npz", batch_size=2))
    ep = reader.epoch(specs, 40)
    try:
        ep.wait_batch(0)
        time.sleep(0.2)    # the consumer stalls: readers stop at (consumed + prefetch + 1) batches
        assert ep.files_read == (1 + 1 + 1) * 2          # (or read_threads files past it: fewer here)
    finally:
        ep.close()


def test_multi_batch_files_keep_every_thread_busy(tmp_path):
    """20-sample files, batch 5, prefetch 0: the batch window alone would allow one file at a
    time; read_threads files past the consumer may be read (TF interleave's cycle length)."""
    p = tmp_path / "a.tfrecord"
    size = write_tfrecord(p, records=20, payload=10)
    specs = [FileSpec(str(p), size, 20) for _ in range(12)]
    reader = Reader(ReaderConfig(read_threads=3, prefetch_size=0, format="tfrecord", samples_per_file=20,
                                 batch_size=5))
    ep = reader.epoch(specs, 240)
    try:
        ep.wait_batch(0)
        time.sleep(0.2)
        assert ep.files_read == 3
    finally:
        ep.close()


def test_partial_take_counts_samples_not_files(tmp_path):
    p = tmp_path / "a.tfrecord"
    size = write_tfrecord(p, records=20, payload=10)
    reader = Reader(ReaderConfig(format="tfrecord", samples_per_file=20, batch_size=5))
    # this rank uses 5 samples of file 1 and all 20 of file 2: 25 samples, 5 batches
    ep = run_epoch(reader, [FileSpec(str(p), size, 20, take=5), FileSpec(str(p), size, 20)], 25, 5)
    assert ep.files_read == 2


def test_tfrecord_framing_walked_once_per_file_then_size_checked(tmp_path):
    p = tmp_path / "a.tfrecord"
    size = write_tfrecord(p, records=30, payload=500)
    reader = Reader(ReaderConfig(read_threads=1, transfer_size_bytes=4096, format="tfrecord",
                                 samples_per_file=30, batch_size=10))
    run_epoch(reader, [FileSpec(str(p), size, 30)], 30, 10)
    assert reader.walked == {str(p)}
    ep = run_epoch(reader, [FileSpec(str(p), size, 30)], 30, 10)     # second epoch: every byte again
    assert ep.bytes_read == size
    os.truncate(p, size - 100)
    with pytest.raises(LoaderError, match="truncated"):
        run_epoch(reader, [FileSpec(str(p), size, 30)], 30, 10)


def test_buffers_are_capped_by_the_largest_file_and_every_byte_is_still_read(tmp_path):
    """A rank's read buffers are its own memory beside Python's: 8 threads of 4 MiB for 316 KiB JPEGs
    held 32 MiB of a 64 MiB miniature cgroup for nothing (issue 37). Capped at the largest file (a page
    multiple), the same files are read to the last byte."""
    sizes = [10_000 + 777 * i for i in range(6)]
    specs = [FileSpec(str(tmp_path / f"f{i}.npz"), write_npz_like(tmp_path / f"f{i}.npz", n), 1) for i, n in enumerate(sizes)]
    config = ReaderConfig(read_threads=8, format="npz", batch_size=2, max_file_bytes=max(sizes))
    assert config.chunk_bytes == 16384 and config.buffers_bytes == 8 * 16384
    reader = Reader(config)
    assert {len(b) for b in reader.buffers} == {16384}
    ep = run_epoch(reader, specs, 6, 2)
    assert ep.bytes_read == sum(sizes) and ep.files_read == 6
    assert ReaderConfig(read_threads=8).buffers_bytes == 8 * 4 * 1024 * 1024      # unknown sizes: 4 MiB each


def test_a_file_larger_than_the_planned_largest_is_read_in_chunks(tmp_path):
    big = FileSpec(str(tmp_path / "big.npz"), write_npz_like(tmp_path / "big.npz", 50_000), 1)
    reader = Reader(ReaderConfig(read_threads=1, format="npz", batch_size=1, max_file_bytes=5000))
    assert len(reader.buffers[0]) == 8192
    assert run_epoch(reader, [big], 1, 1).bytes_read == 50_000
