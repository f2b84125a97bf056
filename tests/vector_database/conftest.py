"""vector_database fixtures: a tiny workload (registered beside workloads/ for the test), its dataset,
and the engines' venvs (built once by `suite engine install`, then reused from the engines dir)."""

import contextlib
from pathlib import Path

import pytest

TINY = """schema_version: 1
name: {name}
benchmark: vector_database
description: "test: 2,000 x 16 uniform, L2"
dataset: {{num_vectors: 2000, dimension: {dim}, distribution: uniform, metric: L2, num_queries: 50, seed: 7}}
index:
  DISKANN: {{max_degree: 16, search_list_size: 50}}
  HNSW: {{M: 8, ef_construction: 64}}
search: {{k: 10, search_list: 50, beam_width: 2, ef: 64}}
run: {{mode: query_count, query_count: 200, duration_s: 5, clients: 2, runs: 2}}
recall_floor: 0.9
"""


@pytest.fixture
def tiny(tmp_path):
    """(workload name, its data dir with the dataset written) for vdb-tiny; vdb-tiny16 beside it."""
    from suite.storage import workloads
    from suite.vector_database import dataset
    from suite.vector_database import workload

    wdir = tmp_path / "wl"
    wdir.mkdir()
    (wdir / "vdb-tiny.yaml").write_text(TINY.format(name="vdb-tiny", dim=16))
    (wdir / "vdb-tiny24.yaml").write_text(TINY.format(name="vdb-tiny24", dim=24))
    workloads.add_dir(wdir)
    try:
        data = tmp_path / "D"
        dataset.generate(workload.load("vdb-tiny"), data, processes=2, say=lambda *a: None)
        yield "vdb-tiny", data
    finally:
        workloads.remove_dir(wdir)


def engine_or_skip(name: str):
    """The engine's venv: installed once (idempotent, cached in the engines dir), or a skip saying why."""
    from suite.engines import registry
    from suite.errors import SuiteError

    if registry.installed(registry.engine(name)) is None:
        try:
            registry.install(name, say=lambda *a: None)
        except SuiteError as exc:
            pytest.skip(f"engine {name} cannot be installed here: {exc}")
    return registry.require(name)


@contextlib.contextmanager
def tiny_dataset(base: Path):
    """vdb-tiny (16 dimensions) registered from base/wl and its dataset written in base/D while the context
    holds (a test reading a result needs the workload's recall floor)."""
    from suite.storage import workloads
    from suite.vector_database import dataset, workload

    engine_or_skip("diskann")
    (base / "wl").mkdir()
    (base / "wl" / "vdb-tiny.yaml").write_text(TINY.format(name="vdb-tiny", dim=16))
    workloads.add_dir(base / "wl")
    try:
        dataset.generate(workload.load("vdb-tiny"), base / "D", processes=1, say=lambda *a: None)
        yield base / "D"
    finally:
        workloads.remove_dir(base / "wl")


def _run_tiny(base: Path, runs: int | None) -> int:
    """`suite run` of vdb-tiny with DiskANN on base/D into base/R (`runs` query runs; None: the workload's)."""
    from suite import cli

    return cli.main([str(a) for a in ("run", "--workload", "vdb-tiny", "--index", "diskann", "--data-dir",
                                      base / "D", "--results-dir", base / "R", "--allow-no-cache-drop",
                                      *(("--runs", runs) if runs else ()))])


@contextlib.contextmanager
def tiny_diskann_run(base: Path, runs: int):
    """A real `suite run` of vdb-tiny (16 dimensions) with DiskANN into base/R, `runs` query runs; the
    workload is registered while the context holds (a test reading the result needs its recall floor)."""
    with tiny_dataset(base):
        _run_tiny(base, runs)
        yield base / "R"


def made_tiny_diskann(tmp_path_factory) -> Path:
    """base: base/R a real `suite run` of vdb-tiny with DiskANN (one query run), base/wl its workload file
    (`tiny_workload(base)` registers it while a test reads the result): the session fixture `tiny_diskann`
    (tests/conftest.py), made once for every file that needs this run."""
    base = tmp_path_factory.mktemp("tiny-diskann")
    with tiny_diskann_run(base, runs=1) as results:
        pass
    assert list((results / "vector_database").glob("*/*/run/*/summary.json")), results
    return base


@contextlib.contextmanager
def tiny_workload(base: Path):
    """vdb-tiny registered (from base/wl, as `tiny_diskann_run` wrote it) while the context holds."""
    from suite.storage import workloads

    workloads.add_dir(base / "wl")
    try:
        yield
    finally:
        workloads.remove_dir(base / "wl")


def made_tiny_diskann_two(tmp_path_factory) -> dict:
    """{base, code, out, err}: base/R a real `suite run` of vdb-tiny with DiskANN as the workload says (two
    query runs, the index built first), its exit code and what it printed; base/D the dataset with the index
    that run built (a test runs on a copy of it: the index is not built again); base/wl the workload file
    (`tiny_workload(base)` registers it). The session fixture `tiny_diskann_two` (tests/conftest.py), made
    once for tests/vector_database and tests/compare (issue 47: the suite's CPU)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    base = tmp_path_factory.mktemp("tiny-diskann-two")
    out, err = io.StringIO(), io.StringIO()
    with tiny_dataset(base), redirect_stdout(out), redirect_stderr(err):
        code = _run_tiny(base, None)
    return {"base": base, "code": code, "out": out.getvalue(), "err": err.getvalue()}
