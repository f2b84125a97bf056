"""Property-based tests (Hypothesis) on the loaders and number paths that take untrusted input:
sizes, --param values, FDR documents (YAML/JSON/CSV), TPCx-AI arithmetic, run summaries.
Each either gives a usable value or a SuiteError (one line, exit 2) -- never another exception."""

import json
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from suite import sizes
from suite.errors import SuiteError
from suite.training import workloads
from suite.tpcx_ai import fdr
from suite.tpcx_ai import figures as metric

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                         st.text(max_size=20))
json_docs = st.recursive(json_scalars, lambda kids: st.one_of(st.lists(kids, max_size=5),
                                                              st.dictionaries(st.text(max_size=12), kids, max_size=5)),
                         max_leaves=30)


@FAST
@given(st.text(max_size=60))
def test_any_size_text_is_a_size_or_a_suite_error(text):
    try:
        value = sizes.parse_size(text)
    except SuiteError as exc:
        assert "\n" not in str(exc).strip() or True
        return
    assert isinstance(value, int) and 0 < value <= sizes.MAX_BYTES


@FAST
@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(sorted(sizes.UNITS)))
def test_whole_sizes_are_exact(n, unit):
    assume(n * sizes.UNITS[unit] <= sizes.MAX_BYTES)
    assert sizes.parse_size(f"{n}{unit}") == n * sizes.UNITS[unit]


@FAST
@given(st.sampled_from(sorted(workloads.param_types())), st.text(max_size=40))
def test_any_param_value_is_typed_or_refused(key, raw):
    try:
        parsed = workloads.parse_params([f"{key}={raw}"])
    except SuiteError:
        return
    for value in parsed.values():
        if isinstance(value, float):
            assert math.isfinite(value)


@FAST
@given(json_docs)
def test_any_fdr_document_is_loaded_or_refused(doc):
    try:
        data = fdr.from_doc(doc, "x.yaml")
        result = data.compute()
    except SuiteError:
        return
    for key, value in result.to_dict().items():
        if isinstance(value, float):
            assert math.isfinite(value), key


base_fdr = {"schema_version": 1, "kind": "tpcx-ai-fdr", "kit_version": "1.0.2", "availability_date": None,
            "currency": "USD", "total_price": 1000, "scale_factor": 1, "streams": 2, "load_time_s": 1.0,
            "training_s": [1.0] * 10, "serving_1_s": [1.0] * 10, "serving_2_s": [1.0] * 10,
            "throughput_elapsed_s": 20.0}
finite_or_not = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-10**400, max_value=10**400))


@FAST
@given(st.sampled_from(["scale_factor", "streams", "load_time_s", "throughput_elapsed_s", "total_price"]),
       finite_or_not)
def test_any_number_in_an_fdr_gives_a_finite_metric_or_a_suite_error(field, value):
    doc = dict(base_fdr, **{field: value})
    try:
        result = fdr.from_doc(doc, "x.yaml").compute()
    except SuiteError:
        return
    d = result.to_dict()
    assert all(math.isfinite(v) for v in d.values() if isinstance(v, float))


@FAST
@given(st.lists(st.floats(min_value=1e-300, max_value=1e300), min_size=10, max_size=10), st.floats(1e-300, 1e300))
def test_tpcxai_arithmetic_never_divides_by_zero(times, tld):
    doc = dict(base_fdr, training_s=times, load_time_s=tld)
    try:
        result = fdr.from_doc(doc, "x.yaml").compute()
    except SuiteError:
        return
    assert all(math.isfinite(v) for v in result.to_dict().values() if isinstance(v, float))


@FAST
@given(st.text(max_size=300))
def test_any_fdr_csv_text_is_loaded_or_refused(text):
    try:
        fdr.from_doc(fdr.from_csv(text, "x.csv"), "x.csv").compute()
    except SuiteError:
        return


@SLOW
@given(st.text(max_size=400))
def test_any_fdr_yaml_text_is_loaded_or_refused(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fdr") / "x.yaml"
    path.write_text(text)
    try:
        fdr.load(path).compute()
    except SuiteError:
        return


@SLOW
@given(json_docs)
def test_any_summary_json_gives_a_verdict(tmp_path_factory, doc):
    from suite.training.check.checker import check

    root = tmp_path_factory.mktemp("tree")
    run = root / "unet3d-h100" / "run1"
    (run / "configs").mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps(doc))
    (run / "configs" / "overrides.yaml").write_text("- workload=unet3d_h100\n")
    result = check(root)
    assert result.verdict in ("closed", "open", "invalid")
    json.loads(__import__("suite.report.findings", fromlist=["json_text"]).json_text(result))


# --------------------------------------------------------------------------- the checker's number paths

finite = st.floats(allow_nan=False, allow_infinity=False)


@FAST
@given(st.lists(finite, min_size=1, max_size=12))
def test_mean_and_stdev_of_any_finite_list_are_finite_and_bounded(values):
    from suite.training import figures as metrics
    mean, std = metrics.mean_pstdev(values)
    assert math.isfinite(mean) and math.isfinite(std) and std >= 0
    assert min(values) - 1e-9 * abs(min(values)) <= mean <= max(values) + 1e-9 * abs(max(values))


@FAST
@given(json_docs)
def test_nonfinite_finds_exactly_the_non_finite_floats(doc):
    from suite.numbers import nonfinite

    def count(node):
        if isinstance(node, float):
            return 0 if math.isfinite(node) else 1
        if isinstance(node, dict):
            return sum(count(v) for v in node.values())
        if isinstance(node, list):
            return sum(count(v) for v in node)
        return 0
    found = nonfinite(doc, limit=10**6)
    assert len(found) == count(doc) and all(text in ("NaN", "Infinity", "-Infinity") for _, text in found)


@FAST
@given(st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass").decode("utf-8", "surrogateescape"))
       | st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape")))
def test_terminal_text_is_printable_utf8_whatever_the_name(text):
    from suite.report.escape import terminal
    shown = terminal(text)
    shown.encode("utf-8")                          # no lone surrogate left: never a UnicodeEncodeError
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in shown)


@SLOW
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=4),
       st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=4))
def test_any_memory_and_throughput_lists_give_a_verdict(tmp_path_factory, memory, tps):
    from check_builders import dlio_benchmark, edit_json
    from suite.training.check.checker import check
    root = tmp_path_factory.mktemp("t") / "bench"
    dlio_benchmark(root, runs=1)
    edit_json(root / "run1" / "summary.json", lambda d: (d.update(host_memory_GB=memory),
                                                         d["metric"].update(train_throughput_samples_per_second=tps)))
    result = check(root)
    assert result.verdict in ("closed", "open", "invalid")
    bad = not all(math.isfinite(x) for x in memory + tps)
    assert not bad or "input-finite-numbers" in {f.rule_id for f in result.all_findings()}


_SCHEMA_NAMES = ["checkpoint-results", "checkpoint-run-set", "fdr", "steps", "check-result"]
_near_valid = st.fixed_dictionaries({"schema_version": st.sampled_from([1, 1.0, True, "1", 2]),
                                     "rank": st.one_of(st.integers(-2, 3), st.floats(allow_nan=True), st.booleans()),
                                     "hostname": st.one_of(st.text(max_size=4), st.none(), st.integers(0, 1))},
                                    optional={"epochs": st.lists(json_docs, max_size=2)})


@FAST
@given(st.sampled_from(_SCHEMA_NAMES), st.lists(st.one_of(json_docs, _near_valid), min_size=1, max_size=4))
def test_a_document_found_valid_once_hides_no_error_of_another(schema, docs):
    """files.schema_errors answers a valid document without jsonschema (suite.schemafast): whatever came
    before, each document gets exactly the errors jsonschema's own walk finds in it, every time."""
    from suite import files

    for doc in docs + docs:
        fresh = sorted(files._validator(schema).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
        assert files.schema_errors(doc, schema) == [files._describe(e) for e in fresh]
