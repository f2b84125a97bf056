import pytest

from suite.errors import SuiteError
from suite.sizes import parse_size


@pytest.mark.parametrize("text,expected", [
    ("128GiB", 128 * 1024**3),
    ("137.4GB", 137_400_000_000),
    ("64 GiB", 64 * 1024**3),
    ("1MiB", 1024**2),
    ("1MB", 1000**2),
    ("512B", 512),
    ("1.5TiB", int(1.5 * 1024**4)),
])
def test_sizes_with_units(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["128", "12.5", "GiB", "-1GiB", "0GiB", "1gib", "1 Gb", ""])
def test_bare_or_bad_sizes_are_refused_with_both_spellings(text):
    with pytest.raises(SuiteError) as err:
        parse_size(text)
    assert "\n" not in str(err.value)


def test_refusal_shows_both_spellings():
    with pytest.raises(SuiteError, match=r"128GiB.*137\.4GB"):
        parse_size("128")


def test_gib_and_gb_differ():
    assert parse_size("1GiB") - parse_size("1GB") == 73_741_824
