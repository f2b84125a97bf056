"""suite.enforce against the real kernel: cgroup v1 memory limits, OOM kills, cache drops.

These tests need root and a writable cgroup v1 memory hierarchy (this machine and CI);
they skip, saying why, where that is absent. Every cgroup is named with this pid and
removed. cgroup v2 and systemd cannot run here: their file logic is exercised against a
directory tree laid out like cgroupfs v2 (FakeV2Kernel), which is not the kernel.
"""

import dataclasses
import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from suite.enforce.backends import CgroupV1, CgroupV2, SystemdScope
from suite.enforce.cache import CacheDrop, drop_caches, page_cache_residency
from suite.enforce.cgroup import CgroupCleanupError, MemoryCgroup, owner_pid, preflight, remove_stale, unique_name
from suite.enforce.detect import CgroupError, CgroupSupport, detect_cgroup
from suite.enforce import cgroup as cgmod
from suite.errors import RunError, SuiteError
from tests.conftest import mpiexec

import paths

REPO = paths.REPO
MIB = 1 << 20
SUPPORT = detect_cgroup()
IS_ROOT = os.geteuid() == 0

needs_v1 = pytest.mark.skipif(
    not (IS_ROOT and SUPPORT.version == "v1"),
    reason=f"needs root and a writable cgroup v1 memory hierarchy ({SUPPORT.reason})")
needs_root = pytest.mark.skipif(not IS_ROOT, reason="needs root")

_seq = iter(range(10**6))


def unique(tag: str) -> str:
    return f"test-{tag}-{os.getpid()}-{next(_seq)}"


def touch_script(mib: int) -> list:
    """A child that allocates and touches `mib` MiB (bytes * n writes every page)."""
    return [sys.executable, "-c", f"b = b'\\x01' * ({mib} << 20); print(len(b))"]


def cgroup_line(text: str) -> str:
    """The memory controller's line of a /proc/<pid>/cgroup text, path part."""
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return path
    raise AssertionError(f"no memory line in {text!r}")


def relpath(cg: MemoryCgroup) -> str:
    return "/" + os.path.relpath(cg.path, SUPPORT.root)


# ----------------------------------------------------------------------- cgroup v1, real


@needs_v1
def test_process_over_limit_is_oom_killed():
    with MemoryCgroup(64 * MIB, unique("oom")) as cg:
        proc = cg.start(touch_script(256), stdout=subprocess.DEVNULL)
        assert proc.wait(timeout=60) == -9
        assert cg.oom_kills() >= 1
        assert cg.peak_bytes() <= cg.applied_bytes
    ev = cg.evidence()
    assert ev["oom_kills"] >= 1 and ev["removed"] is True
    assert not os.path.exists(cg.path)


@needs_v1
def test_process_within_limit_succeeds_and_peak_is_reported():
    with MemoryCgroup(64 * MIB, unique("ok")) as cg:
        proc = cg.start(touch_script(16), stdout=subprocess.PIPE, text=True)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and out.strip() == str(16 * MIB)
        peak = cg.peak_bytes()
    assert 16 * MIB <= peak <= 64 * MIB
    ev = cg.evidence()
    assert ev["peak_bytes"] == peak and ev["oom_kills"] == 0 and ev["removed"] is True


@needs_v1
def test_limit_is_read_back_from_the_kernel():
    requested = 64 * MIB + 100                       # not page-aligned: the kernel rounds
    with MemoryCgroup(requested, unique("limit")) as cg:
        on_disk = int(Path(cg.path, "memory.limit_in_bytes").read_text())
        assert cg.applied_bytes == on_disk
        assert 0 <= requested - cg.applied_bytes < os.sysconf("SC_PAGE_SIZE")
        memsw = Path(cg.path, "memory.memsw.limit_in_bytes")
        if memsw.exists():
            assert int(memsw.read_text()) == on_disk
        ev = cg.evidence()
    assert ev["version"] == "v1" and ev["requested_bytes"] == requested
    assert ev["applied_bytes"] == on_disk and ev["path"] == cg.path


@needs_v1
def test_child_and_grandchild_are_in_the_cgroup():
    script = textwrap.dedent("""
        import subprocess, sys
        print(open('/proc/self/cgroup').read(), end='')
        print('--')
        sys.stdout.flush()
        subprocess.run(['cat', '/proc/self/cgroup'], check=True)
    """)
    with MemoryCgroup(128 * MIB, unique("tree")) as cg:
        sleeper = cg.start(["sleep", "30"])
        proc_text = ""
        for _ in range(100):                                  # /proc/<pid>/cgroup of the child
            proc_text = Path(f"/proc/{sleeper.pid}/cgroup").read_text()
            if cgroup_line(proc_text) == relpath(cg):
                break
            time.sleep(0.01)
        assert cgroup_line(proc_text) == relpath(cg)
        assert sleeper.pid in cg.pids()
        proc = cg.start([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        out, _ = proc.communicate(timeout=60)
        child, grandchild = out.split("--\n")
        assert cgroup_line(child) == relpath(cg)
        assert cgroup_line(grandchild) == relpath(cg)
    assert sleeper.returncode == -9 and sleeper.pid in cg.evidence()["killed_pids"]
    # this process itself was not moved
    assert cgroup_line(Path("/proc/self/cgroup").read_text()) != relpath(cg)


@needs_v1
def test_mpiexec_ranks_inherit_the_cgroup():
    exe = mpiexec()                      # the mpich wheel, a dependency: no skip when it is missing
    with MemoryCgroup(256 * MIB, unique("mpi")) as cg:
        proc = cg.start([exe, "-n", "2", sys.executable, "-c",
                         "print(open('/proc/self/cgroup').read(), end='')"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    lines = [ln for ln in out.splitlines() if ":memory:" in ln]
    assert len(lines) == 2 and all(ln.endswith(":" + relpath(cg)) for ln in lines)
    assert cg.evidence()["removed"] is True


@needs_v1
def test_cgroup_removed_after_block_and_processes_left_are_killed():
    # The child leaves a grandchild running in a new session and exits: the grandchild
    # is no child of ours, yet it is in the cgroup and must be killed on exit.
    script = ("import subprocess; p = subprocess.Popen(['sleep', '60'], start_new_session=True,"
              " stdout=subprocess.DEVNULL);"
              " print(p.pid)")
    with MemoryCgroup(64 * MIB, unique("left")) as cg:
        proc = cg.start([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        out, _ = proc.communicate(timeout=60)
        orphan = int(out)
        assert orphan in cg.pids()
    assert not os.path.exists(cg.path)
    assert orphan in cg.evidence()["killed_pids"]
    assert not _alive(orphan)
    assert cg.evidence()["removed"] is True


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@needs_v1
@pytest.mark.parametrize("exc", [ValueError, KeyboardInterrupt])
def test_cgroup_removed_when_body_raises(exc):
    with pytest.raises(exc), MemoryCgroup(64 * MIB, unique("raise")) as cg:
        sleeper = cg.start(["sleep", "60"])
        assert os.path.isdir(cg.path)
        raise exc("boom")
    assert not os.path.exists(cg.path)
    assert sleeper.returncode == -9
    ev = cg.evidence()
    assert ev["removed"] is True and ev["cleanup_error"] is None and ev["remove_s"] >= 0


@needs_v1
def test_close_is_idempotent_and_start_after_close_is_a_bug():
    cg = MemoryCgroup(64 * MIB, unique("idem"))
    cg.create()
    cg.close()
    cg.close()
    assert cg.removed
    with pytest.raises(RuntimeError):
        cg.start(["true"])


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@needs_v1
def test_existing_cgroup_is_refused_and_remove_stale_clears_only_dead_owners():
    tag = f"test-stale{os.getpid()}x"                # the prefix (no dash-digits in it)
    backend = CgroupV1(SUPPORT.root)
    backend._ensure_parent()
    dead = Path(backend.path_for(f"{tag}-{_dead_pid()}-1"))   # as a crashed run leaves it
    live = Path(backend.path_for(f"{tag}-{os.getpid()}-2"))   # a live run's: left alone
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        for d, s in zip((dead, live), sleepers):
            d.mkdir()
            Path(d, "cgroup.procs").write_text(str(s.pid))
        with pytest.raises(CgroupError, match="already exists"):
            MemoryCgroup(64 * MIB, dead.name).create()
        assert dead.is_dir()                          # refusing did not remove it
        assert remove_stale(tag) == [str(dead)]
        assert not dead.exists() and live.is_dir()
        assert sleepers[0].wait(timeout=10) == -9 and sleepers[1].poll() is None
        assert remove_stale(tag) == []
        assert remove_stale(tag, force=True) == [str(live)]
        assert sleepers[1].wait(timeout=10) == -9
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
        for d in (dead, live):
            if d.exists():
                d.rmdir()


def test_unique_names_carry_the_owner_pid():
    a, b = unique_name("run"), unique_name("run")
    assert a != b and owner_pid(a) == owner_pid(b) == os.getpid()
    assert owner_pid(f"suite-run-{os.getpid()}-3") == os.getpid()
    assert owner_pid("no-owner-here") is None


@needs_v1
def test_preflight_creates_and_removes_a_probe():
    ev = preflight(32 * MIB)
    assert ev["removed"] is True and ev["applied_bytes"] == 32 * MIB
    assert not os.path.exists(ev["path"])
    with pytest.raises(CgroupError):
        preflight(1)


def test_remove_stale_needs_a_prefix():
    with pytest.raises(CgroupError):
        remove_stale("")


@needs_v1
def test_mkdir_in_a_read_only_cgroupfs_is_a_one_line_error(tmp_path):
    target = tmp_path / "ro-memory"
    target.mkdir()
    bound = subprocess.run(["mount", "--bind", "-o", "ro", SUPPORT.root, str(target)],
                           capture_output=True, text=True, check=False)
    if bound.returncode != 0:
        pytest.skip(f"cannot make a read-only bind mount: {bound.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], check=True)
        with pytest.raises(OSError):                              # really read-only
            os.mkdir(target / unique("probe"))
        name = unique("ro")
        with pytest.raises(CgroupError) as info:
            MemoryCgroup(64 * MIB, name, support=CgroupSupport("v1", str(target), "test")
                         ).create()
        msg = str(info.value)
        assert "\n" not in msg and str(target) in msg
        assert "Read-only file system" in msg and "--memory-limit" in msg
        # detection also sees it: a read-only v1 hierarchy is not offered
        mounts = tmp_path / "mounts"
        mounts.write_text(f"cgroup {target} cgroup ro,memory 0 0\n")
        found = detect_cgroup(str(mounts), proc1_comm=str(tmp_path / "nope"))
        assert found.version is None and "not writable" in found.reason
    finally:
        subprocess.run(["umount", str(target)], check=True)


def test_limit_below_minimum_or_above_memtotal_is_a_one_line_error():
    for bad in (0, 4096, MIB - 1):
        with pytest.raises(CgroupError, match=r"^--memory-limit: bytes: expected at least"):
            MemoryCgroup(bad, "x", support=SUPPORT)
    total = cgmod.meminfo_bytes("MemTotal")
    with pytest.raises(CgroupError, match="at most MemTotal") as info:
        MemoryCgroup(total + 4096, "x", support=SUPPORT)
    assert "\n" not in str(info.value)
    for bad in ("64MiB", 1.5, True):
        with pytest.raises(CgroupError, match="expected an integer"):
            MemoryCgroup(bad, "x", support=SUPPORT)


def test_bad_cgroup_name_is_refused():
    for bad in ("", "a/b", "..", "-x", "x" * 101):
        with pytest.raises(CgroupError, match="cgroup name"):
            MemoryCgroup(64 * MIB, bad, support=SUPPORT)


def test_no_usable_cgroup_is_a_one_line_error_with_advice():
    none = CgroupSupport(None, None, "/sys/fs/cgroup/memory: cgroup v1 memory hierarchy "
                                     "not writable")
    with pytest.raises(CgroupError) as info:
        MemoryCgroup(64 * MIB, "x", support=none)
    msg = str(info.value)
    assert isinstance(info.value, SuiteError) and info.value.exit_code == 2
    assert "\n" not in msg and "/sys/fs/cgroup/memory" in msg
    assert "run as root" in msg and "drop --memory-limit" in msg
    assert issubclass(CgroupCleanupError, RunError)


# ----------------------------------------------------------------------- not root, for real

UNPRIVILEGED = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, {repo!r})
    from suite.enforce.cache import drop_caches
    from suite.enforce.cgroup import MemoryCgroup
    from suite.enforce.detect import CgroupError, CgroupSupport
    from suite.enforce.detect import detect_cgroup
    root = {root!r}
    os.setgroups([]); os.setgid(65534); os.setuid(65534)      # imports done: drop root
    out = {{"euid": os.geteuid(), "drop": drop_caches().to_dict()}}
    for key, support in (("detected", None), ("forced", CgroupSupport("v1", root, "t"))):
        try:
            with MemoryCgroup(64 << 20, {name!r} + key, support=support) as cg:
                out[key] = "created " + cg.path
        except CgroupError as exc:
            out[key] = str(exc)
    print(json.dumps(out))
""")


@needs_v1
def test_not_permitted_paths_as_an_unprivileged_user():
    name = unique("nobody")
    script = UNPRIVILEGED.format(repo=str(REPO), root=SUPPORT.root, name=name)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["euid"] == 65534
    drop = out["drop"]
    assert drop["attempted"] is True and drop["succeeded"] is False
    assert "/proc/sys/vm/drop_caches" in drop["error"] and "Permission denied" in drop["error"]
    assert "\n" not in drop["error"]
    for key in ("detected", "forced"):
        msg = out[key]
        assert not msg.startswith("created"), msg
        assert "\n" not in msg and "drop --memory-limit" in msg
        assert SUPPORT.root in msg
    assert "Permission denied" in out["forced"]
    assert not os.path.exists(os.path.join(SUPPORT.root, "suite", name + "forced"))


# ----------------------------------------------------------------------- cache drop, real


@needs_root
def test_drop_caches_evicts_a_file_from_the_page_cache(tmp_path):
    data = tmp_path / "cached.bin"
    block = os.urandom(MIB)
    with open(data, "wb") as f:
        f.writelines(block for _ in range(64))
        f.flush()
        os.fsync(f.fileno())
    # Other processes on this machine may drop caches too (the runner's tests do), so
    # read until it is cached, and cross-check mincore against fincore with a bracket:
    # nothing reads this file meanwhile, so residency can only fall between measurements.
    for _ in range(5):
        with open(data, "rb") as f:                        # read it: now in the page cache
            while f.read(4 * MIB):
                pass
        resident, size = page_cache_residency(data)
        if resident >= 0.9 * size:
            break
    assert size == 64 * MIB
    if shutil.which("fincore"):                            # util-linux agrees with mincore
        res = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES",
                              str(data)], capture_output=True, text=True, check=True)
        again, _ = page_cache_residency(data)
        assert again <= int(res.stdout.strip()) <= resident
    assert resident >= 0.9 * size, f"{resident} of {size} bytes cached before the drop"
    drop = drop_caches()
    assert isinstance(drop, CacheDrop)
    assert drop.succeeded and drop.attempted and drop.error is None
    assert drop.duration_s >= drop.sync_duration_s >= 0
    # /proc/meminfo's Cached is the machine's: other tests' writes and tmpfs pages (Shmem) can raise it
    # between the two readings, so the drop is proven by this file's own pages below, not by that sum
    assert isinstance(drop.cached_bytes_before, int) and isinstance(drop.cached_bytes_after, int)
    assert drop.cached_bytes_before > 0 and drop.cached_bytes_after >= 0
    after, _ = page_cache_residency(data)
    assert after <= 0.1 * size, f"{after} of {size} bytes still cached after the drop"
    d = drop.to_dict()
    assert d["method"] == "sync; echo 3 > /proc/sys/vm/drop_caches"
    assert {"attempted", "succeeded", "duration_s", "method", "error", "at",
            "cached_bytes_before", "cached_bytes_after"} <= set(d)
    with pytest.raises(dataclasses.FrozenInstanceError):
        drop.succeeded = False                             # frozen


def test_drop_caches_where_the_file_is_absent(tmp_path):
    drop = drop_caches(path=str(tmp_path / "drop_caches"))
    assert drop.attempted is False and drop.succeeded is False
    assert str(tmp_path / "drop_caches") in drop.error and "\n" not in drop.error


def test_page_cache_residency_of_an_empty_file(tmp_path):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert page_cache_residency(empty) == (0, 0)


# ----------------------------------------------------------------------- detection


def test_detect_cgroup_on_this_machine():
    found = detect_cgroup()
    if IS_ROOT and os.path.isdir("/sys/fs/cgroup/memory"):
        assert found.version in ("v1", "v2") and os.path.isdir(found.root)
    assert found.reason


def _fake_v2_root(root: Path, controllers="cpu io memory pids"):
    root.mkdir(parents=True, exist_ok=True)
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cgroup.subtree_control").write_text("\n")
    (root / "cgroup.procs").write_text("")
    return root


def test_detect_prefers_v2_with_memory_then_v1_then_none(tmp_path):
    v2 = _fake_v2_root(tmp_path / "unified")
    v1 = tmp_path / "memory"
    v1.mkdir()
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    mounts = tmp_path / "mounts"
    no_systemd = str(tmp_path / "comm")
    Path(no_systemd).write_text("init\n")
    mounts.write_text(f"cgroup2 {v2} cgroup2 rw 0 0\ncgroup {v1} cgroup rw,memory 0 0\n")
    assert detect_cgroup(str(mounts), no_systemd).version == "v2"
    # like this machine: a v2 mount with only hugetlb, and v1 memory
    (v2 / "cgroup.controllers").write_text("hugetlb\n")
    found = detect_cgroup(str(mounts), no_systemd)
    assert (found.version, found.root) == ("v1", str(v1))
    mounts.write_text(f"cgroup2 {v2} cgroup2 rw 0 0\n")
    found = detect_cgroup(str(mounts), no_systemd)
    assert found.version is None
    assert "without the memory controller" in found.reason and "not PID 1" in found.reason
    mounts.write_text("proc /proc proc rw 0 0\n")
    assert "no cgroup filesystem" in detect_cgroup(str(mounts), no_systemd).reason


# ----------------------------------------------------------------------- v2 logic, on a tree
# Not the kernel: a directory tree shaped like cgroupfs v2. mkdir populates the interface
# files the way the kernel does (memory.* only where the parent enabled +memory).


class FakeV2Kernel(CgroupV2):
    def _mkdir(self, path):
        os.mkdir(path)
        parent_control = Path(path).parent / "cgroup.subtree_control"
        enabled = {t.lstrip("+") for t in parent_control.read_text().split()}
        p = Path(path)
        (p / "cgroup.controllers").write_text(" ".join(sorted(enabled)) + "\n")
        (p / "cgroup.subtree_control").write_text("\n")
        (p / "cgroup.procs").write_text("")
        (p / "cgroup.events").write_text("populated 0\nfrozen 0\n")
        (p / "cgroup.kill").write_text("")
        if "memory" in enabled:
            (p / "memory.max").write_text("max\n")
            (p / "memory.swap.max").write_text("max\n")
            (p / "memory.current").write_text("0\n")
            (p / "memory.peak").write_text("0\n")
            (p / "memory.events").write_text("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")

    def _rmdir(self, path):
        for f in Path(path).iterdir():
            f.unlink()
        os.rmdir(path)

    def kill_all(self, path):
        pids = super().kill_all(path)
        (Path(path) / "cgroup.events").write_text("populated 0\nfrozen 0\n")
        return pids


def test_v2_create_limit_join_figures_and_remove(tmp_path):
    root = _fake_v2_root(tmp_path / "cg")
    name = unique("v2")
    cg = MemoryCgroup(64 * MIB, name, backend=FakeV2Kernel(str(root)))
    with cg:
        path = Path(cg.path)
        assert path == root / "suite" / name
        assert "memory" in (root / "cgroup.subtree_control").read_text()
        assert "memory" in (root / "suite" / "cgroup.subtree_control").read_text()
        assert (path / "memory.max").read_text() == str(64 * MIB)
        assert (path / "memory.swap.max").read_text() == "0"
        assert cg.applied_bytes == 64 * MIB
        proc = cg.start(["true"])
        assert proc.wait(timeout=30) == 0
        assert (path / "cgroup.procs").read_text() == str(proc.pid)   # written before exec
        (path / "memory.peak").write_text(f"{20 * MIB}\n")
        (path / "memory.current").write_text(f"{3 * MIB}\n")
        (path / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 2\n")
        assert (cg.peak_bytes(), cg.usage_bytes(), cg.oom_kills()) == (20 * MIB, 3 * MIB, 2)
        (path / "cgroup.procs").write_text("")          # the "kernel" saw it exit
    ev = cg.evidence()
    assert not path.exists() and ev["removed"] is True and ev["version"] == "v2"
    assert (ev["peak_bytes"], ev["oom_kills"], ev["applied_bytes"]) == (20 * MIB, 2, 64 * MIB)


def test_v2_leftover_processes_are_killed_via_cgroup_kill(tmp_path):
    root = _fake_v2_root(tmp_path / "cg")
    cg = MemoryCgroup(64 * MIB, unique("v2kill"), backend=FakeV2Kernel(str(root)))
    with cg:
        path = Path(cg.path)
        # pretend a process is in there; pid 2**22+1 is above any pid_max, so no real kill
        (path / "cgroup.procs").write_text(f"{2**22 + 1}\n")
        (path / "cgroup.events").write_text("populated 1\nfrozen 0\n")
        kill = path / "cgroup.kill"
        kill_seen = []
        orig = cg.backend.kill_all

        def spy(p):
            pids = orig(p)
            kill_seen.append(kill.read_text())
            return pids
        cg.backend.kill_all = spy
    assert kill_seen == ["1"]
    assert cg.evidence()["killed_pids"] == [2**22 + 1] and cg.removed


def test_v2_without_memory_controller_is_a_one_line_error(tmp_path):
    root = _fake_v2_root(tmp_path / "cg", controllers="cpu pids")

    class NoMemory(FakeV2Kernel):                # the kernel refuses "+memory"
        def _enable_memory(self, directory):
            control = Path(directory, "cgroup.subtree_control")
            if "memory" not in Path(directory, "cgroup.controllers").read_text().split():
                raise OSError(errno.ENOENT, "No such file or directory", str(control))
            super()._enable_memory(directory)

    with pytest.raises(CgroupError) as info:
        MemoryCgroup(64 * MIB, unique("v2none"), backend=NoMemory(str(root))).create()
    msg = str(info.value)
    assert "\n" not in msg and "cgroup.subtree_control" in msg and "--memory-limit" in msg
    assert not (root / "suite").exists()


def test_v2_limit_refused_by_the_kernel_cleans_up(tmp_path):
    root = _fake_v2_root(tmp_path / "cg")

    class Refuses(FakeV2Kernel):
        def set_limit(self, path, limit):
            raise OSError(errno.EINVAL, "Invalid argument", os.path.join(path, "memory.max"))

    cg = MemoryCgroup(64 * MIB, unique("v2inval"), backend=Refuses(str(root)))
    with pytest.raises(CgroupError, match="memory.max: kernel refused limit"):
        cg.create()
    assert cg.removed and not os.path.exists(cg.path)


def test_systemd_wraps_argv_in_a_scope_with_the_limit():
    # systemd is not PID 1 here: only the command line is checked, not systemd itself.
    scope = SystemdScope()
    argv = scope.wrap_argv(["mpiexec", "-n", "2", "x"], 64 * MIB, "run-1")
    assert argv[:2] == ["systemd-run", "--scope"]
    assert f"MemoryMax={64 * MIB}" in argv and "MemorySwapMax=0" in argv
    assert "--unit=suite-run-1.scope" in argv
    assert argv[argv.index("--") + 1:] == ["mpiexec", "-n", "2", "x"]


def test_v2_processes_that_never_leave_are_a_cleanup_error(tmp_path):
    root = _fake_v2_root(tmp_path / "cg")

    class Stuck(FakeV2Kernel):                   # the kill is written, the "kernel" ignores it
        def kill_all(self, path):
            return CgroupV2.kill_all(self, path)

    cg = MemoryCgroup(64 * MIB, unique("v2stuck"), backend=Stuck(str(root)))
    cg.KILL_WAIT_S = 0.2
    with pytest.raises(CgroupCleanupError, match="still present"), cg:
        Path(cg.path, "cgroup.procs").write_text(f"{2**22 + 1}\n")
        Path(cg.path, "cgroup.events").write_text("populated 1\nfrozen 0\n")
    ev = cg.evidence()
    assert ev["removed"] is False and "still present" in ev["cleanup_error"]
    assert os.path.isdir(cg.path)
    # ... and with an exception in the body, the body's exception wins
    with pytest.raises(ValueError):
        with MemoryCgroup(64 * MIB, unique("v2stuck"), backend=Stuck(str(root))) as cg2:
            cg2.KILL_WAIT_S = 0.2
            Path(cg2.path, "cgroup.events").write_text("populated 1\nfrozen 0\n")
            raise ValueError("body")
    assert cg2.evidence()["cleanup_error"]


def test_v2_swap_limit_is_evidence(tmp_path):
    root = _fake_v2_root(tmp_path / "cg")
    with MemoryCgroup(64 * MIB, unique("v2swap"), backend=FakeV2Kernel(str(root))) as cg:
        pass
    assert cg.evidence()["swap_limit_bytes"] == 0


@needs_v1
def test_swap_limit_v1_equals_the_memory_limit_when_memsw_exists():
    with MemoryCgroup(64 * MIB, unique("memsw")) as cg:
        has_memsw = Path(cg.path, "memory.memsw.limit_in_bytes").exists()
    expected = cg.applied_bytes if has_memsw else None
    assert cg.evidence()["swap_limit_bytes"] == expected


@needs_v1
@pytest.mark.parametrize("worker_thread", [False, True])
def test_ctrl_c_during_cleanup_does_not_leave_the_cgroup(worker_thread):
    """Also with another thread alive: a signal mask covers one thread only, and the kernel
    may hand the signal to the other one (Python then runs the handler mid-cleanup)."""
    import signal
    import threading

    stop = threading.Event()
    if worker_thread:
        threading.Thread(target=stop.wait, daemon=True).start()

    class InterruptedRemove(CgroupV1):          # Ctrl-C lands in the middle of close()
        def remove(self, path):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)                    # time for any other thread to take it
            super().remove(path)

    cg = MemoryCgroup(64 * MIB, unique("sigint"), backend=InterruptedRemove(SUPPORT.root))
    cg.create()
    sleeper = cg.start(["sleep", "60"])
    # a shell's background job starts with SIGINT ignored: install Python's own handler
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):  # delivered, but only after close() is done
            cg.close()
    finally:
        signal.signal(signal.SIGINT, old)
        stop.set()
    assert cg.removed and not os.path.exists(cg.path) and sleeper.returncode == -9


def test_v2_busy_parent_explains_the_no_internal_processes_rule(tmp_path):
    root = _fake_v2_root(tmp_path / "cg")

    class Busy(FakeV2Kernel):                    # a container's v2 root holding processes
        def _enable_memory(self, directory):
            raise OSError(errno.EBUSY, "Device or resource busy",
                          os.path.join(directory, "cgroup.subtree_control"))

    with pytest.raises(CgroupError) as info:
        MemoryCgroup(64 * MIB, unique("v2busy"), backend=Busy(str(root))).create()
    msg = str(info.value)
    assert "\n" not in msg and "cgroup.subtree_control" in msg
    assert "no-internal-processes" in msg and "drop --memory-limit" in msg


@needs_v1
def test_page_cache_counts_against_the_limit(tmp_path):
    # Why the limit emulates host memory: a reader in a 32 MiB cgroup streams a 128 MiB
    # file without being killed, and no more than the limit of it stays cached.
    data = tmp_path / "big.bin"
    block = os.urandom(MIB)
    with open(data, "wb") as f:
        f.writelines(block for _ in range(128))
        f.flush()
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)   # evict just this file
    assert page_cache_residency(data)[0] <= 8 * MIB
    reader = ("import sys\nn = 0\nwith open(sys.argv[1], 'rb') as f:\n"
              "    while b := f.read(1 << 20):\n        n += len(b)\nprint(n)")
    with MemoryCgroup(32 * MIB, unique("cache")) as cg:
        proc = cg.start([sys.executable, "-c", reader, str(data)], stdout=subprocess.PIPE,
                        text=True)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0 and int(out) == 128 * MIB
        resident, _ = page_cache_residency(data)
        assert cg.oom_kills() == 0
    assert resident <= 32 * MIB, f"{resident / MIB:.1f} MiB of the file cached under a 32 MiB limit"
    assert cg.evidence()["peak_bytes"] <= cg.applied_bytes

