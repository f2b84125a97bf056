"""`suite run --workload llama3-8b --hosts a,b` for real, as training's and kv_cache's multi-host tests do
(tests/training/run/test_hosts.py, whose namespace-host fixture this module shares): two network-
namespace hosts (tools/netns-hosts.sh: own address, own hostname, shared file system) reached through
tools/netns-launcher, real mpiexec (hydra's -launcher ssh -launcher-exec) starting 8 checkpoint ranks,
4 on each host, writing then reading the miniature (2 checkpoints each way, ~37 MiB) in one v3.0
invocation; a real cache drop on each host before each phase, a real memory cgroup on each host
around its ranks; `suite check` accepts it and catches a planted lie."""

import contextlib
import io
import json
import os
import shutil
import subprocess

import pytest

from suite.checkpointing import leaf
from suite.harness import hostmetrics
from tests.training.run.test_hosts import LAUNCHER, host_cgroups, netns_hosts  # noqa: F401 - the fixture


def _run(tmp, name: str, *extra) -> tuple[int, str, str]:
    """One open v3.0 write+read of the miniature (2 checkpoints each way) into tmp/<name>: (exit, stdout, stderr)."""
    from suite import cli

    argv = ["run", "--workload", "llama3-8b", "--ruleset", "v3.0", "--division", "open", "--accelerators", "8",
            "--checkpoints-write", "2", "--checkpoints-read", "2", "--miniature", "--data-dir", str(tmp / f"ck-{name}"),
            "--results-dir", str(tmp / name), "--memory-limit", "1GiB", *extra]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):     # module scope: no capsys
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def across(request, tmp_path_factory):
    """The run over the two namespace hosts (tmp/R) and the same on this host alone (tmp/S, what check's
    verdict is compared with): (hosts, tmp, exit, stdout, stderr) of the multi-host one. Made once a
    session across xdist's workers (tests/conftest.py `once`: 32 rank processes, not 32 per worker whose
    share of this module's tests asks); read it, copy before changing anything."""
    from tests.conftest import once

    def make(factory):
        tmp = factory.mktemp("ckhosts")
        h1, h2 = request.getfixturevalue("netns_hosts")
        code, out, err = _run(tmp, "R", "--hosts", f"{h1},{h2}", "--launcher", str(LAUNCHER))
        single = _run(tmp, "S")
        assert single[0] == code, single[1][-2000:] + single[2]
        return (h1, h2), tmp, code, out, err

    return once(tmp_path_factory, "checkpoint-across-hosts", make)


def _leaves(tmp, name: str = "R"):
    return leaf.leaves(tmp / name / "checkpointing" / "llama3-8b")


def test_write_and_read_run_four_ranks_on_each_host(across):
    (h1, h2), tmp, code, out, err = across
    # open, 2 checkpoints, one file system: INVALID MINIATURE, exit 1, as the same run on one host (the fixture)
    assert code == 1 and "MINIATURE" in out.splitlines()[-1], out[-2000:] + err
    assert f"hosts: {h1} ({h1}: ranks 0-3), {h2} ({h2}: ranks 4-7)" in out
    w, r = _leaves(tmp)
    for where, phase in ((w, "write"), (r, "read")):
        run = where / "run-1"
        doc = json.loads((run / "results.json").read_text())
        assert doc["phase"] == phase and doc["status"] == "complete", doc["error"]
        assert doc["processes_per_host"] == {h1: 4, h2: 4}
        # each rank ran on the host the plan put it on: its pid file and its own record say so
        for k in range(8):
            want = h1 if k < 4 else h2
            assert (run / "ranks" / f"rank-{k}.pid").read_text().split()[0] == want
            assert json.loads((run / "ranks" / f"rank-{k}.json").read_text())["hostname"] == want
        hosts = {h["host"]: h for h in doc["enforcement"]["hosts"]}
        assert [hosts[h]["ranks"] for h in (h1, h2)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
        assert all(h["cache_drop"]["succeeded"] and h["cache_drop"]["hostname"] == n for n, h in hosts.items())
        assert all(h["memory_limit"]["applied_bytes"] == 1 << 30 and h["memory_limit"]["removed"]
                   for h in hosts.values())
        assert doc["enforcement"]["cache_drop"]["succeeded"] and "on every host" in doc["enforcement"]["cache_drop"]["method"]
        rec = hostmetrics.load(run / hostmetrics.FILE)          # the run, sampled on each host
        assert [hm.host for hm in rec.hosts] == [h1, h2] and all(hm.samples for hm in rec.hosts)
    read = json.loads((r / "run-1" / "results.json").read_text())
    # the residency check reads this host's page cache only, and says so
    assert read["enforcement"]["resident_bytes_before_read"] is not None
    assert read["enforcement"]["resident_bytes_scope"].startswith("this host (")
    assert read["handoff"]["cache_clear"]["resident_bytes_scope"] == read["enforcement"]["resident_bytes_scope"]
    assert not host_cgroups([h1, h2]), "every host's cgroup is removed after each run"
    assert not list((tmp / "ck").glob(".suite-shared-probe-*")), "the shared-folder probe leaves nothing"


def test_check_passes_it_and_catches_a_planted_lie(across, tmp_path, run_cli):
    (h1, h2), tmp, *_ = across
    verdicts = {}
    for name in ("R", "S"):        # across hosts, and the same run on one host: the same verdict, the same rules
        code, out, err = run_cli("check", tmp / name, "--ruleset", "v3.0", "--format", "json")
        doc = json.loads(out)
        verdicts[name] = (code, doc["verdict"], sorted({f["rule_id"] for b in doc["benchmarks"] for f in b["findings"]
                                                       if f["effect"] != "closed"}))
    assert verdicts["R"] == verdicts["S"] and verdicts["R"][2] == ["4.4.2-checkpointFilesystemCheck", "checkpoint-count"], verdicts
    lie = tmp_path / "R"
    shutil.copytree(tmp / "R", lie)
    _w, r = _leaves(tmp_path)
    p = r / "run-1" / "results.json"
    doc = json.loads(p.read_text())
    doc["processes_per_host"] = {h1: 8}                 # all ranks claimed on one host: the ranks' records disagree
    p.write_text(json.dumps(doc))
    code, out, err = run_cli("check", lie, "--ruleset", "v3.0", "--format", "json")
    found = [f for b in json.loads(out)["benchmarks"] for f in b["findings"] if f["effect"] == "invalid"
             and "processes_per_host" in f["message"]]
    assert code == 1 and found, out
    assert found[0]["path"].endswith("run-1/results.json"), found
    doc = json.loads(p.read_text())
    doc["processes_per_host"] = {h1: 4, h2: 4}          # that lie undone; two others planted
    doc["enforcement"]["hosts"][1]["cache_drop"]["succeeded"] = False      # one host's drop failed, the total says not
    doc["enforcement"]["hosts"][0]["ranks"] = list(range(8))               # the placement claimed: all on h1
    p.write_text(json.dumps(doc))
    code, out, err = run_cli("check", lie, "--ruleset", "v3.0", "--format", "json")
    found = {f["rule_id"]: f for b in json.loads(out)["benchmarks"] for f in b["findings"] if f["effect"] == "invalid"}
    assert "checkpoint-read-cache-drop" in found, sorted(found)
    assert "enforcement.hosts[].ranks" in out, out


HIDING_LAUNCHER = """#!/bin/sh
# called as ssh is: the command runs on "another host" that does not share $SUITE_TEST_HIDE (a tmpfs over it,
# in a mount namespace of its own)
while [ $# -gt 0 ]; do case "$1" in -o) shift 2 ;; -*) shift ;; *) break ;; esac; done
shift
exec unshare -m sh -c "mount -t tmpfs none \"$SUITE_TEST_HIDE\" && $*"
"""


def test_a_folder_not_shared_by_every_host_is_refused(tmp_path, run_cli, monkeypatch):
    if os.geteuid() != 0 or subprocess.run(["sh", "-c", "command -v unshare"], capture_output=True).returncode:
        pytest.skip("needs root and unshare (a mount namespace: a host that does not share the folder)")
    launcher = tmp_path / "hiding-launcher"
    launcher.write_text(HIDING_LAUNCHER)
    launcher.chmod(0o755)
    (tmp_path / "ck").mkdir()
    monkeypatch.setenv("SUITE_TEST_HIDE", str(tmp_path / "ck"))
    code, out, err = run_cli("run", "--workload", "llama3-8b", "--ruleset", "v3.0", "--division", "open",
                             "--accelerators", "4", "--checkpoints-write", "1", "--checkpoints-read", "0", "--miniature",
                             "--data-dir", tmp_path / "ck", "--results-dir", tmp_path / "R", "--hosts", "localhost",
                             "--launcher", launcher)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "expected a folder every host shares" in err and "on host localhost" in err, err
    assert os.listdir(tmp_path / "ck") == [], "the probe's file is removed, nothing else written"
