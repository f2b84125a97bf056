"""`suite run` across hosts, for real: network-namespace hosts (tools/netns-hosts.sh: own address,
own hostname, shared file system) reached through tools/netns-launcher, real mpiexec (hydra's
-launcher ssh -launcher-exec) starting real ranks over TCP, a real cache drop and a real memory
cgroup per host. The namespaces share one kernel, so the cgroups are named per host."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from suite import files
from suite.errors import RuleError, SuiteError
from suite.harness import hostmetrics
from suite.harness import hosts as hostmod
from suite.report import hostplots
from tests.conftest import REPO
from tests.training.run.test_runner import UNET, alive, make_data, params, start_cli, wait_for

TOOLS = REPO / "tools"
LAUNCHER = TOOLS / "netns-launcher"
CGROUP_SUITE = Path("/sys/fs/cgroup/memory/suite")


def _netns_usable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, cgroups, cache drop)"
    for tool in ("ip", "nsenter", "unshare"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
            return f"needs {tool}"
    return None


@pytest.fixture(scope="module")
def netns_hosts():
    """Two namespace hosts, made for this module and removed after it (also when a test fails);
    a prefix and subnet of our own, so a user's rig (suite-h*, 10.231.0) is never touched."""
    why = _netns_usable()
    if why:
        pytest.skip(why)
    prefix = f"st{os.getpid() % 100000}h"
    env = dict(os.environ, SUITE_NETNS_SUBNET=f"10.231.{100 + os.getpid() % 150}")
    up = subprocess.run(["sh", str(TOOLS / "netns-hosts.sh"), "up", "2", prefix], env=env,
                        capture_output=True, text=True, timeout=60)
    try:
        if up.returncode != 0:
            pytest.skip(f"network namespaces unusable here: {up.stderr.strip()[-300:]}")
        yield up.stdout.split()
    finally:
        subprocess.run(["sh", str(TOOLS / "netns-hosts.sh"), "down", prefix], env=env, timeout=60)
        assert not [ns for ns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                    if ns.startswith(prefix)]


@pytest.fixture(scope="module")
def unet_data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("unet") / "data", "unet3d", UNET, 30)


def host_cgroups(hosts) -> list[str]:
    """Run cgroups of these (this module's own) hosts still present: suite-run-<pid>-<k>-<host>."""
    if not CGROUP_SUITE.is_dir():
        return []
    return sorted(p.name for p in CGROUP_SUITE.iterdir()
                  if p.name.startswith("suite-run-") and p.name.endswith(tuple(f"-{h}" for h in hosts)))


def test_placement_is_the_same_per_host_and_closed_refuses_otherwise():
    assert hostmod.placement(4, ["a", "b"], "closed") == [2, 2]
    assert hostmod.placement(3, ["a", "b"], "open") == [2, 1]
    with pytest.raises(RuleError, match="expected a multiple of the 2 hosts"):
        hostmod.placement(3, ["a", "b"], "closed")
    with pytest.raises(SuiteError, match="at least one per host"):
        hostmod.placement(1, ["a", "b"], "open")


def test_closed_refuses_a_host_that_cannot_drop_its_cache_or_make_a_cgroup():
    from suite.training.run.prepare import Options

    def host(name, drop=True, cgroup="v1"):
        return hostmod.Host(name=name, hostname=name, ranks=[0], mem_total_bytes=1 << 34, cpu_count=2,
                            cgroup_version=cgroup, cgroup_reason="(what the probe said)", drop_caches_writable=drop)

    closed = Options(workload="unet3d", accelerators=2)
    hostmod._refuse(closed, [host("a"), host("b")])                  # both can: no refusal
    with pytest.raises(RuleError, match="drop the page cache on every host .* got none on b"):
        hostmod._refuse(closed, [host("a"), host("b", drop=False)])
    hostmod._refuse(Options(workload="unet3d", accelerators=2, division="open"), [host("a"), host("b", drop=False)])
    limited = Options(workload="unet3d", accelerators=2, memory_limit=1 << 30)
    with pytest.raises(SuiteError, match="memory cgroup .* on every host, got none on b: .what the probe said."):
        hostmod._refuse(limited, [host("a"), host("b", cgroup=None)])
    with pytest.raises(SuiteError, match="at most every host's MemTotal, got 1073741824 bytes > 1000 on b"):
        small = host("b")
        small.mem_total_bytes = 1000
        hostmod._refuse(limited, [host("a"), small])


@pytest.fixture(scope="module")
def two_host_run(netns_hosts, unet_data, tmp_path_factory):
    """Two runs of 4 ranks over the two namespace hosts (2 each, from a host file): (results dir, the
    finished `suite run`), made once for the tests that read it."""
    h1, h2 = netns_hosts
    tmp_path = tmp_path_factory.mktemp("two-hosts")
    res = tmp_path / "res"
    hostfile = tmp_path / "hostfile"
    hostfile.write_text(f"{h1}:2\n{h2}:2\n")
    proc = in_process(["run", "--workload", "unet3d", "--accelerators", "4", "--data-dir", str(unet_data),
                       "--results-dir", str(res), "--runs", "2", "--division", "open", "--memory-limit", "256MiB",
                       "--hostfile", str(hostfile), "--launcher", str(LAUNCHER), *params(UNET, tmp_path)],
                      SUITE_HOST_METRICS_INTERVAL_S="0.2")
    return res, proc


def in_process(argv, **env) -> subprocess.CompletedProcess:
    """`suite ARGV` in this process (cli.main, as the console script calls it, without a new interpreter
    importing the suite again), `env` set for its duration (module scope: no monkeypatch): what it said."""
    import contextlib
    import io

    from suite import cli

    old = {k: os.environ.get(k) for k in env}
    out, err = io.StringIO(), io.StringIO()
    os.environ.update(env)
    try:
        with contextlib.chdir(REPO), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main([str(a) for a in argv])
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def test_two_hosts_two_ranks_each_then_suite_check_reproduces_the_numbers(netns_hosts, two_host_run):
    h1, h2 = netns_hosts
    res, proc = two_host_run
    assert proc.returncode == 1, proc.stderr          # open with overrides: complete, not compliant
    assert "[METRIC] Number of Simulated Accelerators: 4" in proc.stdout
    run_set = json.loads((res / "run_set.json").read_text())
    for k in (1, 2):
        run = res / f"run-{k}"
        assert sorted(p.name for p in run.iterdir()) == [h1, h2]
        assert sorted(p.name for p in (run / h2).iterdir()) == ["configs"]      # DLIO: rank 0's host has the rest
        doc = files.load_json(run / h1 / "results.json", schema="results")
        assert doc["status"] == "complete" and doc["hosts"] == [h1, h2] and doc["num_hosts"] == 2
        # the ranks really ran where they were placed: 0,1 on h1 and 2,3 on h2 (each wrote its hostname)
        placed = {r: (run / h1 / "ranks" / f"rank-{r}.pid").read_text().split()[0] for r in range(4)}
        assert placed == {0: h1, 1: h1, 2: h2, 3: h2}
        per_host = doc["enforcement"]["hosts"]
        assert [h["host"] for h in per_host] == [h1, h2] and [h["ranks"] for h in per_host] == [[0, 1], [2, 3]]
        for h in per_host:
            assert h["cache_drop"]["succeeded"] is True and h["cache_drop"]["hostname"] == h["host"]
            mem = h["memory_limit"]
            assert h["host"] in mem["path"] and mem["version"] == "v1"
            assert mem["applied_bytes"] == 256 * 1024**2 == h["memory_bytes"]
            assert 10 * 1024**2 < mem["peak_bytes"] <= mem["applied_bytes"]     # two python ranks each
            assert mem["removed"] is True and not Path(mem["path"]).exists()
        # dataset rule: the sum of the hosts' limits
        assert doc["enforcement"]["host_memory_bytes"] == 512 * 1024**2
        assert doc["enforcement"]["datasize"]["client_hosts"] == 2
        summary = json.loads((run / h1 / "summary.json").read_text())
        assert summary["num_hosts"] == 2 and summary["hostname"] == h1 and summary["num_accelerators"] == 4
        assert summary["host_memory_GB"] == [0.25, 0.25] and len(summary["host_cpu_count"]) == 2
        assert run_set["runs"][k - 1]["path"] == f"run-{k}/{h1}/results.json"
    assert host_cgroups(netns_hosts) == []
    from suite.submission import evidence          # `suite submission add` finds each run's results.json
    assert [r.path for r in evidence.load(res).runs] == [res / "run-1" / h1, res / "run-2" / h1]
    # suite check reads the rank-0-only layout and recomputes the same numbers
    chk = in_process(["check", "--format", "json", res])
    report = json.loads(chk.stdout)
    (bench,) = report["benchmarks"]
    rules_hit = {f["rule_id"] for f in bench["findings"]}
    # only what an open 2-run measurement on a tiny dataset is: no structure, integrity (AU and
    # throughput recomputed from the steps) or evidence (ours-*: cache drop, cgroup) finding; two
    # 2-epoch runs on a shared VM may differ by more than 5% (issue 9's replicability warning)
    # (ours-self-verdict: the runs' own results.json say not compliant -- open params, dataset size --
    # and the checker is never more lenient than that, issue 24)
    assert rules_hit <= {"open-params", "dataset-size", "structure-run-count", "au-threshold",
                         "replicability-within-5-percent", "ours-self-verdict"}, bench["findings"]
    ours = json.loads((res / "mlperf_storage_report.json").read_text())["overall"]
    got = bench["aggregate"]["overall"]
    assert got["num_client_hosts"] == 2 and got["train_num_accelerators"] == "4"
    for key in ("train_throughput_mean_samples_per_second", "train_throughput_mean_MB_per_second"):
        assert got[key] == pytest.approx(ours[key], rel=1e-9)


def test_every_host_is_sampled_through_the_launcher_and_the_page_plots_each(netns_hosts, two_host_run, tmp_path):
    """Issue 37 across hosts: each run's host_metrics.json holds one series per host, sampled on that
    host (in its own network namespace: its interfaces, not the launching machine's), over the run;
    suite report plots each host."""
    h1, h2 = netns_hosts
    res, proc = two_host_run
    assert "warning: host metrics" not in proc.stdout, proc.stdout
    for k in (1, 2):
        doc = files.load_json(res / f"run-{k}" / h1 / "results.json", schema="results")
        rec = hostmetrics.load(res / f"run-{k}" / h1 / hostmetrics.FILE)
        assert [hm.host for hm in rec.hosts] == [h1, h2] and rec.warnings == ()
        assert "every host of the run (2)" in rec.scope
        for hm in rec.hosts:       # sampled from before the run started to its end, each 0.2 s
            assert len(hm.samples) >= 3 and hm.interval_s == 0.2, hm
            assert hm.samples[-1].t_s >= doc["duration_s"] * 0.9, (hm.samples[-1].t_s, doc["duration_s"])
            assert hostplots.offset_s(hm, doc["start"]) >= 0
        bridge = h1[:-1] + "br"       # tools/netns-hosts.sh's bridge: on the launching machine, in no host
        assert bridge in hostmetrics.Sampler().interfaces
        for hm in rec.hosts:          # each sampler ran in its host's namespace: that host's interfaces only
            assert hm.net_interfaces and bridge not in hm.net_interfaces, hm.net_interfaces
    out = tmp_path / "page"
    chk = in_process(["report", res, "--out", out])
    assert chk.returncode == 0, chk.stderr
    html = (out / "index.html").read_text()
    for k in (1, 2):
        for h in (h1, h2):
            assert f"run-{k}: host {h}: CPU and disk over time" in html, h
    assert len([p for p in (out / "plots").iterdir() if "host" in p.name]) == 4


def _start_long_run(hosts, data, tmp_path, res, accelerators: int, runs: int):
    """`suite run` over both namespace hosts, long enough (50 epochs) to be stopped mid-run."""
    return start_cli(["run", "--workload", "unet3d", "--accelerators", accelerators, "--data-dir", data,
                      "--results-dir", res, "--runs", runs, "--division", "open", "--memory-limit", "256MiB",
                      "--hosts", ",".join(hosts), "--launcher", LAUNCHER, *params(UNET, tmp_path),
                      "--param", "train.computation_time=0.05", "--param", "train.epochs=50"], REPO)


def _rank_places(ranks: Path, n: int, proc) -> dict:
    """{rank: [host, pid]} from ranks/rank-<r>.pid, once all n ranks have written theirs."""
    for r in range(n):
        wait_for(ranks / f"rank-{r}.pid", proc)
    return {r: (ranks / f"rank-{r}.pid").read_text().split() for r in range(n)}


def test_a_host_killed_mid_run_fails_the_run_named_and_leaves_no_cgroup(netns_hosts, unet_data, tmp_path):
    h1, h2 = netns_hosts
    res = tmp_path / "res"
    proc = _start_long_run(netns_hosts, unet_data, tmp_path, res, accelerators=4, runs=2)
    places = _rank_places(res / "run-1" / h1 / "ranks", 4, proc)
    time.sleep(0.5)
    assert len(host_cgroups(netns_hosts)) == 2        # one per host while the run is under way
    for r in (2, 3):                                  # the whole of host 2: its ranks die
        assert places[r][0] == h2
        try:
            os.kill(int(places[r][1]), signal.SIGKILL)
        except ProcessLookupError:                    # rank 3 may already have gone with rank 2
            assert r == 3
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("suite run: error:") and f"on {h2}" in line and "SIGKILL" in line, err
    doc = files.load_json(res / "run-1" / h1 / "results.json", schema="results")
    assert doc["status"] == "failed" and f"on {h2}" in doc["error"]
    for h in doc["enforcement"]["hosts"]:
        assert h["memory_limit"]["removed"] is True, h
    assert host_cgroups(netns_hosts) == []            # every host's cgroup removed
    assert not (res / "run-2").exists()
    rec = hostmetrics.load(res / "run-1" / h1 / hostmetrics.FILE)       # the failed run sampled on both hosts
    assert [hm.host for hm in rec.hosts] == [h1, h2] and all(hm.samples for hm in rec.hosts), rec.warnings
    assert not any(alive(int(pid)) for _, pid in places.values())


def test_sigterm_mid_run_across_hosts_removes_every_hosts_cgroup(netns_hosts, unet_data, tmp_path):
    h1, h2 = netns_hosts
    res = tmp_path / "res"
    proc = _start_long_run(netns_hosts, unet_data, tmp_path, res, accelerators=2, runs=1)
    pids = [int(pid) for _, pid in _rank_places(res / "run-1" / h1 / "ranks", 2, proc).values()]
    assert len(host_cgroups(netns_hosts)) == 2
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "interrupted by SIGTERM" in err.strip().splitlines()[-1], err
    doc = files.load_json(res / "run-1" / h1 / "results.json", schema="results")
    assert doc["status"] == "interrupted"
    assert [h["memory_limit"]["removed"] for h in doc["enforcement"]["hosts"]] == [True, True]
    assert host_cgroups(netns_hosts) == [] and not any(alive(p) for p in pids)
    rec = hostmetrics.load(res / "run-1" / h1 / hostmetrics.FILE)       # every host's sampler ended with the run
    assert [hm.host for hm in rec.hosts] == [h1, h2] and all(hm.samples for hm in rec.hosts), rec.warnings


def test_an_unreachable_host_is_refused_before_anything_starts(netns_hosts, unet_data, tmp_path, run_cli):
    h1, _ = netns_hosts
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 2, "--data-dir", unet_data,
                             "--results-dir", tmp_path / "res", "--division", "open", "--memory-limit", "256MiB",
                             "--hosts", f"{h1},nosuchhost", "--launcher", LAUNCHER, *params(UNET, tmp_path))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "host nosuchhost:" in err and "refused before anything started" in err
    assert "no such namespace host" in err
    assert not (tmp_path / "res").exists() and host_cgroups(netns_hosts) == []


def test_a_launcher_that_is_not_there_is_refused(netns_hosts, unet_data, tmp_path, run_cli):
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 2, "--data-dir", unet_data,
                             "--results-dir", tmp_path / "res", "--division", "open", "--hosts", ",".join(netns_hosts),
                             "--launcher", tmp_path / "no-launcher")
    assert code == 2 and "--launcher" in err and "expected an executable file, got nothing" in err


def test_closed_refuses_uneven_ranks_per_host(netns_hosts, unet_data, tmp_path, run_cli):
    h1, h2 = netns_hosts
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 3, "--data-dir", unet_data,
                             "--results-dir", tmp_path / "res", "--hosts", f"{h1},{h2}", "--launcher", LAUNCHER)
    assert code == 2 and "expected a multiple of the 2 hosts" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "res").exists()
