"""Parquet training data (flux, dlrm): the workloads as data, real files pyarrow and DuckDB read, the check."""

import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.errors import WorkloadError
from suite.training.data import datagen, parquet
from suite.training import workloads
from suite.storage.backend.posix import PosixBackend


def generated(tmp_path: Path, name: str, files: int) -> tuple:
    w = workloads.resolve(name, "b200")
    datagen.generate(w, tmp_path / name, files, processes=1)
    return w, sorted((tmp_path / name / "train").glob("*.parquet"))


# --------------------------------------------------------------------------- the workloads as data


def test_flux_b200_and_mi355_are_the_staged_configs():
    w = workloads.resolve("flux", "b200")
    assert (w.format, w.num_files_train, w.num_samples_per_file, w.record_length_bytes) == ("parquet", 4296, 288, 2164832)
    assert (w.batch_size, w.read_threads, w.computation_time_s, w.au_threshold, w.epochs) == (48, 8, 1.35, 0.90, 1)
    lay = parquet.layout(w)
    assert [(c.name, c.dtype, c.size) for c in lay.columns] == [
        ("t5_encodings", "float32", 524328), ("clip_encodings", "float32", 409), ("mean", "float32", 8232),
        ("logvar", "float32", 8232), ("timestamp", "float32", 7)]
    assert lay.row_bytes == lay.read_row_bytes == 2164832 and lay.compression == "none"
    m = workloads.resolve("flux", "mi355")
    assert (m.batch_size, m.computation_time_s, m.format) == (72, 2.025, "parquet")
    for accel, compute in (("h100", 0.85), ("a100", 1.1)):     # the staged a100/h100 configs are JPEG
        j = workloads.resolve("flux", accel)
        assert (j.format, j.num_samples_per_file, j.batch_size, j.computation_time_s, j.au_threshold) == \
            ("jpeg", 1, 8, compute, 0.80)


def test_dlrm_b200_reads_40_of_200_typed_columns():
    w = workloads.resolve("dlrm", "b200")
    assert (w.num_files_train, w.num_samples_per_file, w.record_length_bytes) == (1024, 4718592, 761)
    assert (w.batch_size, w.read_threads, w.prefetch_size, w.computation_time_s, w.au_threshold) == \
        (16384, 4, 2, 0.000375, 0.70)
    lay = parquet.layout(w)
    assert len(lay.columns) == 200 and len(lay.read_columns) == 40 and lay.row_group_size == 6144
    assert {c.dtype for c in lay.columns} == {"int8", "float16", "float32", "float64"}
    assert lay.row_bytes == 761 and lay.read_row_bytes == 160
    assert lay.read_columns[:3] == ("feature_011", "feature_017", "feature_018")
    assert workloads.resolve("dlrm", "mi355").computation_time_s == 0.0005625
    assert workloads.resolve("dlrm", "h100").format == "npz"


def test_columns_that_do_not_make_the_record_length_are_refused():
    with pytest.raises(WorkloadError, match="record_length: expected the columns' bytes a row \\(761\\), got 762"):
        workloads.resolve("dlrm", "b200", {"dataset.record_length": 762})
    w = workloads.resolve("flux", "b200", {"dataset.num_samples_per_file": 5000})
    w.config["dataset"]["parquet"]["row_group_size"] = 5000        # 5,000 x 524,328 values: over int32 offsets
    assert "row_group_size: expected under 4095 rows" in parquet.mismatch(w)


# --------------------------------------------------------------------------- real files


def test_flux_mini_files_read_by_pyarrow_and_duckdb(tmp_path):
    import pyarrow.parquet as pq

    w, paths = generated(tmp_path, "flux-mini", 3)
    lay = parquet.layout(w)
    assert len(paths) == 3
    table = pq.read_table(paths[1])
    assert table.num_rows == 32 and table.column_names == [c.name for c in lay.columns]
    assert len(table.column("t5_encodings")[0]) == 16384 and len(table.column("timestamp")[5]) == 7
    meta = pq.read_metadata(paths[1])
    assert meta.num_row_groups == 1 and meta.row_group(0).column(0).compression == "UNCOMPRESSED"
    duckdb = pytest.importorskip("duckdb")
    rows, width = duckdb.sql(f"select count(*), max(len(t5_encodings)) from '{paths[0]}'").fetchall()[0]
    assert (rows, width) == (32, 16384)


def test_dlrm_mini_row_groups_types_and_bytes_are_stable(tmp_path):
    import pyarrow.parquet as pq

    w, paths = generated(tmp_path, "dlrm-mini", 1)
    meta = pq.read_metadata(paths[0])
    assert meta.num_rows == 65536 and meta.num_row_groups == 11              # 10 x 6,144 + 4,096
    assert [meta.row_group(i).num_rows for i in (0, 10)] == [6144, 4096]
    table = pq.ParquetFile(paths[0]).read_row_group(3, columns=["feature_007", "feature_000", "feature_002"])
    assert [str(t) for t in table.schema.types] == ["int8", "halffloat", "double"]
    assert len(np.unique(table.column("feature_002").to_numpy())) > 6000     # drawn, not constant
    duckdb = pytest.importorskip("duckdb")
    assert duckdb.sql(f"select count(feature_199) from '{paths[0]}'").fetchall()[0][0] == 65536
    digest = hashlib.sha256(paths[0].read_bytes()).hexdigest()
    paths[0].unlink()                                          # rewritten: the same bytes
    datagen.generate(w, tmp_path / "dlrm-mini", 1, processes=1)
    assert hashlib.sha256(paths[0].read_bytes()).hexdigest() == digest


def test_check_finds_a_truncated_or_foreign_file(tmp_path):
    w, paths = generated(tmp_path, "flux-mini", 2)
    lay, backend = parquet.layout(w), PosixBackend(str(tmp_path / "flux-mini"))
    name = f"train/{paths[0].name}"
    assert parquet.check(backend, name, lay, 32, deep=True) is None
    assert "parquet rows: expected 33, got 32" in parquet.check(backend, name, lay, 33)
    data = paths[0].read_bytes()
    paths[0].write_bytes(data[:-100])
    assert "magic 'PAR1'" in parquet.check(backend, name, lay, 32)
    scan = datagen.scan(tmp_path / "flux-mini", w)
    assert scan.num_files == 1 and any("magic" in p for p in scan.problems)
    datagen.generate(w, tmp_path / "flux-mini", 2, processes=1)   # the broken one rewritten
    assert paths[0].read_bytes() == data


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 2**32 - 1))
def test_footer_parser_takes_any_bytes(body, length):
    tail = body + length.to_bytes(4, "little") + parquet.MAGIC
    try:
        parquet.parse_footer(tail)
    except (ValueError, OSError):
        pass


def test_datasize_sizes_the_parquet_workloads(run_cli):
    code, out, err = run_cli("datasize", "--workload", "dlrm", "--accelerator-type", "b200", "--accelerators", "8",
                             "--client-hosts", "1", "--host-memory", "512GiB")
    assert code == 0, err
    # 5 x 512 GiB / (4,718,592 samples x 761 B) = 765.5 files: the memory rule (500 steps need 13)
    assert "files         765" in out and "5x host-memory rule" in out
    code, out, err = run_cli("datasize", "--workload", "flux", "--accelerator-type", "mi355", "--accelerators", "4",
                             "--client-hosts", "1", "--host-memory", "64GiB")
    assert code == 0 and "files         551" in out, out + err     # 5 x 64 GiB / (288 x 2,164,832 B) = 551.2
