"""suite.compare.analysis and render on any numbers a result may hold (Hypothesis): zeros,
negatives, huge values, one run, epochs or none; every format renders, JSON stays RFC 8259."""

import json
from pathlib import Path

from hypothesis import given, settings, strategies as st

from suite.compare import analysis, render
from suite.benchmark import Measured, Samples

num = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False)
runs = st.lists(num, min_size=1, max_size=6)


def measured(per_run, epochs, label):
    s = Samples("samples_per_second", "samples/s", True, tuple(per_run), tuple(tuple(e) for e in epochs))
    return Measured(Path(f"/r/{label}"), "training", label, {"workload": "resnet50"}, {"k": label}, (s,))


@settings(max_examples=60, deadline=None)
@given(runs, runs, st.lists(st.lists(num, max_size=4), max_size=3), st.lists(st.lists(num, max_size=4), max_size=3),
       st.floats(min_value=0.5, max_value=0.999))
def test_any_numbers_compare_and_render(a, b, ea, eb, level):
    ra, rb = measured(a, ea, "a\x1b"), measured(b, eb, "b|*")
    for c in analysis.compare(ra, rb, level):
        assert c.verdict in (analysis.FASTER, analysis.SLOWER, analysis.NOT_SIGNIFICANT, analysis.NO_INTERVAL)
        assert c.ratio >= 0
    doc = render.build([ra, rb], level, None, [])
    assert "\x1b" not in render.text(doc) and "\x1b" not in render.markdown(doc)
    json.loads(render.json_text(doc))


def test_a_known_difference_and_none():
    a = measured([100.0, 101.0, 99.0, 100.5, 99.5], [], "a")
    b = measured([90.0, 91.0, 89.0, 90.5, 89.5], [], "b")
    c = analysis.compare(a, b, 0.95)[0]
    assert c.verdict == "slower" and c.basis == "per run (5 vs 5)" and 0.88 < c.low < c.ratio < c.high < 0.92
    c = analysis.compare(a, measured([100.2, 99.1, 100.9, 99.7, 100.4], [], "c"), 0.95)[0]
    assert c.verdict == "not significant"
    c = analysis.compare(measured([100.0], [], "a"), measured([90.0], [], "b"), 0.95)[0]
    assert c.verdict == "no interval" and c.low is None
