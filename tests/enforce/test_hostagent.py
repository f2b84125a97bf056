"""suite.enforce.hostagent: what `suite run --hosts` runs on each host, here on this one, for real."""

import json
import os
import socket
import subprocess
import sys

import pytest

from suite.enforce.detect import detect_cgroup
from tests.conftest import REPO


def agent(*args, check_json=True):
    proc = subprocess.run([sys.executable, "-m", "suite.enforce.hostagent", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1]) if check_json else proc


def test_probe_says_who_and_what_this_host_can_do():
    code, doc = agent("probe")
    assert code == 0
    assert doc["hostname"] == socket.gethostname() and doc["cpu_count"] == os.cpu_count()
    assert doc["mem_total_bytes"] > 0 and doc["cgroup"]["version"] == detect_cgroup().version
    assert doc["drop_caches_writable"] is os.access("/proc/sys/vm/drop_caches", os.W_OK)


def test_bad_usage_is_one_json_error_line():
    code, doc = agent("cgroup-create", "only-a-name")
    assert code == 1 and doc["error"].startswith("usage:")


def test_visible_reads_back_a_file_or_says_why_not(tmp_path):
    (tmp_path / "token").write_text("abc123\n")
    code, doc = agent("visible", tmp_path / "token")
    assert code == 0 and doc == {"hostname": socket.gethostname(), "seen": "abc123\n", "why": None}
    code, doc = agent("visible", tmp_path / "absent")
    assert code == 0 and doc["seen"] is None and doc["why"] == "No such file or directory"


@pytest.mark.skipif(os.geteuid() != 0 or detect_cgroup().version not in ("v1", "v2"), reason="needs root and cgroups")
def test_create_join_close_a_cgroup_across_processes(tmp_path):
    name = f"hostagent-test-{os.getpid()}-1"
    code, made = agent("cgroup-create", name, 64 << 20, tmp_path)
    try:
        assert code == 0 and made["applied_bytes"] == 64 << 20 and os.path.isdir(made["path"])
        assert (tmp_path / socket.gethostname()).read_text().strip() == made["join_file"]
        # join: the exec'd program runs inside the cgroup (its /proc/self/cgroup names it)
        proc = agent("join", tmp_path, "/bin/cat", "/proc/self/cgroup", check_json=False)[1]
        assert proc.returncode == 0 and f"/suite/{name}" in proc.stdout
    finally:
        code, shut = agent("cgroup-close", name)
    assert code == 0 and shut["removed"] is True and shut["existed"] is True
    assert shut["peak_bytes"] > 0 and not os.path.exists(made["path"])
    code, again = agent("cgroup-close", name)           # closing what is gone is not an error
    assert code == 0 and again["existed"] is False and again["removed"] is True


def test_join_without_a_cgroup_file_fails_before_exec(tmp_path):
    proc = agent("join", tmp_path, "/bin/true", check_json=False)[1]
    assert proc.returncode == 126 and "hostagent join on" in proc.stderr
