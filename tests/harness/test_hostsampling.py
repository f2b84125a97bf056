"""suite.harness.hostsampling: every host of a run sampled through the launcher. Here the launcher is a
real one that runs the command on this machine (as `ssh localhost` would), so the samplers are real
processes reading this /proc; a host named "down" fails as an unreachable ssh host does (exit 255),
one named "mute" never answers and never ends by itself. The real namespace-host runs are in
tests/training/run/test_hosts.py and tests/kv_cache/test_kv_hosts.py."""

import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import host_builders
import pytest

from suite.errors import ResultError
from suite.harness import hostmetrics, hostsampling
from suite.harness.hosts import Launcher

LAUNCHER = r"""#!/bin/sh
# ssh's calling convention ([-x] [-o OPT] HOST COMMAND), the command run here
while [ $# -gt 0 ]; do case "$1" in -o) shift 2 ;; -*) shift ;; *) break ;; esac; done
host=$1; shift
case "$host" in
    down) echo "ssh: connect to host down port 22: Connection refused" >&2; exit 255 ;;
    mute) exec sleep 300 ;;
esac
exec sh -c "$*"
"""


@pytest.fixture
def launcher(tmp_path):
    path = tmp_path / "launcher"
    path.write_text(LAUNCHER)
    path.chmod(0o755)
    return Launcher(str(path))


def cluster(launcher, *names):
    return SimpleNamespace(launcher=launcher, hosts=[SimpleNamespace(name=n) for n in names])


def test_every_host_is_sampled_for_the_run_and_named(launcher, tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_HOST_METRICS_INTERVAL_S", "0.1")
    with hostsampling.sampling(lambda: tmp_path, cluster(launcher, "h1", "h2")) as fleet:
        time.sleep(0.6)
    assert all(r.proc.returncode == 0 for r in fleet.remotes)      # each sampler ended with the run
    rec = hostmetrics.load(tmp_path / hostmetrics.FILE)
    assert [hm.host for hm in rec.hosts] == ["h1", "h2"] and rec.warnings == ()
    assert rec.scope == hostsampling.scope(2) and rec.at(1) == "hosts[1]."
    for hm in rec.hosts:        # the baseline before the run started, a sample each 0.1 s, one at its end
        assert len(hm.samples) >= 4 and hm.samples[-1].t_s >= 0.5 and hm.interval_s == 0.1
        assert hm.samples[-1].mem_used_bytes > 0 and hm.sampler_cpu_s > 0


def test_a_host_whose_sampler_fails_is_a_warning_not_a_failed_run(launcher, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SUITE_HOST_METRICS_INTERVAL_S", "0.1")
    monkeypatch.setattr(hostsampling, "READY_TIMEOUT_S", 2.0)
    monkeypatch.setattr(hostsampling, "STOP_TIMEOUT_S", 2.0)
    t0 = time.monotonic()
    with hostsampling.sampling(lambda: tmp_path, cluster(launcher, "h1", "down", "mute")) as fleet:
        time.sleep(0.3)
    assert time.monotonic() - t0 < 8          # the run waited at most READY_TIMEOUT_S + STOP_TIMEOUT_S on them
    mute = fleet.remotes[2].proc
    assert mute.returncode is not None        # the launcher that never answered was killed
    rec = hostmetrics.load(tmp_path / hostmetrics.FILE)
    assert [hm.host for hm in rec.hosts] == ["h1", "down", "mute"]       # every host named, in the run's order
    assert rec.hosts[0].samples and not rec.hosts[1].samples and not rec.hosts[2].samples
    down, silent = rec.warnings
    assert down.startswith("host down: not sampled through ") and "exit 255" in down and "Connection refused" in down
    assert silent.startswith("host mute: not sampled") and "within 2 s of the run's end" in silent
    out = capsys.readouterr().out
    assert "warning: host metrics: host down" in out and "warning: host metrics: host mute" in out
    from suite.report import hostplots
    from suite.report.content import Image, Table, Text

    sec = hostplots.section("host", [(name, hm, None) for name, hm in hostmetrics.below(tmp_path)])
    assert [r[1] for r in next(b for b in sec.blocks if isinstance(b, Table)).rows] == ["h1", "down", "mute"]
    assert len([b for b in sec.blocks if isinstance(b, Image)]) == 1
    assert [b.text for b in sec.blocks if isinstance(b, Text)] == [
        f".: host {h}: no samples (see the warnings in its host_metrics.json)." for h in ("down", "mute")]


def test_a_failed_or_interrupted_run_still_ends_every_sampler(launcher, tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_HOST_METRICS_INTERVAL_S", "0.1")
    with pytest.raises(KeyboardInterrupt):
        with hostsampling.sampling(lambda: tmp_path, cluster(launcher, "h1", "h2")) as fleet:
            raise KeyboardInterrupt
    assert all(r.proc.returncode == 0 for r in fleet.remotes)
    assert [hm.host for hm in hostmetrics.load(tmp_path / hostmetrics.FILE).hosts] == ["h1", "h2"]


def test_the_sampler_ends_when_the_run_that_started_it_is_killed(tmp_path):
    """The run SIGKILLed: its end of the sampler's stdin closes with it, and the sampler ends."""
    code = ("import subprocess, sys, time\n"
            "p = subprocess.Popen([sys.executable, '-m', 'suite.harness.hostsampling', '--interval-s', '0.05'],"
            " stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True)\n"
            "print(p.pid, flush=True)\ntime.sleep(300)\n")
    run = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    sampler = int(run.stdout.readline())
    run.kill()
    run.wait()
    for _ in range(100):
        try:
            os.kill(sampler, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(sampler, 9)
    pytest.fail("the sampler outlived the run that started it")


def test_the_sampler_prints_its_series_when_its_stdin_ends():
    out = subprocess.run([sys.executable, "-m", "suite.harness.hostsampling", "--interval-s", "0.05"],
                         input=b"", capture_output=True, timeout=60)
    ready, series = out.stdout.decode().splitlines()
    assert out.returncode == 0 and ready == hostsampling.READY
    (hm,) = hostmetrics.load_doc(hostmetrics.document([json.loads(series)], "t")).hosts
    assert len(hm.samples) == 1
    bad = subprocess.run([sys.executable, "-m", "suite.harness.hostsampling", "--interval-s", "0"],
                         input="", capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--interval-s: expected seconds > 0" in bad.stderr


def test_both_schema_versions_load_and_a_host_named_twice_is_refused(tmp_path):
    v1 = host_builders.doc([host_builders.sample(1), host_builders.sample(2)])
    old = hostmetrics.load(host_builders.write(tmp_path, v1))       # a single-host file of before
    assert [hm.host for hm in old.hosts] == ["h1"] and old.at(0) == "" and old.schema_version == 1
    entry = {k: v for k, v in v1.items() if k not in ("schema_version", "scope")}
    two = hostmetrics.document([entry, dict(entry, host="h2")], "every host", ["host h3: not sampled"])
    rec = hostmetrics.load(host_builders.write(tmp_path, two))
    assert [hm.host for hm in rec.hosts] == ["h1", "h2"] and rec.warnings == ("host h3: not sampled",)
    twice = hostmetrics.document([entry, entry], "every host")
    with pytest.raises(ResultError, match=r"hosts\[1\]\.host: expected a host not named before, got 'h1'") as exc:
        hostmetrics.load(host_builders.write(tmp_path, twice))
    assert "\n" not in str(exc.value)
    backwards = [host_builders.sample(2), host_builders.sample(1)]
    broken = hostmetrics.document([entry, dict(entry, host="h2", samples=backwards)], "x")
    with pytest.raises(ResultError, match=r"hosts\[1\]\.samples\[1\]\.t_s: expected more than 2"):
        hostmetrics.load(host_builders.write(tmp_path, broken))
    with pytest.raises(ResultError, match="hosts.0: unknown key 'scope'"):
        hostmetrics.load(host_builders.write(tmp_path, hostmetrics.document([dict(entry, scope="x")], "x")))


def test_many_hosts_keep_fewer_points_each_so_the_file_stays_loadable():
    """An hour at 1 s on every host of a large run: each host's sampler thins its series to
    points_per_host(hosts), and the file of all of them, at the largest numbers, is under the loader's bound."""
    assert hostmetrics.points_per_host(2) == hostmetrics.MAX_POINTS and hostmetrics.points_per_host(10 ** 6) == 8
    for hosts in (11, 64, 1000):
        keep = hostmetrics.points_per_host(hosts)
        big = dict(host_builders.sample(1e8 + 0.123456, disk_read=10 ** 17), mem_used_bytes=10 ** 17,
                   page_cache_bytes=10 ** 17, disk_write_bytes=10 ** 17, net_rx_bytes=10 ** 17, net_tx_bytes=10 ** 17)
        entry = {k: v for k, v in host_builders.doc([big] * keep).items() if k not in ("schema_version", "scope")}
        doc = hostmetrics.document([dict(entry, host=f"host-{i:04d}.example.org") for i in range(hosts)], "every host")
        assert len(json.dumps(doc)) < hostmetrics.MAX_FILE_BYTES, hosts
    out = subprocess.Popen([sys.executable, "-m", "suite.harness.hostsampling", "--interval-s", "0.01",
                            "--max-points", "4"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert out.stdout.readline().decode().strip() == hostsampling.READY   # sampling (a busy machine is slow to start)
    time.sleep(1.0)                       # ~100 points taken, thinned to at most 4
    series, _ = out.communicate(b"", timeout=60)
    doc = json.loads(series.decode().splitlines()[-1])
    assert len(doc["samples"]) <= 3 and doc["interval_s"] > 0.01
