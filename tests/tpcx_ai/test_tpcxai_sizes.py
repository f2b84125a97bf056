"""Row counts follow the kit's size estimator (reference 2.3's table) at SF 1 and 10, by the
formula: the drivers and what each table group's sizing fixes."""

import math

import pytest

from suite.tpcx_ai import spec
from suite.tpcx_ai.tables import retail
from suite.tpcx_ai.tables import signals
from suite.tpcx_ai.tables import text

# The reference's table (the kit's estimator, 3 significant figures).
PUBLISHED = {
    1: {"s": 0.458, "customers": 67.7e3, "orders": 2.92e6, "lineitems": 19.0e6, "transactions": 5.84e6,
        "failures": 45.8e3, "face_images": 46, "audio_clips": 371},
    10: {"s": 12.90, "customers": 359e3, "orders": 29.1e6, "lineitems": 189e6, "transactions": 58.1e6,
         "failures": 1.29e6, "face_images": 1.29e3, "audio_clips": 1.97e3},
}


def _close(a, b):
    return abs(a - b) <= 0.005 * b + 0.5  # the published figures' rounding


@pytest.mark.parametrize("sf", [1, 10])
def test_drivers_are_the_estimators(sf):
    d, want = spec.row_drivers(sf), PUBLISHED[sf]
    got = {"s": d["s"], "customers": d["customers"], "orders": d["orders"],
           "lineitems": d["orders"] * d["lineitems_per_order"], "transactions": d["financial_transactions"],
           "failures": d["failures"], "face_images": d["face_images"], "audio_clips": d["audio_clips"]}
    assert {k: _close(got[k], want[k]) for k in want} == {k: True for k in want}, got
    # the formula itself: orders = customers x 0.5 x (log10 s + 2) x 52
    assert d["orders"] == pytest.approx(d["customers"] * 0.5 * (math.log10(d["s"]) + 2) * 52)


@pytest.mark.parametrize("sf", [1, 10])
def test_groups_size_their_tables_by_the_drivers(sf):
    d = spec.row_drivers(sf)
    r, s = retail.table_rows(sf, "training"), signals.table_rows(sf, "training")
    assert r["order"] == round(d["orders"]) and r["customer"] == round(d["customers"])
    assert s["financial_transactions"] == round(d["financial_transactions"])
    assert s["conversation_audio"] == round(d["audio_clips"])
    assert retail.table_rows(sf, "serving")["order"] == round(0.1 * d["orders"])
    assert text.table_rows(sf, "training")["marketplace"] == round(d["marketplace"])
    # the calendar stays the schema's (two 52-week seasons for UC03) whatever the row weeks
    assert retail.sizes(sf, "training")["weeks"] == max(104, (math.floor(math.log10(d["s"])) + 2) * 52)


def test_between_the_points_log_log_and_monotone():
    a, b, c = (spec.row_drivers(x)["orders"] for x in (1, 3, 10))
    assert a < b < c
    assert spec.internal_scale(3) == pytest.approx(math.exp(
        math.log(0.458) + math.log(3) * (math.log(12.9) - math.log(0.458)) / math.log(10)))
