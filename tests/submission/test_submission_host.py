"""suite.submission.host: facts read from /proc, /etc, /sys (fake trees here) and None where unreadable."""

import os

from suite.submission import host

CPUINFO = "".join(f"processor\t: {i}\nmodel name\t: Example CPU 9000\nphysical id\t: {i // 4}\ncpu cores\t: 2\n\n"
                  for i in range(8))
MOUNTINFO = """\
22 1 0:21 / / rw,relatime - ext4 /dev/vda rw,discard
30 22 0:40 / /mnt/my\\040data rw,noatime shared:5 - nfs4 srv:/export rw,vers=4.2,rsize=1048576
31 22 0:41 / /mnt/my rw - tmpfs tmpfs rw
"""


def fake_proc(tmp_path, mountinfo=MOUNTINFO):
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "cpuinfo").write_text(CPUINFO)
    (proc / "meminfo").write_text("MemTotal:       24684092 kB\nMemFree: 1 kB\n")
    (proc / "self" / "mountinfo").write_text(mountinfo)
    return proc


def test_cpu_memory_os_from_files(tmp_path):
    proc = fake_proc(tmp_path)
    assert host.cpu(proc) == ("Example CPU 9000", 2, 2, 8)
    assert host.memory_mib(proc) == 24684092 // 1024
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "os-release").write_text('NAME="X"\nPRETTY_NAME="Example Linux 12"\n')
    assert host.os_release(etc) == "Example Linux 12"


def test_unreadable_facts_are_none(tmp_path):
    empty = tmp_path / "nothing"
    assert host.cpu(empty) == (None, None, None, None)
    assert host.memory_mib(empty) is None and host.os_release(empty) is None
    assert host.mount_of(tmp_path, empty) is None and host.nics(empty) == []


def test_mount_is_the_longest_prefix_with_escapes_and_options(tmp_path):
    proc = fake_proc(tmp_path)
    m = host.mount_of("/mnt/my data/train", proc)
    assert (m.mount_point, m.fs_type, m.source) == ("/mnt/my data", "nfs4", "srv:/export")
    assert "vers=4.2" in m.options and "noatime" in m.options
    assert host.mount_of("/mnt/myother", proc).fs_type == "ext4"   # not /mnt/my: a prefix of the name only


def test_nic_speeds_in_gbps_and_virtual_nics_unknown(tmp_path):
    net = tmp_path / "net"
    for name, speed, state in (("eth0", "25000", "up"), ("veth1", "-1", "up"), ("lo", "", "unknown")):
        (net / name).mkdir(parents=True)
        (net / name / "speed").write_text(speed + "\n")
        (net / name / "operstate").write_text(state + "\n")
    nics = {n.name: n for n in host.nics(net)}
    assert set(nics) == {"eth0", "veth1"}
    assert nics["eth0"].speed_gbps == 25.0 and nics["veth1"].speed_gbps is None


def test_this_host_reads_without_error(tmp_path):
    facts = host.read(tmp_path)
    assert facts.hostname
    if os.path.exists("/proc/self/mountinfo"):
        assert facts.data_mount is not None and facts.data_mount.fs_type
