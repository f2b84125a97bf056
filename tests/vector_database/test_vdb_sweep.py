"""`suite run --sweep` and `--dram-ratios` (issue 48): the search-list ladder's recall–QPS Pareto front and
the headline read off it (QPS at recall@10 >= the floor), and the DRAM:index ratios held by a memory cgroup
giving different I/O figures; real DiskANN runs of vdb-tiny, one run per point to stay short."""

import glob
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.enforce import iocount
from suite.errors import SuiteError
from suite.vector_database import dram, sweep
from tests.vector_database.conftest import tiny_workload


# --------------------------------------------------------------------------- the front and the headline

def _pt(label, recall, qps):
    return {"label": label, "recall": recall, "throughput_qps": qps}


def test_pareto_drops_dominated_points_and_the_headline_is_the_fastest_above_the_floor():
    pts = [_pt("a", 0.40, 1200.0), _pt("b", 0.60, 900.0), _pt("c", 0.55, 800.0),     # c: b beats it on both
           _pt("d", 0.92, 300.0), _pt("e", 0.97, 150.0), _pt("f", 0.91, 250.0)]       # f: d beats it
    assert sweep.pareto(pts) == ["a", "b", "d", "e"]
    h = sweep.headline(pts, 0.90)
    assert (h["point"], h["throughput_qps"], h["recall"], h["floor"]) == ("d", 300.0, 0.92, 0.90)
    assert sweep.headline(pts, 0.98) is None
    assert sweep.headline([_pt("x", None, 10.0)], 0.0) is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0.1, 1e6)), min_size=1, max_size=12), st.floats(0, 1))
def test_headline_is_on_the_front_and_never_under_the_floor(raw, floor):
    pts = [_pt(str(i), r, q) for i, (r, q) in enumerate(raw)]
    front, h = sweep.pareto(pts), sweep.headline(pts, floor)
    assert front
    if h is None:
        assert all(p["recall"] < floor for p in pts)
    else:
        assert h["recall"] >= floor and h["point"] in front
        assert all(p["throughput_qps"] <= h["throughput_qps"] for p in pts if p["recall"] >= floor)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_dram_ratios_parse_or_refuse_in_one_line(text):
    try:
        got = dram.parse_percents(text)
    except SuiteError as exc:
        assert str(exc).startswith("--dram-ratios: expected") and "\n" not in str(exc)
    else:
        assert got and all(0 < v <= 100 for v in got) and len(set(got)) == len(got)


def test_dram_ratios_examples():
    assert dram.parse_percents("10,25,100") == (10.0, 25.0, 100.0)
    for bad in ("0,10", "10,10", "150", "ten", ""):
        with pytest.raises(SuiteError):
            dram.parse_percents(bad)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["v1", "v2"]))
def test_io_counter_parsers_take_any_text(text, version):
    """The counter files are read as they are: whatever their text, a dict of ints or None, never a traceback."""
    dev = iocount.parse_device_stat(text)
    assert dev is None or all(isinstance(v, int) and v >= 0 for v in dev.values())
    cg = iocount.parse_stats(version, {"io.stat": text, "blkio.throttle.io_service_bytes": text,
                                       "blkio.throttle.io_serviced": text}, "7:0")
    assert cg is None or all(isinstance(v, int) for v in cg.values())


def test_io_counter_parsers_read_the_kernels_formats():
    assert iocount.parse_device_stat("   10    2   160   5 0 0 0 0 0 0 0\n") == {"read_ios": 10, "read_merges": 2,
                                                                                   "read_bytes": 81920}
    v2 = "7:0 rbytes=8192 wbytes=0 rios=2 wios=0 dbytes=0 dios=0\n254:0 rbytes=1 rios=1\n"
    assert iocount.parse_stats("v2", {"io.stat": v2}, "7:0") == {"read_bytes": 8192, "read_ios": 2}
    v1b = "7:0 Read 4096\n7:0 Write 0\n254:0 Read 99\nTotal 4195\n"
    v1n = "7:0 Read 1\n7:0 Write 0\nTotal 1\n"
    assert iocount.parse_stats("v1", {"blkio.throttle.io_service_bytes": v1b, "blkio.throttle.io_serviced": v1n},
                               "7:0") == {"read_bytes": 4096, "read_ios": 1}


# --------------------------------------------------------------------------- real runs

@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory, tiny_diskann_two):
    """base: base/D a copy of the session's vdb-tiny dataset with its DiskANN index built (tests/conftest.py
    `tiny_diskann_two`), vdb-tiny registered while the module's tests run."""
    base = tmp_path_factory.mktemp("sweep")
    shutil.copytree(tiny_diskann_two["base"] / "D", base / "D")
    with tiny_workload(tiny_diskann_two["base"]):
        yield base


def _suite(run_cli, base: Path, *extra):
    """A sweep of one run per point, 50 queries a run (each of vdb-tiny's 50 queries once: the workload's 200
    cycle them, which moves no figure a test reads but costs CPU)."""
    return run_cli("run", "--workload", "vdb-tiny", "--index", "diskann", "--data-dir", base / "D", "--runs", "1",
                   "--query-count", "50", "--allow-no-cache-drop", *extra)


def test_sweep_finds_qps_at_the_floor_and_draws_the_front(tiny_data, run_cli, tmp_path):
    # one client process a point (two read the same queries): the ladder, not the load, is the point here
    code, out, err = _suite(run_cli, tiny_data, "--sweep", "--clients", "1", "--results-dir", tmp_path / "S")
    assert code == 0, out + err
    doc = json.loads((tmp_path / "S" / "vdb_sweep.json").read_text())
    pts = doc["points"]
    assert [p["value"] for p in pts] == [10, 20, 40, 80, 160] and all(p["runs"] == 1 for p in pts)   # k x 1..16
    assert pts[-1]["recall"] > pts[0]["recall"] and pts[-1]["read_ops_per_query"] > pts[0]["read_ops_per_query"]
    h = doc["headline"]
    assert doc["recall_floor"] == 0.9 and h["recall"] >= 0.9
    assert h["throughput_qps"] == max(p["throughput_qps"] for p in pts if p["recall"] >= 0.9)
    assert f"headline: {h['throughput_qps']:,.1f} QPS at recall@10" in out
    for p in pts:                       # each point its own benchmark of one run, after a cache clear
        leaf, = glob.glob(str(tmp_path / "S" / p["label"] / "vector_database/diskann/DISKANN/run/*/summary.json"))
        s = json.loads(Path(leaf).read_text())
        assert s["search"]["search_list"] == p["value"] and s["cache_drop"]["attempted"]
    code, out, err = run_cli("report", tmp_path / "S", "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Recall–QPS curve (search\\_list ladder)" in md and (tmp_path / "rep" / "plots" / "vdb-sweep-curve.png").is_file()
    assert f"QPS at recall@10 \\>= 0.9 (read off the curve): {h['throughput_qps']:,.1f}" in md


def test_three_dram_ratios_give_three_io_figures(tiny_data, run_cli, tmp_path):
    code, out, err = _suite(run_cli, tiny_data, "--dram-ratios", "10,25,100", "--results-dir", tmp_path / "M")
    assert code == 0, out + err
    doc = json.loads((tmp_path / "M" / "vdb_sweep.json").read_text())
    reads = [p["read_ops_per_query"] for p in doc["points"]]
    assert [p["value"] for p in doc["points"]] == [10, 25, 100]
    assert reads[0] > reads[1] > reads[2] >= 0, reads          # the node cache the ratio buys avoids reads
    for p in doc["points"]:
        mem = p["dram"]["cgroup"]
        assert p["dram"]["limit_bytes"] == p["dram"]["headroom_bytes"] + int(p["dram"]["index_bytes"] * p["value"] / 100)
        assert abs(mem["applied_bytes"] - p["dram"]["limit_bytes"]) < 4096 and mem["removed"] and mem["oom_kills"] == 0
        assert 0 < mem["peak_bytes"] <= mem["applied_bytes"]
    code, out, err = run_cli("report", tmp_path / "M", "--out", tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert code == 0 and "DRAM:index ratios" in md and all(f"| {v} % |" in md for v in (10, 25, 100))


def test_sweep_refusals(tiny_data, run_cli, tmp_path):
    code, out, err = _suite(run_cli, tiny_data, "--sweep", "--dram-ratios", "10,100", "--results-dir", tmp_path / "X")
    assert code == 2 and "expected it or --dram-ratios, got both" in err
    code, out, err = _suite(run_cli, tiny_data, "--dram-ratios", "10,abc", "--results-dir", tmp_path / "Y")
    assert code == 2 and "--dram-ratios: expected" in err
    assert not (tmp_path / "X").exists() and not (tmp_path / "Y").exists()
