"""The v3.0 training miniature in its memory cgroup (issue 37): the cgroup is the page-cache budget the
dataset is sized from plus a bound on the processes' own memory, so a rank never OOM-kills itself and
the page cache still cannot hold the dataset. Real cgroup, real cache drop, real disk, real mpiexec."""

import os
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from suite import files
from suite.training import workloads
from suite.training import datasize
from suite.training.run import budget
from suite.training.run.prepare import miniature_files

MIB = 1024 * 1024


def _fs_type(path) -> str:
    return subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True).stdout.strip()


@pytest.fixture
def on_disk(tmp_path):
    """tmp_path on a disk-backed file system (a tmpfs dataset would be page cache already), as root."""
    if os.geteuid() != 0:
        pytest.skip("memory cgroups and cache drops need root")
    if _fs_type(tmp_path) in ("tmpfs", "ramfs"):
        pytest.skip(f"{tmp_path} is on {_fs_type(tmp_path)}, not a disk")
    return tmp_path


def test_retinanet_b200_miniature_in_a_small_cgroup_completes_without_oom_and_records_its_budget(run_cli, on_disk,
                                                                                                  monkeypatch):
    """A 32 MiB cache budget (half the shipped one), the workload's own 8 read threads, batch and
    compute time (two epochs, so the open division): the warm-up and one measured run both complete
    after a real cache drop, with no OOM kill, and each results.json says what the cgroup held: the cache budget, the
    bound on the processes' own memory, the rank's measured peak within it."""
    monkeypatch.chdir(on_disk)
    code, out, err = run_cli("run", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1,
                             "--ruleset", "v3.0", "--results-dir", on_disk / "R", "--memory-limit", "32MiB",
                             "--runs", 1, "--division", "open", "--param", "train.epochs=2")
    assert code == 1, err                    # a miniature is never compliant
    assert "OOM" not in out + err and "[run 2/2]" in out, out[-2000:] + err
    assert "memory budget: 32 MiB page cache (sizes the dataset)" in out
    leaves = sorted((on_disk / "R" / "training" / "retinanet" / "run").iterdir())
    docs = [files.load_json(leaf / "results.json", schema="results") for leaf in leaves]
    assert len(docs) == 2 and [d["warmup"] for d in docs] == [True, False]
    dataset_bytes = docs[0]["dataset"]["total_bytes"]
    for d in docs:
        e = d["enforcement"]
        assert d["status"] == "complete" and d["miniature"] is True
        assert e["cache_drop"]["succeeded"] is True
        assert e["memory_limit"]["oom_kills"] == 0
        b = e["memory_budget"]
        assert b["cache_budget_bytes"] == 32 * MIB == e["host_memory_bytes"]   # the rule's host memory
        assert b["cgroup_limit_bytes"] == b["cache_budget_bytes"] + b["own_memory_bytes"]
        assert abs(e["memory_limit"]["applied_bytes"] - b["cgroup_limit_bytes"]) < 4096
        (peak,) = b["ranks_peak_rss_bytes"]
        assert 8 * MIB < peak <= b["rank_base_bytes"] + b["rank_buffers_bytes"] and b["within_bound"] is True
        assert b["rank_buffers_bytes"] < 8 * MIB         # 8 threads of 316 KiB files, not of 4 MiB
        assert dataset_bytes > b["cgroup_limit_bytes"]   # the page cache cannot hold the dataset
        assert dataset_bytes >= 5 * b["cache_budget_bytes"] - 322957    # the 5x rule, floor arithmetic
        assert d["metric"]["train_au_mean_percentage"] > 0
        (fetched,) = b["ranks_storage_read_bytes"]      # the reads came from the disk, not the page cache
        assert fetched >= d["metric"]["bytes_read"] - 2 * b["cache_room_bytes"], (fetched, d["metric"]["bytes_read"])


CASES = [("retinanet", "b200"), ("retinanet", "mi355"), ("unet3d", "b200")]


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(CASES), accelerators=st.integers(1, 16),
       cache_budget_bytes=st.integers(32 * MIB, 8 * 1024 * MIB))
def test_the_miniature_dataset_is_five_times_the_cache_budget_and_beyond_the_cgroup(case, accelerators,
                                                                                    cache_budget_bytes):
    wl = workloads.resolve(*case)
    mem = budget.miniature(wl, accelerators, cache_budget_bytes)
    required = datasize.compute(wl, accelerators, 1, mem.cache_budget_bytes, "v3.0")
    n = miniature_files(wl, accelerators, required, mem)
    per_file = wl.record_length_bytes * wl.num_samples_per_file
    assert n * wl.num_samples_per_file >= required.memory_rule_samples          # the 5x-memory rule
    assert (n + 1) * per_file > 5 * cache_budget_bytes                           # ... to within one file
    assert n * per_file > mem.cgroup_limit_bytes                                 # no cache holds it
    assert mem.cgroup_limit_bytes == cache_budget_bytes + mem.own_memory_bytes
    assert mem.own_memory_bytes >= mem.launcher_bytes + accelerators * (mem.rank_base_bytes + mem.rank_buffers_bytes)
