"""suite/training/sweep/verify.py: a sweep's summary claims re-derived from its points (Hypothesis: any
consistent sweep has no contradiction; any claim changed away from its points has one)."""

import copy
import math

from hypothesis import given, settings, strategies as st

from suite.training.sweep import result

from suite.training.sweep import sizing

from suite.training.sweep import verify

THRESHOLD = 90.0

au = st.floats(min_value=50.0, max_value=100.0, allow_nan=False)
runs = st.lists(au, min_size=1, max_size=5)


def pt(aus: list[float], sps: float = 100.0) -> dict:
    return {"runs": len(aus), "runs_complete": len(aus), "au_per_run": aus, "au_percentage": math.fsum(aus) / len(aus),
            "meets_threshold": all(a >= THRESHOLD for a in aus), "samples_per_second": sps, "mib_per_second": sps}


@st.composite
def sweeps(draw):
    ns = sorted(draw(st.sets(st.integers(1, 64), min_size=1, max_size=6)))
    points = []
    for n in ns:
        s = pt(draw(runs), draw(st.floats(1.0, 1e4)))
        c = pt(draw(runs), draw(st.floats(1.0, 1e4))) if draw(st.booleans()) else None
        points.append({"accelerators": n, "storage": s, "ceiling": c,
                       "storage_to_ceiling": result.storage_to_ceiling(s, c)})
    doc = {"au_threshold_percentage": THRESHOLD, "points": points, "knee": result.knee(points), "probes": [],
           "confirmations": [], "max_accelerators": None, "demand_mib_per_second_per_accelerator": 1.0}
    met = [p["accelerators"] for p in points if p["storage"]["meets_threshold"]]
    if met and draw(st.booleans()):                      # find-max: the probes' best, confirmed with 5 runs
        conf = {"accelerators": max(met), **pt(draw(st.lists(st.floats(THRESHOLD, 100.0), min_size=5, max_size=5)))}
        doc["probes"] = [{"accelerators": n} for n in met]
        doc["confirmations"] = [conf]
        doc["max_accelerators"] = {"accelerators": max(met), "confirmed": True, "au_per_run": conf["au_per_run"],
                                   "found_by_probes": max(met), "confirm_runs": 5}
    return doc


@settings(max_examples=150, deadline=None)
@given(sweeps())
def test_a_consistent_sweep_has_no_contradiction(doc):
    assert verify.contradictions(doc) == []
    met = [p["accelerators"] for p in doc["points"] if p["storage"]["meets_threshold"]]
    assert sizing.largest_at_threshold(doc) == (max(met) if met else None)


@settings(max_examples=150, deadline=None)
@given(sweeps(), st.integers(1, 128))
def test_a_maximum_other_than_its_points_is_a_contradiction(doc, n):
    if doc["max_accelerators"] is None or n == doc["max_accelerators"]["accelerators"]:
        return
    bad = copy.deepcopy(doc)
    bad["max_accelerators"]["accelerators"] = n
    assert any(c["field"] == "max_accelerators.accelerators" for c in verify.contradictions(bad))


@settings(max_examples=150, deadline=None)
@given(sweeps(), st.data())
def test_a_flipped_threshold_claim_is_a_contradiction(doc, data):
    bad = copy.deepcopy(doc)
    i = data.draw(st.integers(0, len(bad["points"]) - 1))
    s = bad["points"][i]["storage"]
    s["meets_threshold"] = not s["meets_threshold"]
    assert any(c["field"] == f"points[{i}].storage.meets_threshold" for c in verify.contradictions(bad))
