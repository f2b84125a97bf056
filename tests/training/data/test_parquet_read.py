"""The storage-built Parquet reader: only the needed column chunks are read, and they decode as pyarrow's."""

from pathlib import Path

import numpy as np
import pytest

from suite.training.data import datagen, parquet
from suite.training import workloads
from suite.storage.backend.posix import PosixBackend
from suite.training.data.parquet_read import ColumnReader, plan


@pytest.fixture(scope="module")
def dlrm(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("dlrm")
    w = workloads.resolve("dlrm-mini", "b200")
    datagen.generate(w, root, 2, processes=1)
    return w, root, sorted(p.relative_to(root).as_posix() for p in (root / "train").glob("*.parquet"))


def value_bits(table) -> list[bytes]:
    """Every column's value bytes (NaN-safe: the drawn floats hold NaNs, which compare unequal)."""
    import pyarrow as pa

    out = []
    for column in table.columns:
        c = column.combine_chunks()
        c = c.flatten() if pa.types.is_list(c.type) else c
        width = c.type.bit_width // 8
        out.append(np.asarray(c.buffers()[1])[c.offset * width:(c.offset + len(c)) * width].tobytes())
    return out


def test_dlrm_reads_its_40_columns_and_nothing_else(dlrm):
    import pyarrow.parquet as pq

    w, root, names = dlrm
    lay = parquet.layout(w)
    decoded = []
    stats = ColumnReader(PosixBackend(str(root)), lay.read_columns, after_decode=decoded.append).read_file(names[0])
    meta = pq.read_metadata(root / names[0])
    read = [j for j in range(meta.num_columns) if meta.schema.column(j).name in lay.read_columns]
    chunks = sum(meta.row_group(i).column(j).total_compressed_size for i in range(meta.num_row_groups) for j in read)
    everything = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    assert len(read) == 40 and stats.column_chunks == 40 * meta.num_row_groups == 440
    assert chunks <= stats.bytes_read <= 1.10 * chunks                  # the chunks, and the footer
    assert stats.bytes_read < 0.3 * everything                           # 40 of 200 columns: not the file
    assert stats.rows == 65536 and stats.row_groups == 11 and stats.io_s > 0 and stats.decode_s > 0
    assert stats.requests >= 2 + 11 and stats.requests <= 2 + 40 * 11    # the footer, then merged runs of chunks
    pf = pq.ParquetFile(root / names[0])
    for i in (0, 10):
        want = pf.read_row_group(i, columns=list(lay.read_columns))
        assert decoded[i].schema.names == want.schema.names and value_bits(decoded[i]) == value_bits(want)


def test_adjacent_chunks_are_one_request(tmp_path):
    w = workloads.resolve("flux-mini", "b200")
    datagen.generate(w, tmp_path, 1, processes=1)
    name = next((tmp_path / "train").glob("*.parquet")).relative_to(tmp_path).as_posix()
    reader = ColumnReader(PosixBackend(str(tmp_path)), parquet.layout(w).read_columns)
    first = reader.read_file(name)
    assert first.column_chunks == 5 and first.requests == 2          # the tail, then the five chunks at once
    again = reader.read_file(name)                                    # the footer is kept
    assert again.requests == 1 and again.bytes_read == first.bytes_read - reader.plans[name].footer_bytes


def test_the_buffer_gives_its_pages_back_and_the_next_file_decodes_alike(dlrm, monkeypatch):
    import pyarrow.parquet as pq

    from suite.training.data import parquet_read

    monkeypatch.setattr(parquet_read, "RELEASE_BYTES", 0)         # given back after every row group
    w, root, names = dlrm
    lay = parquet.layout(w)
    decoded = []
    reader = ColumnReader(PosixBackend(str(root)), lay.read_columns, after_decode=decoded.append)
    reader.read_file(names[0])
    assert not any(reader.map[:1 << 20])                 # the chunks' pages given back: zeros again
    reader.read_file(names[1])                            # the same map: stale bytes never decoded
    want = pq.ParquetFile(root / names[1]).read_row_group(10, columns=list(lay.read_columns))
    assert value_bits(decoded[-1]) == value_bits(want)


def test_a_column_the_file_lacks_and_a_cut_file_are_errors(dlrm, tmp_path):
    import pyarrow.parquet as pq

    _, root, names = dlrm
    meta = pq.read_metadata(root / names[0])
    with pytest.raises(ValueError, match="feature_xyz"):
        plan(meta, (root / names[0]).stat().st_size, ("feature_xyz",))
    data = (root / names[1]).read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[:len(data) // 2] + data[-(parquet.footer_length(data) + 8):])   # footer kept, chunks lost
    with pytest.raises((OSError, ValueError)):
        ColumnReader(PosixBackend(str(tmp_path)), ("feature_195",)).read_file("cut.parquet")


def test_footer_longer_than_the_first_tail_read(dlrm, monkeypatch):
    _, root, names = dlrm
    monkeypatch.setattr(parquet, "FOOTER_TAIL_BYTES", 1024)            # dlrm's footer is longer
    reader = ColumnReader(PosixBackend(str(root)), ("feature_011",))
    stats = reader.read_file(names[0])
    assert reader.plans[names[0]].footer_requests == 2 and stats.rows == 65536
    assert Path(root / names[0]).stat().st_size > stats.bytes_read
