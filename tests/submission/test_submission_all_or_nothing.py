"""`suite submission add SRC1 SRC2 ...` is all or nothing (issue 36): a later source refused, or the
command stopped by SIGTERM part-way, leaves the tree as it was (no copy of an earlier source, no code
image, no staging folder). Real results: two tiny open `suite run` dirs (v1.0 layout) and the
published v3.0 leaves of tests/data, each driven through the CLI (in-process, or a subprocess to stop)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import paths
import pytest

from submission_helpers import spoiled_copy

PY = [sys.executable, "-m", "suite"]
ENV = {**os.environ, "PYTHONPATH": str(paths.REPO)}
V3 = paths.DATA / "v3" / "tree" / "closed/Alluxio/results"
TRAIN = V3 / "aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"
CKPT = V3 / "aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"
SUITE_RUN = paths.DATA / "suite-run" / "unet3d-h100"
PAD_FILES = 4000          # empty files: copying them takes a few tenths of a second, long enough to be stopped


def cli(*argv, timeout=300):
    done = subprocess.run([*PY, *map(str, argv)], capture_output=True, text=True, env=ENV, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def tree_state(root: Path) -> dict:
    """{relative path: bytes or '<dir>'} of everything under root, folders included."""
    return {p.relative_to(root).as_posix(): "<dir>" if p.is_dir() else p.read_bytes()
            for p in sorted(root.rglob("*"))}


def pad(folder: Path) -> None:
    folder.mkdir(parents=True)
    for i in range(PAD_FILES):
        (folder / f"pad-{i:05d}").touch()


def stop_when(argv: list, root: Path, pattern: str) -> subprocess.CompletedProcess:
    """Run `suite ARGV`, SIGTERM it as soon as `root.glob(pattern)` finds a file (a copy under way)."""
    p = subprocess.Popen([*PY, *map(str, argv)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    deadline = time.monotonic() + 120
    while p.poll() is None and not any(root.glob(pattern)) and time.monotonic() < deadline:
        time.sleep(0.001)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


# --------------------------------------------------------------------------- v1.0 layout: suite run dirs


@pytest.fixture
def open_tree(run_cli, two_runs, tmp_path):
    tree = tmp_path / "sub"
    code, _, err = run_cli("submission", "init", tree, "--org", "ACME", "--division", "open", "--system", "box1",
                       "--data-dir", two_runs[0])
    assert code == 0, err
    return tree


def test_v1_a_later_refused_source_leaves_nothing_of_the_earlier(run_cli, two_runs, open_tree, tmp_path):
    first, second = two_runs[1]
    bad = spoiled_copy(second, tmp_path / "bad", run=1, status="failed", complete=False)
    before = tree_state(open_tree)
    code, _, err = run_cli("submission", "add", open_tree, first, bad, "--system", "box1")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "status" in err, err
    assert tree_state(open_tree) == before
    code, out, err = run_cli("submission", "add", open_tree, first, second, "--system", "box1")
    assert code == 0, err
    bench = open_tree / "Open/ACME/results/box1"
    assert sorted(p.name for p in bench.iterdir()) == ["cosmoflow-a100", "cosmoflow-h100"]
    assert not list(open_tree.glob(".suite-staging-*"))


@pytest.mark.parametrize("replace", [False, True])
def test_v1_add_stopped_part_way_leaves_the_tree_as_it_was(run_cli, two_runs, open_tree, tmp_path, replace):
    """The second source is being copied when SIGTERM comes: the first (already copied into staging)
    never reaches the tree; with --replace the old copies stay where they were."""
    first, second = two_runs[1]
    if replace:
        assert run_cli("submission", "add", open_tree, first, second, "--system", "box1")[0] == 0
    slow = tmp_path / "slow"
    shutil.copytree(second, slow)
    pad(slow / "run-1" / "pad")
    before = tree_state(open_tree)
    argv = ["submission", "add", open_tree, first, slow, "--system", "box1", *(["--replace"] if replace else [])]
    done = stop_when(argv, open_tree, ".suite-staging-*/*/run-1/pad/pad-00000")
    assert done.returncode == 130 and "interrupted" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert tree_state(open_tree) == before
    assert not (tmp_path / "sub.replaced").exists()


# --------------------------------------------------------------------------- v3.0: the published layout


@pytest.fixture
def v3_tree(run_cli, tmp_path):
    root = tmp_path / "sub3"
    code, _, err = run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1",
                       "--ruleset", "v3.0", "--data-dir", tmp_path)
    assert code == 0, err
    return root


def test_v3_a_later_refused_source_leaves_nothing_of_the_earlier(run_cli, v3_tree):
    """Before, the unet3d leaves (and our code image) were in the tree when the second source was refused."""
    before = tree_state(v3_tree)
    code, _, err = run_cli("submission", "add", v3_tree, TRAIN, CKPT, SUITE_RUN, "--system", "box1")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "run_set.json" in err, err
    assert tree_state(v3_tree) == before
    assert not list((v3_tree / "ACME").glob("code-*"))


def test_v3_two_sources_bringing_one_leaf_are_refused_before_any_copy(run_cli, v3_tree):
    before = tree_state(v3_tree)
    code, _, err = run_cli("submission", "add", v3_tree, TRAIN, TRAIN, "--system", "box1")
    assert code == 2 and "two RESULTS bringing it" in err, err
    assert tree_state(v3_tree) == before


def test_v3_add_stopped_part_way_leaves_the_tree_as_it_was(run_cli, v3_tree, tmp_path):
    slow = tmp_path / "llama3-8b"
    shutil.copytree(CKPT, slow)
    leaf = sorted(p for p in slow.iterdir() if p.is_dir())[0]
    pad(leaf / "pad")
    before = tree_state(v3_tree)
    done = stop_when(["submission", "add", v3_tree, TRAIN, slow, "--system", "box1"], v3_tree,
                     ".suite-staging-*/*/pad/pad-00000")
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    assert tree_state(v3_tree) == before
    code, out, err = run_cli("submission", "add", v3_tree, TRAIN, slow, "--system", "box1")   # and then it goes in whole
    assert code == 0 and "10 leaves" in out, err
    assert len(list((v3_tree / "closed/ACME/results/box1").rglob("pad-*"))) == PAD_FILES


def test_a_staging_folder_a_killed_add_left_is_removed_by_the_next(run_cli, v3_tree):
    """SIGKILL cannot be caught: the half-built staging folder stays, and the next add (holding the
    tree's lock) removes it, so it never reaches SHA256SUMS or the tarball."""
    left = v3_tree / ".suite-staging-999999" / "0"
    left.mkdir(parents=True)
    (left / "summary.json").write_text("{half")
    code, out, err = run_cli("submission", "add", v3_tree, CKPT, "--system", "box1")
    assert code == 0 and "2 leaves" in out, err
    assert not list(v3_tree.glob(".suite-staging-*"))
