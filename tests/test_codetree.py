"""suite.codetree: md5-tree-v2, the one walker of a run's provenance and the v3.0 code pool."""

import hashlib

import pytest

from suite import codetree
from suite.layouts import pool as v3pool
from suite.errors import ResultError
from suite.harness import provenance


def _tree(root):
    for rel, body in {"a.py": b"A\n", "pkg/tests/t.py": b"T\n", "pkg/__pycache__/m.cpython-311.pyc": b"x",
                      "tests/top.py": b"X\n", "pkg/.code-hash.json": b"{}", "build/out.o": b"o",
                      "pkg/build/keep.py": b"K\n", "x.egg-info/PKG-INFO": b"p"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(body)


def test_prefixes_name_top_level_directories_only_as_the_reference_walks(tmp_path):
    """A prefix matches the path relative to the root: `tests/` and `build/` at the top are left out,
    a nested pkg/tests/ and pkg/build/ are hashed; *.pyc and .code-hash.json are left out anywhere."""
    _tree(tmp_path)
    rels = [rel for rel, _ in codetree.code_files(tmp_path)]
    assert rels == ["a.py", "pkg/build/keep.py", "pkg/tests/t.py"]
    want = hashlib.md5(b"a.pyA\npkg/build/keep.pyK\npkg/tests/t.pyT\n").hexdigest()
    assert codetree.tree_md5(tmp_path) == (want, 3)
    assert provenance.tree_md5(tmp_path) == (want, 3) and v3pool.tree_md5(tmp_path) == want


def test_a_pool_image_past_its_limits_is_one_line(tmp_path):
    _tree(tmp_path)
    with pytest.raises(ResultError, match="code image: expected at most 2 files, got more"):
        codetree.tree_md5(tmp_path, max_files=2)
    with pytest.raises(ResultError, match="code image: expected at most 4 bytes of code, got more"):
        codetree.tree_md5(tmp_path, max_bytes=4)
