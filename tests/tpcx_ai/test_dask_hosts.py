"""A TPCx-AI run on a dask cluster samples every host (issue 37), with a real scheduler and worker on
127.0.0.1 (tests/hostile/test_lies_io.dask_cluster: no nanny, so a killed worker stays dead). The
worker stands in for another host: the launcher's identity is set to one no worker has, so the
worker is asked to sample. The real two-host case (namespace hosts, a real run) is in
tests/tpcx_ai/test_engine_dask.py."""

import importlib.util
import os
import signal
import time

import pytest

from suite.harness import hostmetrics
from tests.hostile.test_lies_io import dask_cluster  # noqa: F401 -- the fixture

if importlib.util.find_spec("distributed") is None:   # found, not imported: collection in each worker stays light
    pytest.skip("distributed (the tpcx-ai extra) is not installed", allow_module_level=True)

ELSEWHERE = ("the-launcher", "boot-id-of-no-worker", 1)


@pytest.fixture
def cluster(dask_cluster):  # noqa: F811
    from suite.tpcx_ai import engine_dask

    address, worker = dask_cluster
    c = engine_dask.Cluster(address)
    try:
        yield c, worker
    finally:
        c.close()


def _sampling(cluster, interval_s=0.2):
    from suite.tpcx_ai import dask_hosts

    hosts = dask_hosts.DaskHosts(cluster, interval_s)
    hosts.here = ELSEWHERE
    return hosts


def test_a_worker_samples_its_host_and_a_second_host_on_one_machine_adds_no_series(cluster, tmp_path):
    from suite.tpcx_ai import dask_hosts

    c, _ = cluster
    with _sampling(c) as hosts:
        time.sleep(1.0)
    assert [d["host"] for d in hosts.docs] == ["the-launcher", dask_hosts.host_identity()[0]], hosts.docs
    assert not hosts.warnings
    assert all(len(d["samples"]) >= 3 for d in hosts.docs), [len(d["samples"]) for d in hosts.docs]
    written = hostmetrics.load(hosts.write(tmp_path))          # what every reader loads (schema 2)
    assert [h.host for h in written.hosts] == ["the-launcher", dask_hosts.host_identity()[0]]
    assert written.hosts[1].samples[-1].t_s > 0.5 and "one of its workers" in written.scope
    here = dask_hosts.DaskHosts(c, 0.2)                          # the launcher's own machine: the worker adds none
    with here:
        pass
    assert len(here.docs) == 1 and not here.picked and not here.warnings
    assert list(c.client.run(dask_hosts.stop_sampler, hosts.token).values()) == [None]   # it ended with its run


def test_a_worker_that_hangs_costs_the_bound_and_one_lost_costs_nothing(cluster, monkeypatch, tmp_path):
    """One cluster for both (a cluster's start is most of the time): its worker first stopped (SIGSTOP:
    its host hangs, TCP still accepts, nothing answers), then resumed and killed (its host gone)."""
    from suite.tpcx_ai import dask_hosts

    monkeypatch.setattr(dask_hosts, "BOUND_S", 3.0)
    c, worker = cluster
    hung = _sampling(c)
    with hung:
        os.killpg(worker.pid, signal.SIGSTOP)
        t0 = time.monotonic()
    took = time.monotonic() - t0
    os.killpg(worker.pid, signal.SIGCONT)
    assert took < 2 * 3.0 + 2, took
    assert hung.docs[1]["samples"] == [] and hung.docs[0]["samples"]
    assert any("did not answer within 3 s" in w for w in hung.warnings), hung.warnings
    assert c.stalled is None              # a host at fault is not the scheduler at fault: the run goes on

    lost = _sampling(c)
    with lost:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        deadline = time.monotonic() + 30
        while c.n_workers() and time.monotonic() < deadline:
            time.sleep(0.2)
        t0 = time.monotonic()
    assert time.monotonic() - t0 < 5
    assert len(lost.docs) == 2 and lost.docs[1]["samples"] == [] and lost.docs[0]["samples"]
    assert len(lost.warnings) == 1 and "lost during the run" in lost.warnings[0], lost.warnings
    loaded = hostmetrics.load(lost.write(tmp_path))
    assert loaded.warnings == tuple(lost.warnings) and [len(h.samples) == 0 for h in loaded.hosts] == [False, True]
    assert c.stalled is None
