import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from suite.tpcx_ai import fdr
from suite import files
from suite.errors import ResultError

from tests.tpcx_ai.test_tpcxai_metric import DELL_SERVING_1, DELL_SERVING_2, DELL_TRAINING, kit_mode_jobs

import paths

REPO = paths.REPO
DELL = REPO / "submissions" / "examples" / "dell-sf10-fdr.yaml"
DELL_VECTOR = ["2.306", *map(str, DELL_TRAINING + DELL_SERVING_1 + DELL_SERVING_2), "2748.071", "48412",
               "425.31", "113.83"]


def dell_doc():
    return yaml.safe_load(DELL.read_text())


def write(tmp_path, name, doc):
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps(doc))
    elif name.endswith(".csv"):
        path.write_text(to_csv(doc))
    else:
        path.write_text(yaml.safe_dump(doc))
    return path


def to_csv(doc) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["field", "use_case", "stream", "value", "start_s", "end_s"])
    for key, value in doc.items():
        if key in ("training_s", "serving_1_s", "serving_2_s"):
            for uc, t in enumerate(value, start=1):
                w.writerow([key, uc, "", t, "", ""])
        elif key == "published":
            for k, v in value.items():
                w.writerow([f"published.{k}", "", "", v, "", ""])
        elif key == "jobs":
            for j in value:
                w.writerow(["job", j.get("use_case", ""), j.get("stream", ""), j["phase"], j["start_s"], j["end_s"]])
        elif key == "quality":
            for uc, q in value.items():
                for k, v in q.items():
                    w.writerow([f"quality.{k}", uc[2:], "", v, "", ""])
        else:
            w.writerow([key, "", "", "" if value is None else value, "", ""])
    return out.getvalue()


def test_schema_is_a_valid_json_schema():
    assert files.schema_errors(dell_doc(), "fdr") == []


def test_dell_example_carries_each_number_of_the_vector_once():
    tokens = re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", DELL.read_text())
    for number in DELL_VECTOR:
        assert tokens.count(number) == 1, number
    doc = dell_doc()
    assert doc["streams"] == 80 and "one hundred" in doc["notes"] and "449.696" in doc["notes"]


def test_dell_example_loads_and_computes():
    data = fdr.load(DELL)
    r = data.compute()
    assert r.aiucpm_published == 425.30 and r.price_per_aiucpm == 113.83
    assert data.published == {"aiucpm": 425.31, "price_per_aiucpm": 113.83}
    assert data.inputs.training_s[8] == 4928.427 and data.kit_mode is None


@pytest.mark.parametrize("name", ["dell.json", "dell.csv", "dell.yml"])
def test_json_csv_and_yaml_forms_agree(tmp_path, name):
    data = fdr.load(write(tmp_path, name, dell_doc()))
    assert data.inputs == fdr.load(DELL).inputs
    assert data.compute().aiucpm == 425.297


def test_mapping_form_and_units(tmp_path):
    doc = dell_doc()
    doc["training_s"] = {f"uc{i:02d}": t for i, t in enumerate(DELL_TRAINING, start=1)}
    doc["load_time_s"] = "2306 ms"
    doc["throughput_elapsed_s"] = f"{2748.071 / 60!r} min"
    data = fdr.load(write(tmp_path, "d.yaml", doc))
    assert data.inputs.load_time_s == 2.306 and data.inputs.throughput_elapsed_s == 2748.071
    assert data.compute().aiucpm == 425.297


def jobs_doc(kit):
    jobs = [{k: v for k, v in dict(phase=j.phase, start_s=j.start_s, end_s=j.end_s, use_case=j.use_case,
                                   stream=j.stream).items() if v is not None} for j in kit_mode_jobs()]
    return {"schema_version": 1, "kind": "tpcx-ai-run", "kit_version": kit, "scale_factor": 1, "streams": 2,
            "total_price": 1500, "currency": "USD", "availability_date": "2026-01-31", "jobs": jobs,
            "quality": {"uc2": {"metric": "word_error_rate", "value": 0.41, "threshold": 0.5,
                                "higher_is_better": False}}}


@pytest.mark.parametrize("kit,expected", [("1.0.2", 300.0), ("1.0.3", 150.0), ("1.0.3.1", 150.0)])
@pytest.mark.parametrize("name", ["run.yaml", "run.json", "run.csv"])
def test_both_kit_modes_from_per_job_times(tmp_path, kit, expected, name):
    data = fdr.load(write(tmp_path, name, jobs_doc(kit)))
    r = data.compute()
    assert r.aiucpm == expected and r.streams == 2
    assert data.quality[2]["metric"] == "word_error_rate" and data.quality[2]["value"] == 0.41


def test_run_directory_with_result_file(tmp_path):
    write(tmp_path, fdr.RUN_FILE, jobs_doc("1.0.2"))
    assert fdr.load(tmp_path).compute().aiucpm == 300.0


def test_figures_beside_jobs_must_agree(tmp_path):
    doc = jobs_doc("1.0.3")
    doc["load_time_s"] = 2.0           # the span: agrees
    assert fdr.load(write(tmp_path, "a.yaml", doc)).compute().aiucpm == 150.0
    doc["load_time_s"] = 1.0           # the 1.0.2 sum: does not agree with kit 1.0.3
    with pytest.raises(ResultError, match=r"load_time_s: expected 2.0 \(from jobs, kit 1.0.3\), got 1.0"):
        fdr.load(write(tmp_path, "b.yaml", doc))


def test_jobs_may_cover_only_some_phases(tmp_path):
    doc = jobs_doc("1.0.2")
    doc["jobs"] = [j for j in doc["jobs"] if j["phase"] in ("load", "throughput")]
    doc.update(training_s=[2, 8] * 5, serving_1_s=[1, 4] * 5, serving_2_s=[1.5] * 10)
    assert fdr.load(write(tmp_path, "a.yaml", doc)).compute().aiucpm == 300.0


def test_subset_loads_and_has_no_aiucpm(tmp_path):
    doc = dell_doc()
    doc["serving_2_s"] = DELL_SERVING_2[:4]
    r = fdr.load(write(tmp_path, "a.yaml", doc)).compute()
    assert not r.complete and r.missing == {"serving_2_s": [5, 6, 7, 8, 9, 10]}


def mutate(doc, change):
    change(doc)
    return doc


@pytest.mark.parametrize("change,needle", [
    (lambda d: d.pop("streams"), "(top level): expected key 'streams', got none"),
    (lambda d: d.pop("load_time_s"), "load_time_s: expected a time (or per-job times in `jobs`), got none"),
    (lambda d: d.update(bogus=1), "unknown key 'bogus'"),
    (lambda d: d.update(load_time_s="2.306 GB"), "load_time_s: expected seconds (a number, or a string with unit"),
    (lambda d: d.update(load_time_s="fast"), "load_time_s: expected seconds"),
    (lambda d: d.update(load_time_s=float("nan")), "load_time_s: expected a finite number, got nan"),
    (lambda d: d.update(throughput_elapsed_s=float("inf")), "throughput_elapsed_s: expected a finite number, got inf"),
    (lambda d: d.update(throughput_elapsed_s=-3), "throughput_elapsed_s: expected a positive number, got -3"),
    (lambda d: d["training_s"].__setitem__(4, -1), "training_s[4]: expected a positive number, got -1"),
    (lambda d: d.update(training_s=5), "training_s: expected a list of up to 10 times"),
    (lambda d: d.update(training_s={"uc11": 1}), "training_s"),
    (lambda d: d.update(streams=1), "streams: expected at least 2, got 1"),
    (lambda d: d.update(reported_streams=79), "streams: expected the 79 streams that reported, got 80"),
    (lambda d: d.update(currency="dollars"), "currency"),
    (lambda d: d.update(total_price=0), "total_price: expected a positive number, got 0"),
    (lambda d: d.update(kit_version="2.0"), "kit_version: expected one of"),
    (lambda d: d.update(kind="tpcx-bb"), "kind: expected one of"),
    (lambda d: d.update(jobs=[{"phase": "load", "start_s": 0, "end_s": 1}]),
     "kit_version: expected 1.0.2 or 1.0.3 when jobs are given, got 'unknown'"),
])
def test_bad_fdr_is_one_line_naming_the_field(tmp_path, change, needle):
    path = write(tmp_path, "bad.yaml", mutate(dell_doc(), change))
    with pytest.raises(ResultError) as err:
        fdr.load(path)
    message = str(err.value)
    assert message.startswith(str(path)) and needle in message and "\n" not in message


def test_json_nan_and_yaml_nan_refused(tmp_path):
    (tmp_path / "a.json").write_text(DELL.with_suffix(".json").name and json.dumps(dell_doc()).replace(
        '"load_time_s": 2.306', '"load_time_s": NaN'))
    with pytest.raises(ResultError, match="load_time_s: expected a finite number, got nan"):
        fdr.load(tmp_path / "a.json")
    (tmp_path / "a.yaml").write_text(DELL.read_text().replace("load_time_s: 2.306", "load_time_s: .nan"))
    with pytest.raises(ResultError, match="load_time_s: expected a finite number, got nan"):
        fdr.load(tmp_path / "a.yaml")


def test_bad_job_in_file_names_it(tmp_path):
    doc = jobs_doc("1.0.2")
    doc["jobs"][3]["end_s"] = doc["jobs"][3]["start_s"] - 1
    with pytest.raises(ResultError, match=r"jobs\[3\]: end_s: expected after start_s"):
        fdr.load(write(tmp_path, "a.yaml", doc))


def test_unknown_file_kind(tmp_path):
    path = tmp_path / "dell.txt"
    path.write_text("x")
    with pytest.raises(ResultError, match=r"file kind: expected a .yaml, .yml, .json or .csv data file, got '.txt'"):
        fdr.load(path)


@pytest.mark.parametrize("text,needle", [
    ("name,value\nstreams,2\n", "CSV header: expected field,use_case,stream,value,start_s,end_s"),
    ("field,value\nstreams,two\n", "line 2: streams: expected an integer, got 'two'"),
    ("field,value\nstreams,2\nstreams,3\n", "line 3: streams: expected one row, got a second one"),
    ("field,value\ntraining_s,1.5\n", "line 2: use_case: expected a use case 1..10 for training_s, got none"),
])
def test_bad_csv(tmp_path, text, needle):
    path = tmp_path / "a.csv"
    path.write_text(text)
    with pytest.raises(ResultError, match=re.escape(needle)):
        fdr.load(path)


def test_quality_may_be_zero_or_negative_but_finite(tmp_path):
    doc = jobs_doc("1.0.2")
    doc["quality"] = {"uc6": {"metric": "matthews_corrcoef", "value": -0.05, "threshold": 0.19,
                              "higher_is_better": True}, "uc2": {"metric": "word_error_rate", "value": 0.0}}
    assert fdr.load(write(tmp_path, "a.yaml", doc)).quality[6]["value"] == -0.05
    doc["quality"]["uc2"]["value"] = float("nan")
    with pytest.raises(ResultError, match="quality.uc2.value: expected a finite number, got nan"):
        fdr.load(write(tmp_path, "b.yaml", doc))


def test_incomplete_stream_names_the_file(tmp_path):
    doc = jobs_doc("1.0.3")
    doc["jobs"] = [j for j in doc["jobs"] if not (j.get("stream") == 2 and j.get("use_case") == 4)]
    path = write(tmp_path, "a.yaml", doc)
    with pytest.raises(ResultError, match=re.escape(f"{path}: jobs: throughput stream 2: expected one job for each")):
        fdr.load(path)


def test_a_run_of_a_subset_reports_phase_times_and_why_there_is_no_metric():
    run = jobs_doc("1.0.3")
    run["jobs"] = [j for j in run["jobs"] if j.get("use_case") != 7]
    result = fdr.from_doc(run, "run.json", partial=True).compute()
    assert not result.complete and result.missing["throughput"] == [7] and result.missing["training_s"] == [7]
    assert "throughput: expected 10 use-case times, got 9 (missing use case 7)" in result.why_incomplete()
    with pytest.raises(ResultError, match="throughput stream 1: expected one job for each of use cases 1..10"):
        fdr.from_doc(run, "fdr.json")   # a data file (published figures) must have every stream whole
