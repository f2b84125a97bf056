"""suite.harness.provenance: the md5-tree-v2 code image (what it hashes, what it leaves out, that a
copy of code_files() hashes the same), git's commit, and the harness writing each run's pointer."""

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from suite.harness import enforced, provenance
from suite.harness.enforced import Series


def _tree(root: Path) -> Path:
    for rel, data in {"a.py": b"A = 1\n", "pkg/b.py": b"B = 2\n", "pkg/__pycache__/b.cpython.pyc": b"x",
                      "tests/test_a.py": b"t", ".git/HEAD": b"ref", "x.egg-info/PKG-INFO": b"n",
                      "pkg/c.pyc": b"pyc", "build/lib/a.py": b"old"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def test_md5_tree_v2_is_path_then_bytes_of_the_kept_files_in_byte_order(tmp_path):
    root = _tree(tmp_path / "code")
    (root / "link.py").symlink_to(root / "a.py")
    assert [rel for rel, _ in provenance.code_files(root)] == ["a.py", "pkg/b.py"]
    want = hashlib.md5(b"a.py" + b"A = 1\n" + b"pkg/b.py" + b"B = 2\n").hexdigest()
    assert provenance.tree_md5(root) == (want, 2)


def test_a_copy_of_the_code_files_hashes_the_same_and_a_change_does_not(tmp_path):
    root = _tree(tmp_path / "code")
    copy = tmp_path / "pool"
    for rel, path in provenance.code_files(root):
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy / rel)
    assert provenance.tree_md5(copy) == provenance.tree_md5(root)
    (copy / "pkg" / "b.py").write_bytes(b"B = 3\n")
    assert provenance.tree_md5(copy)[0] != provenance.tree_md5(root)[0]
    (root / "pkg" / "b.py").rename(root / "pkg" / "b2.py")      # a rename changes the hash too
    assert provenance.tree_md5(root)[0] != hashlib.md5(b"a.pyA = 1\npkg/b.pyB = 2\n").hexdigest()


def test_code_image_records_what_a_code_hash_json_does_and_the_pointer_is_one_line(tmp_path):
    root = _tree(tmp_path / "code")
    image = provenance.code_image(root)
    assert image["algorithm"] == "md5-tree-v2" and re.fullmatch(r"[0-9a-f]{32}", image["hash"])
    assert image["git_sha"] is None and image["tool"] == "suite" and image["tool_version"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", image["captured_at"])
    assert provenance.pointer(image) == f"md5-tree-v2:{image['hash']}"


def test_git_sha_and_dirty_of_a_checkout(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("no git")
    root = _tree(tmp_path / "repo")
    shutil.rmtree(root / ".git")
    git = ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "a.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    sha, dirty = provenance.git_commit(root)
    assert re.fullmatch(r"[0-9a-f]{40}", sha) and dirty is False
    (root / "a.py").write_bytes(b"A = 2\n")
    assert provenance.git_commit(root) == (sha, True)


def test_not_a_directory_is_one_line(tmp_path):
    with pytest.raises(Exception, match="code image: expected a directory of code, got nothing"):
        provenance.code_files(tmp_path / "missing")


class OneRunKind:
    """A kind whose runs make run-<k>/ (the harness's default run dir)."""

    def __init__(self, results_dir, runs=2):
        self.results_dir, self.runs = results_dir, runs

    def prepare(self):
        return Series(name="p", results_dir=self.results_dir, runs=self.runs, clear_cache=None,
                      write_run_set=lambda results: None, started=self.started)

    def started(self, path):
        self.claimed = Path(path)

    def run_once(self, k, drop):
        (self.claimed / f"run-{k}").mkdir()
        return {"status": "complete"}


def test_the_harness_writes_each_runs_pointer_and_record(tmp_path):
    series, _ = enforced.run(OneRunKind(tmp_path / "R"))
    image = provenance.for_run()
    assert series.provenance == image and image["hash"] == provenance.tree_md5(provenance.package_root(), under="suite")[0]
    for k in (1, 2):
        run = tmp_path / "R" / f"run-{k}"
        assert (run / ".mlps-code-image").read_text() == f"md5-tree-v2:{image['hash']}\n"
        assert json.loads((run / "provenance.json").read_text())["hash"] == image["hash"]


def test_record_then_recorded_gives_back_the_pointer_and_the_record(tmp_path):
    image = provenance.record(tmp_path)
    line, doc = provenance.recorded(tmp_path)
    assert line == provenance.pointer(image) and doc == {"schema_version": 1, **image}
    assert provenance.recorded(tmp_path / "none") == (None, None)


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pointer=st.binary(max_size=300), record=st.one_of(st.binary(max_size=300), st.builds(
    lambda d: json.dumps(d).encode(), st.dictionaries(st.sampled_from(["hash", "algorithm", "tool", "x"]),
                                                      st.one_of(st.text(max_size=40), st.integers(), st.none())))))
def test_recorded_reads_any_bytes_as_a_pointer_and_a_record_or_one_result_error(tmp_path, pointer, record):
    """The loader of a run's code record (issue 46, class 9): whatever the two files hold, it returns them or
    raises ResultError naming the file, never another exception."""
    from suite.errors import ResultError

    (tmp_path / provenance.POINTER_FILE).write_bytes(pointer)
    (tmp_path / provenance.RECORD_FILE).write_bytes(record)
    try:
        line, doc = provenance.recorded(tmp_path)
    except ResultError as exc:
        assert str(tmp_path) in str(exc)
    else:
        assert isinstance(line, str) and isinstance(doc, dict) and re.fullmatch(r"[0-9a-f]{32}", doc["hash"])
