import pytest
from hypothesis import given, strategies as st

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


@pytest.mark.parametrize("text,noted", [("256GB", True), ("8GB", True), ("192GB", True), ("1536GB", True),
                                        ("137.4GB", False), ("256GiB", False), ("100GB", False), ("4GB", False),
                                        ("256MB", False), ("256", False), ("9" * 40 + "GB", False)])
def test_a_gb_count_typical_of_gib_memory_gets_a_note(text, noted):
    from suite.sizes import gib_hint

    note = gib_hint(text)
    assert (note is not None) == noted
    if noted:
        n = text.removesuffix("GB")
        assert f"{n}GB is {n} x 10^9 B" in note and f"is {n}GiB" in note and "\n" not in note


@given(st.text(max_size=60))
def test_the_gb_note_never_raises_and_is_one_line(text):
    from suite.sizes import gib_hint

    note = gib_hint(text)
    assert note is None or ("\n" not in note and note.split("GB", 1)[0] in text)
