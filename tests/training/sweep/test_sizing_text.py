"""`suite sizing --from SWEEP` says why a sweep gives no measured ceiling (issue 47: "the sweep has no
ceiling runs" where its ceiling runs only missed the AU threshold)."""

import copy

import paths
from suite.training import workloads
from suite.training.sweep import result, sizing, text

SWEEP = paths.DATA / "sweep" / "resnet50-h100-tiny"      # a real find-max --ceiling sweep (tests/data/make_sweep.py)


def _said(doc: dict) -> str:
    wl = workloads.resolve("resnet50", "h100", workloads.parse_params(doc["params"]))
    return " ".join(text.sizing(sizing.sizing(wl, 4, 1, 64 * 2**30, None, doc)).split())


def test_ceiling_runs_that_missed_the_threshold_are_said_so():
    doc = result.load(SWEEP)
    assert any(p.get("ceiling") for p in doc["points"])
    missed = copy.deepcopy(doc)
    for p in missed["points"]:
        if p.get("ceiling"):
            p["ceiling"]["meets_threshold"] = False
    said = _said(missed)
    assert "no ceiling runs" not in said and "ceiling run(s) met the" in said and "best AU" in said, said
    none = copy.deepcopy(doc)
    for p in none["points"]:
        p["ceiling"] = None
    assert "the sweep has no ceiling runs" in _said(none)
    if sizing.ceiling_per_accelerator_mib_s(doc) is not None:
        assert "from the sweep" in _said(doc)


def test_a_ceiling_that_read_from_storage_is_said_in_the_summary(capsys, tmp_path):
    """Issue 47: `--ceiling` on a miniature read from storage and said so only in a note mid-run."""
    from suite.training.sweep import search

    doc = copy.deepcopy(result.load(SWEEP))
    search.summary(doc, tmp_path)
    assert "CEILING NOT MEASURED" not in capsys.readouterr().out        # the real sweep's ceiling was cached
    point = next(p for p in doc["points"] if p.get("ceiling"))
    point["ceiling"]["preread"] = {**point["ceiling"]["preread"], "resident_fraction_after": 0.31}
    search.summary(doc, tmp_path)
    said = " ".join(capsys.readouterr().out.split())
    assert f"CEILING NOT MEASURED at N={point['accelerators']}: only 31% of the dataset" in said
    assert "read from storage" in said
