"""Every rule of rules/v3.0/tree/ on published-shaped leaves (real leaves of mlcommons/storage_results_v3.0,
tests/data/v3/tree, copied into tmp_path): one table, rule id -> the planting of its violation (and, where
the real leaves do not reach the rule, a planting that makes it apply and pass). Each rule passes on its
passing leaf and is caught, with its id and grade, on its failing one; no rule of the directory is
without its case, and docs/checker.md's table lists exactly these ids (suite.published.ruledoc)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

import pytest
import yaml

from suite.published import check as v3check
from suite.published import ruledoc
from tests.published.test_published_check import (CKPT_META, CSYS, DATA, READ, RUNS, TSYS, WRITE, C, S, T, _both_meta,
                                                  _read_start_after_write_end, _set, _shift_runs_from, _yaml_replace,
                                                  edit_json, ids, result, run_summary, set_au)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "checker.md"
TREE_RULES = ROOT / "rules" / "v3.0" / "tree"
GALAX = "closed/Suzhou_Zishan_Longlin/systems/GalaxSphere-1Tier0.yaml"
DATAGEN = "20260704_070534"
DATASIZE = "20260711_035511"


@dataclass(frozen=True)
class Case:
    fail: Callable[[Path], object]             # plants the violation into a copy of the real tree
    ok: Callable[[Path], object] | None = None  # makes the rule apply and pass where the real leaves do not reach it


# --------------------------------------------------------------------------- plantings


def _forged_ckpt_summary(t: Path) -> None:
    """The write leaf with its rank 0 per_epoch_stats.json (the published file, tests/data/v3/checkpointing_alluxio)
    and summary.json's GiB/s set to 99: the records give 4.64."""
    alluxio = (DATA.parent / "checkpointing_alluxio" / "closed" / "Alluxio" / "results" /
               "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h" / "checkpointing" / "llama3-8b" / WRITE)
    shutil.copy(alluxio / "0_per_epoch_stats.json", C(t) / WRITE)
    _set(C(t) / WRITE / "summary.json", "metric.save_checkpoint_io_mean_GB_per_second", 99.0)


def _subset(doc):
    doc["override_parameters"]["checkpoint.mode"] = "subset"
    doc["num_processes"] = 16


def _to_open(t: Path) -> None:
    (t / "open").mkdir(exist_ok=True)
    shutil.move(str(t / "closed/Alluxio"), str(t / "open/Alluxio"))


def _combined(t: Path) -> None:
    """The write leaf made one combined invocation (10 writes, 10 reads), the read leaf gone."""
    def both(doc):
        doc["parameters"]["checkpoint"]["num_checkpoints_read"] = 10
        doc["override_parameters"]["checkpoint.num_checkpoints_read"] = 10
    edit_json(C(t) / WRITE / CKPT_META[WRITE], both)
    read = json.loads((C(t) / READ / "summary.json").read_text())["metric"]
    edit_json(C(t) / WRITE / "summary.json", lambda d: d["metric"].update(
        {k: v for k, v in read.items() if k.startswith("load_")}))
    shutil.rmtree(C(t) / READ)


def _read_after_write(t: Path, gap_s: float) -> None:
    """The read invocation moved, its duration kept, to start `gap_s` after the write's end."""
    end = datetime.fromisoformat(json.loads((C(t) / WRITE / "summary.json").read_text())["end"])
    def move(d):
        start = datetime.fromisoformat(d["start"])
        d["end"] = (end + timedelta(seconds=gap_s) + (datetime.fromisoformat(d["end"]) - start)).isoformat()
        d["start"] = (end + timedelta(seconds=gap_s)).isoformat()
    edit_json(C(t) / READ / "summary.json", move)


def _open_70b(processes: int):
    def plant(t: Path) -> None:
        _to_open(t)
        _both_meta(t, lambda d: d.update(model="llama3-70b", num_processes=processes))
    return plant


def _datagen_files(n: int):
    return lambda t: edit_json(T(t) / "datagen" / DATAGEN / f"training_{DATAGEN}_metadata.json",
                               lambda d: d.update(parameters={"dataset": {"num_files_train": n}}))


def _run0_override(key: str, value, open_division: bool = False):
    def plant(t: Path) -> None:
        if open_division:
            _to_open(t)
        edit_json(T(t) / "run" / RUNS[0] / f"training_{RUNS[0]}_metadata.json",
                  lambda d: d["override_parameters"].update({key: value}))
    return plant


def _results_inside_data(leaf: Callable[[Path], Path]):
    def plant(t: Path) -> None:
        p = leaf(t) / "fs_separation.json"
        edit_json(p, lambda d: d.update(results_path=d["data_or_chkpt_path"] + "/results"))
    return plant


def _gap_s(t: Path, i: int) -> float:
    """Seconds between run i's end and run i+1's start."""
    a, b = (json.loads(run_summary(t, j).read_text()) for j in (i, i + 1))
    return (datetime.fromisoformat(b["start"]) - datetime.fromisoformat(a["end"])).total_seconds()


def _junk(leaf: Path, n: int) -> None:
    for i in range(n):
        (leaf / f"junk_{i:05d}").touch()


def _bookends(t: Path, start: str, end: str) -> None:
    edit_json(C(t) / WRITE / CKPT_META[WRITE], lambda d: d.update(invocation_start_time=start,
                                                                  invocation_end_time=end))


CASES: dict[str, Case] = {
    # tree.yaml: layout, code pool, the staff's placeholders
    "2.1.5-requiredSubdirectoriesClosed": Case(lambda t: (t / "closed/Alluxio/extras").mkdir()),
    "CHECK-04-poolLegacyCheck": Case(lambda t: (t / "closed/Alluxio/code").mkdir()),
    "CHECK-01-poolPointerResolution": Case(lambda t: (T(t) / "run" / RUNS[0] / ".mlps-code-image").write_text(
        "md5-tree-v2:64104f04aaaaaaaaaaaaaaaaaaaaaaaa")),
    "CHECK-02-poolImageIntegrity": Case(lambda t: (t / "Alluxio/code-c5cbafac/run.sh").write_text("#!/bin/sh\n")),
    "CHECK-02-poolImageHasCode": Case(lambda t: [shutil.rmtree(t / "Alluxio/code-c5cbafac/mlpstorage"),
                                                 (t / "Alluxio/code-c5cbafac/pyproject.toml").unlink()]),
    "CHECK-03-poolImageNaming": Case(lambda t: (t / "Alluxio/code-c5cbafac").rename(t / "Alluxio/code-5d45230b")),
    "2.1.19-prunedPlaceholder": Case(lambda t: None, lambda t: [p.unlink() for p in t.rglob("*") if p.is_file()
                                                                and p.read_bytes() == b"PRUNED BY STAFF\n"]),
    "2.1.19-runFiles": Case(lambda t: run_summary(t, 3).write_bytes(b"PRUNED BY STAFF\n")),
    "2.1.19-runFilesReadable": Case(lambda t: run_summary(t, 2).write_text('{"start": NaN}')),
    "TREE-01-unrecognisedBenchmark": Case(lambda t: (T(t).parent.parent / "foo_bench/x").mkdir(parents=True)),
    "TREE-02-inputReadable": Case(lambda t: (T(t) / "run" / RUNS[1] / "extra.json").symlink_to("/etc/hostname")),
    "TREE-03-listingComplete": Case(lambda t: _junk(T(t) / "run" / RUNS[1], 20_001)),
    "TREE-04-codeThatRan": Case(lambda t: _ran(t, "0" * 32), lambda t: _ran(t, "c5cbafacef71748d5b2ce96f00015437")),
    # training.yaml
    "3.3.2-trainingAuRederived": Case(lambda t: _set(run_summary(t, 3), "metric.train_au_percentage", [50.0] * 5)),
    "3.1.2-trainingDatasetSize": Case(lambda t: [_set(run_summary(t, i), "num_files_train", 1000) for i in range(6)]),
    "3.6.2-trainingClosedParameterValues": Case(lambda t: _set(T(t) / "run" / RUNS[0] / f"training_{RUNS[0]}_metadata.json",
                                                               "parameters.train.computation_time", 1.62)),
    "2.1.18-runsOverlap": Case(lambda t: _shift_runs_from(t, 3, -(_gap_s(t, 2) + 60))),
    "2.1.17-trainingRunsOneHost": Case(lambda t: _set(run_summary(t, 4), "hostname", "ip-10-0-0-99")),
    "2.1.17-trainingRunsDistinct": Case(lambda t: _set(run_summary(t, 3), "metric",
                                                       json.loads(run_summary(t, 2).read_text())["metric"])),
    "3.4.1-fsSeparationPathsAgree": Case(lambda t: _set(T(t) / "run" / RUNS[0] / "fs_separation.json",
                                                        "data_or_chkpt_path", "/mnt/other")),
    "2.1.11-trainingWorkloads": Case(lambda t: T(t).rename(T(t).parent / "resnet50")),
    "2.1.12-trainingPhases": Case(lambda t: shutil.rmtree(T(t) / "datasize")),
    "2.1.13-datagenTimestamp": Case(lambda t: shutil.copytree(T(t) / "datagen" / DATAGEN,
                                                              T(t) / "datagen/20260704_080000")),
    "2.1.17-trainingRunCount": Case(lambda t: shutil.rmtree(T(t) / "run" / RUNS[5])),
    "2.1.17-trainingWarmupFirst": Case(lambda t: (T(t) / "run" / RUNS[5]).rename(T(t) / "run/20260704_045000")),
    "2.1.18-runTimestampGap": Case(lambda t: _shift_runs_from(t, 3, 7200)),
    "3.2.1-trainingDatagenMinimumSize": Case(_datagen_files(53905), _datagen_files(53906)),
    "3.3.1-trainingRunDatasetsEqual": Case(lambda t: _set(run_summary(t, 4), "num_files_train", 55000)),
    "3.3.1-trainingRunDataMatchesDatasize": Case(lambda t: _set(
        T(t) / "datasize" / DATASIZE / f"training_{DATASIZE}_metadata.json", "parameters.dataset.num_files_train",
        60000)),
    "3.3.2-trainingAcceleratorUtilizationCheck": Case(lambda t: set_au(run_summary(t, 3), 89.9)),
    "3.3.3-trainingSingleHostSimulatedAccelerators": Case(lambda t: [edit_json(run_summary(t, i), lambda d: d.update(
        num_hosts=1, num_accelerators=2)) for i in range(6)]),
    "3.3.6-trainingIdenticalAcceleratorsPerNode": Case(lambda t: _set(run_summary(t, 2), "num_hosts", 3)),
    "3.4.1-trainingMlpstoragePathArgs": Case(_results_inside_data(lambda t: T(t) / "run" / RUNS[1])),
    "3.4.2-trainingMlpstorageFilesystemCheck": Case(lambda t: _set(T(t) / "run" / RUNS[1] / "fs_separation.json",
                                                                   "same_filesystem", True)),
    "3.4.2-trainingFsSeparationRecorded": Case(lambda t: (T(t) / "run" / RUNS[2] / "fs_separation.json").unlink()),
    "3.6.2-trainingClosedSubmissionParameters": Case(_run0_override("reader.batch_size", 2)),
    "3.6.3-trainingOpenSubmissionParameters": Case(_run0_override("reader.batch_size", 2, open_division=True),
                                                   _run0_override("reader.data_loader", "tensorflow", True)),
    "3.3.8-trainingThroughputBound": Case(lambda t: _set(run_summary(t, 2), "metric.train_throughput_mean_samples_per_second",
                                                         400.0)),      # 8 x 7 / 0.162 s = 345.7 at 100 % AU
    "3.3.8-trainingThroughputBytesAgree": Case(lambda t: _set(run_summary(t, 2), "metric.train_io_mean_MB_per_second",
                                                              88000.0)),
    "3.3.8-trainingAuMatchesThroughput": Case(lambda t: set_au(run_summary(t, 2), 99.0)),
    # checkpointing.yaml
    "2.1.21-checkpointingWorkloads": Case(lambda t: C(t).rename(C(t).parent / "llama3-13b")),
    "2.1.23-checkpointingTimestamps": Case(lambda t: shutil.copytree(C(t) / READ, C(t) / "20260708_070000")),
    "2.1.24-checkpointingTimestampGap": Case(lambda t: _read_after_write(t, 300)),
    "4.2.2-checkpointClosedProcessCount": Case(lambda t: _both_meta(t, lambda d: d.update(num_processes=16))),
    "4.3.1-checkpointDataSizeRatio": Case(lambda t: None, lambda t: [
        _set(C(t) / ts / "summary.json", "host_memory_GB", [10.0]) for ts in (WRITE, READ)]),
    "4.3.1-checkpointCacheClearSplit": Case(_combined),
    "4.3.2-checkpointFsyncVerification": Case(lambda t: _set(C(t) / WRITE / CKPT_META[WRITE],
                                                             "parameters.checkpoint.fsync", False)),
    "4.3.3-checkpointModelConfigurationReq": Case(lambda t: _both_meta(t, lambda d: d.update(model="llama3-13b"))),
    "4.3.5-checkpointSubsetRunValidation": Case(lambda t: _both_meta(t, _subset)),
    "4.4.1-checkpointPathArgs": Case(_results_inside_data(lambda t: C(t) / WRITE)),
    "4.3.6-checkpointSummaryRederived": Case(_forged_ckpt_summary),
    "4.3.3-checkpointSizeMatchesModel": Case(lambda t: _set(C(t) / WRITE / "summary.json", "metric.checkpoint_size_GB",
                                                            112425623552 / 1e9)),     # decimal GB, not DLIO's GiB
    "4.4.2-checkpointFilesystemCheck": Case(lambda t: _set(C(t) / WRITE / "fs_separation.json",
                                                           "same_filesystem", True)),
    "4.4.2-checkpointFsSeparationRecorded": Case(lambda t: (C(t) / READ / "fs_separation.json").unlink()),
    "4.6.2-checkpointClosedAcceleratorsPerHost": Case(lambda t: [_set(C(t) / ts / "summary.json", "num_hosts", 4)
                                                                 for ts in (WRITE, READ)]),
    "4.6.3-checkpointClosedCheckpointParameters": Case(lambda t: edit_json(
        C(t) / WRITE / CKPT_META[WRITE], lambda d: d["override_parameters"].update(
            {"checkpoint.time_between_checkpoints": 1}))),
    "4.6.4-checkpointOpenSubmissionScaling": Case(_open_70b(12), _open_70b(16)),
    "4.7.1-checkpointInvocationStructure": Case(lambda t: shutil.copytree(C(t) / READ, C(t) / "20260708_070000")),
    "4.7.1-checkpointCacheFlushValidation": Case(lambda t: _read_start_after_write_end(t, 31)),
    "4.7.1-checkpointGapNegative": Case(lambda t: _read_start_after_write_end(t, -5)),
    "EVID-01-checkpointReadFromPageCache": Case(lambda t: _set(C(t) / READ / "summary.json",
                                                               "metric.load_checkpoint_io_mean_GB_per_second", 25.0)),
    "4.7.1-checkpointBookendsHoldRun": Case(lambda t: _bookends(t, "2026-07-08T06:50:00", "2026-07-08T06:50:30")),
    "4.3.6-checkpointBandwidthMatchesSize": Case(lambda t: _set(C(t) / WRITE / "summary.json",
                                                                "metric.save_checkpoint_io_mean_GB_per_second", 9.0)),
    "4.3.6-checkpointDurationsFitRun": Case(lambda t: edit_json(C(t) / WRITE / "summary.json", lambda d: d["metric"].update(
        save_checkpoint_io_mean_GB_per_second=46.4, save_checkpoint_duration_mean_seconds=2.26))),
    "EVID-02-checkpointHostMemoryConsistent": Case(lambda t: _set(C(t) / READ / "summary.json", "host_memory_GB", [30.0])),
    # system.yaml
    "2.1.7-systemDescriptionPresent": Case(lambda t: [(S(t) / f"{TSYS}{e}").unlink() for e in (".yaml", ".pdf")]),
    "2.1.7-systemDescriptionSchema": Case(lambda t: _yaml_replace(S(t) / f"{CSYS}.yaml", "availability: available",
                                                                  "availability: soon")),
    "2.1.7-storageHardwareItemized": Case(lambda t: _yaml_replace(t / GALAX, "total_rack_units: 1",
                                                                  "total_rack_units: 2")),
    "2.1.7-systemDescriptionPdf": Case(lambda t: (S(t) / f"{CSYS}.pdf").unlink()),
    "2.1.7-systemPdfPaired": Case(lambda t: (S(t) / "AIStore_Disclosure.pdf").write_bytes(b"%PDF-1.4\n")),
}


def _ran(t: Path, code_hash: str) -> None:
    """Run 1's record of the code that ran (provenance.json, as suite run writes it) naming `code_hash`."""
    (T(t) / "run" / RUNS[0] / "provenance.json").write_text(json.dumps(
        {"schema_version": 1, "hash": code_hash, "algorithm": "md5-tree-v2", "captured_at": "2025-07-04T06:42:22Z",
         "tool": "suite", "tool_version": "0.1.0", "git_sha": None}))


def _rule(rule_id: str):
    return next(r for r in v3check.held_to().rules if r.id == rule_id)


@pytest.fixture
def tree(tmp_path) -> Path:
    dst = tmp_path / "tree"
    shutil.copytree(DATA, dst)
    return dst


@pytest.fixture(scope="module")
def unplanted(tmp_path_factory) -> set:
    """The rule ids a copy of the real tree, nothing planted, is caught on: checked once for every case
    whose passing leaf is the real tree as it is (no `ok` planting), where each checked its own copy."""
    dst = tmp_path_factory.mktemp("unplanted") / "tree"
    shutil.copytree(DATA, dst)
    return ids(result(dst))


# --------------------------------------------------------------------------- the table holds every rule


def test_every_rule_of_the_tree_rules_has_its_case():
    files = sorted(TREE_RULES.glob("*.yaml")) + sorted(TREE_RULES.parent.glob("*-leaves.yaml"))
    on_disk = {r["id"] for p in files for r in (yaml.safe_load(p.read_text()) or {}).get("rules") or []}
    assert set(CASES) == on_disk                                  # every file of the directory, listed or not
    assert set(CASES) == {r.id for r in v3check.held_to().rules}
    assert set(CASES) == set(ruledoc.rule_ids())


def test_docs_table_lists_exactly_the_tree_rules_as_generated():
    text = DOCS.read_text()
    assert ruledoc.render() in text, "docs/checker.md's rule table is stale: python -m suite.published.ruledoc docs/checker.md"
    assert ruledoc.listed_ids(text) == set(CASES)


# --------------------------------------------------------------------------- each rule, passing and failing


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_passes_on_its_passing_leaf(request, rule_id):
    if CASES[rule_id].ok is None:                  # the real tree as it is: checked once (`unplanted`)
        assert rule_id not in request.getfixturevalue("unplanted")
        return
    tree = request.getfixturevalue("tree")
    CASES[rule_id].ok(tree)
    assert rule_id not in ids(result(tree))


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_caught_on_its_failing_leaf(tree, rule_id):
    rule = _rule(rule_id)
    CASES[rule_id].fail(tree)
    res = result(tree)
    hit = [f for f in res.findings if f.rule_id == rule_id]
    assert hit, sorted(ids(res))
    assert {f.severity for f in hit} == {rule.severity}
    f = hit[0]
    assert f.message.startswith(f"{f.path}: {f.field}: expected ") and f.message.endswith(f"({rule_id})")
    if rule.effect != "closed":
        assert not res.compliant


# --------------------------------------------------------------------------- the checkpointing rules' edges


def test_combined_invocation_stands_when_the_checkpoint_outgrows_the_cache(tree):
    """4.3.1: above 3x the host's memory no cache needs clearing, so one combined invocation is valid."""
    _combined(tree)
    _set(C(tree) / WRITE / "summary.json", "host_memory_GB", [34.0])        # 104.7 GiB per host: 3.08x
    assert "4.3.1-checkpointCacheClearSplit" not in ids(result(tree))
    _set(C(tree) / WRITE / "summary.json", "host_memory_GB", [35.0])        # 2.99x: must be split
    assert "4.3.1-checkpointCacheClearSplit" in ids(result(tree))


def test_fsync_missing_from_the_metadata_is_not_a_finding_but_false_is(tree):
    def drop(d):
        del d["parameters"]["checkpoint"]["fsync"]
    edit_json(C(tree) / READ / CKPT_META[READ], drop)
    assert "4.3.2-checkpointFsyncVerification" not in ids(result(tree))
    _set(C(tree) / WRITE / CKPT_META[WRITE], "parameters.checkpoint.fsync", False)
    f = next(f for f in result(tree).findings if f.rule_id == "4.3.2-checkpointFsyncVerification")
    assert f.field == "parameters.checkpoint.fsync" and f.path.endswith(CKPT_META[WRITE])


def test_the_closed_override_names_the_offending_key(tree):
    _run0_override("reader.batch_size", 2)(tree)
    f = next(f for f in result(tree).findings if f.rule_id == "3.6.2-trainingClosedSubmissionParameters")
    assert "got reader.batch_size" in f.message and f.field == "override_parameters"


def test_gap_between_the_invocations_is_held_to_the_writes_duration(tree):
    s = json.loads((C(tree) / WRITE / "summary.json").read_text())
    duration_s = (datetime.fromisoformat(s["end"]) - datetime.fromisoformat(s["start"])).total_seconds()
    _read_after_write(tree, duration_s - 1)
    assert "2.1.24-checkpointingTimestampGap" not in ids(result(tree))
    _read_after_write(tree, duration_s + 1)
    assert "2.1.24-checkpointingTimestampGap" in ids(result(tree))




def test_the_rounds_checkpoint_sizes_are_the_model_layouts():
    """rules/v3.0/tree/checkpointing.yaml checkpoint_size_bytes (what the published check holds a leaf's size to)
    is suite.checkpointing.model's layout of each model at its closed process count, byte for byte."""
    from suite.checkpointing import model
    from suite.checkpointing import workloads

    params = v3check.held_to().params
    sizes, closed = params["checkpoint_size_bytes"], params["checkpoint_closed_processes"]
    assert set(sizes) == set(closed) == set(params["checkpoint_models"])
    for name, procs in closed.items():
        assert sizes[name] == model.from_workload(workloads.load(name), procs).total_bytes, name
