"""`suite check` on whole submission trees: each layout variant seen in the published v1.0 tree has a
passing fixture and a broken twin that fails with the right rule id; graded and grouped findings.

Fixtures are built small and synthetic in tmp_path (tests/check_builders.py); the 51-host rank-0-only
one is built from the pinned real DDN unet3d-h100 runs (tests/data/check/real).
"""

import json
import shutil
from pathlib import Path

import pytest

from check_builders import PDF, SYSTEM_V1, dlio_benchmark, dlio_run, edit_json, run_start, storage_report, \
    submission, whole_check, write_json, write_yaml
from suite.training.check import checker
from suite.rules.findings import label

import paths

REAL_DDN = (paths.DATA / "check/real/v1.0/Closed/DDN/results/AI400X2T_24x14TiB_nvme_8xNDR200_18clients/"
            "unet3d-h100/runs")
ORG = "closed/Org"


def ids(result) -> set[str]:
    return {f.rule_id for f in result.all_findings()}


def org(tree: Path) -> Path:
    return tree / ORG


def clean(result) -> bool:
    return result.compliant and not [f for f in result.all_findings() if f.effect != "closed"]


# --------------------------------------------------------------------------- code/ is never walked


def deep_artefact(base: Path, levels=40) -> None:
    d = base
    for i in range(levels):
        d = d / f"d{i}"
    d.mkdir(parents=True)
    (d / "artefact.o").write_text("x")


def test_code_dir_is_never_walked_for_results(tmp_path):
    tree = submission(tmp_path / "tree")
    code = org(tree) / "code"
    dlio_run(code / "dlio_benchmark" / "tests" / "test_data")        # DLIO's own test summary.json
    deep_artefact(code / "build")
    deep_artefact(org(tree) / "storage_code" / "build")
    result = checker.check(tree)
    assert [b.benchmark.path.name for b in result.benchmarks] == ["unet3d-h100"]
    assert clean(result) and result.all_findings() == []


def test_broken_twin_deep_tree_outside_code_is_unreadable(tmp_path):
    tree = submission(tmp_path / "tree")
    deep_artefact(org(tree) / "results" / "sys1" / "unet3d-h100" / "build")
    assert "input-readable" in ids(checker.check(tree))


# --------------------------------------------------------------------------- rank-0-only multi-host runs


def rank0_only(dst: Path, hosts=51, files=178500) -> dict:
    """The five published DDN unet3d-h100 runs as a `hosts`-host rank-0-only layout: run<k>/host1 holds
    summary.json, host2..N only configs/ (one accelerator per host, the dataset sized for them)."""
    for k in range(1, 6):
        src = REAL_DDN / f"run{k}" / "c008"
        s = json.loads((src / "summary.json").read_text())
        s.update(num_hosts=hosts, num_accelerators=hosts, num_files_train=files,
                 host_memory_GB=(s["host_memory_GB"] + [0] * hosts)[:hosts],
                 host_cpu_count=(s["host_cpu_count"] + [0] * hosts)[:hosts])
        run = dst / f"run{k}"
        for h in range(1, hosts + 1):
            shutil.copytree(src / "configs", run / f"host{h}" / "configs")
            for name in ("overrides.yaml", "config.yaml"):
                p = run / f"host{h}" / "configs" / name
                p.chmod(0o644)
                p.write_text(p.read_text().replace("126000", str(files)))
        write_json(run / "host1" / "summary.json", s)
        shutil.copy(src / "per_epoch_stats.json", run / "host1" / "per_epoch_stats.json")
    rep = json.loads((REAL_DDN / "mlperf_storage_report.json").read_text())
    for entry in [rep["overall"], *rep["runs"].values()]:
        entry.update(train_num_accelerators=str(hosts), num_files_train=files)
    write_json(dst / "mlperf_storage_report.json", rep)
    return rep


def test_51_host_rank0_only_runs_are_one_run_each_and_reproduce_the_published_mean(tmp_path):
    rep = rank0_only(tmp_path / "unet3d-h100")
    result = checker.check(tmp_path / "unet3d-h100")
    (br,) = result.benchmarks
    assert len(br.benchmark.runs) == 5 and all(len(r.hosts) == 51 for r in br.benchmark.runs)
    for key in ("train_throughput_mean_samples_per_second", "train_throughput_mean_MB_per_second",
                "train_throughput_stdev_samples_per_second"):
        assert br.aggregate["overall"][key] == pytest.approx(rep["overall"][key], rel=1e-9)
    assert br.aggregate["overall"]["train_throughput_mean_samples_per_second"] == pytest.approx(708.2349, abs=5e-5)
    assert br.verdict == "closed" and br.compliant
    assert ids(result) <= {"dataset-host-memory-recorded"}         # DDN's zeros in host_memory_GB: a note


def test_broken_twin_run_without_any_summary_is_named(tmp_path):
    rank0_only(tmp_path / "b", hosts=4, files=14000)
    (tmp_path / "b" / "run3" / "host1" / "summary.json").unlink()
    result = checker.check(tmp_path / "b")
    hit = [f for f in result.all_findings() if f.rule_id == "structure-summary-per-run"]
    assert {f.path.split("/")[0] for f in hit} == {"run3"} and len(hit) == 4


def test_uneven_accelerators_per_host_fail(tmp_path):
    rank0_only(tmp_path / "b", hosts=4, files=14000)
    for k in range(1, 6):
        edit_json(tmp_path / "b" / f"run{k}" / "host1" / "summary.json", lambda d: d.update(num_accelerators=6))
    assert "structure-accelerators-per-host" in ids(checker.check(tmp_path / "b"))


# --------------------------------------------------------------------------- an aborted run left in the tree


def aborted(tree: Path) -> Path:
    d = org(tree) / "results" / "sys1" / "resnet50-h100" / "run1"
    write_yaml(d / "configs" / "overrides.yaml", ["workload=resnet50_h100", "++workload.workflow.train=True"])
    (d / "dlp.log").write_text("")
    return d


def test_aborted_run_dir_is_one_warning_not_a_result(tmp_path):
    tree = submission(tmp_path / "tree")
    aborted(tree)
    assert checker.check(tree).all_findings() == []          # the kind's judgement of the nodes: none
    result = whole_check(tree)                                # the layout's finding: the aborted dir
    assert [f.rule_id for f in result.all_findings()] == ["structure-incomplete"]
    assert result.findings[0].severity == "warning" and result.compliant
    assert result.incomplete == [f"{ORG}/results/sys1/resnet50-h100"] and len(result.benchmarks) == 1


def test_broken_twin_aborted_dir_with_a_truncated_summary_is_a_result_and_unreadable(tmp_path):
    tree = submission(tmp_path / "tree")
    (aborted(tree) / "summary.json").write_text('{"metric": {')
    result = checker.check(tree)
    assert "input-readable" in ids(result) and not result.incomplete


def test_only_an_aborted_run_is_still_checkable(tmp_path, run_cli):
    d = tmp_path / "resnet50-h100" / "run1"
    write_yaml(d / "configs" / "overrides.yaml", ["workload=resnet50_h100"])
    code, out, err = run_cli("check", tmp_path / "resnet50-h100")
    assert code == 0 and "(structure-incomplete)" in out and err == ""


# --------------------------------------------------------------------------- system descriptions


def systems_dir(tree):
    return org(tree) / "systems"


def test_upper_case_json_extension_is_a_description(tmp_path):
    tree = submission(tmp_path / "tree")
    (systems_dir(tree) / "sys1.json").rename(systems_dir(tree) / "sys1.JSON")
    assert clean(checker.check(tree))
    (systems_dir(tree) / "sys1.JSON").unlink()
    assert "submission-system-description" in ids(checker.check(tree))


def test_a_description_per_benchmark_directly_under_results(tmp_path):
    tree = tmp_path / "tree"
    base = org(tree)
    for bench in ("resnet50-h100", "unet3d-h100"):
        model, accel = bench.split("-")
        dlio_benchmark(base / "results" / bench, workload=model, accel=accel,
                       **({"au": (95.0, 95.5), "tp": (100.0, 101.0), "files": 20000} if model == "resnet50" else {}))
        write_json(base / "systems" / f"{bench}.json", SYSTEM_V1)
        (base / "systems" / f"{bench}.pdf").write_bytes(PDF)
        write_yaml(base / "generation_logs" / bench / "datagen" / "configs" / "overrides.yaml",
                   [f"workload={model}_{accel}", "++workload.workflow.generate_data=True",
                    "++workload.workflow.train=False"])
        storage_report(base / "results" / bench, model=model)
    result = checker.check(tree)
    assert clean(result), [f.message for f in result.all_findings()]
    (base / "systems" / "unet3d-h100.json").rename(base / "systems" / "other.json")
    (base / "systems" / "unet3d-h100.pdf").unlink()
    assert "submission-system-description" in ids(checker.check(tree))


def test_unique_near_match_is_used_with_a_naming_warning(tmp_path):
    tree = submission(tmp_path / "tree", system="box-Nclients1")
    (systems_dir(tree) / "box-Nclients1.json").rename(systems_dir(tree) / "box-Nclient1.json")
    (systems_dir(tree) / "box-Nclients1.pdf").rename(systems_dir(tree) / "box-Nclient1.pdf")
    write_json(systems_dir(tree) / "other-system-entirely.json", SYSTEM_V1)    # more than one: no "only" fallback
    result = checker.check(tree)
    assert ids(result) == {"submission-system-name"} and result.compliant
    (f,) = result.all_findings()
    assert f.severity == "warning" and f.actual == "box-Nclient1" and f.expected == "box-Nclients1"
    # broken twin: two near-matches, no unique one
    write_json(systems_dir(tree) / "box-Nclients2.json", SYSTEM_V1)
    assert "submission-system-description" in ids(checker.check(tree))


def test_systems_dir_under_results_system(tmp_path):
    tree = submission(tmp_path / "tree")
    inner = org(tree) / "results" / "sys1" / "systems"
    inner.mkdir()
    for name in ("sys1.json", "sys1.pdf"):
        (systems_dir(tree) / name).rename(inner / name)
    systems_dir(tree).rmdir()
    assert clean(checker.check(tree))
    (inner / "sys1.json").unlink()
    assert "submission-system-description" in ids(checker.check(tree))


def test_invalid_json_is_fix_required_with_line_and_column(tmp_path, run_cli):
    tree = submission(tmp_path / "tree")
    p = systems_dir(tree) / "sys1.json"
    p.write_text(p.read_text().replace("\n}", ",\n}", 1))
    code, out, err = run_cli("check", tree)
    assert code == 1 and err == ""
    assert "CLOSED, fix required" in out and "verdict: CLOSED, fix required (not compliant)" in out
    code, out, _ = run_cli("check", tree, "--format", "json")
    doc = json.loads(out)
    (f,) = [f for b in doc["benchmarks"] for f in b["findings"]]
    assert f["rule_id"] == "submission-system-json" and f["effect"] == "fix-required"
    assert f["actual"].startswith("line ") and " column " in f["actual"]
    assert doc["verdict"] == "closed" and doc["fix_required"] is True and doc["compliant"] is False
    assert label("closed", True) == "CLOSED, fix required"


# --------------------------------------------------------------------------- generation logs


def gen_overrides(files=3500, folder="/data/x"):
    return ["workload=unet3d_h100", "++workload.workflow.generate_data=True", "++workload.workflow.train=False",
            f"++workload.dataset.num_files_train={files}", f"++workload.dataset.data_folder={folder}"]


def no_logs(tree: Path) -> Path:
    shutil.rmtree(org(tree) / "generation_logs")
    return org(tree)


@pytest.mark.parametrize("where", ["generation_logs/unet3d/host1", "unet3d-gen/host1", "datagen/unet3d_h100"])
def test_org_level_logs_found_and_matched(tmp_path, where):
    tree = submission(tmp_path / "tree")
    write_yaml(no_logs(tree) / where / "configs" / "overrides.yaml", gen_overrides())
    assert clean(checker.check(tree))
    write_yaml(org(tree) / where / "configs" / "overrides.yaml", gen_overrides(files=1000))
    result = checker.check(tree)
    (f,) = [f for f in result.all_findings() if f.rule_id == "submission-generation-logs-dataset"]
    assert "1000 files generated, runs read 3500" in f.actual


def test_plain_log_file_with_its_time(tmp_path):
    tree = submission(tmp_path / "tree")
    log = no_logs(tree) / "generation_logs" / "unet3d_h100_datagen.log"
    log.parent.mkdir(parents=True)
    text = ("[INFO] {t} Running DLIO workload=unet3d_h100 ++workload.dataset.num_files_train=3500 "
            "++workload.dataset.data_folder=/data/x\n[INFO] {t} Generation done\n")
    log.write_text(text.format(t="2024-08-07T09:00:00.000000"))
    assert clean(checker.check(tree))
    log.write_text(text.format(t="2024-08-07T12:00:00.000000"))          # after run 1 (11:23)
    (f,) = [f for f in checker.check(tree).all_findings() if f.rule_id == "submission-generation-logs-dataset"]
    assert "after run 1 started" in f.actual


def test_one_log_for_several_systems(tmp_path):
    tree = submission(tmp_path / "tree", system="sysA")
    submission(tmp_path / "tree", system="sysB")
    write_yaml(no_logs(tree) / "generation_logs" / "unet3d-h100" / "host1" / "configs" / "overrides.yaml",
               gen_overrides())
    result = checker.check(tree)
    assert len(result.benchmarks) == 2 and "submission-generation-logs" not in ids(result)


def test_another_organisations_log_never_serves(tmp_path):
    tree = submission(tmp_path / "tree", org="A")
    submission(tmp_path / "tree", org="B", system="sysB")
    shutil.rmtree(tree / "closed" / "B" / "generation_logs")
    # A's log under a directory that is no system name (system unknown)
    shutil.move(tree / "closed" / "A" / "generation_logs" / "sys1", tree / "closed" / "A" / "generation_logs" / "misc")
    result = checker.check(tree)
    by_org = {br.benchmark.org: {f.rule_id for f in br.findings} for br in result.benchmarks}
    assert "submission-generation-logs" not in by_org["A"]
    assert "submission-generation-logs" in by_org["B"]


def test_a_log_under_another_system_does_not_serve(tmp_path):
    tree = submission(tmp_path / "tree", system="sysA")
    submission(tmp_path / "tree", system="sysB")
    shutil.rmtree(org(tree) / "generation_logs" / "sysB")
    by_sys = {br.benchmark.system: {f.rule_id for f in br.findings} for br in checker.check(tree).benchmarks}
    assert "submission-generation-logs" in by_sys["sysB"] and "submission-generation-logs" not in by_sys["sysA"]


# --------------------------------------------------------------------------- findings people can act on


def test_unknown_workload_stops_a_pass(tmp_path, run_cli):
    b = dlio_benchmark(tmp_path / "bench", workload_name="gpt9_z900")
    import yaml
    for k in range(1, 6):
        conf = b / f"run{k}" / "configs" / "config.yaml"
        doc = yaml.safe_load(conf.read_text())
        doc["workload"].pop("model")
        conf.write_text(yaml.safe_dump(doc))
    code, out, _ = run_cli("check", b)
    assert code == 1 and "INVALID" in out
    said = " ".join(out.split())        # the text wraps at 100 columns
    assert "workload: expected one of ['unet3d', 'resnet50', 'cosmoflow'], got gpt9_z900 (structure-workload-known)" in said


def test_dataset_size_graded_with_its_basis(tmp_path):
    # 1 host of 200 GiB: 5 x 200 GiB / 146600628 B = 7324 files; with 1 GiB/host tolerance 7287
    b = dlio_benchmark(tmp_path / "short-a-hair", host_memory_gb=200.0, files=7300)
    f, *more = [f for f in checker.check(b).all_findings() if f.rule_id.startswith("dataset-size")]
    assert len(more) == 4 and {g.rule_id for g in more} == {f.rule_id}        # one per run
    assert (f.rule_id, f.severity, f.effect, f.expected, f.actual) == (
        "dataset-size-tolerance", "warning", "closed", ">= 7324", 7300)
    for words in ("5x host memory rule", "memory 200.00 GiB (summary.json host_memory_GB", "1 host(s)",
                  "7287 with the 1 GiB/host tolerance"):
        assert words in f.message
    b = dlio_benchmark(tmp_path / "short-80pc", host_memory_gb=200.0, files=1465)
    found = {f.rule_id: f for f in checker.check(b).all_findings() if f.rule_id.startswith("dataset-size")}
    assert set(found) == {"dataset-size"} and found["dataset-size"].effect == "invalid"


def test_documented_memory_limit_is_honoured_and_named(tmp_path):
    tree = submission(tmp_path / "tree", host_memory_gb=200.0, files=3600)   # 200 GiB recorded: 7324 needed
    assert "dataset-size" in ids(checker.check(tree))
    edit_json(systems_dir(tree) / "sys1.json",
              lambda d: d["nodes"][0].update({"memory.max": 64 * 2**30}))   # the cgroup the runs ran in
    result = checker.check(tree)
    assert not {i for i in ids(result) if i.startswith("dataset-size")}
    tree2 = submission(tmp_path / "tree2", host_memory_gb=200.0, files=2000)
    edit_json(systems_dir(tree2) / "sys1.json", lambda d: d["nodes"][0].update({"memory.max": 64 * 2**30}))
    (f,) = {f.rule_id: f for f in checker.check(tree2).all_findings()
            if f.rule_id.startswith("dataset-size") and f.rule_id != "dataset-size-checkable"}.values()
    assert "64.00 GiB per host: the memory limit documented in sys1.json" in f.message


def test_report_mismatch_is_one_finding_listing_the_fields(tmp_path):
    tree = submission(tmp_path / "tree")
    rep = org(tree) / "results" / "sys1" / "unet3d-h100" / "mlperf_storage_report.json"
    edit_json(rep, lambda d: d["overall"].update(train_num_accelerators="8", num_files_train=99,
                                                   train_throughput_mean_samples_per_second=1.0, model="resnet50"))
    hit = [f for f in checker.check(tree).all_findings() if f.rule_id.startswith("integrity-report")]
    assert [f.rule_id for f in hit] == ["integrity-report-matches-runs"]
    for name in ("train_throughput_mean_samples_per_second", "train_num_accelerators", "num_files_train", "model"):
        assert name in hit[0].field


def test_repeated_findings_are_grouped_in_text_and_kept_in_json(tmp_path, run_cli):
    b = dlio_benchmark(tmp_path / "bench", au=(80.0, 81.0, 82.0))
    code, out, _ = run_cli("check", b)
    assert out.count("(au-threshold)") == 1            # one line for the five runs
    assert "(same in 4 more: run2, run3, run4, run5)" in out
    code, out, _ = run_cli("check", b, "--format", "json")
    assert sum(f["rule_id"] == "au-threshold" for f in json.loads(out)["benchmarks"][0]["findings"]) == 5


def test_html_report_groups_repeated_findings(tmp_path):
    from suite.training.page import _verdicts
    from suite.report.findings import group
    b = dlio_benchmark(tmp_path / "bench", au=(80.0, 81.0, 82.0))
    (verdict, found), = [v for k, v in _verdicts(checker.check(b)).items() if k != "(tree)"]
    groups = group(found)
    assert len(found) == 5 and len(groups) == 1 and len(groups[0][1]) == 4


# --------------------------------------------------------------------------- new v1.0 rules, passing twins


def test_runs_consecutive_passes_when_another_benchmark_ran_before(tmp_path):
    tree = submission(tmp_path / "tree")
    dlio_run(org(tree) / "results" / "sys1" / "unet3d-a100" / "run1", accel="a100", start="2024-08-07T05:00:00")
    assert "structure-runs-consecutive" not in ids(checker.check(tree))


def test_code_unchanged_passes_on_the_reference_file_and_names_a_changed_one(tmp_path):
    from suite.layouts.benchdirs import code
    ref = code.reference("v1.0")
    tree = submission(tmp_path / "tree")
    src = Path("/nonexistent")
    rel = "dlio_benchmark/dlio_benchmark/main.py"
    shared = paths.SHARED / "trees/mlperf-storage-v1.0/Closed/DDN/code" / rel
    target = org(tree) / "code" / rel
    target.parent.mkdir(parents=True)
    if shared.is_file():
        shutil.copy(shared, target)
        assert "code-unchanged" not in ids(whole_check(tree))
    target.write_text("print('tuned')\n")
    (f,) = [f for f in whole_check(tree).all_findings() if f.rule_id == "code-unchanged"]
    assert f.path == f"{ORG}/code/{rel}" and ref["files"][rel][:16] in f.expected and f.severity == "warning"
    assert not src.exists()


def test_replicability_within_5_percent_passes_at_4_percent(tmp_path):
    b = dlio_benchmark(tmp_path / "bench")
    shutil.rmtree(b / "run2")
    dlio_run(b / "run2", tp=(3.2, 3.22, 3.24), start=run_start(2))       # ~3.9% above the others' 3.1
    assert "replicability-within-5-percent" not in ids(checker.check(b))


# --------------------------------------------------------------------------- hostile text in logs and names

from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_any_text_log_parses_without_error(tmp_path_factory, text):
    from suite.layouts.benchdirs import genlogs
    root = tmp_path_factory.mktemp("log")
    p = root / "generation_logs" / "x.log"
    p.parent.mkdir(exist_ok=True)
    g = genlogs.from_text(p, text, root, {})
    assert g.num_files is None or g.num_files >= 0
    assert genlogs.mismatch(g, 10, "/data", 0.0) is None or isinstance(genlogs.mismatch(g, 10, "/data", 0.0), str)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_folder_match_and_name_distance_are_symmetric(a, b):
    from suite.layouts.benchdirs import genlogs, systems
    assert genlogs.same_folder(a, b) == genlogs.same_folder(b, a)
    assert systems._edits(a, b, 2) == systems._edits(b, a, 2)
    assert systems._edits(a, a, 2) == 0


# --------------------------------------------------------------------------- a synthetic whole results repository


def test_synthetic_whole_tree_verdicts(tmp_path, run_cli):
    from check_builders import whole_tree
    expect = whole_tree(tmp_path / "repo")
    result = whole_check(tmp_path / "repo")
    got = {str(br.benchmark.path.relative_to(tmp_path / "repo" / "Closed")): label(br.verdict, br.fix_required)
           for br in result.benchmarks}
    assert got == expect
    assert result.incomplete == ["Closed/A/results/a-18clients/cosmoflow-h100"]
    code, out, _ = run_cli("check", tmp_path / "repo")
    assert code == 1 and "4 of 7 benchmarks compliant" in out and "verdict: INVALID, fix required" in out


def test_a_results_dir_named_like_a_gen_dir_stays_a_result(tmp_path):
    tree = submission(tmp_path / "tree", system="box_gen")
    result = checker.check(tree)
    assert [b.benchmark.system for b in result.benchmarks] == ["box_gen"] and clean(result)


@pytest.mark.parametrize("value,ok", [("NAS", True), ("Proprietary - EXAScaler (parallel filesystem)", True),
                                      ("Remote DAS", True), ("ext4", True), ("fuse.wekafs", True), ("nfs4", True),
                                      ("Teleportation", False), ("NASA", False)])
def test_solution_type_access_types_and_file_system_names(tmp_path, value, ok):
    tree = submission(tmp_path / "tree")
    edit_json(systems_dir(tree) / "sys1.json", lambda d: d["storage_system"].update(solution_type=value))
    assert ("submission-solution-type" not in ids(checker.check(tree))) is ok
