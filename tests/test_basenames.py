"""pytest collects tests/ without packages: two test files with one basename stop the whole run at collection."""

from collections import Counter
from pathlib import Path


def test_test_file_basenames_are_unique():
    names = Counter(p.name for p in Path(__file__).parent.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
