"""The storage's figures per query (issue 48): bytes read and I/Os per query from the run's I/O cgroup, beside
the index device's own counters, on a real loop device holding nothing but the dataset and its index, so the
device's counters are the run's: within 10 % of each other, cold and warm, and no more than the device read."""

import contextlib
import glob
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.vector_database.conftest import TINY, engine_or_skip


@contextlib.contextmanager
def loop_ext4(base: Path, size_mib: int = 96):
    """An ext4 file system on a loop device over an image file, mounted at base/mnt; (mountpoint, major:minor)."""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("losetup", "mkfs.ext4", "mount", "umount")):
        pytest.skip("needs root, losetup, mkfs.ext4 and mount")
    img, mnt = base / "disk.img", base / "mnt"
    with open(img, "wb") as f:
        f.truncate(size_mib << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True, capture_output=True)
    got = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"losetup: {got.stderr.strip()}")
    loop = got.stdout.strip()
    try:
        mnt.mkdir()
        subprocess.run(["mount", loop, str(mnt)], check=True, capture_output=True)
        try:
            yield mnt, Path(f"/sys/block/{Path(loop).name}/dev").read_text().strip(), Path(loop).name
        finally:
            subprocess.run(["umount", str(mnt)], check=True, capture_output=True)
    finally:
        subprocess.run(["losetup", "-d", loop], capture_output=True)


def _dev_reads(name: str) -> tuple[int, int]:
    f = Path(f"/sys/block/{name}/stat").read_text().split()
    return int(f[0]), 512 * int(f[2])


@pytest.fixture(scope="module")
def on_loop(tmp_path_factory):
    """(summaries, device, the device's (reads, bytes) around the runs, the pid the runs ran in): made once a
    session across xdist's workers (tests/conftest.py `once`), the loop device gone once it is made."""
    from tests.conftest import once

    return once(tmp_path_factory, "vdb-on-loop", _on_loop)


def _on_loop(tmp_path_factory):
    """One real `suite run` of vdb-tiny with DiskANN, two query runs, its dataset and index on a loop device;
    the device's read counters read around the runs (the index built by a first run)."""
    from suite import cli
    from suite.storage import workloads
    from suite.vector_database import dataset, workload

    engine_or_skip("diskann")
    base = tmp_path_factory.mktemp("loop")
    (base / "wl").mkdir()
    (base / "wl" / "vdb-tiny.yaml").write_text(TINY.format(name="vdb-tiny", dim=16))
    workloads.add_dir(base / "wl")
    try:
        with loop_ext4(base) as (mnt, dev, name):
            dataset.generate(workload.load("vdb-tiny"), mnt / "D", processes=1, say=lambda *a: None)
            argv = ["run", "--workload", "vdb-tiny", "--index", "diskann", "--data-dir", str(mnt / "D"),
                    "--allow-no-cache-drop"]
            cli.main(argv + ["--results-dir", str(base / "R0"), "--runs", "1"])          # builds the index
            before = _dev_reads(name)
            cli.main(argv + ["--results-dir", str(base / "R"), "--runs", "2"])
            after = _dev_reads(name)
            docs = [json.loads(Path(p).read_text()) for p in sorted(glob.glob(str(base / "R/vector_database/*/*/run/*/summary.json")))]
            return docs, dev, (after[0] - before[0], after[1] - before[1]), os.getpid()
    finally:
        workloads.remove_dir(base / "wl")


def _close(a, b, rel=0.10):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(b), 1e-9)


@pytest.mark.parametrize("phase", ["cold", "warm"])
def test_bytes_and_ios_per_query_agree_with_the_devices_counters(on_loop, phase):
    docs, dev, _, _ = on_loop
    assert len(docs) == 2
    for d in docs:
        io = d["io"]
        assert io["device_id"] == dev and io["source"] == "cgroup" and io["cgroup"]["error"] is None
        ph = io["phases"][phase]
        own, device = ph["cgroup"], ph["device"]
        assert ph["queries"] == 200 and own["read_ios_per_query"] > 1           # DiskANN reads the index per query
        assert _close(own["bytes_read_per_query"], device["bytes_read_per_query"]), (own, device)
        assert _close(own["read_ios_per_query"], device["read_ios_per_query"]), (own, device)
        assert _close(ph["process"]["bytes_read_per_query"], device["bytes_read_per_query"]), ph
        assert own["mean_io_bytes"] >= 512 and own["mean_io_bytes"] % 512 == 0      # sector-aligned O_DIRECT reads
        assert io["p99_io_bytes"] is None and "not derivable" in io["p99_io_bytes_note"]


def test_the_headline_figures_are_the_cold_pass_and_the_device_read_them(on_loop):
    """summary.json's bytes/I-Os per query are the cold pass's (after the cache clear), the cgroup's; the
    device's own counters, read by this test around the two runs, hold at least every phase's reads."""
    docs, _, (dev_ios, dev_bytes), _ = on_loop
    phase_bytes = phase_ios = 0
    for d in docs:
        io = d["io"]
        cold = io["phases"]["cold"]["cgroup"]
        assert io["bytes_read_per_query"] == cold["bytes_read_per_query"]
        assert io["read_ops_per_query"] == cold["read_ios_per_query"]
        assert io["warm_bytes_read_per_query"] == io["phases"]["warm"]["cgroup"]["bytes_read_per_query"]
        assert "diskannpy 0.7.0 exposes no per-query I/O count" in io["engine_note"] and io["engine"] is None
        for ph in io["phases"].values():
            phase_bytes += ph["device"]["read_bytes"]
            phase_ios += ph["device"]["read_ios"]
    assert 0 < phase_bytes <= dev_bytes and 0 < phase_ios <= dev_ios


def test_no_io_cgroup_left_behind(on_loop):
    """The runs' I/O cgroups (named vdb-<pid>-<run>: the pid of the process the runs ran in) are removed."""
    mine = f"vdb-{on_loop[3]}-*"
    assert not glob.glob(f"/sys/fs/cgroup/blkio/suite-io-{mine}") and not glob.glob(f"/sys/fs/cgroup/suite-io/{mine}")
