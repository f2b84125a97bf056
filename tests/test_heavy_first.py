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
