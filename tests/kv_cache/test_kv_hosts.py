"""`suite run --workload kv-cache --hosts a,b` for real, as the training runner's multi-host tests do
(tests/training/run/test_hosts.py, whose namespace-host fixture this module shares): two network-
namespace hosts (tools/netns-hosts.sh: own address, own hostname, shared file system) reached through
tools/netns-launcher, real mpiexec (hydra's -launcher ssh -launcher-exec) starting one kv-cache client
rank on each host, a real cache drop and a real memory cgroup on every host around its rank."""

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from suite.harness import hostmetrics
from suite.kv_cache import check

from suite.kv_cache import leaf as kvleaf
from tests.training.run.test_hosts import LAUNCHER, host_cgroups, netns_hosts  # noqa: F401 - the fixture


@pytest.fixture
def results_fs():
    """A results dir on /dev/shm (tmpfs): another file system than the cache dir (Rule 6.4.1)."""
    where = Path(tempfile.mkdtemp(prefix="kv-hosts-", dir="/dev/shm"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


def test_kv_cache_over_two_namespace_hosts(netns_hosts, tmp_path, results_fs, run_cli):  # noqa: F811 - the fixture
    h1, h2 = netns_hosts
    # option 1 (8B entries), 8 users a rank, the cache in memory (a tmpfs) and 0.25 GiB a rank (larger
    # entries refused): requests complete within seconds beside other jobs (a trial that served none
    # fails the run: issue 36, class 11), and the memory the cache holds stays far below --memory-limit
    cache = tmp_path / "cache"
    cache.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", str(cache)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        code, out, err = run_cli("run", "--workload", "kv-cache", "--cache-dir", cache, "--results-dir",
                                 results_fs / "R", "--division", "open", "--option", "1", "--trials", "1", "--duration",
                                 "3", "--kv-users", "8", "--kv-storage-capacity-gb", "0.25", "--accelerators", "2",
                                 "--hosts", f"{h1},{h2}", "--launcher", LAUNCHER, "--memory-limit", "2GiB")
    finally:
        subprocess.run(["umount", "-l", str(cache)], check=False)
    assert code in (0, 1), err                     # open: the verdict says OPEN (exit 1), nothing failed
    assert f"hosts: {h1} ({h1}: ranks 0-0), {h2} ({h2}: ranks 1-1)" in out
    leaf, = (results_fs / "R" / "kv_cache").glob("*/run/*")
    meta = json.loads(next(leaf.glob("kv_cache_*_metadata.json")).read_text())
    assert meta["hosts"] == [h1, h2] and meta["num_processes"] == 2
    trial, = meta["suite"]["trials"]
    assert trial["status"] == "complete", trial["error"]
    assert "-launcher-exec" in trial["command"] and f"{h1}:1,{h2}:1" in trial["command"]
    per_host = {h["host"]: h for h in trial["hosts"]}
    assert [per_host[h]["ranks"] for h in (h1, h2)] == [[0], [1]]
    assert all(h["cache_drop"]["succeeded"] for h in trial["hosts"])
    assert all(h["memory_limit"]["applied_bytes"] == 2 << 30 for h in trial["hosts"]), trial["cgroup"]
    assert not host_cgroups(netns_hosts), "every host's cgroup is removed after the trial"
    # each rank ran on its own host (the pid file names the host it started on), wrote its own rank file
    pids = sorted((leaf / ".suite").glob("option_1_trial_0/ranks/rank-*.pid"))
    assert [p.read_text().split()[0] for p in pids] == [h1, h2]
    lf = kvleaf.load(leaf)
    assert sorted(r for (_o, _t, r) in lf.ranks) == [0, 1]
    assert [lf.ranks[(1, 0, r)][1]["seed"] for r in (0, 1)] == [42, 43]
    summary = json.loads((leaf / "summary.json").read_text())
    assert summary["host_count"] == 2 and summary["npernode"] == 1 and not summary["partial_failure"]
    rec = hostmetrics.load(leaf / "option_1" / "trial_0" / hostmetrics.FILE)    # the trial, sampled on each host
    assert [hm.host for hm in rec.hosts] == [h1, h2] and rec.warnings == () and all(hm.samples for hm in rec.hosts)
    a = check.assess(leaf)
    assert a["verdict"] == "open", [(f.rule_id, f.message) for f in a["findings"] if f.effect == "invalid"]
    assert "kvcache-shared-results-dir" not in {f.rule_id for f in a["findings"]}


def test_closed_refuses_uneven_ranks_across_hosts(netns_hosts, tmp_path, results_fs, run_cli):  # noqa: F811
    h1, h2 = netns_hosts
    code, out, err = run_cli("run", "--workload", "kv-cache", "--cache-dir", tmp_path / "cache",
                             "--results-dir", results_fs / "R", "--accelerators", "3", "--hosts", f"{h1},{h2}",
                             "--launcher", LAUNCHER, "--allow-no-cache-drop")
    assert code == 2 and "expected a multiple of the 2 hosts" in err
    assert not (results_fs / "R" / "kv_cache").exists()
