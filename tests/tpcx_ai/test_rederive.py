"""suite/tpcx_ai/rederive.py and evidence.py: every figure re-derived, generated inputs (Hypothesis)."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_driver_check import good_doc

from suite.tpcx_ai import check

from suite.tpcx_ai import evidence

from suite.tpcx_ai import rederive

lanes = st.lists(st.tuples(st.integers(0, 50_000), st.integers(1, 5_000)), min_size=1, max_size=12)


def _pairwise_overlap(spans) -> bool:
    return any(max(a[0], b[0]) < min(a[1], b[1]) - rederive.TOLERANCE_S
               for i, a in enumerate(spans) for b in spans[i + 1:])


@settings(max_examples=300, deadline=None)
@given(lanes, st.integers(1, 3))
def test_overlap_found_exactly_when_two_jobs_of_a_lane_overlap(raw, stream):
    spans = [(s / 1000, (s + d) / 1000) for s, d in raw]
    jobs = [(i, {"phase": "throughput", "stream": stream, "use_case": i % 10 + 1, "start_s": a, "end_s": b})
            for i, (a, b) in enumerate(spans)]
    r = rederive.Rederivation()
    rederive.overlaps(jobs, r)
    assert bool(r.problems["jobs.overlaps"]) == _pairwise_overlap(spans)


def test_jobs_of_different_streams_may_overlap():
    jobs = [(0, {"phase": "throughput", "stream": 1, "start_s": 0, "end_s": 5}),
            (1, {"phase": "throughput", "stream": 2, "start_s": 1, "end_s": 4})]
    r = rederive.Rederivation()
    rederive.overlaps(jobs, r)
    assert r.problems["jobs.overlaps"] == []


COMPONENTS = ("tld_s", "tptt_s", "tpst1_s", "tpst2_s", "tpst_s", "ttt_s", "throughput_elapsed_s",
              "aiucpm", "aiucpm_unrounded", "aiucpm_published")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(COMPONENTS), st.floats(0.5, 2.0).filter(lambda f: abs(f - 1) > 0.01))
def test_any_metric_figure_edited_is_a_mismatch_with_both_numbers(name, factor):
    doc = good_doc()
    doc["metric"] = rederive.derived_metric(doc)
    assert rederive.rederive(doc).problems["figures.problems"] == []
    doc["metric"][name] *= factor
    found = rederive.rederive(doc).problems["figures.problems"]
    assert [i.field for i in found] == [f"metric.{name}"]
    assert found[0].value == doc["metric"][name] and found[0].expected != found[0].value


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([0.02, 0.1, 1, 3, 10, 30, 100, 1000]))
def test_generation_rows_at_sf_001_never_pass_for_another_scale_factor(sf):
    want = {s: rederive.expected_rows(0.01, s) for s in ("training", "serving", "scoring")}
    doc = {"scale_factor": sf, "generation": {"tables": {s: {t: {"rows": n} for t, n in per.items()}
                                                         for s, per in want.items()}}}
    items = rederive.rederive(doc).problems["sizes.problems"]
    assert items and all(i.field.startswith("generation.tables.") for i in items)
    doc["scale_factor"] = 0.01
    assert rederive.rederive(doc).problems["sizes.problems"] == []


def test_statements_have_the_shared_shape():
    r = rederive.rederive(good_doc())
    assert r.statements and all(set(s) == {"figure", "from", "status", "claimed", "derived"} for s in r.statements)
    assert {s["status"] for s in r.statements} <= {"rederived", "not-rederivable", "mismatch"}


def test_evidence_is_never_read_through_a_link(tmp_path):
    outside = tmp_path / "outside" / "raw"
    outside.mkdir(parents=True)
    (outside / "generation.json").write_text(json.dumps({"scale_factor": 99, "chunks": {}}))
    run = tmp_path / "run"
    run.mkdir()
    (run / "data").symlink_to(tmp_path / "outside")
    items, statements = evidence.data_problems(run, {"scale_factor": 1, "generation": {}})
    assert items == [] and statements[0]["status"] == "not-rederivable"
    (run / "data").unlink()
    (run / "data" / "raw").mkdir(parents=True)
    (run / "data" / "raw" / "generation.json").symlink_to(outside / "generation.json")
    assert evidence.data_problems(run, {"scale_factor": 1, "generation": {}}) == ([], [])


def test_a_manifest_in_place_names_the_scale_factor(tmp_path):
    (tmp_path / "data" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "raw" / "generation.json").write_text(json.dumps({"scale_factor": 0.01, "chunks": {}}))
    items, _ = evidence.data_problems(tmp_path, {"scale_factor": 10, "generation": {}})
    assert [(i.field, i.expected, i.value) for i in items] == [("scale_factor", 0.01, 10)]


@pytest.mark.parametrize("valid,edit,expected", [
    (True, lambda d: None, []),
    (False, lambda d: None, ["valid"]),
    (True, lambda d: d["quality"]["uc4"].update(passed=False), ["quality.passed"]),
    (True, lambda d: d.update(status="incomplete"), ["valid"]),
])
def test_the_checker_is_never_more_lenient_than_the_result(valid, edit, expected):
    doc = copy.deepcopy(good_doc())
    doc["valid"] = valid
    edit(doc)
    assert [i.field for i in rederive.rederive(doc).problems["verdict.problems"]] == expected
    assert (check.grade(check.check(doc)) == "invalid") == bool(expected)


def _scoring_dir(tmp_path, labels, predictions):
    import pandas as pd

    folder = tmp_path / "output" / "scoring" / "uc10"
    folder.mkdir(parents=True)
    ids = list(range(len(labels)))
    pd.DataFrame({"transaction_id": ids, "label": labels}).to_parquet(folder / "truth.parquet")
    pd.DataFrame({"transaction_id": ids, "prediction": predictions}).to_parquet(folder / "predictions.parquet")
    return folder


def test_quality_is_re_scored_from_the_scoring_output(tmp_path):
    _scoring_dir(tmp_path, [0, 1, 1, 0], [0, 1, 0, 0])         # accuracy 0.75
    doc = {"quality": {"uc10": {"metric": "accuracy_score", "value": 0.75}}}
    items, statements = evidence.quality_problems(tmp_path, doc)
    assert items == [] and statements[0]["status"] == "rederived" and statements[0]["derived"] == 0.75
    doc["quality"]["uc10"]["value"] = 0.95                       # a forged pass
    items, statements = evidence.quality_problems(tmp_path, doc)
    assert [(i.field, i.expected, i.value) for i in items] == [("quality.uc10.value", 0.75, 0.95)]


def test_linked_scoring_output_is_not_read(tmp_path):
    real = _scoring_dir(tmp_path / "elsewhere", [0, 1], [1, 0])
    (tmp_path / "run" / "output" / "scoring").mkdir(parents=True)
    (tmp_path / "run" / "output" / "scoring" / "uc10").symlink_to(real)
    items, statements = evidence.quality_problems(tmp_path / "run", {"quality": {"uc10": {"metric": "accuracy_score",
                                                                                          "value": 1.0}}})
    assert items == [] and statements[0]["status"] == "not-rederivable"


@pytest.mark.parametrize("module", rederive.SUITE_GROUPS)
def test_each_groups_stated_rows_are_the_rows_it_generates(module):
    """TableGroup.rows is what the checker re-derives a scale factor from: it must be exact."""
    import importlib

    from suite.tpcx_ai import spec

    group = importlib.import_module(module).GROUP
    made = spec.generate_split(group, 0.01, "serving", 3)
    assert {t: made[t].num_rows for t in group.rows(0.01, "serving")} == dict(group.rows(0.01, "serving"))
