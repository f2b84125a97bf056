import json
import os
import shutil
from pathlib import Path

import pytest

from check_builders import (dlio_benchmark, dlio_run, edit_json, edit_overrides, ours_results, rank_outputs,
                            run_start, storage_report, submission, whole_check, write_yaml)
from suite.checkpointing import check as checkpoint
from suite.training.check import checker
from suite.training.check import facts
from suite.training import figures as metrics
from suite.rules import engine as rules

import checkpoint_builders
import ours3_builders
import parquet_builders
import paths

DATA = paths.DATA / "check"
REAL = DATA / "real"


def ids(result) -> set[str]:
    return {f.rule_id for f in result.all_findings()}


# --------------------------------------------------------------------------- valid bases


def base_dlio(tmp):
    return dlio_benchmark(tmp / "bench")


def base_sub(tmp):
    return submission(tmp / "tree")


def base_ours(tmp):
    return ours_results(tmp / "R")


def base_ranks(tmp):
    b = dlio_benchmark(tmp / "bench", accelerators=2, files=7000)
    for k in range(1, 6):
        rank_outputs(b / f"run{k}")
    return b


def base_report(tmp):
    b = dlio_benchmark(tmp / "bench")
    storage_report(b)
    return b


def base_v05(tmp):
    b = tmp / "unet3d"
    for k in range(1, 6):
        for h in (1, 2):
            dlio_run(b / f"run-{k}" / f"host-{h}", accel="v100", v05=True, host_memory_gb=1.0,
                     start=f"2023-07-31T0{k}:42:0{h}.000000")
            edit_json(b / f"run-{k}" / f"host-{h}" / "summary.json", lambda d: d.update(host_memory_GB=[1.0]))
    return b


def base_v2(tmp):
    b = dlio_benchmark(tmp / "bench")
    dlio_run(b / "warmup")
    return b


BASES = {"dlio": (base_dlio, "auto"), "sub": (base_sub, "auto"), "ours": (base_ours, "auto"),
         "ranks": (base_ranks, "auto"), "report": (base_report, "auto"), "v05": (base_v05, "auto"),
         "v2": (base_v2, "v2.0")}


@pytest.mark.parametrize("name", sorted(BASES))
def test_every_base_is_clean(tmp_path, name):
    build, ruleset = BASES[name]
    result = checker.check(build(tmp_path), ruleset)
    assert result.all_findings() == [] and result.compliant and result.verdict == "closed"


# --------------------------------------------------------------------------- one failing case per rule


def S(run="run1"):
    return lambda p: p / run / "summary.json"


def set_metric(key, fn, run="run1"):
    return lambda p: edit_json(p / run / "summary.json", lambda d: d["metric"].__setitem__(key, fn(d["metric"][key])))


def set_summary(key, value, run="run1"):
    return lambda p: edit_json(p / run / "summary.json", lambda d: d.__setitem__(key, value))


def add_override(line, run="run1"):
    return lambda p: edit_overrides(p / run / "configs" / "overrides.yaml", lambda o: o + [line])


def set_workload(name, run="run3"):
    return lambda p: edit_overrides(p / run / "configs" / "overrides.yaml", lambda o: [f"workload={name}"] + o[1:])


def set_results(path, value, run="run-1"):
    def fn(p):
        def edit(d):
            node = d
            for k in path[:-1]:
                node = node[k]
            if value is DELETE:
                del node[path[-1]]
            else:
                node[path[-1]] = value
        edit_json(p / run / "results.json", edit)
    return fn


DELETE = object()
SUB = "tree/closed/Org"
SUBB = f"{SUB}/results/sys1/unet3d-h100"


def sub_edit(fn):
    return lambda p: fn(p / "closed" / "Org")


def rm(rel):
    def fn(p):
        t = p / rel
        shutil.rmtree(t) if t.is_dir() and not t.is_symlink() else t.unlink()
    return fn


def report_edit(fn):
    return lambda p: edit_json(p / "mlperf_storage_report.json", fn)


def rank_edit(run, rank, key, delta):
    def fn(p):
        edit_json(p / run / f"{rank}_output.json", lambda d: d["2"][key].__setitem__("block1", d["2"][key]["block1"] + delta))
    return fn


def steps_edit(fn):
    return lambda p: edit_json(p / "run-1" / "steps" / "rank-0.json", fn)


def symlink_out(p):
    outside = p.parent / "outside.json"
    outside.write_text("{}")
    os.symlink(outside, p / "run1" / "escape.json")
    (p / "run1" / "summary.json").unlink()
    os.symlink(outside, p / "run1" / "summary.json")


def symlink_dir(p):
    os.symlink(p / "run1" / "configs", p / "run2" / "configs-link")


def rebuild(**kw):
    return lambda p: dlio_benchmark(p, **kw)


def rebuild_run(run, **kw):
    return lambda p: (shutil.rmtree(p / run), dlio_run(p / run, **kw))


def v05_late_host(p):
    edit_json(p / "run-2" / "host-2" / "summary.json", lambda d: d.update(start="2023-07-31T02:42:30.000000"))


def copy_run(src, dst):
    def fn(p):
        shutil.rmtree(p / dst)
        shutil.copytree(p / src, p / dst)
    return fn


def set_config(key, value, run="run1"):
    def fn(p):
        import yaml
        path = p / run / "configs" / "config.yaml"
        doc = yaml.safe_load(path.read_text())
        section, name = key.split(".")
        doc["workload"][section][name] = value
        path.write_text(yaml.safe_dump(doc))
    return fn


REF_FILE = "dlio_benchmark/dlio_benchmark/main.py"      # a file of the v1.0 reference code (rules/v1.0/reference)


def GEN_OVERRIDES(org):
    return org / "generation_logs" / "sys1" / "unet3d-h100" / "datagen" / "configs" / "overrides.yaml"


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def unknown_workload(p):
    """Every run names `gpt9_z900` and nothing else names a workload (the issue's case)."""
    import yaml
    for k in range(1, 6):
        set_workload("gpt9_z900", f"run{k}")(p)
        conf = p / f"run{k}" / "configs" / "config.yaml"
        doc = yaml.safe_load(conf.read_text())
        doc["workload"].pop("model")
        conf.write_text(yaml.safe_dump(doc))


# rule id -> (base, mutation)
CASES = {
    "input-readable": ("dlio", lambda p: (p / "run1" / "summary.json").write_text('{"metric": {')),
    "input-symlink-inside": ("dlio", symlink_out),
    "input-symlink-dir": ("dlio", symlink_dir),
    "input-finite-numbers": ("dlio", lambda p: (p / "run1" / "summary.json").write_text(
        (p / "run1" / "summary.json").read_text().replace('"train_au_percentage": [\n            95.0', '"train_au_percentage": [NaN'))),
    "structure-runs-distinct-start": ("dlio", set_summary("start", "2024-08-07T09:00:00", "run3")),
    "structure-runs-distinct-summaries": ("dlio", copy_run("run1", "run2")),
    "dataset-size-steps": ("dlio", lambda p: (rebuild(files=100)(p), [edit_json(p / f"run{k}" / "summary.json",
                                                                       lambda d: d.pop("host_memory_GB")) for k in range(1, 6)])),
    "closed-effective-params": ("dlio", set_config("train.computation_time", 0.636)),
    "structure-run-count": ("dlio", rm("run5")),
    "structure-summary-per-run": ("dlio", rm("run1/summary.json")),
    "structure-overrides-per-run": ("dlio", rm("run1/configs/overrides.yaml")),
    "structure-overrides-workload": ("dlio", set_workload("unet3d")),
    "structure-summary-schema": ("dlio", set_summary("num_accelerators", "one")),
    "structure-epoch-count": ("dlio", set_summary("epochs", 4)),
    "structure-per-epoch-stats": ("dlio", lambda p: edit_json(p / "run1" / "per_epoch_stats.json", lambda d: d.pop("3"))),
    "submission-system-description": ("sub", sub_edit(lambda o: (o / "systems" / "sys1.json").unlink())),
    "submission-system-name": ("sub", sub_edit(lambda o: ((o / "systems" / "sys1.json").rename(o / "systems" / "other.json"),
                                                          (o / "systems" / "sys1.pdf").rename(o / "systems" / "other.pdf")))),
    "submission-system-schema": ("sub", sub_edit(lambda o: edit_json(o / "systems" / "sys1.json", lambda d: d.pop("networks")))),
    "submission-generation-logs": ("sub", sub_edit(lambda o: shutil.rmtree(o / "generation_logs"))),
    "submission-system-json": ("sub", sub_edit(lambda o: (o / "systems" / "sys1.json").write_text(
        (o / "systems" / "sys1.json").read_text().replace("\n}", ",\n}", 1)))),
    "submission-system-pdf": ("sub", sub_edit(lambda o: (o / "systems" / "sys1.pdf").unlink())),
    "submission-solution-type": ("sub", sub_edit(lambda o: edit_json(
        o / "systems" / "sys1.json", lambda d: d["storage_system"].update(solution_type="Teleportation")))),
    "submission-report-present": ("sub", sub_edit(lambda o: (o / "results" / "sys1" / "unet3d-h100" /
                                                              "mlperf_storage_report.json").unlink())),
    "submission-generation-logs-dataset": ("sub", sub_edit(lambda o: edit_overrides(
        GEN_OVERRIDES(o), lambda ov: ov + ["++workload.dataset.num_files_train=100"]))),
    "dataset-subfolders-match": ("sub", sub_edit(lambda o: edit_overrides(
        GEN_OVERRIDES(o), lambda ov: ov + ["++workload.dataset.num_subfolders_train=4"]))),
    "structure-runs-consecutive": ("sub", sub_edit(lambda o: dlio_run(
        o / "results" / "sys1" / "unet3d-a100" / "run1", accel="a100", start="2024-08-07T12:30:00"))),
    "structure-incomplete": ("sub", sub_edit(lambda o: write_yaml(
        o / "results" / "sys1" / "resnet50-h100" / "run1" / "configs" / "overrides.yaml", ["workload=resnet50_h100"]))),
    "code-unchanged": ("sub", sub_edit(lambda o: _write(o / "code" / REF_FILE, "# changed\n"))),
    "code-unchanged-open": ("sub", lambda p: _write(p / "open" / "Org2" / "code" / REF_FILE, "# changed\n")),
    "structure-workload-known": ("dlio", unknown_workload),
    "structure-accelerators-per-host": ("dlio", set_summary("num_hosts", 2, "run1")),
    "replicability-within-5-percent": ("dlio", rebuild_run("run2", tp=(4.0, 4.1, 4.2), start=run_start(2))),
    "dataset-size-tolerance": ("dlio", rebuild(host_memory_gb=200.0, files=7300)),
    "au-threshold": ("dlio", rebuild(au=(80.0, 85.0, 89.0))),
    "au-meet-expectation": ("dlio", set_metric("train_au_meet_expectation", lambda v: "fail")),
    "dataset-size": ("dlio", rebuild(files=100)),
    "dataset-size-checkable": ("dlio", lambda p: edit_json(p / "run1" / "summary.json", lambda d: d.pop("host_memory_GB"))),
    "dataset-host-memory-recorded": ("dlio", set_summary("host_memory_GB", [1.0, 0.0], "run2")),
    "params-harness-train-only": ("dlio", add_override("++workload.workflow.generate_data=True")),
    "params-harness-train": ("dlio", add_override("++workload.workflow.train=False")),
    "params-odirect-unet3d-only": ("dlio", lambda p: (rebuild(workload="resnet50", au=(95, 95), tp=(100, 101),
                                                               overrides_extra=("++workload.reader.odirect=True",))(p))),
    "consistency-model": ("dlio", rebuild_run("run2", workload="resnet50", au=(95, 95), tp=(100, 101))),
    "consistency-accelerator": ("dlio", rebuild_run("run2", accel="a100")),
    "consistency-num-accelerators": ("dlio", rebuild_run("run2", accelerators=2)),
    "consistency-num-files": ("dlio", rebuild_run("run2", files=4000)),
    "consistency-samples-per-file": ("dlio", set_summary("num_samples_per_file", 2, "run2")),
    "consistency-num-hosts": ("dlio", set_summary("num_hosts", 2, "run2")),
    "integrity-au-mean": ("dlio", set_metric("train_au_mean_percentage", lambda v: v + 0.5)),
    "integrity-au-stdev": ("dlio", set_metric("train_au_stdev_percentage", lambda v: v * 1.01)),
    "integrity-throughput-mean": ("dlio", set_metric("train_throughput_mean_samples_per_second", lambda v: v * 1.001)),
    "integrity-throughput-stdev": ("dlio", set_metric("train_throughput_stdev_samples_per_second", lambda v: v + 0.01)),
    "integrity-io-mean": ("dlio", set_metric("train_io_mean_MB_per_second", lambda v: v + 1)),
    "integrity-io-stdev": ("dlio", set_metric("train_io_stdev_MB_per_second", lambda v: v + 1)),
    "integrity-rank-au": ("ranks", rank_edit("run3", 1, "au", 2.0)),
    "integrity-rank-throughput": ("ranks", rank_edit("run3", 0, "throughput", 0.5)),
    "integrity-rank-count": ("ranks", rm("run2/1_output.json")),
    "integrity-steps-au": ("ours", lambda p: edit_json(p / "run-1" / "summary.json", lambda d: d["metric"][
        "train_au_percentage"].__setitem__(1, d["metric"]["train_au_percentage"][1] + 1.0))),
    "integrity-steps-throughput": ("ours", lambda p: edit_json(p / "run-1" / "summary.json", lambda d: d["metric"][
        "train_throughput_samples_per_second"].__setitem__(1, d["metric"]["train_throughput_samples_per_second"][1] * 1.01))),
    "integrity-steps-ranks": ("ours", lambda p: (p / "run-1" / "steps" / "rank-1.json").unlink()),
    "integrity-steps-schema": ("ours", steps_edit(lambda d: d["epochs"][0]["step_end_s"].pop())),
    "integrity-report-schema": ("report", report_edit(lambda d: d["overall"].pop("num_benchmark_runs"))),
    "integrity-report-matches-runs": ("report", report_edit(lambda d: d["runs"]["run2"].update(
        train_throughput_samples_per_second=d["runs"]["run2"]["train_throughput_samples_per_second"] * 1.01))),
    "rederived-claims-match": ("ours", set_results(["metric"], {"train_au_mean_percentage": 100.0})),
    "integrity-steps-timeline": ("ours", steps_edit(lambda d: d["epochs"][0]["step_end_s"].__setitem__(
        2, d["epochs"][0]["step_start_s"][2] - 0.1))),
    "integrity-steps-compute-time": ("ours", steps_edit(lambda d: d["epochs"][1].update(
        step_compute_s=[c * 2 for c in d["epochs"][1]["step_compute_s"]]))),
    "integrity-steps-samples": ("ours", steps_edit(lambda d: d["epochs"][1].update(samples=d["epochs"][1]["samples"] * 2))),
    "integrity-epoch-throughput-bound": ("dlio", lambda p: edit_json(p / "run3" / "per_epoch_stats.json",
                                                                     lambda d: d["2"].update(duration="5000.00"))),
    "ours-self-verdict": ("ours", set_results(["compliance"], {"compliant": False, "reasons": ["AU below"]})),
    "ours-bytes-read": ("ours", steps_edit(lambda d: d["epochs"][0].update(bytes_read=0))),
    "ours-cache-drop-consistent": ("ours", set_results(["enforcement", "cache_drop"], {
        "attempted": True, "succeeded": True, "error": None, "cached_bytes_before": 1000, "cached_bytes_after": 5000})),
    "ours-results-present": ("ours", rm("run-1/results.json")),
    "ours-steps-present": ("ours", rm("run-1/steps")),
    "ours-complete": ("ours", set_results(["complete"], False)),
    "ours-status": ("ours", set_results(["status"], "interrupted")),
    "ours-not-miniature": ("ours", set_results(["miniature"], True)),
    "ours-cache-drop-evidence": ("ours", set_results(["enforcement", "cache_drop"], DELETE)),
    "ours-cache-drop-attempted": ("ours", set_results(["enforcement", "cache_drop", "attempted"], False)),
    "ours-cache-drop-succeeded": ("ours", set_results(["enforcement", "cache_drop", "succeeded"], False)),
    "ours-memory-limit-applied": ("ours", set_results(["enforcement", "memory_limit", "applied_bytes"], (1 << 30) - 8192)),
    "ours-memory-limit-peak": ("ours", set_results(["enforcement", "memory_limit", "peak_bytes"], (1 << 30) + 1)),
    "ours-memory-limit-removed": ("ours", set_results(["enforcement", "memory_limit", "removed"], False)),
    "host-start-spread": ("v05", v05_late_host),
    "warmup-run": ("v2", rm("warmup")),
    "closed-params": ("dlio", add_override("++workload.dataset.format=npy")),
    "closed-prefetch-size": ("dlio", add_override("++workload.reader.prefetch_size=4")),
    "open-params": ("dlio", add_override("++workload.reader.batch_size=8")),
}
ROOTS = {"dlio": "bench", "sub": "tree", "ours": "R", "ranks": "bench", "report": "bench", "v05": "unet3d",
         "v2": "bench"}

# checkpointing (llama3-*): rules/v2.0/checkpointing*.yaml, cases in tests/checkpoint_builders.py
_CKPT: dict[str, Path] = {}


def _checkpoint_tree(tmp, factory):
    """tmp/ck: checkpoint_builders.checkpoint_tree (two phases of five runs of eight ranks, each file schema-checked
    and written through the runner's results code), written once a process and copied for each case: its read
    phase names its write by a path relative to it (suite.checkpointing.manifest.reference), so a copy is the tree."""
    if "ck" not in _CKPT:
        _CKPT["ck"] = checkpoint_builders.checkpoint_tree(factory.mktemp("ckpt-tree"))
    shutil.copytree(_CKPT["ck"], tmp / "ck", symlinks=True)
    return tmp / "ck"


BASES["ckpt"] = (_checkpoint_tree, "auto")
ROOTS["ckpt"] = "ck"
CASES.update({rule_id: ("ckpt", edit) for rule_id, edit in checkpoint_builders.CASES.items()})
BASES["ckpt3"] = (checkpoint_builders.checkpoint_tree_v3, "v3.0")      # rules/v3.0/checkpointing*.yaml
ROOTS["ckpt3"] = "ck3"
CASES.update({rule_id: ("ckpt3", edit) for rule_id, edit in checkpoint_builders.CASES_V3.items()})


# our own v3.0 series (rules/v3.0/common.yaml's evidence rules): a real `suite run --ruleset v3.0` miniature, made once
BASES["ours3"] = (lambda tmp: ours3_builders.series(tmp / "ours3"), "auto")
ROOTS["ours3"] = "ours3"
BASES["parquet"] = (lambda tmp, factory: parquet_builders.series(tmp / "pq", "flux-mini", factory), "auto")
ROOTS["parquet"] = "pq"


def _ours3_run(i: int, name: str, fn):
    return lambda p: edit_json(ours3_builders.leaves(p)[i] / name, fn)


# the warm-up flags, the gaps and the hosts of our series are items of the reference leaves' rules
# (rules/v3.0/training-leaves.yaml, a kind's file: tests/hostile/test_lies_tree.py plants them on our series)
CASES.update({
    "3.4.2-fsSeparationDevicesAgree": ("ours3", _ours3_run(2, "fs_separation.json",
                                                           lambda d: d.update(separate=True, same_filesystem=False))),
    "2.1.6-codeImageMatchesProvenance": ("ours3", lambda p: (ours3_builders.leaves(p)[2] / ".mlps-code-image").write_text(
        "md5-tree-v2:" + "0" * 32)),
    # v3.0 takes flux and dlrm in its open division only (rules/v3.0/ruleset.yaml open_workloads)
    "closed-workload-in-division": ("ours3", lambda p: _as_workload(p, "dlrm")),
    # a real flux-mini series (a storage of 0.1 s a file: reading dominates), one rank's decode made to dominate
    "parquet-storage-bound": ("parquet", lambda p: edit_json(
        parquet_builders.leaves(p, "flux-mini")[2] / "steps" / "rank-0.json",
        lambda d: [e.update(step_decode_s=[20 * x + 0.1 for x in e["step_io_s"]]) for e in d["epochs"]])),
})


def _as_workload(p, name: str) -> None:
    """Our v3.0 series claiming the closed division as another workload's (its leaves under training/<name>/)."""
    for i, leaf in enumerate(ours3_builders.leaves(p)):
        _ours3_run(i, "results.json", lambda d: d.update(workload=name, division="closed"))(p)
        for conf in (leaf / "dlio_config").glob("*.yaml"):
            conf.write_text(conf.read_text().replace("retinanet", name))
    (p / "training" / "retinanet").rename(p / "training" / name)


def test_every_rule_id_has_a_passing_and_a_failing_case():
    # kv_cache and vector_database rule files are their kinds' own (engine.KIND_FILES): their cases live in
    # tests/kvcache and tests/vector_database/test_vdb_rules.py
    assert set(CASES) == set(rules.all_rule_ids())


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_case(tmp_path, tmp_path_factory, rule_id):
    base, mutate = CASES[rule_id]
    build, ruleset = BASES[base]
    check = checkpoint.check if base in ("ckpt", "ckpt3") else checker.check   # each kind its own checker,
    if rule_id in _layout_rules():                   # a benchmark-dir tree's own rules: its layout's check
        check = whole_check
    root = _base_copy(base, tmp_path, tmp_path_factory)
    clean = (base, check, ruleset)                   # the unchanged base's findings: the same tree for every case
    if clean not in _CLEAN:
        _CLEAN[clean] = ids(check(root, ruleset))
    assert rule_id not in _CLEAN[clean], "passing case"
    mutate(root if base != "sub" else root)
    result = check(root, ruleset)
    hit = [f for f in result.all_findings() if f.rule_id == rule_id]
    assert hit, f"failing case: {rule_id} not in {sorted(ids(result))}"
    f = hit[0]
    assert f.message == f"{f.path}: {f.field}: expected {_render(f.expected)}, got {_render(f.actual)} ({rule_id})" \
        or f.message.startswith(f"{f.path}: {f.field}: expected ")
    effect = rules.all_rule_ids()[rule_id].effect
    miniature = any(b.miniature for b in result.benchmarks)    # a miniature is never compliant (suite.rules.verdict)
    assert result.compliant is (effect == "closed" and not miniature)   # a note keeps the result compliant
    assert miniature or rule_id not in ("checkpoint-miniature", "ours-not-miniature")   # the rule and the label agree
    assert result.verdict in ("closed" if effect == "fix-required" else effect, "invalid")
    assert result.fix_required is (effect == "fix-required" or result.fix_required)


_BUILT: dict[str, Path] = {}     # base -> its tree, built once a process and copied for each case
_CLEAN: dict[tuple, set] = {}    # (base, check, ruleset) -> the rule ids of the unchanged base, checked once a process


def _base_copy(base: str, tmp_path: Path, factory) -> Path:
    """A fresh copy of `base` at tmp_path/ROOTS[base]: the builders write the same tree each time, so one
    built a process is copied (parquet and ckpt are copies of a tree made once already)."""
    build, _ = BASES[base]
    if base in ("parquet", "ckpt"):
        build(tmp_path, factory)
    elif base == "ours3":
        build(tmp_path)
    else:
        if base not in _BUILT:
            made = factory.mktemp(f"base-{base}")
            build(made)
            _BUILT[base] = made / ROOTS[base]
        shutil.copytree(_BUILT[base], tmp_path / ROOTS[base], symlinks=True)
    return tmp_path / ROOTS[base]


def _layout_rules() -> set[str]:
    """The rules only a tree scope holds (the benchmark-dir layout's own: suite.layouts.benchdirs.facts),
    training's ruleset's: judged by `suite check` of the tree, not by the kind's checker of its nodes."""
    found = rules.all_rule_ids()
    return {rid for rid, r in found.items() if set(r.applies_to) == {"tree"} and not rid.startswith("checkpoint")}


def _render(v):
    from suite.rules.findings import render
    return render(v)


# --------------------------------------------------------------------------- our own runs end to end


def test_fresh_suite_run_result_passes_and_one_edited_au_is_named(tmp_path, run_cli):
    r = ours_results(tmp_path / "R")
    code, out, err = run_cli("check", r)
    assert code == 0 and "CLOSED" in out and err == ""
    summary = r / "run-3" / "summary.json"
    doc = json.loads(summary.read_text())
    old = doc["metric"]["train_au_percentage"][2]
    doc["metric"]["train_au_percentage"][2] = 42.0
    summary.write_text(json.dumps(doc))
    code, out, err = run_cli("check", r, "--format", "json")
    assert code == 1
    found = [f for b in json.loads(out)["benchmarks"] for f in b["findings"]]
    steps = [f for f in found if f["rule_id"] == "integrity-steps-au"]
    assert steps and steps[0]["path"] == "run-3/summary.json" and steps[0]["field"] == "metric.train_au_percentage[2]"
    assert steps[0]["actual"] == 42.0 and steps[0]["expected"] == pytest.approx(old, rel=1e-12)
    assert f"expected {old!r}, got 42.0 (integrity-steps-au)" in steps[0]["message"]


def test_miniature_run_is_not_valid_for_submission(tmp_path):
    r = ours_results(tmp_path / "R", miniature=True)
    result = checker.check(r)
    assert result.verdict == "invalid" and "ours-not-miniature" in ids(result)


def test_single_run_path_skips_the_run_count(tmp_path):
    r = ours_results(tmp_path / "R", runs=2)
    result = checker.check(r / "run-1")
    assert result.compliant and "structure-run-count" not in ids(result)
    assert "structure-run-count" in ids(checker.check(r))


def test_open_division_caps_the_verdict(tmp_path):
    dlio_benchmark(tmp_path / "open" / "Org" / "results" / "sys" / "unet3d-h100",
                   overrides_extra=("++workload.dataset.format=npy",))
    result = checker.check(tmp_path / "open" / "Org" / "results")
    (b,) = result.benchmarks
    assert b.verdict == "open" and b.compliant and "closed-params" not in ids(result)


def test_closed_division_result_breaking_closed_rule_is_not_compliant(tmp_path):
    dlio_benchmark(tmp_path / "closed" / "Org" / "results" / "sys" / "unet3d-h100",
                   overrides_extra=("++workload.dataset.format=npy",))
    result = checker.check(tmp_path / "closed" / "Org" / "results")
    (b,) = result.benchmarks
    assert b.verdict == "open" and not b.compliant and not result.compliant


def test_all_rules_run_and_all_findings_are_kept(tmp_path):
    b = dlio_benchmark(tmp_path / "bench", au=(80.0, 81.0, 82.0), files=10)
    rm("run5")(b)
    set_metric("train_io_mean_MB_per_second", lambda v: v + 5, "run2")(b)
    result = checker.check(b)
    assert {"au-threshold", "dataset-size", "structure-run-count", "integrity-io-mean"} <= ids(result)
    assert sum(f.rule_id == "au-threshold" for f in result.all_findings()) == 4


def test_aggregate_is_recomputed_not_copied(tmp_path):
    b = base_report(tmp_path)
    before = checker.check(b).benchmarks[0].aggregate
    edit_json(b / "mlperf_storage_report.json", lambda d: d["overall"].update(train_throughput_mean_samples_per_second=1.0))
    after = checker.check(b).benchmarks[0].aggregate
    assert before == after and after["overall"]["train_throughput_mean_samples_per_second"] != 1.0
    tps = [json.loads((b / f"run{k}" / "summary.json").read_text())["metric"]["train_throughput_samples_per_second"]
           for k in range(1, 6)]
    expect = metrics.overall([metrics.mean_pstdev(t)[0] for t in tps],
                             [metrics.mib_per_second(metrics.mean_pstdev(t)[0], 146600628) for t in tps])
    for k, v in expect.items():
        assert after["overall"][k] == pytest.approx(v, rel=1e-12)


def test_v05_multi_host_sums_hosts(tmp_path):
    b = base_v05(tmp_path)
    result = checker.check(b)
    agg = result.benchmarks[0].aggregate
    s = json.loads((b / "run-1" / "host-1" / "summary.json").read_text())
    assert agg["runs"]["run-1"]["train_throughput_samples_per_second"] == pytest.approx(
        2 * s["metric"]["train_throughput_mean_samples_per_second"])
    assert agg["overall"]["train_num_accelerators"] == "2"


def test_host_memory_is_gib_summed_over_hosts(tmp_path):
    # 1 accelerator unet3d h100: steps rule needs 3500 files; 5 x (2 x 200 GiB) / 146600628 B = 14648 files
    b = dlio_benchmark(tmp_path / "bench", hosts=2, host_memory_gb=200.0, files=14648)
    assert "dataset-size" not in ids(checker.check(b))
    b2 = dlio_benchmark(tmp_path / "bench2", hosts=2, host_memory_gb=200.0, files=14647)
    found = checker.check(b2).all_findings()
    # one file short: within the 1 GiB/host tolerance, a warning naming the exact minimum and its basis
    assert "dataset-size" not in {f.rule_id for f in found}
    f = [f for f in found if f.rule_id == "dataset-size-tolerance"][0]
    assert f.expected == ">= 14648" and f.actual == 14647 and f.field == "num_files_train"
    assert f.effect == "closed" and f.severity == "warning"
    assert "set by the 5x host memory rule" in f.message and "memory 400.00 GiB (summary.json host_memory_GB" \
        in f.message and "2 host(s)" in f.message
    # GB (10^9) instead of GiB would have asked for 13642 files only
    assert 5 * 400 * 10**9 // 146600628 == 13642


# --------------------------------------------------------------------------- the published results


@pytest.fixture(scope="module")
def fixture_result():
    from tests.conftest import FIXTURES
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is not present")
    return whole_check(FIXTURES)                  # the tree's findings too: suite check's, the layout's


def test_fixtures_reproduce_every_report_to_1e9(fixture_result):
    n = 0
    for br in fixture_result.benchmarks:
        rep = br.benchmark.report
        if rep is None:
            continue
        n += 1
        for key in ("train_throughput_mean_samples_per_second", "train_throughput_stdev_samples_per_second",
                    "train_throughput_mean_MB_per_second", "train_throughput_stdev_MB_per_second"):
            assert br.aggregate["overall"][key] == pytest.approx(rep["overall"][key], rel=1e-9), (br.benchmark.path, key)
        assert not [f for f in br.findings if f.rule_id.startswith("integrity-")], br.benchmark.path
    assert n == 29


def test_fixture_v05_run1_prints_as_published(fixture_result):
    (b,) = [br.benchmark for br in fixture_result.benchmarks if br.benchmark.ruleset == "v0.5"]
    block = metrics.metric_block(1, b.runs[0].summary["metric"])
    assert "99.7769 (0.0029)" in block and "2.9096 (0.0015)" in block and "406.7823 (0.2112)" in block


# The fixture copies carry no system-description PDFs (the published trees do): every v1.0 benchmark
# there is "fix required" for submission-system-pdf, never invalid for it.
PDF = "submission-system-pdf"
EXPECTED_VERDICTS = {
    # benchmark path suffix -> (verdict, fix required, the rule ids that explain it)
    "v0.5/closed/DDN/results/AI400X2_24x13.9TiB_nvme_8xHDR200-Nacc1-Nhosts1/unet3d": (
        "invalid", False, {"submission-system-description", "submission-generation-logs", "structure-overrides-per-run",
                           "dataset-size-checkable"}),
    "DDN/results/AI400X2T_24x14TiB_nvme_8xNDR200_18clients/unet3d-h100": (
        "closed", True, {"dataset-host-memory-recorded", PDF}),
    # a trailing comma in the system description: fixed by reviewers, not rejected (line and column given)
    "Micron/results/Micron_6500_Gen4_High_Capacity_NVMe/cosmoflow/h100": ("closed", True, {"submission-system-json", PDF}),
    "Micron/results/Micron_6500_Gen4_High_Capacity_NVMe/unet3d/h100": (
        "invalid", True, {"submission-system-json", "submission-generation-logs", PDF}),
    "Micron/results/Micron_9400_Gen4_Performance_NVMe/unet3d/h100": ("closed", True, {"submission-system-schema", PDF}),
    "Micron/results/Micron_9550_Gen5_Performance_NVMe/unet3d/h100": (
        "invalid", True, {"submission-system-schema", "submission-generation-logs", PDF}),
    "WEKA/results/weka-1-client-dual-socket-56-cores/unet3d-a100": ("closed", True, {"submission-system-name", PDF}),
    # simplyblock keeps no generation logs; another organisation's logs no longer stand in for them
    "simplyblock/results/resnet-h100": ("invalid", True, {"submission-generation-logs", PDF}),
}


def test_fixture_verdicts_are_explained(fixture_result):
    by_path = {str(br.benchmark.path): br for br in fixture_result.benchmarks}
    for suffix, (verdict, fix, why) in EXPECTED_VERDICTS.items():
        (br,) = [v for k, v in by_path.items() if k.endswith(suffix)]
        assert (br.verdict, br.fix_required) == (verdict, fix), suffix
        assert {f.rule_id for f in br.findings} == why, suffix
    counts = {}
    for br in fixture_result.benchmarks:
        key = br.verdict + (", fix required" if br.fix_required else "")
        counts[key] = counts.get(key, 0) + 1
    assert counts == {"closed, fix required": 19, "invalid, fix required": 9, "invalid": 1}
    # WEKA's cosmoflow-a100 (one run with configs only): incomplete, not a result, one warning
    assert fixture_result.incomplete == [
        "mlperf-storage-v1.0/Closed/WEKA/results/weka-1-client-dual-socket-56-cores/cosmoflow-a100"]
    assert [f.rule_id for f in fixture_result.findings] == ["structure-incomplete"]
    micron = [f for br in fixture_result.benchmarks for f in br.findings if f.rule_id == "submission-system-json"][0]
    assert micron.actual.startswith("line 19 column ") and micron.effect == "fix-required"


def test_weka_rank_outputs_agree_with_the_summary_and_a_changed_rank_is_found(fixtures_dir, tmp_path):
    src = fixtures_dir / "mlperf-storage-v1.0/Closed/WEKA/results/weka-1-client-dual-socket-56-cores/unet3d-a100/run1"
    dst = tmp_path / "unet3d-a100" / "run1"
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    dst.chmod(0o755)
    result = checker.check(dst)
    assert not [f for f in result.all_findings() if f.rule_id.startswith("integrity")]
    edit_json(dst / "7_output.json", lambda d: d["3"]["au"].update(block1=d["3"]["au"]["block1"] - 5))
    f = [f for f in checker.check(dst).all_findings() if f.rule_id == "integrity-rank-au"]
    assert f and f[0].field == "metric.train_au_percentage[2]"


# --------------------------------------------------------------------------- golden output on pinned real submissions

GOLDEN = DATA / "golden"


@pytest.mark.parametrize("name,path,fmt", [
    ("simplyblock.txt", REAL / "v1.0" / "Closed" / "simplyblock", "text"),
    ("ddn-unet3d-h100.txt", REAL / "v1.0" / "Closed" / "DDN", "text"),
    ("ddn-unet3d-h100.json", REAL / "v1.0" / "Closed" / "DDN", "json"),
    ("v0.5-ddn.txt", REAL / "v0.5", "text"),
])
def test_golden_output(run_cli, name, path, fmt):
    code, out, err = run_cli("check", path, "--format", fmt)
    out = out.replace(str(path.resolve()), "<PATH>")
    golden = GOLDEN / name
    if os.environ.get("SUITE_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out)
    if fmt == "text":      # wrapped at 100 columns, where depends on the checkout's path: the words are golden
        assert out.split() == golden.read_text().split()
    else:
        assert out == golden.read_text()
    # the pinned copies carry no system-description PDF: DDN is "CLOSED, fix required" (exit 1)
    assert code == 1 and err == ""


def test_dataset_size_rule_matches_published_sizes_exactly(fixture_result):
    """Three published datasets are exactly the size `suite datasize` gives with host_memory_GB as GiB
    summed over hosts: the formula, the units and the summing are the submitters' own."""
    exact = {"AI400X2T_24x14TiB_nvme_8xNDR200_18clients/unet3d-a100": 252000,
             "AI400X2T_24x14TiB_nvme_8xNDR200_32clients/resnet50-a100": 138129,
             "Micron_9550_Gen5_Performance_NVMe/unet3d/a100": 28000}
    for br in fixture_result.benchmarks:
        for suffix, files in exact.items():
            if str(br.benchmark.path).endswith(suffix):
                scope = facts.run_scope(br.benchmark, br.benchmark.runs[0])
                assert scope.facts["dataset.required_files"] == files == scope.facts["dataset.num_files_train"]


# --------------------------------------------------------------------------- committed valid and broken result dirs

BROKEN = json.loads((DATA / "broken" / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA / "valid").iterdir()))
def test_committed_valid_dirs_pass(run_cli, name):
    code, out, err = run_cli("check", DATA / "valid" / name)
    assert code == 0 and "CLOSED" in out and "0 findings" in out


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_committed_broken_dirs_fail_with_their_rule(run_cli, name):
    code, out, err = run_cli("check", DATA / "broken" / name, "--format", "json")
    assert code == BROKEN[name]["exit"]
    found = {f["rule_id"] for b in json.loads(out)["benchmarks"] for f in b["findings"]}
    assert set(BROKEN[name]["rules"]) <= found


def test_v2_warmup_run_is_checked_but_not_held_to_the_au_threshold(tmp_path):
    b = dlio_benchmark(tmp_path / "bench")
    dlio_run(b / "warmup", au=(50.0, 60.0, 70.0))
    result = checker.check(b, "v2.0")
    assert result.compliant and len(result.benchmarks[0].benchmark.runs) == 5
    edit_json(b / "warmup" / "summary.json", lambda d: d["metric"].update(train_au_mean_percentage=1.0))
    assert "integrity-au-mean" in ids(checker.check(b, "v2.0"))


def test_v2_yaml_system_description_is_checked_against_its_schema(tmp_path):
    import yaml
    tree = submission(tmp_path / "tree")
    org = tree / "closed" / "Org"
    (org / "systems" / "sys1.json").unlink()
    doc = {"System": {"name": "sys1", "description": "d", "type": "NAS"},
           "Nodes": {"client": {"quantity": 2, "hardware": {}}},
           "PowerRequirements": {"storage": {"quantity": 1, "psu_rating_watts": 1200}}}
    (org / "systems" / "sys1.yaml").write_text(yaml.safe_dump(doc))
    dlio_run(org / "results" / "sys1" / "unet3d-h100" / "warmup")
    result = checker.check(tree, "v2.0")
    assert result.compliant, [f.message for f in result.all_findings()]
    del doc["PowerRequirements"]
    doc["Nodes"]["client"]["quantity"] = 0
    (org / "systems" / "sys1.yaml").write_text(yaml.safe_dump(doc))
    found = [f for f in checker.check(tree, "v2.0").all_findings() if f.rule_id == "submission-system-schema"]
    assert {f.field for f in found} == {"(top level)", "Nodes.client.quantity"}
    assert all(f.path == "closed/Org/systems/sys1.yaml" for f in found)


def test_report_runs_may_be_dlio_metric_blocks(tmp_path):
    """`suite run` writes R/mlperf_storage_report.json with each run's DLIO metric block."""
    r = ours_results(tmp_path / "R")
    runs = {f"run-{k}": json.loads((r / f"run-{k}" / "summary.json").read_text())["metric"] for k in range(1, 6)}
    overall = metrics.overall([m["train_throughput_mean_samples_per_second"] for m in runs.values()],
                              [m["train_io_mean_MB_per_second"] for m in runs.values()])
    (r / "mlperf_storage_report.json").write_text(json.dumps({"overall": overall, "runs": runs}))
    assert checker.check(r).all_findings() == []
    runs["run-2"]["train_throughput_mean_samples_per_second"] *= 1.01
    (r / "mlperf_storage_report.json").write_text(json.dumps({"overall": overall, "runs": runs}))
    assert "integrity-report-matches-runs" in ids(checker.check(r))


def test_real_suite_run_output_passes_and_an_edited_au_is_named(tmp_path, run_cli):
    src = REAL / "suite-run" / "cosmoflow-h100-1acc"
    r = tmp_path / "R"
    shutil.copytree(src, r)
    code, out, err = run_cli("check", r)
    # a miniature on a shared build machine: its runs differ by more than 5% (a warning, nothing else)
    assert code == 0 and "(0 invalid, 0 open, 1 notes)" in out and "(replicability-within-5-percent)" in out
    summary = r / "run-2" / "summary.json"
    doc = json.loads(summary.read_text())
    old = doc["metric"]["train_au_percentage"][3]
    doc["metric"]["train_au_percentage"][3] = old + 0.25
    summary.write_text(json.dumps(doc))
    code, out, err = run_cli("check", r)
    assert code == 1                       # the text: rounded, wrapped at 100 columns; the JSON: exact
    assert (f"run-2/summary.json: metric.train_au_percentage[3]: expected {old:.2f}, got {old + 0.25:.2f} "
            f"(integrity-steps-au)") in " ".join(out.split())
    code, out, err = run_cli("check", r, "--format", "json")
    found = [f for b in json.loads(out)["benchmarks"] for f in b["findings"] if f["rule_id"] == "integrity-steps-au"]
    assert [(f["expected"], f["actual"]) for f in found] == [(old, old + 0.25)]
