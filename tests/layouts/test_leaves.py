"""suite.layouts.leaves and walk: a leaf is what it holds, wherever it sits; hostile files never raise."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suite.layouts import leaves, walk

DATA = Path(__file__).resolve().parents[1] / "data" / "v3" / "tree"
TRAIN = DATA / "closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"
CKPT = DATA / "closed/Alluxio/results/aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"


def test_leaves_are_classified_by_their_files_under_any_name(tmp_path):
    for src, bench in ((TRAIN / "run" / "20260704_050040", "training"), (CKPT / "20260708_064613", "checkpointing")):
        copy = tmp_path / bench / "x" / src.name          # no phase folder, no model name
        shutil.copytree(src, copy)
        leaf = leaves.reference(copy)
        assert leaf is not None and leaf.benchmark == bench and leaf.node == copy.parent
    (tmp_path / "20260101_000000").mkdir()
    assert leaves.reference(tmp_path / "20260101_000000") is None          # holds nothing
    assert leaves.reference(tmp_path) is None                                # no stamp


def test_a_summary_alone_names_the_benchmark_by_its_figures(tmp_path):
    leaf = tmp_path / "run" / "20260704_064222"
    shutil.copytree(TRAIN / "run" / "20260704_064222", leaf)   # summary.json and fs_separation.json only
    assert leaves.reference(leaf).benchmark == "training" and leaves.reference(leaf).phase == "run"


def test_our_own_leaves_are_not_reference_leaves(tmp_path):
    leaf = tmp_path / "20260704_050040"
    shutil.copytree(TRAIN / "run" / "20260704_050040", leaf)
    (leaf / "results.json").write_text("{}")
    assert leaves.reference(leaf) is None


def test_the_walk_groups_leaves_into_their_benchmarks(tmp_path):
    shutil.copytree(TRAIN, tmp_path / "R" / "training" / "unet3d")
    shutil.copytree(CKPT, tmp_path / "R" / "checkpointing" / "llama3-8b")
    found = walk.nodes(tmp_path / "R")
    assert [(n.path.name, n.benchmark, len(n.leaves)) for n in found] == [
        ("llama3-8b", "checkpointing", 2), ("unet3d", "training", 8)]
    leaf = tmp_path / "R" / "training" / "unet3d" / "run" / "20260704_050040"
    assert walk.node_of(leaf) == walk.node_of(leaf.parent) == tmp_path / "R" / "training" / "unet3d"


def test_the_recorded_division_is_the_leafs_own():
    assert leaves.recorded_division({"result_dir": "/home/u/x/open/Org/results/sys/training/unet3d"}) == "open"
    assert leaves.recorded_division({"cmd": ["--rank-output-base /m/closed/o/results/s"]}) == "closed"
    assert leaves.recorded_division({"result_dir": "/data/open-bench/x"}) is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(summary=st.binary(max_size=300), meta=st.one_of(st.none(), st.binary(max_size=300)))
def test_hostile_leaf_files_never_raise(tmp_path, summary, meta):
    leaf = tmp_path / "run" / "20260704_050040"
    shutil.rmtree(tmp_path / "run", ignore_errors=True)
    leaf.mkdir(parents=True)
    (leaf / "summary.json").write_bytes(summary)
    if meta is not None:
        (leaf / "training_20260704_050040_metadata.json").write_bytes(meta)
    got = leaves.reference(leaf)
    assert got is None or got.benchmark in leaves.BENCHMARKS
    assert all(n.benchmark in leaves.BENCHMARKS for n in walk.nodes(tmp_path))
