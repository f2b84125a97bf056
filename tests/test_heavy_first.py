"""tests/conftest.py's HEAVY_FIRST names files that exist: a renamed heavy file would silently run last again."""
from pathlib import Path

from tests.conftest import HEAVY_FIRST

REPO = Path(__file__).resolve().parent.parent


def test_every_heavy_first_file_exists_once():
    assert len(set(HEAVY_FIRST)) == len(HEAVY_FIRST)
    assert [name for name in HEAVY_FIRST if not (REPO / name).is_file()] == []


def test_collection_puts_them_first_in_their_order(pytestconfig):
    """Listed files first in the list's order, each file's tests as collected, the rest after as collected."""
    from tests.conftest import pytest_collection_modifyitems

    class Item:
        def __init__(self, nodeid):
            self.nodeid = nodeid

    items = [Item("tests/a/test_x.py::t1"), Item(f"{HEAVY_FIRST[1]}::t"), Item("tests/a/test_x.py::t2"),
             Item(f"{HEAVY_FIRST[0]}::t2"), Item(f"{HEAVY_FIRST[0]}::t1")]
    pytest_collection_modifyitems(None, pytestconfig, items)
    assert [i.nodeid for i in items] == [f"{HEAVY_FIRST[0]}::t2", f"{HEAVY_FIRST[0]}::t1", f"{HEAVY_FIRST[1]}::t",
                                         "tests/a/test_x.py::t1", "tests/a/test_x.py::t2"]


def test_install_time_bytecode_is_linked_into_the_sessions_prefix(tmp_path):
    """conftest's _link_compiled: the standard library's compiled json package is found where
    PYTHONPYCACHEPREFIX mirrors it, as the same file (a hard link, not a copy); a library's own tests are not."""
    import json
    import os
    import sys

    from tests.conftest import _link_compiled

    _link_compiled(tmp_path)
    source = Path(json.__file__)
    compiled = source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"   # beside it
    if not compiled.is_file():
        import pytest

        pytest.skip(f"{compiled}: the standard library here was not compiled at install time")
    mirrored = tmp_path / str(source.parent).lstrip(os.sep) / compiled.name
    assert mirrored.is_file() and os.path.samefile(mirrored, compiled)
    stdlib_tests = tmp_path / str(Path(os.__file__).parent).lstrip(os.sep) / "test"
    assert not stdlib_tests.exists()
    assert sys.pycache_prefix != str(tmp_path)   # linking alone changes no setting
