"""One result, one judgement (issue 44): the published v3.0 leaves of every kind get the same verdict
and the same kind-level rule ids in their published tree, copied alone into a results dir (the layout
`mlpstorage` and `suite run` write: R/<benchmark>/<model>/...), and copied alone under a name of the
user's; tree-level findings (the system description, the code pool, the tree's folders) come only from
the pooled tree's layout. Real published leaves (tests/data/v3), real `suite check` through its CLI."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from suite import cli
from suite.kinds.tree import findings_of

DATA = Path(__file__).resolve().parents[1] / "data" / "v3"
TREE = DATA / "tree"
TRAIN = TREE / "closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"
CKPT = TREE / "closed/Alluxio/results/aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"
KV = DATA / "kv_cache_FarmGPU/open/FarmGPU/results/potato8-qlc-np6-open-tnf-70b/kv_cache/llama3.1-70b-instruct"
VDB = DATA / "vector_database_TTA/closed/TTA/results/seahorse-storage/vector_database/milvus"
LAYOUT_IDS = ("TREE-", "CHECK-", "2.1.5-", "2.1.7-")     # the pooled tree's own rules: its folders, systems, pool


def judged(path: Path, capsys) -> tuple[str, int, set[str]]:
    """(verdict, exit code, the kind-level rule ids of every finding) of `suite check PATH --format json`."""
    capsys.readouterr()
    code = cli.main(["check", str(path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    ids = {f["rule_id"] for f in findings_of(doc) if not f["rule_id"].startswith(LAYOUT_IDS)}
    return doc["verdict"], code, ids


def _results_dir(tmp_path: Path, src: Path, *below: str) -> Path:
    """R/<below...>/<src's name>: the leaves copied alone into a results dir."""
    root = tmp_path / "R"
    dest = root.joinpath(*below, src.name)
    shutil.copytree(src, dest)
    return root


@pytest.mark.parametrize("src,below", [(TRAIN, ("training",)), (CKPT, ("checkpointing",)),
                                       (KV, ("kv_cache",)), (VDB, ("vector_database",))],
                         ids=["training", "checkpointing", "kv_cache", "vector_database"])
def test_published_leaves_are_judged_alike_wherever_they_sit(src, below, tmp_path, capsys):
    in_tree = judged(src, capsys)
    alone_in_results_dir = judged(_results_dir(tmp_path, src, *below), capsys)
    renamed = tmp_path / "copied" / src.name
    shutil.copytree(src, renamed)
    alone = judged(renamed, capsys)
    assert in_tree[2], "the published leaves have kind-level findings to compare"
    assert alone_in_results_dir == in_tree
    assert alone == in_tree


def test_the_training_leaves_are_v3_closed_in_a_results_dir_not_v1_invalid(tmp_path, capsys):
    """The new user's case: R/training/unet3d/{run,datagen,datasize}/<ts>/ was read as v1.0 and INVALID
    (runs: expected 5, got 6; configs/overrides.yaml missing)."""
    verdict, code, ids = judged(_results_dir(tmp_path, TRAIN, "training"), capsys)
    assert (verdict, code) == ("closed", 0)
    assert not {"structure-run-count", "structure-overrides-per-run"} & ids


def test_one_leaf_alone_is_judged_as_its_benchmark(tmp_path, capsys):
    """A single run leaf (or phase folder) given as PATH: its benchmark is read around it, by its leaves."""
    root = _results_dir(tmp_path, TRAIN, "training")
    leaf = next((root / "training/unet3d/run").iterdir())
    assert judged(leaf, capsys)[:2] == judged(root, capsys)[:2]
    assert judged(root / "training/unet3d/run", capsys)[:2] == judged(root, capsys)[:2]


def test_a_lie_in_the_leaves_is_caught_wherever_they_sit(tmp_path, capsys):
    """The same forgery (a run removed: five runs where six are due) is the same finding in every place."""
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    bench = tree / TRAIN.relative_to(TREE)
    shutil.rmtree(sorted((bench / "run").iterdir())[-1])
    root = _results_dir(tmp_path, bench, "training")
    in_tree, alone = judged(bench, capsys), judged(root, capsys)
    assert in_tree[0] == alone[0] == "invalid"
    assert "2.1.17-trainingRunCount" in in_tree[2] and in_tree[2] == alone[2]


def test_checkpointing_leaves_alone_are_checkpointing_not_training(tmp_path, capsys):
    """Published checkpointing leaves in R/checkpointing/<model>/ were read as v1.0 training (unknown
    workload, train_au_percentage expected)."""
    verdict, code, ids = judged(_results_dir(tmp_path, CKPT, "checkpointing"), capsys)
    assert verdict == "closed" and code == 0
    assert "4.3.1-checkpointDataSizeRatio" in ids and not any("train" in i.lower() for i in ids)
    capsys.readouterr()
    assert cli.main(["metrics", str(tmp_path / "R")]) == 0
    out = capsys.readouterr().out
    assert "Write B/W 4.64 GiB/s" in out and "unusable" not in out


REPORTGEN_JSON = '[\n  {"benchmark_type": "training", "model": "unet3d", "metrics": {"train_au_mean_percentage": 91.8}}\n]\n'
REPORTGEN_CSV = "benchmark_type,metrics.train_au_mean_percentage,model\ntraining,91.8,unet3d\n"


@pytest.mark.parametrize("src,below", [(Path(__file__).resolve().parents[1] / "data" / "suite-run" / "unet3d-h100", ()),
                                       (TRAIN, ("training",)), (CKPT, ("checkpointing",))],
                         ids=["ours-v2.0", "published-training", "published-checkpointing"])
def test_reportgens_outputs_beside_a_result_change_nothing(src, below, tmp_path, capsys):
    """`mlpstorage reports reportgen --output-dir R` leaves results.json (a list of its runs) and results.csv
    in R: they were read as a 6th run (+8 invalid findings); they are the layout's, read by no kind."""
    root = _results_dir(tmp_path, src, *below) if below else tmp_path / "R"
    if not below:
        shutil.copytree(src, root)
    before = judged(root, capsys)
    (root / "results.json").write_text(REPORTGEN_JSON)
    (root / "results.csv").write_text(REPORTGEN_CSV)
    assert judged(root, capsys) == before
    capsys.readouterr()
    cli.main(["check", str(root)])
    out = capsys.readouterr().out
    assert not re.search(r"(^|\s)results\.(json|csv)[:\s]", out), out     # no finding names them


def test_a_runs_own_results_json_that_is_a_list_is_still_a_finding(tmp_path, capsys):
    """Only the reference tool's report is passed over: a run's results.json (beside its summary.json)
    that is no object stays a finding of the run."""
    root = tmp_path / "R"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "suite-run" / "unet3d-h100", root)
    before = judged(root, capsys)
    (root / "run-1" / "results.json").write_text(REPORTGEN_JSON)
    after = judged(root, capsys)
    assert after != before and after[0] == "invalid"


V1_TREE = Path(__file__).resolve().parents[3] / "shared" / "trees" / "mlperf-storage-v1.0" / "Closed" / "DDN"
V1_BENCH = V1_TREE / "results" / "AI400X2T_24x14TiB_nvme_8xNDR200_18clients" / "unet3d-h100"


def test_a_v1_benchmark_is_judged_alike_in_its_tree_and_copied_alone(tmp_path, capsys):
    """A published v1.0 benchmark (DDN's whole submission, ../shared/trees): in its tree, copied alone into a
    results dir and alone under its own name; and with one run removed, the same finding in each place."""
    if not V1_BENCH.is_dir():
        pytest.skip("../shared/trees (DDN's v1.0 submission) is not here")
    tree = tmp_path / "tree"
    shutil.copytree(V1_TREE, tree / "Closed" / "DDN")
    bench = tree / "Closed" / "DDN" / V1_BENCH.relative_to(V1_TREE)
    places = [bench, _results_dir(tmp_path / "a", bench), tmp_path / "b" / bench.name]
    shutil.copytree(bench, places[2])
    seen = [judged(p, capsys) for p in places]
    assert seen[0][:2] == ("closed", 0) and seen[1] == seen[0] and seen[2] == seen[0]
    for p in places:                                    # a run gone: four where five are due
        shutil.rmtree(next(p.rglob("run5")))
    lied = [judged(p, capsys) for p in places]
    assert lied[0][0] == "invalid" and "structure-run-count" in lied[0][2]
    assert lied[1] == lied[0] and lied[2] == lied[0]
