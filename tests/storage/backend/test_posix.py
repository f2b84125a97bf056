"""The POSIX backend on real files: listing, sizes, ranged reads (O_DIRECT too), write-and-commit,
free space, evidence, the page-cache drop."""

import errno
import mmap
import os
import zipfile

import pytest

from suite.enforce.cache import page_cache_residency
from suite.storage.backend.base import PATCH_WINDOW_BYTES, Entry
from suite.storage.backend.posix import PosixBackend

MIB = 1024 * 1024


def tree(root):
    (root / "train" / "0").mkdir(parents=True)
    (root / "train" / "a.bin").write_bytes(b"a" * 10)
    (root / "train" / "0" / "b.bin").write_bytes(b"b" * 2000)
    (root / "train" / ".c.tmp").write_bytes(b"")
    (root / "log.json").write_text("{}")
    return PosixBackend(root)


def test_list_is_one_recursive_listing_with_sizes(tmp_path):
    b = tree(tmp_path)
    assert b.list("train") == [Entry("train/.c.tmp", 0), Entry("train/0/b.bin", 2000), Entry("train/a.bin", 10)]
    assert [e.name for e in b.list()] == ["log.json", "train/.c.tmp", "train/0/b.bin", "train/a.bin"]
    assert b.list("", recursive=False) == [Entry("log.json", 2), Entry("train", -1, True)]
    with pytest.raises(FileNotFoundError):
        b.list("valid")
    with pytest.raises(NotADirectoryError):
        b.list("log.json")


def test_list_never_follows_a_linked_folder(tmp_path):
    b = tree(tmp_path / "d")
    (tmp_path / "d" / "train" / "elsewhere").symlink_to(tmp_path / "d" / "train" / "0")
    assert "train/elsewhere/b.bin" not in {e.name for e in b.list("train")}


def test_size_and_locate(tmp_path):
    b = tree(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    linked = PosixBackend(tmp_path / "link")
    assert linked.size("train/0/b.bin") == 2000
    assert linked.locate("train/a.bin") == str(tmp_path / "real" / "train" / "a.bin")
    assert PosixBackend("").size(b.locate("train/a.bin")) == 10     # a plan's absolute names
    with pytest.raises(FileNotFoundError):
        b.size("train/none")


def test_ranged_reads_into_the_callers_buffer(tmp_path):
    data = os.urandom(100_000)
    (tmp_path / "f").write_bytes(data)
    buf = bytearray(4096)
    with PosixBackend(tmp_path).open_read("f") as h:
        assert h.size() == len(data)
        assert h.readinto_at(h.key, [buf], 50_000) == 4096 and bytes(buf) == data[50_000:54_096]
        assert h.readinto_at(h.key, [buf], 99_000) == 1000 and bytes(buf[:1000]) == data[99_000:]
        assert h.readinto_at(h.key, [buf], 100_000) == 0
        assert h.read_at(10, 5) == data[5:15]
    assert h.key == -1                                      # closed


def test_direct_reads_bypass_the_page_cache_with_aligned_buffers(tmp_path):
    data = os.urandom(3 * 4096 + 123)
    (tmp_path / "f").write_bytes(data)
    buf = mmap.mmap(-1, 8192)
    try:
        h = PosixBackend(tmp_path).open_read("f", direct=True)
    except OSError as exc:
        assert exc.errno == errno.EINVAL                    # a file system without O_DIRECT: refused, not faked
        return
    with h:
        got = h.readinto_at(h.key, [buf], 0) + h.readinto_at(h.key, [memoryview(buf)[:8192]], 8192)
    assert got == len(data) and buf[:4096 + 123] == data[8192:]


def test_fileobj_serves_zipfile(tmp_path):
    with zipfile.ZipFile(tmp_path / "z.zip", "w") as z:
        z.writestr("x.npy", b"hello")
    with PosixBackend(tmp_path).open_read("z.zip", sequential=False) as h, zipfile.ZipFile(h.fileobj()) as z:
        assert z.read("x.npy") == b"hello"


def test_commit_renames_a_complete_file_into_place(tmp_path):
    b = PosixBackend(tmp_path)
    w = b.create("train/1/x.bin", size_hint=3 * MIB, fsync=True, temp_tag="host.1")
    temp = tmp_path / "train" / "1" / ".x.bin.host.1.tmp"
    assert temp.exists() and temp.stat().st_size == 0          # preallocated, size kept at 0
    assert temp.stat().st_blocks * 512 >= 3 * MIB
    w.write(b"\0" * 8 + b"payload")
    w.writev([b"-more"])
    w.patch(0, b"HEAD")
    assert not (tmp_path / "train" / "1" / "x.bin").exists()   # invisible until committed
    w.commit()
    assert (tmp_path / "train" / "1" / "x.bin").read_bytes() == b"HEAD\0\0\0\0payload-more"
    assert not temp.exists()
    with pytest.raises(ValueError):
        b.create("y").patch(PATCH_WINDOW_BYTES, b"x")


def test_abort_keeps_what_the_name_had(tmp_path):
    b = PosixBackend(tmp_path)
    (tmp_path / "x").write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with b.create("x") as w:
            w.write(b"new")
            raise RuntimeError("stopped mid-file")
    assert (tmp_path / "x").read_bytes() == b"old" and [e.name for e in b.list()] == ["x"]


def test_in_place_writes_and_remove(tmp_path):
    b = PosixBackend(tmp_path)
    with b.create("shard", fsync=True, atomic=False) as w:
        w.write(b"abc")
        assert (tmp_path / "shard").exists()                # the reference writes checkpoints in place
        w.commit()
    assert (tmp_path / "shard").read_bytes() == b"abc"
    b.remove("shard")
    b.remove("shard")                                       # absent: no error
    assert b.list() == []


def test_sync_and_make_prefix(tmp_path):
    b = PosixBackend(tmp_path / "new")
    b.make_prefix("train/3")
    with b.create("train/3/f") as w:
        w.write(b"x")
        w.commit()
    b.sync(["train/3/f"])
    assert (tmp_path / "new" / "train" / "3" / "f").read_bytes() == b"x"


def test_free_space_is_statvfs_of_the_nearest_existing_folder(tmp_path):
    st = os.statvfs(tmp_path)
    free = PosixBackend(tmp_path / "not" / "made" / "yet").free_bytes()
    assert abs(free - st.f_bavail * st.f_frsize) < 256 * MIB     # others write on this disk meanwhile


def test_evidence_says_what_the_storage_is(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    ev = PosixBackend(tmp_path / "link", "parallel_fs").evidence()
    st = os.stat(tmp_path / "real")
    assert ev["storage_type"] == "parallel_fs" and ev["backend"] == "posix"
    assert ev["path"] == str(tmp_path / "link") and ev["real_path"] == str(tmp_path / "real")
    assert ev["device_id"] == f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    assert ev["real_path"].startswith(ev["mount_point"].rstrip("/") + "/")
    mounts = [line.split() for line in open("/proc/self/mounts")]
    assert [ev["mount_point"], ev["fs_type"]] in [[m[1], m[2]] for m in mounts]
    assert 0 < ev["free_bytes"] <= ev["size_bytes"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the page-cache drop needs root")
def test_clear_cache_drops_the_page_cache(tmp_path):
    data = tmp_path / "cached.bin"
    data.write_bytes(os.urandom(32 * MIB))
    for _ in range(5):                                      # read until cached (others drop caches too)
        data.read_bytes()
        resident, size = page_cache_residency(data)
        if resident >= 0.9 * size:
            break
    record = PosixBackend(tmp_path).clear_cache()
    assert record.succeeded and record.error is None, record.error
    assert record.to_dict()["method"] == "sync; echo 3 > /proc/sys/vm/drop_caches"
    assert page_cache_residency(data)[0] <= 0.1 * size
