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


# --------------------------------------------------------------------------- reads inside a tree (issue 24, class 6)

def _tree_with_outside(tmp_path):
    root, outside = tmp_path / "tree", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.json").write_text('{"secret": 1}')
    (root / "sub" / "inside.json").write_text('{"inside": 1}')
    return root, outside


@pytest.mark.parametrize("make", [
    lambda root, out: (root / "a.json").symlink_to(out / "secret.json"),
    lambda root, out: (root / "a.json").symlink_to("../outside/secret.json"),
    lambda root, out: ((root / "d").symlink_to(out), (root / "a.json").symlink_to("d/secret.json")),
    lambda root, out: (root / "a.json").symlink_to(root / "sub" / ".." / ".." / "outside" / "secret.json"),
], ids=["absolute", "relative", "via-a-linked-dir", "dotdot"])
def test_a_link_out_of_the_tree_is_never_read(tmp_path, make):
    root, outside = _tree_with_outside(tmp_path)
    make(root, outside)
    with pytest.raises(SuiteError, match="expected a file inside") as exc:
        files.load_json(root / "a.json", root=root)
    assert "secret" not in str(exc.value).split("got a link to")[0] and "\n" not in str(exc.value)
    assert files.load_json(root / "a.json") == {"secret": 1}      # without a tree: as before


def test_a_link_inside_the_tree_is_read(tmp_path):
    root, _ = _tree_with_outside(tmp_path)
    (root / "a.json").symlink_to("sub/inside.json")
    assert files.load_json(root / "a.json", root=root) == {"inside": 1}


@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self/environ"])
def test_a_special_file_is_never_read(tmp_path, target):
    root, _ = _tree_with_outside(tmp_path)
    (root / "a.json").symlink_to(target)
    with pytest.raises(SuiteError, match="expected a"):
        files.read_bytes(root / "a.json", root=root)
    with pytest.raises(SuiteError, match="expected a regular file|size"):
        files.read_bytes(target, limit=10)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(SuiteError, match="expected a regular file"):
        files.read_bytes(tmp_path / "fifo", root=tmp_path)


# --------------------------------------------------------------------------- writes (issue 24, classes 5 and 7)

def _child_with_fsize(limit, fn):
    """Run fn() in a forked child under RLIMIT_FSIZE=limit; its outcome as a string."""
    import multiprocessing
    import resource

    def body(queue):
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        try:
            fn()
            queue.put("ok")
        except SuiteError as exc:
            queue.put(f"SuiteError: {exc}")
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            queue.put(f"{type(exc).__name__}: {exc}")

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    p = ctx.Process(target=body, args=(queue,))
    p.start()
    p.join(60)
    return queue.get(timeout=5)


def test_write_atomic_past_a_file_size_limit_is_one_line_and_leaves_the_old_file(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    got = _child_with_fsize(100, lambda: files.write_atomic(target, "x" * 1000))
    assert got.startswith("SuiteError: ") and str(target) in got and "EFBIG" in got and "\n" not in got
    assert target.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["out.json"]


def test_write_error_names_the_file_and_the_errno():
    import errno

    for code, name in files.RESOURCE_ERRNOS.items():
        err = files.write_error("/x/y.json", OSError(code, os.strerror(code)))
        assert str(err).startswith("/x/y.json: cannot write: ") and f"({name})" in str(err)
        assert files.is_resource_error(OSError(code, "x"))
    assert not files.is_resource_error(OSError(errno.ENOENT, "x"))


def test_output_inside_or_holding_an_input_is_refused(tmp_path):
    from suite import output

    tree = tmp_path / "tree"
    (tree / "run").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tree)
    for bad in (tree / "x.txt", tree / "run" / "x", tmp_path / "link" / "x", tree / "run" / ".." / "x", tree, tmp_path):
        with pytest.raises(SuiteError, match="--out .*location: expected a path outside"):
            output.outside(bad, "--out", [tree])
    assert output.outside(tmp_path / "other", "--out", [tree]) == tmp_path / "other"


def test_a_locked_tree_refuses_a_second_holder(tmp_path):
    from suite import output

    with output.locked(tmp_path, "first"):
        with pytest.raises(SuiteError, match="one under way"):
            with output.locked(tmp_path, "second"):
                pass
    with output.locked(tmp_path, "again"):
        pass
    assert os.listdir(tmp_path) == []                      # nothing written to take it


def test_a_schema_is_found_in_the_shared_folder_or_its_kinds(tmp_path, monkeypatch):
    """Shared schemas sit in suite/schemas/, a kind's own in suite/<kind>/schemas/: each name is one
    file, found wherever it sits; a name in two folders is refused."""
    shipped = files._schema_files()
    assert shipped["check-result"].parent == files.SCHEMA_DIR
    assert shipped["checkpoint-summary"].parent.parent.name == "checkpointing"
    assert shipped["workload"].parent.parent.name == "training"
    assert files.schema_errors({"schema_version": 1}, "workload")      # loaded from the kind's folder
    package = tmp_path / "suite"
    for folder in ("schemas", "kindx/schemas", "kindy/schemas"):
        (package / folder).mkdir(parents=True)
    (package / "schemas" / "a.schema.json").write_text("{}")
    (package / "kindx" / "schemas" / "b.schema.json").write_text("{}")
    monkeypatch.setattr(files, "SCHEMA_DIR", package / "schemas")
    files._schema_files.cache_clear()
    try:
        assert files.schema_path("b") == package / "kindx" / "schemas" / "b.schema.json"
        assert files.schema_path("a") == package / "schemas" / "a.schema.json"
        assert not files.schema_path("nope").exists()
        (package / "kindy" / "schemas" / "b.schema.json").write_text("{}")
        files._schema_files.cache_clear()
        with pytest.raises(ValueError, match="schema b: expected one file"):
            files.schema_path("b")
    finally:
        monkeypatch.undo()
        files._schema_files.cache_clear()
