"""Use-case definitions, thresholds and stream orders as data; the quality metrics."""

import math

import numpy as np
import pytest
import paths
import tpcx_toy

from suite import files
from suite.errors import RunError, WorkloadError
from suite.tpcx_ai import quality
from suite.tpcx_ai import usecase
from suite.tpcx_ai.registry import Registry, rules_dir

GOOD = tpcx_toy.usecase_yaml(8, "classify")


def test_thresholds_are_the_kits():
    th = usecase.thresholds(Registry())
    assert sorted(th) == list(range(1, 11))
    want = {2: ("word_error_rate", "max", 0.5), 3: ("mean_squared_log_error", "max", 5.4), 4: ("f1_score", "min", 0.65),
            5: ("mean_squared_log_error", "max", 0.5), 6: ("matthews_corrcoef", "min", 0.19),
            7: ("median_absolute_error", "max", 1.8), 8: ("accuracy_score", "min", 0.65), 9: ("accuracy_score", "min", 0.9),
            10: ("accuracy_score", "min", 0.7), 1: ("none", "none", None)}
    assert {n: (t.metric, t.op, t.value) for n, t in th.items()} == want
    assert th[6].passes(0.19) and not th[6].passes(0.18) and th[7].passes(1.8) and not th[7].passes(float("nan"))
    assert th[1].passes(None) and th[2].id == "tpcxai-uc02-quality" and "0.5" in th[2].source


def test_stream_orders_are_permutations_and_the_first_is_the_kits():
    perms = usecase.permutations(Registry())
    assert perms[0] == [3, 5, 10, 6, 1, 7, 4, 8, 9, 2] and len(perms) == 200  # the kit's maximum streams
    assert all(sorted(p) == list(range(1, 11)) for p in perms) and len({tuple(p) for p in perms}) == len(perms)


def test_rule_files_still_load_in_the_rule_engine():
    from suite.rules import engine as rules
    for path in sorted(rules_dir().glob("*.yaml")):
        if path.name != "ruleset.yaml":             # the folder's constants (schema ruleset), not rules
            files.load_yaml(path, schema="rules")
    assert rules.load("tpcx-ai", None, "thresholds").rules == []


def test_a_good_definition_loads(tmp_path):
    (tmp_path / "uc08.yaml").write_text(GOOD)
    uc = usecase.load(tmp_path / "uc08.yaml", 8)
    assert uc.keys == ("p_id",) and uc.metric == "accuracy_score" and uc.direction == "higher"


@pytest.mark.parametrize("edit,needle", [
    (lambda t: t + "colour: red\n", "unknown key 'colour'"),
    (lambda t: t.replace("keys: [p_id]\n", ""), "expected key 'keys', got none"),
    (lambda t: t.replace("accuracy_score", "auc"), "metric: expected one of"),
    (lambda t: t.replace("use_case: 8", "use_case: 11"), "use_case: expected maximum 10"),
    (lambda t: t.replace("direction: higher", "direction: none"), "direction: expected none exactly when metric is none"),
    (lambda t: t.replace("use_case: 8", "use_case: 7"), "use_case: expected 8, got 7"),
    (lambda t: t + "x: [\n", "expected valid YAML"),
])
def test_a_bad_definition_is_one_line_naming_file_and_key(tmp_path, edit, needle):
    path = tmp_path / "uc08.yaml"
    path.write_text(edit(GOOD))
    with pytest.raises(WorkloadError, match=r"uc08\.yaml") as err:
        usecase.load(path, 8)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_metric_must_agree_with_its_threshold(tmp_path):
    (tmp_path / "uc08.yaml").write_text(GOOD.replace("accuracy_score", "f1_score"))
    ucs = {8: usecase.load(tmp_path / "uc08.yaml", 8)}
    with pytest.raises(WorkloadError, match="metric: expected accuracy_score \\(min\\) as tpcxai-uc08-quality says"):
        usecase.check_against(ucs, usecase.thresholds(Registry()))


def test_every_committed_definition_validates():
    for path in sorted((files.data_dir("workloads") / "tpcx-ai").glob("uc*.yaml")):
        uc = usecase.load(path, int(path.stem[2:]))
        usecase.check_against({uc.number: uc}, usecase.thresholds(Registry()))


# --------------------------------------------------------------------------- quality


def frames(truth, pred):
    import pandas as pd   # here, not at the top: collecting this file in every xdist worker then skips pandas

    keys = np.arange(len(truth))
    return pd.DataFrame({"k": keys, "label": truth}), pd.DataFrame({"k": keys[::-1], "prediction": pred[::-1]})


@pytest.mark.parametrize("metric,truth,pred,want", [
    ("accuracy_score", [1, 0, 1, 1], [1, 0, 0, 1], 0.75),
    ("f1_score", [1, 0, 1, 1], [1, 1, 0, 1], 2 / 3),
    ("matthews_corrcoef", [1, 0, 1, 0], [1, 0, 1, 0], 1.0),
    ("mean_squared_log_error", [math.e - 1, 0.0], [0.0, -5.0], 0.5),     # negatives clipped to 0
    ("median_absolute_error", [1.0, 2.0, 3.0], [1.5, 2.0, 5.0], 0.5),
])
def test_metrics_join_on_keys(metric, truth, pred, want):
    t, p = frames(np.array(truth), np.array(pred))
    assert quality.score(metric, t, p, ["k"], "ucX") == pytest.approx(want)


def test_a_constant_predictor_misses_the_thresholds():
    th = usecase.thresholds(Registry())
    truth = np.array([0, 1] * 50)
    t, p = frames(truth, np.ones(100, dtype=int))
    assert not th[6].passes(quality.score("matthews_corrcoef", t, p, ["k"], "uc06"))


def test_missing_or_duplicate_predictions_are_errors():
    t, p = frames(np.array([1, 0, 1]), np.array([1, 0, 1]))
    with pytest.raises(RunError, match="ucX: predictions: expected one for each of the 3 truth rows, got 1 rows"):
        quality.score("accuracy_score", t, p.iloc[:2], ["k"], "ucX")
    with pytest.raises(RunError, match="one row per key"):
        quality.score("accuracy_score", t, p.iloc[[0, 1, 2, 0, 1, 2]], ["k"], "ucX")
    with pytest.raises(RunError, match="predictions column prediction"):
        quality.score("accuracy_score", t, p.rename(columns={"prediction": "y"}), ["k"], "ucX")


def test_word_error_rate_comes_from_the_signals_module():
    from suite.tpcx_ai import wer

    assert quality.compute("word_error_rate", ["a b c"], ["a x c"]) == pytest.approx(
        float(wer.word_error_rate(["a b c"], ["a x c"])))


def test_registry_finds_the_real_modules_by_name():
    reg = Registry()
    assert reg.usecase_module(3) == "suite.tpcx_ai.usecases.uc03"
    assert reg.workload_file(8) == files.data_dir("workloads") / "tpcx-ai" / "uc08.yaml"
    assert reg.group_modules == ("suite.tpcx_ai.tables.retail", "suite.tpcx_ai.tables.text", "suite.tpcx_ai.tables.signals")
    assert reg.rules_dir() == files.data_dir("rules") / "tpcx-ai"
    installed = set(reg.available_use_cases())
    for n in range(1, 11):     # a use case is available exactly when its module and its YAML are both there
        present = reg.workload_file(n).is_file() and (paths.REPO / "suite" / "tpcx_ai" / "usecases" / f"uc{n:02d}.py").is_file()
        assert (n in installed) == present
    assert len(reg.groups()) + len(reg.missing_groups()) == 3
