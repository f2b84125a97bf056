"""The content hash of a result (suite.history.digest) on real files: a Merkle hash with lengths, so no two
different file sets hash alike (Hypothesis), bytes moved from one file into another's tail included;
every file of a kv_cache result covered; bounded with a one-line error; a FIFO, a device or a link out of
the result never opened or followed, a FIFO as a results path refused by import and not hanging show;
entries hashed by the first algorithm still checked."""

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import paths
from suite.history import db, digest

PY = [sys.executable, "-m", "suite"]
ENV = {**os.environ, "PYTHONPATH": str(paths.REPO)}


def _write(root: Path, files: dict) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


NAMES = st.sampled_from(["a", "b", "ab", "a\0b".replace("\0", "_"), "d/a", "d/b", "d/e/f", "summary.json"])
FILESETS = st.dictionaries(NAMES, st.binary(max_size=24), max_size=5).filter(
    lambda d: not any(k != o and o.startswith(k + "/") for k in d for o in d))


@settings(max_examples=200, derandomize=True, deadline=None)
@given(one=FILESETS, two=FILESETS)
def test_two_file_sets_hash_alike_only_when_they_are_the_same(tmp_path_factory, one, two):
    tmp = tmp_path_factory.mktemp("sets")
    h1 = digest.content_hash(_write(tmp / "one", one))
    h2 = digest.content_hash(_write(tmp / "two", two))
    assert (h1 == h2) == (one == two)
    assert h1.startswith(digest.ALGORITHM + ":")


@settings(max_examples=100, derandomize=True, deadline=None)
@given(head=st.binary(max_size=16), mid=st.binary(max_size=16), tail=st.binary(max_size=16))
def test_bytes_moved_from_one_file_into_another_change_the_hash(tmp_path_factory, head, mid, tail):
    """Bytes moved from a's tail into b: the first algorithm framed files as name\\0bytes\\0, so
    a = head \\0b\\0 mid, b = tail and a = head, b = mid \\0b\\0 tail were one stream and one hash."""
    tmp = tmp_path_factory.mktemp("moved")
    before = _write(tmp / "x", {"a": head + b"\0b\0" + mid, "b": tail})
    after = _write(tmp / "y", {"a": head, "b": mid + b"\0b\0" + tail})
    assert digest.legacy(before) == digest.legacy(after)            # the defect: unframed names and bytes
    assert digest.content_hash(before) != digest.content_hash(after)


def test_a_fifo_device_or_outward_link_in_a_result_is_never_opened_or_followed(tmp_path):
    res = _write(tmp_path / "r", {"summary.json": b"{}"})
    os.mkfifo(res / "pipe")
    os.symlink("/etc/passwd", res / "out")
    os.symlink("/dev/zero", res / "zero")
    first = digest.content_hash(res)                                  # returns at once: nothing blocks
    (tmp_path / "elsewhere").write_text("changed")
    os.unlink(res / "out")
    os.symlink(str(tmp_path / "elsewhere"), res / "out")
    assert digest.content_hash(res) != first                          # the link's text is hashed, not its target


@pytest.mark.parametrize("special", ["fifo", "/dev/null", "/dev/zero"])
def test_a_fifo_or_device_as_a_results_path_is_refused_by_import_in_one_line(tmp_path, special):
    path = tmp_path / "f"
    if special == "fifo":
        os.mkfifo(path)
    else:
        path = Path(special)
    out = subprocess.run([*PY, "history", "import", str(path), "--history", str(tmp_path / "h.sqlite")],
                         capture_output=True, text=True, timeout=60, env=ENV)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "expected a results directory or a regular file" in out.stderr and "Traceback" not in out.stderr
    assert "tpcx-ai" not in out.stdout


def test_show_does_not_hang_on_a_fifo_in_a_recorded_result_or_as_it(tmp_path):
    res = tmp_path / "r"
    shutil.copytree(paths.DATA / "suite-run", res)
    store = str(tmp_path / "h.sqlite")
    out = subprocess.run([*PY, "history", "import", str(res), "--history", store], capture_output=True, text=True,
                         timeout=60, env=ENV)
    assert out.returncode == 0, out.stderr
    os.mkfifo(res / "unet3d-h100" / "pipe")                           # the first algorithm opened it: hung
    out = subprocess.run([*PY, "history", "show", "1", "--history", store], capture_output=True, text=True,
                         timeout=60, env=ENV)
    assert out.returncode == 1 and "TAMPERED" in out.stdout
    shutil.rmtree(res / "unet3d-h100")
    os.mkfifo(res / "unet3d-h100")
    out = subprocess.run([*PY, "history", "show", "1", "--history", store], capture_output=True, text=True,
                         timeout=60, env=ENV)
    assert out.returncode == 1 and "TAMPERED" in out.stdout


def test_every_file_of_a_kv_cache_result_is_covered(run_cli, tmp_path):
    (leaf,) = (paths.DATA / "v3" / "kv_cache_FarmGPU").glob("open/*/results/*/kv_cache/*/run/*")
    copy = tmp_path / "leaf"
    shutil.copytree(leaf, copy)
    store = tmp_path / "h.sqlite"
    code, out, err = run_cli("history", "import", copy, "--history", store)
    assert code == 0 and "1 recorded" in out, err
    code, out, err = run_cli("history", "show", "1", "--history", store)
    assert code == 0 and "unchanged since recorded" in out
    summary = copy / "summary.json"                                   # beside option_3/, not in it
    summary.write_bytes(summary.read_bytes() + b" ")
    code, out, err = run_cli("history", "show", "1", "--history", store)
    assert code == 1 and "TAMPERED" in out


def test_a_result_past_the_bounds_is_one_line_exit_2(run_cli, tmp_path, monkeypatch):
    res = _write(tmp_path / "r", {"a": b"x" * 100, "b": b"y" * 100})
    monkeypatch.setattr(digest, "MAX_FILE_BYTES", 50)
    with pytest.raises(digest.HashError, match=r"/a: size: expected at most 50 bytes in one file"):
        digest.content_hash(res)
    monkeypatch.setattr(digest, "MAX_FILE_BYTES", 150)
    monkeypatch.setattr(digest, "MAX_TOTAL_BYTES", 150)
    with pytest.raises(digest.HashError, match=r"size: expected at most 150 bytes in a result"):
        digest.content_hash(res)
    shutil.copytree(paths.DATA / "suite-run", tmp_path / "run")
    code, out, err = run_cli("history", "import", tmp_path / "run", "--history", tmp_path / "h.sqlite")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "expected at most 150 bytes" in err


def test_an_entry_hashed_by_the_first_algorithm_is_still_checked(run_cli, tmp_path):
    res = tmp_path / "r"
    shutil.copytree(paths.DATA / "suite-run", res)
    store = tmp_path / "h.sqlite"
    code, out, err = run_cli("history", "import", res, "--history", store)
    assert code == 0
    with db.open_store(str(store)) as s:
        (e,) = s.entries()
    conn = sqlite3.connect(store)                                     # as an older suite recorded it
    conn.execute("UPDATE entries SET content_hash = ?, hash_scope = NULL WHERE id = 1",
                 (digest.legacy(Path(e.results_path)),))
    conn.commit()
    conn.close()
    code, out, err = run_cli("history", "show", "1", "--history", store)
    assert code == 0 and "unchanged since recorded" in out, out + err
    (res / "unet3d-h100" / "extra.txt").write_text("x")
    code, out, err = run_cli("history", "show", "1", "--history", store)
    assert code == 1 and "TAMPERED" in out


def test_a_result_recorded_by_the_first_algorithm_is_not_imported_again(run_cli, tmp_path):
    res = tmp_path / "r"
    shutil.copytree(paths.DATA / "suite-run", res)
    store = tmp_path / "h.sqlite"
    code, out, err = run_cli("history", "import", res, "--history", store)
    with db.open_store(str(store)) as s:
        (e,) = s.entries()
    conn = sqlite3.connect(store)                                     # as an older suite recorded it
    conn.execute("UPDATE entries SET content_hash = ?, dedup_key = NULL WHERE id = 1",
                 (digest.legacy(Path(e.results_path)),))
    conn.commit()
    conn.close()
    code, out, err = run_cli("history", "import", res, "--history", store)
    assert code == 0 and "0 recorded, 1 already there" in out, out + err
