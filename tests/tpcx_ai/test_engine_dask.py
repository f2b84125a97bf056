"""--engine dask for real: a scheduler and a worker on each of two network-namespace hosts
(tools/netns-hosts.sh, tools/netns-launcher, as the multi-host storage tests use), the toy table
group and two toy use cases with two streams; the same quality figures as the local engine, one
parquet row group per generated chunk, the workers and their hosts in the result."""

import importlib.util
import json

import pytest
import tpcx_toy

from suite.tpcx_ai import driver

from suite.tpcx_ai import generate

from suite.tpcx_ai import leaf as result
from tests.training.run.test_hosts import netns_hosts  # noqa: F401 -- the module's namespace hosts
from tests.tpcx_ai import dask_netns

if importlib.util.find_spec("distributed") is None:   # found, not imported: collection in each worker stays light
    pytest.skip("distributed (the tpcx-ai extra) is not installed", allow_module_level=True)

SF = 0.02
USE_CASES = (1, 2)


def _run(tmp, name, **engine):
    reg = tpcx_toy.registry(tmp / name, use_cases=USE_CASES)
    opts = driver.Options(scale_factor=SF, data_dir=tmp / name / "data", results_dir=tmp / name / "res", streams=2,
                          use_cases=USE_CASES, processes=1, seed=3, registry=reg, out=lambda line: None,
                          launcher="fork", **engine)
    run = driver.Driver(opts).execute()
    return run, result.write(opts.results_dir, result.to_doc(run))


@pytest.fixture(scope="module")
def runs(netns_hosts, tmp_path_factory):  # noqa: F811
    tmp = tmp_path_factory.mktemp("dask")
    local = _run(tmp, "local")
    with dask_netns.cluster(netns_hosts, tmp / "cluster-logs") as address:
        dask = _run(tmp, "dask", engine="dask", scheduler=address)
    return local, dask, netns_hosts, tmp


def test_dask_across_two_hosts_gives_the_local_engines_quality(runs):
    (local, _), (dask, path), hosts, _ = runs
    assert local.status == dask.status == "complete" and not dask.failed and not dask.errors
    assert set(dask.quality) == set(USE_CASES)
    for n in USE_CASES:
        assert dask.quality[n]["value"] == pytest.approx(local.quality[n]["value"], rel=1e-12), n
        assert dask.quality[n]["passed"]
    doc = json.loads(path.read_text())
    assert doc["engine"]["name"] == "dask" and not doc["engine"]["local_cluster"]
    assert sorted(w["hostname"] for w in doc["engine"]["workers"]) == sorted(hosts)
    assert all(w["threads"] == 1 and w["memory_limit_bytes"] > 0 for w in doc["engine"]["workers"])
    assert {p["hostname"] for p in doc["engine"]["placements"]} <= set(hosts)
    assert len(doc["engine"]["placements"]) == len([j for j in dask.jobs if j.use_case is not None])
    assert result.read(path)["engine"]["scheduler"].startswith("tcp://")


def test_generation_is_byte_identical_and_load_has_one_row_group_per_chunk(runs):
    import pyarrow.parquet as pq

    *_, tmp = runs
    for split in ("training", "serving"):
        chunks = generate.read_manifest(tmp / "dask" / "data")["chunks"][split]["toy_points"]["chunks"]
        a = tmp / "local" / "data" / generate.RAW / split / "toy_points"
        b = tmp / "dask" / "data" / generate.RAW / split / "toy_points"
        for c in chunks:
            assert (a / generate.part_name(c)).read_bytes() == (b / generate.part_name(c)).read_bytes()
        meta = pq.ParquetFile(tmp / "dask" / "data" / split / "toy_points.parquet").metadata
        assert meta.num_row_groups == len(chunks) > (split == "training")
        doc = json.loads((tmp / "dask" / "res" / "tpcxai-result.json").read_text())
        assert doc["engine"]["partitions"][split]["toy_points"] == len(chunks)
        local = pq.read_table(tmp / "local" / "data" / split / "toy_points.parquet")
        assert pq.read_table(tmp / "dask" / "data" / split / "toy_points.parquet").equals(local)


def test_the_local_engine_records_itself(runs):
    (local, path), *_ = runs
    assert json.loads(path.read_text())["engine"] == {"name": "local"}


def test_engine_options_refused_where_they_do_not_apply(run_cli):
    code, _, err = run_cli("run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2 and "--scheduler: expected only with --engine dask" in err
    code, _, err = run_cli("run", "--workload", "unet3d", "--engine", "dask")
    assert code == 2 and "--engine dask: expected suite or dlio for unet3d" in err


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:1", "nonsense::", "http://example.invalid"])
def test_a_bad_or_unreachable_scheduler_is_one_line_exit_2(run_cli, monkeypatch, tmp_path, address):
    from suite.tpcx_ai import engine_dask

    monkeypatch.setattr(engine_dask, "CONNECT_TIMEOUT_S", 2)
    code, _, err = run_cli("run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--use-cases", "1", "--streams", "1",
                           "--engine", "dask", "--scheduler", address, "--results-dir", str(tmp_path / "r"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--scheduler: expected a reachable dask scheduler address" in err and address in err
    assert not (tmp_path / "r").exists()


def test_every_host_of_the_dask_run_is_sampled_on_the_host_itself(runs, run_cli):
    """host_metrics.json of the dask run: the launcher's series and one per namespace host, each taken
    inside its host's network namespace (its own interfaces, not the launcher's bridge and veths)."""
    import socket

    from suite.harness import hostmetrics

    (_, _), (dask, path), hosts, _ = runs
    got = hostmetrics.load(path.parent / hostmetrics.FILE)
    assert [h.host for h in got.hosts] == [socket.gethostname(), *sorted(hosts)], got.hosts
    assert not got.warnings and "one of its workers" in got.scope
    launcher, *workers = got.hosts
    for h in got.hosts:
        assert len(h.samples) >= 2 and h.samples[-1].t_s > 1.0, (h.host, len(h.samples))
    for h in workers:
        assert h.net_interfaces and set(h.net_interfaces) != set(launcher.net_interfaces), h.net_interfaces
    local = hostmetrics.load(runs[0][1].parent / hostmetrics.FILE)
    assert [h.host for h in local.hosts] == [socket.gethostname()]
    out = runs[3] / "page"
    code, _, err = run_cli("report", path.parent, "--out", out)
    assert code == 0, err
    html = (out / "index.html").read_text()
    for h in got.hosts:                  # the page plots every host's series
        assert f"host {h.host}: CPU and disk over time" in html, h.host
