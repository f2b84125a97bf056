"""suite/tpcx_ai/check.py: a result document in, findings out (each rule passing and failing)."""

import copy

import pytest

from suite.tpcx_ai import check

from suite.tpcx_ai import figures as metric

from suite.tpcx_ai import usecase
from suite.tpcx_ai.registry import Registry

PERMS = [[3, 5, 10, 6, 1, 7, 4, 8, 9, 2], [9, 3, 1, 10, 4, 6, 8, 7, 5, 2]]
VALUES = {2: 0.3, 3: 1.0, 4: 0.8, 5: 0.2, 6: 0.5, 7: 1.0, 8: 0.7, 9: 0.95, 10: 0.8}


def good_doc():
    jobs, phases, t = [], [], 0.0

    def job(phase, uc=None, stream=None, d=1.5):
        nonlocal t
        jobs.append({k: v for k, v in dict(phase=phase, use_case=uc, stream=stream, start_s=round(t, 3),
                                           end_s=round(t + d, 3), duration_s=d, status="ok").items() if v is not None})
        t += d

    for name in check.PHASE_ORDER:
        start = t
        if name == "generation":
            t += 2
        elif name == "load":
            job("load", d=0.5), job("load", d=0.25)
        elif name == "throughput":
            for s, perm in enumerate(PERMS, start=1):
                for n in perm:
                    job("throughput", n, s, d=0.5 + n / 10)
        else:
            for n in range(1, 11):
                job(name, n, d=1 + n / 10)
        phases.append({"name": name, "start_s": round(start, 3), "end_s": round(t, 3),
                       "duration_s": round(t - start, 3), "complete": True})
    ths = usecase.thresholds(Registry())
    quality = {f"uc{n}": {"metric": th.metric, "value": VALUES.get(n), "threshold": th.value, "op": th.op,
                          "passed": True, "rule_id": th.id} for n, th in ths.items()}
    for n, q in quality.items():
        if q["value"] is not None:  # a constant the model beats
            q["constant"] = {"value": q["value"] / 2 if q["op"] == "min" else q["value"] * 2 + 0.1, "prediction": 0}
            q["beats_constant"] = True
    doc = {"schema_version": 2, "kind": "tpcx-ai-run", "kit_version": "1.0.3", "status": "complete", "valid": True,
           "scale_factor": 1, "streams": 2, "use_cases": list(range(1, 11)), "phases": phases, "jobs": jobs,
           "stream_runs": [{"stream": s, "permutation": p,
                            "start_s": min(j["start_s"] for j in jobs if j.get("stream") == s),
                            "end_s": max(j["end_s"] for j in jobs if j.get("stream") == s)} for s, p in enumerate(PERMS, 1)],
           "quality": quality}
    mjobs = [metric.Job(j["phase"], j["start_s"], j["end_s"], j.get("use_case"), j.get("stream")) for j in jobs
             if j["phase"] in metric.PHASES]
    doc["metric"] = {"aiucpm": metric.compute(metric.Inputs.from_jobs(mjobs, "1.0.3", 1, 2)).aiucpm,
                     "tld_s": metric.load_time_s(mjobs, "1.0.3")}
    doc["generation"] = {"rows": 100, "scale_factor": 1, "tables": {"training": {"t": {"rows": 100}}}}
    doc["loads"] = [{"split": "training", "rows": 100}]
    return doc


def ids(doc):
    return sorted({f.rule_id for f in check.check(doc)})


def test_a_good_result_has_no_findings():
    assert check.check(good_doc()) == []


def drop_uc(d, n):
    d["use_cases"].remove(n)
    d["jobs"] = [j for j in d["jobs"] if j.get("use_case") != n]


def swap_throughput(d):
    tj = [j for j in d["jobs"] if j["phase"] == "throughput" and j["stream"] == 1]
    tj[0]["use_case"], tj[1]["use_case"] = tj[1]["use_case"], tj[0]["use_case"]


FAULTS = [
    (lambda d: d.update(status="incomplete"), "tpcxai-run-complete", "status"),
    (lambda d: drop_uc(d, 7), "tpcxai-all-use-cases", "use_cases"),
    (lambda d: d["jobs"][5].update(status="failed"), "tpcxai-all-use-cases", "jobs.training"),
    (lambda d: d["quality"]["uc2"].update(value=0.51), "tpcxai-uc02-quality", "quality.uc2.value"),
    (lambda d: d["quality"]["uc7"]["constant"].update(value=0.9), "tpcxai-beats-constant", "quality.uc7.value"),
    (lambda d: d["quality"]["uc6"].update(value=0.18), "tpcxai-uc06-quality", "quality.uc6.value"),
    (lambda d: d["quality"]["uc9"].update(value=None), "tpcxai-uc09-quality", "quality.uc9.value"),
    (lambda d: d["quality"].pop("uc10"), "tpcxai-uc10-quality", "quality.uc10.value"),
    (lambda d: d.update(streams=1), "tpcxai-streams-min", "streams"),
    (lambda d: d["jobs"][-1].update(use_case=3), "tpcxai-stream-permutation", "stream 2"),
    (swap_throughput, "tpcxai-stream-permutation", "stream_runs[1].permutation"),
    (lambda d: d["phases"].reverse(), "tpcxai-phases-order", "phases"),
    (lambda d: d["phases"][3].update(complete=False), "tpcxai-phases-order", "phases.complete"),
    (lambda d: d["phases"][0].update(duration_s=0), "tpcxai-times-positive", "phases[0].duration_s"),
    (lambda d: d["jobs"][4].update(end_s=d["jobs"][4]["start_s"]), "tpcxai-times-positive", "jobs[4].end_s"),
    (lambda d: d["metric"].update(aiucpm=d["metric"]["aiucpm"] + 0.01), "tpcxai-aiucpm-recomputed", "metric.aiucpm"),
    (lambda d: d.update(metric=None), "tpcxai-aiucpm-recomputed", "metric.aiucpm"),
    (lambda d: overlap_stream(d, 1), "tpcxai-jobs-sequential", "jobs[43].start_s"),
    (lambda d: d["jobs"][4].update(duration_s=d["jobs"][4]["duration_s"] + 1), "tpcxai-jobs-in-phase",
     "jobs[4].duration_s"),
    (lambda d: d["metric"].update(tld_s=0.5), "tpcxai-figures-rederived", "metric.tld_s"),
    (lambda d: d["loads"][0].update(rows=99), "tpcxai-sizes-match-sf", "generation.rows"),
    (lambda d: d.update(valid=False), "tpcxai-result-valid", "valid"),
]


def overlap_stream(d, stream):
    """The second job of a stream starts with its first (their end times kept)."""
    tj = [j for j in d["jobs"] if j["phase"] == "throughput" and j["stream"] == stream]
    tj[1]["start_s"] = tj[0]["start_s"]
    tj[1]["duration_s"] = round(tj[1]["end_s"] - tj[1]["start_s"], 3)


@pytest.mark.parametrize("mutate,rule_id,field", FAULTS)
def test_each_rule_fails_on_its_fault(mutate, rule_id, field):
    doc = good_doc()
    mutate(doc)
    found = [f for f in check.check(doc, path="r/tpcxai-result.json") if f.rule_id == rule_id]
    assert found and found[0].field == field and found[0].effect == "invalid"
    assert found[0].message.startswith(f"r/tpcxai-result.json: {field}: expected ") and found[0].message.endswith(f"({rule_id})")


def test_check_does_not_change_the_document():
    doc = good_doc()
    before = copy.deepcopy(doc)
    check.check(doc)
    assert doc == before


def _miss(n):
    """Set use case n's quality just beyond its threshold (the wrong side of it)."""
    th = usecase.thresholds(Registry())[n]
    return lambda d: d["quality"][f"uc{n}"].update(value=th.value - 0.01 if th.op == "min" else th.value + 0.01)


QUALITY = [(_miss(n), th.id, f"quality.uc{n}.value") for n, th in sorted(usecase.thresholds(Registry()).items())
           if th.op != "none"]


@pytest.mark.parametrize("mutate,rule_id,field", QUALITY)
def test_each_quality_rule_fails_beyond_its_threshold(mutate, rule_id, field):
    test_each_rule_fails_on_its_fault(mutate, rule_id, field)


def test_an_sf_below_1_is_an_open_finding_not_publishable():
    doc = good_doc()
    doc["scale_factor"] = doc["generation"]["scale_factor"] = 0.01
    doc["metric"]["aiucpm"] = round(doc["metric"]["aiucpm"] / 100, 3)
    found = check.check(doc, path="r/tpcxai-result.json")
    assert [(f.rule_id, f.effect, f.field, f.actual) for f in found] == [("tpcxai-sf-publishable", "open", "scale_factor", 0.01)]
    assert check.grade(found) == "open" and check.grade([]) == "valid"


def test_every_tpcx_ai_rule_id_has_a_passing_and_a_failing_case():
    """STYLE 16 for rules/tpcx-ai/: the good document passes every rule, FAULTS and QUALITY fail each
    (and the tests above the open rule tpcxai-sf-publishable, below tpcxai-code-that-ran: it reads the
    run directory)."""
    from suite.rules import engine as rules

    covered = {r for _, r, _ in FAULTS + QUALITY + FDR_FAULTS} | {"tpcxai-sf-publishable", "tpcxai-code-that-ran"}
    assert covered == set(rules.all_rule_ids("tpcx-ai"))


def _fdr_overlap(d):
    js = [j for j in d["jobs"] if j["phase"] == "throughput" and j.get("stream") == 1]
    for j in js:
        j["end_s"], j["start_s"] = js[0]["start_s"] + j["end_s"] - j["start_s"], js[0]["start_s"]


FDR_FAULTS = [
    (_fdr_overlap, "tpcxai-fdr-jobs-sequential", "jobs"),
    (lambda d: d["quality"]["uc2"].update(value=0.6), "tpcxai-fdr-quality", "quality.uc2.value"),
    (lambda d: d.update(scale_factor=0.5), "tpcxai-fdr-sf-publishable", "scale_factor"),
]


def test_a_good_fdr_file_is_valid(tmp_path):
    from test_fdr import jobs_doc, write

    from suite.tpcx_ai import assess

    from suite.tpcx_ai import fdr

    a = assess.of_fdr(fdr.load(write(tmp_path, "r.json", jobs_doc("1.0.3"))))
    assert (a.verdict, a.findings, a.note()) == ("valid", [], "")


@pytest.mark.parametrize("mutate,rule_id,field", FDR_FAULTS)
def test_each_fdr_rule_fails_on_its_fault(tmp_path, mutate, rule_id, field):
    from test_fdr import jobs_doc, write

    from suite.tpcx_ai import assess

    from suite.tpcx_ai import fdr

    doc = jobs_doc("1.0.3")
    mutate(doc)
    a = assess.of_fdr(fdr.load(write(tmp_path, "r.json", doc)))
    found = [f for f in a.findings if f.rule_id == rule_id]
    assert found and found[0].field.startswith(field) and a.verdict in ("invalid", "open")
    assert a.note().startswith(" — INVALID: " if found[0].effect == "invalid" else " — NOT PUBLISHABLE: ")


def test_every_fact_the_rules_read_is_declared():
    """In TPCx-AI's own facts (suite/tpcx_ai/facts.yaml) or the shared rules/facts.yaml, for scope run."""
    from suite.kinds import registry
    from suite.rules import rulesets, vocabulary

    facts = {**vocabulary.load_file(rulesets.root() / vocabulary.FILE),
             **vocabulary.load_file(registry.facts_file(registry.get("tpcx-ai")))}
    s = check.scope(good_doc(), "r/tpcxai-result.json", usecase.thresholds(Registry()))
    names = list(s.facts) + [f"{p}.x" for p in s.docs]
    undeclared = [n for n in names if vocabulary.lookup(n, facts) is None or "run" not in vocabulary.lookup(n, facts).scope]
    assert names and undeclared == []


def test_a_model_that_does_not_beat_the_best_constant_is_a_finding():
    doc = good_doc()
    doc["quality"]["uc7"]["constant"] = {"value": 1.0, "prediction": 4}  # MedAE: lower is better
    doc["quality"]["uc7"]["value"] = 1.0  # equal is not better (the audit's constant passes UC07)
    del doc["quality"]["uc8"]["constant"]
    found = [f for f in check.check(doc) if f.rule_id == "tpcxai-beats-constant"]
    assert sorted(f.field for f in found) == ["quality.uc7.value", "quality.uc8.constant"]
    assert all(f.effect == "invalid" for f in found)


def test_best_constant_finds_the_constants_that_pass_the_kits_thresholds():
    import numpy as np

    from suite.tpcx_ai import quality

    ratings = np.array([1] * 10 + [2] * 25 + [3] * 15 + [4] * 30 + [5] * 20)
    value, const = quality.best_constant("median_absolute_error", ratings)
    assert value <= 1.0  # a constant 2..4 gives MedAE 1 <= the kit's 1.8
    assert quality.best_constant("accuracy_score", ratings) == (0.3, 4)
    assert quality.best_constant("matthews_corrcoef", np.array([0, 1, 1]))[0] == 0.0
    wer, _ = quality.best_constant("word_error_rate", np.array(["a b", "a c", "a"]))
    assert wer < 1.0  # the most common word beats the empty transcript
    assert quality.beats("median_absolute_error", 0.9, 1.0) and not quality.beats("accuracy_score", 0.3, 0.3)


def _code_findings(run_dir, doc):
    """check's findings of tpcxai-code-that-ran on `doc` in `run_dir` (assess's path, less the evidence)."""
    from suite.tpcx_ai import rederive

    r = rederive.rederive(doc)
    r.problems["code_image.problems"] = check.code_problems(run_dir, doc)
    return [f for f in check.check(doc, path=str(run_dir / "tpcxai-result.json"), rederived=r)
            if f.rule_id == "tpcxai-code-that-ran"]


def test_the_code_that_ran_passes_as_recorded_and_fails_each_way_it_can_differ(tmp_path):
    """The run's provenance.json, its .mlps-code-image and the result's code_image name one code; a record
    of other code, a pointer edited, the result's name changed, or the record deleted, is each a finding."""
    import json

    from suite.harness import provenance

    doc = good_doc()
    image = provenance.record(tmp_path)
    doc["code_image"] = provenance.pointer(image)
    assert _code_findings(tmp_path, doc) == []
    assert _code_findings(tmp_path / "none", good_doc()) == []      # a run from before runs recorded code
    other = "md5-tree-v2:" + "0" * 32
    (tmp_path / provenance.RECORD_FILE).write_text(json.dumps({"schema_version": 1, **image, "hash": "0" * 32}))
    (found,) = [f for f in _code_findings(tmp_path, doc) if f.field == "(line 1)"]
    assert found.expected == f"{other} (provenance.json)" and found.actual == provenance.pointer(image)
    assert found.effect == "invalid" and found.path.endswith(".mlps-code-image")
    provenance.record(tmp_path, image)
    (tmp_path / provenance.POINTER_FILE).write_text(other + "\n")
    assert [f.actual for f in _code_findings(tmp_path, doc)] == [other]
    provenance.record(tmp_path, image)
    assert [f.field for f in _code_findings(tmp_path, {**doc, "code_image": other})] == ["code_image"]
    (tmp_path / provenance.RECORD_FILE).unlink()
    (found,) = _code_findings(tmp_path, doc)
    assert found.actual == "none" and found.path.endswith("provenance.json")
