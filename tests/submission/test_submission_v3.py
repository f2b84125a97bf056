"""`suite submission init/add/describe/package --ruleset v3.0`: a tree in the published v3.0 layout,
its code pool written from the installed package, that suite check (suite.published.check) accepts.
Our own v3.0 leaves are not in main yet (issue 25): the real published leaves (tests/data/v3/tree)
stand in for them, and a `suite run` dir of the v3.0 round is converted to run/<ts> leaves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from suite import cli
from suite.harness import provenance
from suite.published import check as v3check
from suite.layouts import pool as v3pool
from suite.submission import document
from tests.submission.submission_helpers import fill_v3

DATA = Path(__file__).resolve().parents[1] / "data" / "v3" / "tree"
TRAIN = DATA / "closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"
CKPT = DATA / "closed/Alluxio/results/aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"
SUITE_RUN = Path(__file__).resolve().parents[1] / "data" / "suite-run" / "unet3d-h100"
LEAVES = ["20251121_044000", "20251121_045000"]          # the runs' summary.json start times


@pytest.fixture
def sub(tmp_path) -> Path:
    root = tmp_path / "sub"
    assert cli.main(["submission", "init", str(root), "--org", "ACME", "--division", "closed", "--system", "box1",
                     "--ruleset", "v3.0", "--data-dir", str(tmp_path)]) == 0
    return root


def test_init_makes_the_v3_layout_and_lists_the_todos(sub, capsys):
    assert (sub / "closed/ACME/results").is_dir() and (sub / "ACME/.mlps-image-pool").is_file()
    doc = yaml.safe_load((sub / "closed/ACME/systems/box1.yaml").read_text())
    assert doc["todo"] and doc["system_under_test"]["solution"]["submission_name"] == "box1"
    assert cli.main(["submission", "add", str(sub), str(TRAIN), "--system", "box1"]) == 0
    capsys.readouterr()
    assert cli.main(["submission", "package", str(sub)]) == 2          # TODOs left: refused, one line
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "TODO" in err and "box1.yaml" in err


def test_end_to_end_add_describe_package_checks_clean(sub, tmp_path, capsys):
    fill_v3(sub)
    assert cli.main(["submission", "add", str(sub), str(TRAIN), str(CKPT), "--system", "box1"]) == 0
    leaves = sorted((sub / "closed/ACME/results/box1").rglob(".mlps-code-image"))
    assert len(leaves) == 10                               # 6 runs + datasize + datagen + write + read
    pointers = {p.read_text() for p in leaves}
    assert "md5-tree-v2:c5cbafacef71748d5b2ce96f00015437" in pointers     # the published leaf keeps its own
    assert (sub / "ACME/code-c5cbafac/.code-hash.json").is_file()          # and its image comes with it
    pointer = next(p for p in pointers if "c5cbafac" not in p)
    image = sub / "ACME" / f"code-{pointer.split(':')[1][:8]}"
    recorded = json.loads((image / ".code-hash.json").read_text())
    assert pointer == f"md5-tree-v2:{recorded['hash']}" == f"md5-tree-v2:{v3pool.tree_md5(image)}"
    assert (image / "suite" / "published" / "check.py").is_file()
    if document.browser() is None:
        pytest.skip("chromium not installed: no PDF, which suite check reports")
    assert cli.main(["submission", "describe", str(sub), "--system", "box1"]) == 0
    assert (sub / "closed/ACME/systems/box1.pdf").read_bytes()[:5] == b"%PDF-"
    assert cli.main(["submission", "package", str(sub), "--out", str(tmp_path / "sub.tar.gz")]) == 0
    assert (tmp_path / "sub.tar.gz").is_file() and (sub / "SHA256SUMS").is_file()
    res = v3check.check(sub)
    assert res.compliant, [f.message for f in res.findings if f.severity == "error"]
    row = next(r for r in res.rows if r["benchmark"] == "training")
    assert (row["provisioned_power_w"], row["rack_units"], row["availability"]) == (3000, 2, "preview")
    assert round(row["read_gib_s"], 2) == 43.68


def test_package_refuses_a_closed_tree_the_checker_does_not_accept(sub, tmp_path, capsys):
    fill_v3(sub)
    bad = tmp_path / "unet3d"
    shutil.copytree(TRAIN, bad)
    shutil.rmtree(bad / "run" / "20260704_064222")        # five runs: 2.1.17
    assert cli.main(["submission", "add", str(sub), str(bad), "--system", "box1"]) == 0
    (sub / "closed/ACME/systems/box1.pdf").write_bytes(b"%PDF-1.4\n")
    assert cli.main(["submission", "package", str(sub), "--out", str(tmp_path / "x.tar.gz")]) == 1
    out = capsys.readouterr()
    assert "2.1.17-trainingRunCount" in out.out and not (tmp_path / "x.tar.gz").exists()


def test_a_suite_run_dir_of_the_v3_round_becomes_run_leaves(tmp_path):
    """Our miniature series into an open submission (a closed one refuses it: tests/hostile/test_lies_tree.py)."""
    sub = tmp_path / "open-sub"
    assert cli.main(["submission", "init", str(sub), "--org", "ACME", "--division", "open", "--system", "box1",
                     "--ruleset", "v3.0", "--data-dir", str(tmp_path)]) == 0
    src = tmp_path / "r"
    shutil.copytree(SUITE_RUN, src)
    (src / "run_set.json").write_text("{}")
    for run in src.glob("run-*"):
        doc = json.loads((run / "results.json").read_text())
        doc.update(ruleset="v3.0", accelerator="b200")
        (run / "results.json").write_text(json.dumps(doc))
        # the fixture predates the run's code record: the one a run by this code writes (harness.provenance)
        (run / "provenance.json").write_text(json.dumps({"schema_version": 1, **provenance.for_run()}))
    assert cli.main(["submission", "add", str(sub), str(src), "--system", "box1"]) == 0
    leaves = sorted((sub / "open/ACME/results/box1/training/unet3d/run").iterdir())
    assert [p.name for p in leaves] == LEAVES
    meta = json.loads(next(leaves[0].glob("training_*_metadata.json")).read_text())
    assert (meta["model"], meta["accelerator"], meta["command"]) == ("unet3d", "b200", "run")
    assert (leaves[0] / ".mlps-code-image").read_text().startswith("md5-tree-v2:")
    res = v3check.check(sub)
    assert "2.1.17-trainingRunCount" in {f.rule_id for f in res.findings}      # two runs of six


def test_a_suite_run_dir_of_another_round_is_refused_in_one_line(sub, capsys):
    assert cli.main(["submission", "add", str(sub), str(SUITE_RUN), "--system", "box1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "run_set.json" in err
    assert not (sub / "closed/ACME/results/box1").exists()
