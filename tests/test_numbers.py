"""suite.numbers: what counts as a number in an untrusted document."""

import math

from hypothesis import given, strategies as st

from suite.numbers import as_int, finite_list, is_number, to_float


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.booleans() | st.text() | st.none())
def test_is_number_means_finite_and_not_bool(x):
    expected = (isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x))
    assert is_number(x) is expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_to_float_reads_finite_numbers_and_their_strings(x):
    assert to_float(x) == x and to_float(repr(x)) == x


@given(st.sampled_from([float("nan"), float("inf"), "-inf", "nan", True, False, None, "12 kB", [], {}]))
def test_to_float_refuses_what_is_not_a_finite_number(x):
    assert to_float(x) is None


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-10**9, 10**9), min_size=1))
def test_finite_list_keeps_finite_lists_as_floats(xs):
    assert finite_list(xs) == [float(x) for x in xs]


def test_finite_list_and_as_int_refuse_the_rest():
    assert finite_list([]) is None and finite_list([1, True]) is None and finite_list([1, float("nan")]) is None
    assert finite_list("12") is None and finite_list(None) is None
    assert as_int(3) == 3 and as_int(True) is None and as_int(3.0) is None and as_int("3") is None
