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


def test_write_json_validates_before_it_writes(tmp_path):
    """Our own output breaking its schema is a bug: refused, and nothing is written."""
    target = tmp_path / "run_set.json"
    with pytest.raises(ValueError, match="refusing to write, schema run-set: .*schema_version"):
        files.write_json(target, {"workload": "unet3d"}, schema="run-set")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("schema,doc", [
    ("per-epoch-stats", {"1": {"start": "a", "end": "b", "duration": "1.00",
                               "block1": {"start": "a", "end": "b", "duration": "1.00"}}}),
    ("plan", {"run_dir": "/r", "workload": "unet3d", "accelerator": "h100", "num_accelerators": 1, "epochs": 1,
              "steps_per_epoch": 2, "batch_size": 7, "computation_time_s": 0.3, "samples_per_file": 1,
              "record_length_bytes": 146600628, "format": "npz", "read_threads": 4, "prefetch_size": 2,
              "transfer_size_bytes": 0, "odirect": False, "seed": 100, "file_shuffle": True,
              "sample_shuffle": True, "files": [["/d/train/img_1_of_2.npz", 100]]}),
])
def test_the_written_schemas_accept_good_and_refuse_broken_documents(schema, doc):
    assert files.schema_errors(doc, schema) == []
    broken = dict(doc)
    broken["1" if schema == "per-epoch-stats" else "files"] = "no list" if schema == "plan" else {"start": 1}
    assert files.schema_errors(broken, schema)


def test_write_json_names_its_schema():
    import inspect

    assert inspect.signature(files.write_json).parameters["schema"].default is inspect.Parameter.empty
