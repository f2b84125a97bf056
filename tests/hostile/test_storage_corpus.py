"""The hostile corpus for MLPerf Storage training results (issue 24, classes 1, 2, 8, 9): a real
`suite run` result (cosmoflow, the miniature, 2 runs: steps, summary, results.json, run_set.json,
the report) edited as a submitter who wants a better number would, and a consistent result built
by the suite's own math (check_builders) whose verdict must flip. Each case: the edit, and the rule
that must grade it (invalid, with the claimed and the re-derived value)."""

import contextlib
import io
import json
import os
import shutil

import pytest

import paths
from tests.conftest import once

from check_builders import edit_json, ours_results, submission, write_yaml
from suite.training.check import checker
from suite.training import figures as metrics

RUN = ["run", "--workload", "cosmoflow", "--accelerators", "1", "--memory-limit", "128MiB", "--runs", "2",
       "--param", "reader.read_threads=2"]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """A real `suite run` results dir (the miniature: made here, ~20 s) and what the run printed, made once a
    session for every xdist worker (tests/conftest.py `once`); tests copy it before they edit."""
    return once(tmp_path_factory, "hostile-storage-real-run", _real_run)


def _real_run(tmp_path_factory):
    from suite import cli

    root = tmp_path_factory.mktemp("real-run")
    old = os.getcwd()
    out = io.StringIO()
    try:
        os.chdir(root)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main([*RUN, "--results-dir", "r"])
    finally:
        os.chdir(old)
    if code == 2 or not (root / "r" / "run-2" / "results.json").is_file():
        pytest.skip(f"suite run could not run here (exit {code}): {out.getvalue()[-300:]}")
    return root / "r", code, out.getvalue()


def ids_count(result) -> dict:
    out: dict = {}
    for f in result.all_findings():
        out[f.rule_id] = out.get(f.rule_id, 0) + 1
    return out


# --------------------------------------------------------------------------- edits of the real run

def steps(run="run-1", rank=0):
    def wrap(fn):
        return lambda r: edit_json(r / run / "steps" / f"rank-{rank}.json", fn)
    return wrap


def _swap_steps(d, e=0, i=3, j=10):
    ep = d["epochs"][e]
    for k in ("step_start_s", "step_end_s"):
        ep[k][i], ep[k][j] = ep[k][j], ep[k][i]


def _reverse(d, e=1):
    ep = d["epochs"][e]
    for k in ("step_start_s", "step_end_s", "step_compute_s", "step_sleep_s"):
        if k in ep:
            ep[k].reverse()


def _end_before_start(d, e=0, i=5):
    ep = d["epochs"][e]
    ep["step_end_s"][i] = ep["step_start_s"][i] - 0.01


def _overlap_epochs(d):
    a, b = d["epochs"][0], d["epochs"][1]
    delta = b["step_start_s"][0] - (a["step_start_s"][0] + a["step_end_s"][-1]) / 2
    for k in ("step_start_s", "step_end_s"):
        b[k] = [t - delta for t in b[k]]
    b["start_s"] -= delta
    b["end_s"] -= delta


def _shift_all_after(d, e=2, by=-0.25):
    """Epoch e and later moved earlier: its first step now starts before the previous one ended."""
    for ep in d["epochs"][e:]:
        for k in ("step_start_s", "step_end_s"):
            ep[k] = [t + by * 10 for t in ep[k]]


def _compute(scale=1.2, epochs=None, one=None):
    def fn(d):
        for i, ep in enumerate(d["epochs"]):
            if epochs is None or i in epochs:
                if one is None:
                    ep["step_compute_s"] = [c * scale for c in ep["step_compute_s"]]
                else:
                    ep["step_compute_s"][one] *= scale
    return fn


def _resummarise(r, run="run-1"):
    """Make summary.json and results.json agree with the (edited) steps, as a careful forger would."""
    doc = json.loads((r / run / "steps" / "rank-0.json").read_text())
    pairs = [metrics.epoch_from_ranks([ep]) for ep in doc["epochs"]]
    m = metrics.run_metric([a for a, _ in pairs], [t for _, t in pairs], 2828486, 0.7)
    edit_json(r / run / "summary.json", lambda s: s["metric"].update(m))
    edit_json(r / run / "results.json", lambda s: s["metric"].update(m))


def forged_compute(scale):
    def fn(r):
        steps()(_compute(scale))(r)
        _resummarise(r)
    return fn


def metric_edit(file, key, fn, run="run-1"):
    return lambda r: edit_json(r / run / file, lambda d: d["metric"].__setitem__(key, fn(d["metric"][key])))


def epochs_edit(key, fn, run="run-1"):
    def edit(d):
        for e in d["epochs"]:
            e[key] = fn(e[key])
    return lambda r: edit_json(r / run / "results.json", edit)


def overall_edit(file, key, fn):
    return lambda r: edit_json(r / file, lambda d: d["overall"].__setitem__(key, fn(d["overall"][key])))


def epoch_field(e, key, fn):
    return steps()(lambda d: d["epochs"][e].__setitem__(key, fn(d["epochs"][e])))


def drop(**change):
    return lambda r: edit_json(r / "run-1" / "results.json",
                               lambda d: d["enforcement"]["cache_drop"].update(change))


def _resident(r):
    total = json.loads((r / "run-1" / "results.json").read_text())["dataset"]["total_bytes"]
    drop(dataset_resident_bytes_after=total)(r)


def _shorten_last(d):
    """Every epoch's last step ends sooner (a shorter epoch: more samples/s), steps still in order."""
    for ep in d["epochs"]:
        ep["step_end_s"][-1] = ep["step_start_s"][-1] + 1e-5
        ep["end_s"] = ep["step_end_s"][-1]


def _epoch_number_swap(d):
    d["epochs"][0]["epoch"], d["epochs"][1]["epoch"] = d["epochs"][1]["epoch"], d["epochs"][0]["epoch"]


AU, TP, IO = metrics.AU_MEAN, metrics.SAMPLES_MEAN, metrics.IO_MEAN
TIMELINE, CLAIMS, COMPUTE = "integrity-steps-timeline", "rederived-claims-match", "integrity-steps-compute-time"

REAL_CASES = [
    # class 1: the steps themselves
    ("steps-swapped", steps()(_swap_steps), TIMELINE),
    ("steps-reversed", steps()(_reverse), TIMELINE),
    ("step-ends-before-start", steps()(_end_before_start), TIMELINE),
    ("step-ends-before-start-run-2", steps("run-2")(lambda d: _end_before_start(d, 3, 100)), TIMELINE),
    ("epochs-overlap", steps()(_overlap_epochs), TIMELINE),
    ("epochs-shifted-back", steps()(_shift_all_after), TIMELINE),
    ("epoch-numbers-swapped", steps()(_epoch_number_swap), TIMELINE),
    ("epoch-start-after-first-step", epoch_field(0, "start_s", lambda e: e["step_start_s"][0] + 0.5), TIMELINE),
    ("epoch-end-before-last-step", epoch_field(1, "end_s", lambda e: e["step_end_s"][-1] - 0.5), TIMELINE),
    ("compute-inflated-and-resummarised", forged_compute(1.2), COMPUTE),
    ("compute-doubled-and-resummarised", forged_compute(2.0), COMPUTE),
    ("compute-deflated", steps()(_compute(0.5)), COMPUTE),
    ("compute-one-step", steps()(_compute(3.0, epochs={2}, one=17)), COMPUTE),
    ("compute-one-epoch", steps("run-2")(_compute(1.1, epochs={4})), COMPUTE),
    ("samples-doubled-and-resummarised", lambda r: (steps()(lambda d: [e.update(samples=e["samples"] * 2)
                                                                      for e in d["epochs"]])(r), _resummarise(r)),
     "integrity-steps-samples"),
    ("samples-one-epoch", epoch_field(3, "samples", lambda e: e["samples"] + 1), "integrity-steps-samples"),
    ("last-step-shortened-and-resummarised", lambda r: (steps()(_shorten_last)(r), _resummarise(r)), CLAIMS),
    # class 1: the claims above the steps
    ("summary-au-mean", metric_edit("summary.json", AU, lambda v: v + 5), CLAIMS),
    ("summary-throughput-mean", metric_edit("summary.json", TP, lambda v: v * 1.3), CLAIMS),
    ("summary-io-mean", metric_edit("summary.json", IO, lambda v: v * 1.3, run="run-2"), CLAIMS),
    ("summary-au-list-and-mean", lambda r: (
        metric_edit("summary.json", metrics.AU_PER_EPOCH, lambda v: [x + 20 for x in v])(r),
        metric_edit("summary.json", AU, lambda v: v + 20)(r)), "integrity-steps-au"),
    ("results-au-mean", metric_edit("results.json", AU, lambda v: v + 10), CLAIMS),
    ("results-throughput-mean", metric_edit("results.json", TP, lambda v: v * 2), CLAIMS),
    ("results-io-mean", metric_edit("results.json", IO, lambda v: v * 2, run="run-2"), CLAIMS),
    ("results-epoch-au", epochs_edit("au_percentage", lambda v: min(v + 15, 99.0)), CLAIMS),
    ("results-epoch-throughput", epochs_edit("throughput_samples_per_second", lambda v: v * 1.5), CLAIMS),
    ("results-au-stdev-hidden", metric_edit("results.json", metrics.AU_STDEV, lambda v: v / 10), CLAIMS),
    ("summary-throughput-stdev-hidden", metric_edit("summary.json", metrics.SAMPLES_STDEV, lambda v: v / 10), CLAIMS),
    ("results-bytes-read", metric_edit("results.json", "bytes_read", lambda v: v * 2), CLAIMS),
    ("run-set-throughput", overall_edit("run_set.json", TP, lambda v: v * 1.2), CLAIMS),
    ("run-set-au", overall_edit("run_set.json", AU, lambda v: v + 10), CLAIMS),
    ("run-set-mb", overall_edit("run_set.json", metrics.REPORT_MB_MEAN, lambda v: v * 1.2), CLAIMS),
    ("run-set-run-count", overall_edit("run_set.json", metrics.NUM_RUNS, lambda v: 5), CLAIMS),
    ("report-overall-mean", overall_edit("mlperf_storage_report.json", TP, lambda v: v * 1.2),
     "integrity-report-matches-runs"),
    # class 2: evidence contradicting itself
    ("results-zero-bytes", metric_edit("results.json", "bytes_read", lambda v: 0), "ours-bytes-read"),
    ("steps-epoch-zero-bytes", epoch_field(0, "bytes_read", lambda e: 0), "ours-bytes-read"),
    ("steps-epoch-zero-files", epoch_field(1, "files_read", lambda e: 0), "ours-bytes-read"),
    ("drop-nothing-dropped", drop(cached_bytes_after=10**10, cached_bytes_before=10**9, dataset_resident_fraction_after=None),
     "ours-cache-drop-consistent"),
    ("drop-with-error", drop(error="Permission denied"), "ours-cache-drop-consistent"),
    ("drop-not-attempted", drop(attempted=False), "ours-cache-drop-consistent"),
    ("drop-dataset-resident", _resident, "ours-cache-drop-consistent"),
    ("drop-resident-fraction", drop(dataset_resident_fraction_after=0.97), "ours-cache-drop-consistent"),
]


_UNEDITED: dict = {}


def _unedited(src) -> dict:
    """{rule id: findings} of the session's real run as made (checked in place, read only: every case's copy
    starts as these bytes), once per worker instead of once per case."""
    if str(src) not in _UNEDITED:
        _UNEDITED[str(src)] = ids_count(checker.check(src))
    return _UNEDITED[str(src)]


@pytest.mark.parametrize("case", REAL_CASES, ids=[c[0] for c in REAL_CASES])
def test_real_run_edit_is_graded(real_run, tmp_path, case):
    _, edit, rule = case
    src, _, _ = real_run
    r = tmp_path / "r"
    shutil.copytree(src, r)
    before = _unedited(src).get(rule, 0)
    edit(r)
    result = checker.check(r)
    hit = [f for f in result.all_findings() if f.rule_id == rule]
    assert len(hit) > before, f"{rule} not graded: {sorted(ids_count(result))}"
    f = hit[-1] if before else hit[0]
    assert f.effect == "invalid" and f.severity == "error" and not result.compliant
    assert f.expected is not None and f.actual is not None and f.field and f.path


def test_the_real_run_is_re_derived_whole(real_run):
    """Unedited: every claim agrees with its steps, and the output says from what."""
    src, _, _ = real_run
    result = checker.check(src)
    recs = result.benchmarks[0].rederived
    assert recs and all(r["status"] == "rederived" for r in recs)
    figures = {r["figure"] for r in recs}
    assert {"AU", "throughput", "overall throughput", "runs"} <= figures
    assert not {"rederived-claims-match", TIMELINE, COMPUTE, "ours-bytes-read",
                "ours-cache-drop-consistent"} & set(ids_count(result))
    drop_ = json.loads((src / "run-1" / "results.json").read_text())["enforcement"]["cache_drop"]
    if drop_["succeeded"]:          # the residency evidence the consistency rule reads, measured after the drop
        assert 0.0 <= drop_["dataset_resident_fraction_after"] < 0.5 and drop_["dataset_residency_sample_files"] > 0


def test_system_wide_counters_that_grew_do_not_outweigh_the_datasets_own_pages(real_run, tmp_path):
    """Other processes' writes during the sync (or another namespace host's drop on the same kernel)
    can leave "Cached" no lower after a drop: where the sample of the dataset's pages shows it evicted,
    that is no contradiction; without the sample it is."""
    src, _, _ = real_run
    r = tmp_path / "r"
    shutil.copytree(src, r)
    if not json.loads((r / "run-1" / "results.json").read_text())["enforcement"]["cache_drop"]["succeeded"]:
        pytest.skip("no cache drop here")
    drop(cached_bytes_before=788262912, cached_bytes_after=796811264, dataset_resident_fraction_after=0.0,
         dataset_residency_sample_files=8)(r)
    assert "ours-cache-drop-consistent" not in ids_count(checker.check(r))
    drop(dataset_residency_sample_files=0)(r)
    assert "ours-cache-drop-consistent" in ids_count(checker.check(r))


def test_a_mismatch_is_stated_with_both_numbers(real_run, tmp_path, run_cli):
    src, _, _ = real_run
    r = tmp_path / "r"
    shutil.copytree(src, r)
    claimed = json.loads((r / "run_set.json").read_text())["overall"][TP]
    overall_edit("run_set.json", TP, lambda v: v * 1.5)(r)
    code, out, _ = run_cli("check", r)
    assert code == 1 and "re-derived, DISAGREES: run_set.json: overall." + TP in out
    code, out, _ = run_cli("check", r, "--format", "json")
    (rec,) = [x for x in json.loads(out)["benchmarks"][0]["rederived"] if x["status"] == "mismatch"]
    assert rec["claimed"] == pytest.approx(claimed * 1.5) and rec["derived"] == pytest.approx(claimed)


# --------------------------------------------------------------------------- class 8: run and check agree

def test_run_ends_with_the_checkers_verdict(real_run, run_cli):
    src, code, out = real_run
    last = out.strip().splitlines()[-1]
    said = " ".join(x.strip() for x in out[out.rindex("results: "):].strip().splitlines()[:-1])   # wrapped
    check_code, check_out, _ = run_cli("check", src)
    assert last == check_out.strip().splitlines()[-1] and last.startswith("verdict: INVALID")    # the one line (issue 38)
    assert "suite check verdict: INVALID" in said and "structure-run-count" in said
    assert code == check_code == 1 and "compliant; " not in said.split("suite check")[0].replace("NOT compliant", "")


def test_metrics_headline_carries_the_verdict(real_run, run_cli):
    src, _, _ = real_run
    code, out, _ = run_cli("metrics", src)
    head = out.split("\nsuite check: ")[0]                # the headline, wrapped at 100 columns (its labels whole)
    assert head.endswith("INVALID · NOT PUBLISHABLE") and "\n" not in head.split(" — ")[-1]   # issue 38
    assert "\nsuite check: INVALID MINIATURE NOT PUBLISHABLE (not compliant" in out
    code, out, _ = run_cli("metrics", src, "--format", "json")
    assert json.loads(out)["benchmarks"][0]["verdict"].startswith("INVALID")


# --------------------------------------------------------------------------- a consistent result flips

def _self_verdict(p):
    edit_json(p / "run-1" / "results.json", lambda d: d.update(compliance={"compliant": False,
                                                                           "reasons": ["AU 40% below 90%"]}))


def _reasons_but_compliant(p):
    edit_json(p / "run-2" / "results.json", lambda d: d.update(compliance={"compliant": True,
                                                                           "reasons": ["cache drop failed"]}))


def _no_compliance(p):
    edit_json(p / "run-3" / "results.json", lambda d: d.pop("compliance"))


def _builder_steps(fn, run="run-1", rank=1):
    return lambda p: edit_json(p / run / "steps" / f"rank-{rank}.json", fn)


BUILT_CASES = [
    ("self-verdict-not-compliant", _self_verdict, "ours-self-verdict"),
    ("self-verdict-reasons", _reasons_but_compliant, "ours-self-verdict"),
    ("self-verdict-missing", _no_compliance, "ours-self-verdict"),
    ("rank-1-steps-swapped", _builder_steps(lambda d: _swap_steps(d, 1, 1, 4)), TIMELINE),
    ("rank-1-compute", _builder_steps(_compute(1.5), run="run-4"), COMPUTE),
    ("rank-1-zero-bytes", _builder_steps(lambda d: d["epochs"][2].update(bytes_read=0)), "ours-bytes-read"),
    ("drop-contradicted", lambda p: edit_json(p / "run-5" / "results.json", lambda d: d["enforcement"][
        "cache_drop"].update(cached_bytes_before=5, cached_bytes_after=5, dataset_residency_sample_files=0)),
     "ours-cache-drop-consistent"),
]


@pytest.mark.parametrize("case", BUILT_CASES, ids=[c[0] for c in BUILT_CASES])
def test_consistent_result_turns_invalid(tmp_path, case):
    _, edit, rule = case
    r = ours_results(tmp_path / "R")
    before = checker.check(r)
    assert before.compliant and before.verdict == "closed"
    edit(r)
    after = checker.check(r)
    assert rule in ids_count(after) and not after.compliant and after.verdict == "invalid"


# --------------------------------------------------------------------------- class 9: generation logs

LOG = ("[INFO] {t} Running DLIO workload=unet3d_h100 ++workload.dataset.num_files_train=3500 "
       "++workload.dataset.data_folder={folder}\n[INFO] {end} Generation done\n")


def _log_tree(tmp_path, t="2024-08-07T09:00:00.000000", end=None, folder="/data/x"):
    tree = submission(tmp_path / "tree")
    org = tree / "closed" / "Org"
    shutil.rmtree(org / "generation_logs")
    log = org / "generation_logs" / "unet3d_h100_datagen.log"
    log.parent.mkdir(parents=True)
    log.write_text(LOG.format(t=t, end=end or t, folder=folder))
    return tree


GEN_CASES = [
    ("log-ends-after-run-1", dict(end="2024-08-07T13:00:00.000000")),
    ("log-starts-after-run-1", dict(t="2024-08-07T12:00:00.000000")),
    ("log-dot-folder", dict(folder=".")),
    ("log-other-folder", dict(folder="/data/y")),
]


@pytest.mark.parametrize("case", GEN_CASES, ids=[c[0] for c in GEN_CASES])
def test_generation_log_that_did_not_make_the_dataset(tmp_path, case):
    _, kw = case
    assert "submission-generation-logs-dataset" not in ids_count(checker.check(_log_tree(tmp_path / "ok")))
    result = checker.check(_log_tree(tmp_path / "bad", **kw))
    assert "submission-generation-logs-dataset" in ids_count(result)


def test_the_matching_log_gives_the_subfolders(tmp_path):
    """Two logs: the one that generated the runs' folder says 0 subfolders; another folder's says 4."""
    tree = _log_tree(tmp_path)
    org = tree / "closed" / "Org"
    write_yaml(org / "generation_logs" / "a-other" / "configs" / "overrides.yaml",
               ["workload=unet3d_h100", "++workload.workflow.generate_data=True", "++workload.workflow.train=False",
                "++workload.dataset.num_files_train=3500", "++workload.dataset.data_folder=/elsewhere/z",
                "++workload.dataset.num_subfolders_train=4"])
    assert "dataset-subfolders-match" not in ids_count(checker.check(tree))


# --------------------------------------------------------------------------- a published DLIO result, edited

PUBLISHED = paths.DATA / "storage" / "simplyblock"


def _inflate_published(scale):
    """Every run's per-epoch samples/s, its means and MB/s scaled, consistently (summary.json only)."""
    def fn(root):
        for s in sorted(root.rglob("summary.json")):
            def edit(d):
                m = d["metric"]
                tps = [t * scale for t in m[metrics.SAMPLES]]
                m.update({metrics.SAMPLES: tps, TP: metrics.mean_pstdev(tps)[0],
                          metrics.SAMPLES_STDEV: metrics.mean_pstdev(tps)[1],
                          IO: m[IO] * scale, metrics.IO_STDEV: m[metrics.IO_STDEV] * scale})
            edit_json(s, edit)
    return fn


def _stretch_durations(root):
    """One run's epochs made twice as long as its samples/s could have read the dataset in."""
    p = sorted(root.rglob("per_epoch_stats.json"))[2]
    edit_json(p, lambda d: [e.update(duration=f"{float(e['duration']) * 2:.2f}") for e in d.values()
                            if isinstance(e, dict) and "duration" in e])


PUBLISHED_CASES = [
    ("published-throughput-x1.5", _inflate_published(1.5)),
    ("published-throughput-x2", _inflate_published(2.0)),
    ("published-throughput-x10", _inflate_published(10.0)),
    ("published-durations-contradict", _stretch_durations),
]


@pytest.mark.parametrize("case", PUBLISHED_CASES, ids=[c[0] for c in PUBLISHED_CASES])
def test_published_result_inflated_consistently(tmp_path, case):
    """No steps in a published DLIO tree: per_epoch_stats.json's durations bound its samples/s."""
    _, edit = case
    root = tmp_path / "pub"
    shutil.copytree(PUBLISHED, root)
    rule = "integrity-epoch-throughput-bound"
    assert rule not in ids_count(checker.check(root))
    edit(root)
    result = checker.check(root)
    assert rule in ids_count(result) and not result.compliant
