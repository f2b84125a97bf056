"""TPCx-AI results edited as a hostile submitter would (issue 24, classes 1, 2, 8, 9).

A real run (the driver, ten toy use cases, SF 0.01, two streams: tests/tpcx_ai/tpcx_toy.py) is made
once; each case copies its tpcxai-result.json, edits it, and runs `suite check`, `suite metrics` and
`suite report` on it. Every forgery must be refused as INVALID by check (exit 1) with the finding
naming the field, and its AIUCpm headline in `metrics` must carry INVALID. FDR data-file cases
(FDR_CASES) edit a data file with per-job times instead.
"""

import copy
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tpcx_ai"))

import tpcx_toy  # noqa: E402

from suite.tpcx_ai import driver

from suite.tpcx_ai import rederive

from suite.tpcx_ai import leaf as result  # noqa: E402
from tests.conftest import once  # noqa: E402

SF = 0.01


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """The real run's tpcxai-result.json document, made once a session for every xdist worker (tests/conftest.py
    `once`); tests deep-copy it before they edit."""
    return once(tmp_path_factory, "hostile-tpcx-real-run", _real_run)


def _real_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tpcx-real")
    reg = tpcx_toy.registry(tmp)
    opts = driver.Options(scale_factor=SF, data_dir=tmp / "res" / "data", results_dir=tmp / "res", streams=2,
                          processes=1, seed=5, registry=reg, launcher="fork", out=lambda *_: None)
    run = driver.Driver(opts).execute()
    doc = result.to_doc(run)
    doc["quality"] = real_quality()   # the toy use cases score toy metrics: give them the kit's, passing
    path = result.write(opts.results_dir, doc)
    return json.loads(path.read_text())


def real_quality():
    """Passing quality records for the kit's thresholds (rules/tpcx-ai/thresholds.yaml)."""
    from suite.tpcx_ai import usecase
    from suite.tpcx_ai.registry import Registry

    values = {2: 0.3, 3: 1.0, 4: 0.8, 5: 0.2, 6: 0.5, 7: 1.0, 8: 0.7, 9: 0.95, 10: 0.8}
    out = {f"uc{n}": {"metric": th.metric, "value": values.get(n), "threshold": th.value, "op": th.op,
                      "passed": True, "rule_id": th.id} for n, th in usecase.thresholds(Registry()).items()}
    for q in out.values():
        if q["value"] is not None:  # the best constant, beaten
            q["constant"] = {"value": q["value"] / 2 if q["op"] == "min" else q["value"] * 2 + 0.1, "prediction": 0}
            q["beats_constant"] = True
    return out


def rederive_metric(d):
    """What a careful forger does after editing jobs: recompute every metric figure from them."""
    d["metric"].update(rederive.derived_metric(d))


def relabel_sf(sf, recompute=True):
    def edit(d):
        d["scale_factor"] = sf
        d["metric"]["scale_factor"] = sf
        if recompute:
            rederive_metric(d)
        else:
            for k in ("aiucpm", "aiucpm_unrounded", "aiucpm_published"):
                d["metric"][k] = round(d["metric"][k] * sf / SF, 3)
        d["metric"]["publishable"] = sf >= 1
        d["reasons"] = []
    return edit


def relabel_everywhere(sf):
    def edit(d):
        relabel_sf(sf)(d)
        d["generation"]["scale_factor"] = sf
    return edit


def drop_tables(sf):
    def edit(d):
        relabel_everywhere(sf)(d)
        del d["generation"]["tables"]
    return edit


def stream_jobs(d, s):
    return [j for j in d["jobs"] if j["phase"] == "throughput" and j.get("stream") == s]


def all_at_once(streams=(1,)):
    def edit(d):
        for s in streams:
            js = stream_jobs(d, s)
            t0 = js[0]["start_s"]
            for j in js:
                dur = j["end_s"] - j["start_s"]
                j["start_s"], j["end_s"] = t0, round(t0 + dur, 3)
                j["duration_s"] = round(dur, 3)
        rederive_metric(d)
    return edit


def overlap_pair(s, k, by=0.5):
    def edit(d):
        js = sorted(stream_jobs(d, s), key=lambda j: j["start_s"])
        j = js[k]
        shift = min(by, j["start_s"] - js[k - 1]["start_s"] - 0.001)
        j["start_s"] = round(j["start_s"] - shift, 3)
        j["end_s"] = round(j["end_s"] - shift, 3)
        rederive_metric(d)
    return edit


def shrink(phase, factor=0.2, ucs=range(1, 11), recompute=True):
    def edit(d):
        for j in d["jobs"]:
            if j["phase"] == phase and j.get("use_case") in ucs:
                dur = (j["end_s"] - j["start_s"]) * factor
                j["end_s"] = round(j["start_s"] + dur, 3)
                j["duration_s"] = round(j["end_s"] - j["start_s"], 3)
        if recompute:
            rederive_metric(d)
    return edit


def shrink_all_records(phase, factor=0.05):
    """Jobs shortened and every record above them rewritten to match (use-case results, metric):
    only the phase the jobs sit in still holds the time they took."""
    def edit(d):
        shrink(phase, factor)(d)
        for j in d["jobs"]:
            if j["phase"] == phase:
                d["use_case_results"][f"uc{j['use_case']}"][f"{phase}_s"] = j["duration_s"]
    return edit


def overlap_power(phase):
    def edit(d):
        js = sorted((j for j in d["jobs"] if j["phase"] == phase), key=lambda j: j["start_s"])
        for j in js[1:]:
            dur = j["end_s"] - j["start_s"]
            j["start_s"], j["end_s"] = js[0]["start_s"], round(js[0]["start_s"] + dur, 3)
        rederive_metric(d)
    return edit


def set_metric(key, factor):
    return lambda d: d["metric"].update({key: d["metric"][key] * factor})


def set_uc(uc, key, value):
    return lambda d: d["use_case_results"][f"uc{uc}"].update({key: value})


def fail_quality(uc):
    def edit(d):
        d["quality"][f"uc{uc}"]["passed"] = False
    return edit


def move_job_out_of_phase(d):
    j = next(j for j in d["jobs"] if j["phase"] == "serving_1")
    p = next(p for p in d["phases"] if p["name"] == "serving_1")
    dur = j["end_s"] - j["start_s"]
    j["start_s"] = round(p["end_s"] + 1, 3)
    j["end_s"] = round(j["start_s"] + dur, 3)


def scale_rows(d, factor):
    for split in d["generation"]["tables"].values():
        for t in split.values():
            t["rows"] = int(t["rows"] * factor)


def inflate_rows(d):
    relabel_everywhere(10)(d)
    scale_rows(d, 1000)


CASES = [
    ("sf-relabel-10-x1000", relabel_sf(10, recompute=False), "tpcxai-sizes-match-sf"),
    ("sf-relabel-10-recomputed", relabel_sf(10), "tpcxai-sizes-match-sf"),
    ("sf-relabel-1", relabel_sf(1), "tpcxai-sizes-match-sf"),
    ("sf-relabel-100", relabel_sf(100), "tpcxai-sizes-match-sf"),
    ("sf-relabel-0.02", relabel_sf(0.02), "tpcxai-sizes-match-sf"),
    ("sf-relabel-generation-too", relabel_everywhere(10), "tpcxai-sizes-match-sf"),
    ("sf-relabel-tables-dropped", drop_tables(10), "tpcxai-sizes-match-sf"),
    ("sf-relabel-rows-inflated", inflate_rows, "tpcxai-sizes-match-sf"),
    ("sf-relabel-all-row-records", lambda d: consistent_rows(10)(d), "tpcxai-sizes-match-sf"),
    ("sf-metric-only", lambda d: d["metric"].update(scale_factor=10), "tpcxai-figures-rederived"),
    ("stream-all-at-once", all_at_once((1,)), "tpcxai-jobs-sequential"),
    ("streams-all-at-once", all_at_once((1, 2)), "tpcxai-jobs-sequential"),
    ("stream-two-overlap", overlap_pair(2, 3), "tpcxai-jobs-sequential"),
    ("stream-last-overlap", overlap_pair(1, 9, by=0.01), "tpcxai-jobs-sequential"),
    ("training-overlap", overlap_power("training"), "tpcxai-jobs-sequential"),
    ("serving2-overlap", overlap_power("serving_2"), "tpcxai-jobs-sequential"),
    ("load-overlap", overlap_power("load"), "tpcxai-jobs-sequential"),
    ("training-shrunk", shrink("training"), "tpcxai-figures-rederived"),
    ("training-shrunk-one", shrink("training", 0.5, ucs=(4,)), "tpcxai-figures-rederived"),
    ("serving1-shrunk", shrink("serving_1"), "tpcxai-figures-rederived"),
    ("throughput-shrunk", shrink("throughput"), "tpcxai-figures-rederived"),
    ("training-shrunk-results-too", shrink_all_records("training"), "tpcxai-jobs-in-phase"),
    ("serving2-shrunk-results-too", shrink_all_records("serving_2"), "tpcxai-jobs-in-phase"),
    ("training-shrunk-metric-kept", shrink("training", recompute=False), "tpcxai-aiucpm-recomputed"),
    ("tld-halved", set_metric("tld_s", 0.5), "tpcxai-figures-rederived"),
    ("tptt-halved", set_metric("tptt_s", 0.5), "tpcxai-figures-rederived"),
    ("tpst1-halved", set_metric("tpst1_s", 0.5), "tpcxai-figures-rederived"),
    ("ttt-halved", set_metric("ttt_s", 0.5), "tpcxai-figures-rederived"),
    ("unrounded-doubled", set_metric("aiucpm_unrounded", 2), "tpcxai-figures-rederived"),
    ("published-doubled", set_metric("aiucpm_published", 2), "tpcxai-figures-rederived"),
    ("uc-training-edited", set_uc(3, "training_s", 0.001), "tpcxai-figures-rederived"),
    ("uc-throughput-edited", set_uc(7, "throughput_mean_s", 0.01), "tpcxai-figures-rederived"),
    ("job-duration-edited", lambda d: d["jobs"][5].update(duration_s=0.001), "tpcxai-jobs-in-phase"),
    ("job-outside-phase", move_job_out_of_phase, "tpcxai-jobs-in-phase"),
    ("load-rows-edited", lambda d: d["loads"][0].update(rows=d["loads"][0]["rows"] * 10), "tpcxai-sizes-match-sf"),
    ("generation-rows-edited", lambda d: d["generation"].update(rows=d["generation"]["rows"] + 1),
     "tpcxai-sizes-match-sf"),
    ("quality-below-threshold", lambda d: d["quality"]["uc4"].update(value=0.1), "tpcxai-uc04-quality"),
    ("quality-wrong-metric", lambda d: d["quality"]["uc9"].update(metric="f1_score"), "tpcxai-uc09-quality"),
    ("valid-false", lambda d: d.update(valid=False), "tpcxai-result-valid"),
    ("valid-false-reasons", lambda d: (d.update(valid=False), d["reasons"].append("quality missed: invalid")),
     "tpcxai-result-valid"),
    ("quality-passed-false", fail_quality(4), "tpcxai-result-valid"),
    ("valid-true-but-failed-job", lambda d: d["jobs"][7].update(status="failed"), "tpcxai-result-valid"),
    ("valid-true-incomplete", lambda d: d.update(status="incomplete"), "tpcxai-result-valid"),
]


def _forge(real_run, tmp_path, edit):
    doc = copy.deepcopy(real_run)
    edit(doc)
    out = tmp_path / "forged"
    out.mkdir()
    (out / result.RESULT_FILE).write_text(json.dumps(doc))
    return out


def test_the_real_run_checks_valid_not_publishable(real_run, tmp_path, run_cli):
    path = _forge(real_run, tmp_path, lambda d: None)
    code, out, _ = run_cli("check", path, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "open" and doc["publishable"] is False, [f["message"] for f in doc["findings"]]
    assert [f["rule_id"] for f in doc["findings"]] == ["tpcxai-sf-publishable"]
    assert doc["rederived"] and not [s for s in doc["rederived"] if s["status"] == "mismatch"]
    assert [s["figure"] for s in doc["rederived"] if s["status"] == "not-rederivable"] == ["generation.tables"]
    assert {"metric.aiucpm", "metric.tptt_s", "scale_factor", "generation.rows"} <= {s["figure"] for s in doc["rederived"]}
    code, out, _ = run_cli("metrics", path)
    assert code == 0 and "NOT PUBLISHABLE" in " ".join(out.splitlines()[1:4])      # wrapped at 100 columns


@pytest.mark.parametrize("case_id,edit,rule_id", CASES, ids=[c[0] for c in CASES])
def test_forged_result_is_refused(real_run, tmp_path, run_cli, case_id, edit, rule_id):
    path = _forge(real_run, tmp_path, edit)
    code, out, err = run_cli("check", path, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "invalid" and not doc["compliant"], (case_id, out[:2000])
    found = [f for f in doc["findings"] if f["rule_id"] == rule_id]
    assert found, (case_id, [f["message"] for f in doc["findings"]])
    assert found[0]["field"] and "expected" in found[0]["message"] and found[0]["actual"] is not None
    code, out, err = run_cli("metrics", path)
    headline = next((ln for ln in out.splitlines() if ln.startswith("AIUCpm@")), "")
    assert "INVALID" in headline or "error" in err, (case_id, out, err)
    assert "Traceback" not in err


def consistent_rows(sf):
    """SF relabelled and every record of sizes rewritten to the sizing at that SF (generation tables,
    totals, loads): only the data on disk below the records still says what was generated."""
    def edit(d):
        relabel_everywhere(sf)(d)
        for split, per in d["generation"]["tables"].items():
            want = rederive.expected_rows(sf, split)
            for name, t in per.items():
                t["rows"] = want.get(name, t["rows"])
        totals = {s: sum(t["rows"] for t in per.values()) for s, per in d["generation"]["tables"].items()}
        for load in d["loads"]:
            load["rows"] = totals[load["split"]]
        d["generation"]["rows"] = sum(totals.values())
    return edit


def manifest_only(d):
    d["scale_factor"] = d["generation"]["scale_factor"] = d["metric"]["scale_factor"] = 0.02
    rederive_metric(d)


WITH_DATA = [
    ("data-sf-relabel-all-records", consistent_rows(10), "tpcxai-sizes-match-sf"),
    ("data-sf-relabel-small-step", manifest_only, "tpcxai-sizes-match-sf"),
]


@pytest.mark.parametrize("case_id,edit,rule_id", WITH_DATA, ids=[c[0] for c in WITH_DATA])
def test_forged_records_disagree_with_the_data_beside_them(real_run, tmp_path, run_cli, case_id, edit, rule_id):
    """The run directory holds its data (data/raw/generation.json, data/<split>/<table>.parquet):
    records rewritten consistently with each other still disagree with it."""
    import shutil

    src = Path(real_run["data_dir"])
    out = tmp_path / "forged"
    shutil.copytree(src.parent, out, ignore=shutil.ignore_patterns("models", "output", "logs"))
    doc = copy.deepcopy(real_run)
    edit(doc)
    (out / result.RESULT_FILE).write_text(json.dumps(doc))
    code, text, _ = run_cli("check", out, "--format", "json")
    got = json.loads(text)
    assert code == 1 and got["verdict"] == "invalid"
    found = [f for f in got["findings"] if f["rule_id"] == rule_id]
    assert found and any("generation.json" in f["message"] or ".parquet" in f["message"] for f in found), \
        [f["message"] for f in got["findings"]]


REFUSED = [
    ("kit-relabel-102", lambda d: (d.update(kit_version="1.0.2"), rederive_metric(d)), "kit_version"),
    ("valid-string", lambda d: d.update(valid="true"), "valid"),
    ("job-start-nan", lambda d: d["jobs"][3].update(start_s="NaN"), "start_s"),
]


@pytest.mark.parametrize("case_id,edit,field", REFUSED, ids=[c[0] for c in REFUSED])
def test_malformed_forgery_is_refused_in_one_line(real_run, tmp_path, run_cli, case_id, edit, field):
    path = _forge(real_run, tmp_path, edit)
    for command in ("check", "metrics"):
        code, out, err = run_cli(command, path)
        assert code == 2 and field in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_report_page_shows_the_verdict_and_findings(real_run, tmp_path, run_cli):
    path = _forge(real_run, tmp_path, all_at_once((1, 2)))
    code, out, err = run_cli("report", path, "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "INVALID" in md and "tpcxai-jobs-sequential" in md and "Verdict: invalid" in md


# --------------------------------------------------------------------------- FDR data files


def fdr_from(real_run, edit=None):
    """The run as an FDR data file (per-job times), optionally edited."""
    doc = result.fdr_doc(copy.deepcopy(real_run), "run")
    if edit:
        edit(doc)
    return doc


def fdr_all_at_once(d, s=1):
    js = [j for j in d["jobs"] if j["phase"] == "throughput" and j.get("stream") == s]
    for j in js:
        dur = j["end_s"] - j["start_s"]
        j["start_s"], j["end_s"] = js[0]["start_s"], round(js[0]["start_s"] + dur, 3)


def fdr_quality_missed(d):
    d["quality"]["uc2"] = {"metric": "word_error_rate", "value": 0.9, "threshold": 0.5, "higher_is_better": False}


def fdr_training_overlap(d):
    js = [j for j in d["jobs"] if j["phase"] == "training"]
    for j in js[1:]:
        dur = j["end_s"] - j["start_s"]
        j["start_s"], j["end_s"] = js[0]["start_s"], round(js[0]["start_s"] + dur, 3)


FDR_CASES = [
    ("fdr-stream-all-at-once", fdr_all_at_once, "tpcxai-fdr-jobs-sequential"),
    ("fdr-both-streams-at-once", lambda d: (fdr_all_at_once(d, 1), fdr_all_at_once(d, 2)), "tpcxai-fdr-jobs-sequential"),
    ("fdr-training-overlap", fdr_training_overlap, "tpcxai-fdr-jobs-sequential"),
    ("fdr-quality-missed", fdr_quality_missed, "tpcxai-fdr-quality"),
]


@pytest.mark.parametrize("name", ["run.json", "run.yaml", "run.csv"])
@pytest.mark.parametrize("case_id,edit,rule_id", FDR_CASES, ids=[c[0] for c in FDR_CASES])
def test_forged_fdr_file_headline_says_not_valid(real_run, tmp_path, run_cli, case_id, edit, rule_id, name):
    import yaml

    from test_fdr import to_csv

    doc = fdr_from(real_run, edit)
    path = tmp_path / name
    path.write_text(json.dumps(doc) if name.endswith(".json") else to_csv(doc) if name.endswith(".csv")
                    else yaml.safe_dump(doc))
    code, out, err = run_cli("metrics", path, "--format", "json")
    got = json.loads(out)
    assert code == 1 and got["verdict"] == "invalid" and rule_id in {f["rule_id"] for f in got["findings"]}
    code, out, err = run_cli("metrics", path)
    assert code == 1 and "INVALID" in next(ln for ln in out.splitlines() if ln.startswith("AIUCpm@"))
    code, out, err = run_cli("check", path, "--format", "json")   # check and metrics agree
    assert code == 1 and json.loads(out)["verdict"] == "invalid"


def test_an_honest_fdr_file_is_not_publishable_only(real_run, tmp_path, run_cli):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(fdr_from(real_run)))
    code, out, err = run_cli("metrics", path, "--format", "json")
    got = json.loads(out)
    assert code == 0 and got["verdict"] == "open" and got["rederived"]
    code, out, err = run_cli("check", path)
    assert code == 0 and "OPEN NOT PUBLISHABLE" in out and "tpcxai-fdr-sf-publishable" in out


@pytest.mark.parametrize("prefix", ["\ufeff", ""])
def test_a_bom_in_a_csv_header_is_no_mismatch(tmp_path, run_cli, prefix):
    text = prefix + ("field,use_case,stream,value\nschema_version,,,1\nkind,,,tpcx-ai-fdr\nkit_version,,,1.0.2\n"
                     "scale_factor,,,1\nstreams,,,2\nload_time_s,,,1\nthroughput_elapsed_s,,,20\n"
                     "total_price,,,1000\ncurrency,,,USD\navailability_date,,,\n"
                     + "".join(f"{n},{uc},,1\n" for n in ("training_s", "serving_1_s", "serving_2_s")
                               for uc in range(1, 11)))
    path = tmp_path / "x.csv"
    path.write_text(text, encoding="utf-8")
    code, out, err = run_cli("metrics", path)
    assert code == 0 and "AIUCpm@1" in out, err


def test_an_invisible_character_in_a_csv_header_prints_visibly(tmp_path, run_cli):
    path = tmp_path / "x.csv"
    path.write_text("fi\u200beld,value\nscale_factor,1\n", encoding="utf-8")
    code, out, err = run_cli("metrics", path)
    assert code == 2 and "\\u200b" in err and "\u200b" not in err
