"""suite/vector_database/dataset.py: the files' layout, the exact ground truth, the refusals; hostile headers."""

import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from suite.errors import SuiteError
from suite.vector_database import dataset
from suite.vector_database import workload


def test_ground_truth_is_the_exact_neighbours(tiny):
    name, data = tiny
    x = np.asarray(dataset.read_matrix(data / dataset.VECTORS))
    q = np.asarray(dataset.read_matrix(data / dataset.QUERIES))
    ids, dist = dataset.read_truth(data / dataset.TRUTH)
    full = ((q[:, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1)
    want = np.argsort(full, axis=1, kind="stable")[:, :10]
    assert ids.shape == (50, 10) and (ids == want).mean() > 0.999         # ties aside, the same ids
    assert np.allclose(dist, np.take_along_axis(full, want, 1), rtol=1e-3, atol=1e-4)
    meta = dataset.verify(workload.load(name), data)
    assert meta["ground_truth"]["complete"] and meta["ground_truth"]["coverage_vectors"] == 2000


def test_ground_truth_chunked_and_parallel_agree(tiny):
    _, data = tiny
    a, _ = dataset.read_truth(data / dataset.TRUTH)
    dataset.ground_truth(data, "L2", 10, processes=1, chunk=333)          # other chunking, one process
    b, _ = dataset.read_truth(data / dataset.TRUTH)
    assert (a == b).mean() > 0.999


def test_refusals_are_one_line_exit_2(tiny, run_cli, tmp_path):
    name, data = tiny
    # another workload's dimension
    code, out, err = run_cli("run", "--workload", "vdb-tiny24", "--index", "diskann", "--data-dir", data,
                             "--results-dir", tmp_path / "R1")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "dimension: expected 24" in err
    # the ground truth missing
    (data / dataset.TRUTH).rename(data / "gt.moved")
    code, out, err = run_cli("run", "--workload", name, "--index", "diskann", "--data-dir", data,
                             "--results-dir", tmp_path / "R2")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "groundtruth.ibin: expected the exact ground truth" in err
    (data / "gt.moved").rename(data / dataset.TRUTH)
    # queries of another dimension than the base vectors
    with open(data / dataset.QUERIES, "r+b") as f:
        f.write(struct.pack("<II", 25, 32))
    code, out, err = run_cli("run", "--workload", name, "--index", "diskann", "--data-dir", data,
                             "--results-dir", tmp_path / "R3")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "queries.fbin: dimension: expected 16 (the base vectors'), got 32" in err
    assert not (tmp_path / "R1").exists() and not (tmp_path / "R3").exists()


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=64))
def test_header_of_any_bytes_is_a_shape_or_one_line(tmp_path_factory, blob):
    p = tmp_path_factory.mktemp("h") / "x.fbin"
    p.write_bytes(blob)
    try:
        n, d = dataset.header(p)
    except SuiteError as exc:
        assert "\n" not in str(exc) and str(p) in str(exc)
    else:
        assert 8 + n * d * 4 == len(blob) and 0 < d <= dataset.MAX_DIM
