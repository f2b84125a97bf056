import os
import stat

import pytest

from suite import files
from suite.errors import SuiteError


def test_write_atomic_gives_normal_permissions_and_leaves_no_temp(tmp_path):
    old = os.umask(0o022)
    try:
        files.write_atomic(tmp_path / "a.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_write_atomic_replaces_whole_file(tmp_path):
    target = tmp_path / "r.json"
    files.write_atomic(target, "x" * 1000)
    files.write_atomic(target, "short")
    assert target.read_text() == "short"


@pytest.mark.parametrize("content,needle", [
    (b"{", "expected valid JSON"),
    (b"\xff\xfe{}", "expected UTF-8"),
])
def test_load_json_bad_input_is_one_line(tmp_path, content, needle):
    p = tmp_path / "bad.json"
    p.write_bytes(content)
    with pytest.raises(SuiteError) as err:
        files.load_json(p)
    assert needle in str(err.value) and "bad.json" in str(err.value) and "\n" not in str(err.value)


def test_load_refuses_oversized_files(tmp_path):
    p = tmp_path / "big.json"
    p.write_bytes(b" " * 2048)
    with pytest.raises(SuiteError, match="expected at most 1024 bytes"):
        files.read_text(p, limit=1024)


@pytest.mark.parametrize("make", ["fifo", "device", "symlink", "directory"])
def test_write_atomic_refuses_what_is_not_a_regular_file(tmp_path, make):
    import os
    import stat

    from suite.errors import SuiteError

    target = tmp_path / "out"
    victim = tmp_path / "victim.txt"
    victim.write_text("user data")
    if make == "fifo":
        os.mkfifo(target)
    elif make == "device":
        os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null twin (root, as CI)
    elif make == "symlink":
        target.symlink_to(victim)
    else:
        target.mkdir()
    before = os.lstat(target).st_mode
    with pytest.raises(SuiteError, match="expected a regular file or a new path"):
        files.write_atomic(target, "new")
    assert os.lstat(target).st_mode == before and victim.read_text() == "user data"
    assert not list(tmp_path.glob(".out.*"))


def test_check_output_to_a_device_is_refused_with_exit_2(tmp_path, run_cli):
    import os
    import stat

    import paths

    device = tmp_path / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    code, _, err = run_cli("check", paths.DATA / "check" / "valid" / "dlio-unet3d-h100", "--output", device)
    assert code == 2 and "expected a regular file or a new path" in err and len(err.strip().splitlines()) == 1
    assert stat.S_ISCHR(os.lstat(device).st_mode)
