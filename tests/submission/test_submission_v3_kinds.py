"""`suite submission add` into a v3.0 tree takes kv_cache and vector_database results as their own kind's
check grades them (suite.published.submission.vetted, the check handed over by suite.kinds.tree): a real
open kv_cache run enters an open tree and is refused by a closed one; an invalid result (the published
leaves here are trimmed copies, which their kinds grade INVALID) enters neither, in one line, the tree
left as it was; `package` checks the handed-over results with their kinds."""

import os
import subprocess
from pathlib import Path

import pytest

from suite import cli
from suite.published import check as v3check

DATA = Path(__file__).resolve().parents[1] / "data" / "v3"
KV_TRIMMED = DATA / "kv_cache_FarmGPU/open/FarmGPU/results/potato8-qlc-np6-open-tnf-70b"
VDB_TRIMMED = DATA / "vector_database_TTA/closed/TTA/results/seahorse-storage"


def _mount(path: Path, size: str) -> None:
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")


@pytest.fixture(scope="module")
def kv_results(tmp_path_factory):
    """A real open kv_cache run (option 1, one 3-s trial: a busy machine's 1-s trial served nothing): the
    cache dir and the results dir each on a tmpfs of its own (Rule 6.4.1: different file systems), so its check grades it OPEN, not INVALID."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    cache, res = tmp_path_factory.mktemp("kvcache"), tmp_path_factory.mktemp("kvres")
    _mount(res, "64m")
    try:
        _mount(cache, "8g")              # pages only as written: 3 s write far less
        try:
            code = cli.main(["run", "--workload", "kv-cache", "--cache-dir", str(cache), "--results-dir",
                             str(res / "R"), "--option", "1", "--trials", "1", "--duration", "3",
                             "--inter-option-delay", "0", "--accelerators", "1", "--allow-no-cache-drop",
                             "--division", "open", "--no-history"])
        finally:
            subprocess.run(["umount", "-l", str(cache)], check=False)
        assert code == 0                 # OPEN, and asked for: --division open
        yield res / "R"
    finally:
        subprocess.run(["umount", "-l", str(res)], check=False)


def _tree(tmp_path: Path, division: str) -> Path:
    root = tmp_path / f"{division}-sub"
    assert cli.main(["submission", "init", str(root), "--org", "ACME", "--division", division, "--system", "box1",
                     "--ruleset", "v3.0", "--data-dir", str(tmp_path)]) == 0
    return root


def _listing(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_an_open_kv_cache_run_enters_an_open_tree_and_its_kind_checks_it_there(kv_results, tmp_path, capsys):
    root = _tree(tmp_path, "open")
    assert cli.main(["submission", "add", str(root), str(kv_results), "--system", "box1"]) == 0
    (leaf,) = (root / "open/ACME/results/box1/kv_cache/llama3.1-8b/run").iterdir()
    assert (leaf / "summary.json").is_file() and (leaf / "option_1").is_dir()
    assert (leaf / ".mlps-code-image").read_text().startswith("md5-tree-v2:")
    capsys.readouterr()
    from suite.kinds import tree as kinds_tree
    import argparse

    res = v3check.check(root, delegate=kinds_tree.handover(None, argparse.Namespace(format="text", ruleset="auto")))
    (said,) = [d for d in res.delegated if d["kind"] == "kv_cache"]
    assert said["verdict"] == "open", said
    assert not [f for f in res.findings if f.rule_id.startswith("TREE-01")]     # not "unrecognised": checked


def test_a_closed_tree_refuses_an_open_kv_cache_run_in_one_line(kv_results, tmp_path, capsys):
    root = _tree(tmp_path, "closed")
    before = _listing(root)
    capsys.readouterr()
    assert cli.main(["submission", "add", str(root), str(kv_results), "--system", "box1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "expected a closed kv_cache result (the submission is closed)" in err and "OPEN" in err, err
    assert _listing(root) == before


@pytest.mark.parametrize("src, bench", [(KV_TRIMMED, "kv_cache"), (VDB_TRIMMED, "vector_database")])
def test_an_invalid_result_enters_no_tree(src, bench, tmp_path, capsys):
    if not src.is_dir():
        pytest.skip(f"{src} not here")
    root = _tree(tmp_path, "open")
    before = _listing(root)
    capsys.readouterr()
    assert cli.main(["submission", "add", str(root), str(src), "--system", "box1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"expected a closed or open {bench} result" in err, err
    assert "INVALID" in err and _listing(root) == before


def test_a_leaf_filed_under_another_benchmark_is_refused(kv_results, tmp_path, capsys):
    """A kv_cache leaf passed off as training (its metadata says kv_cache): refused before any copy."""
    import shutil

    fake = tmp_path / "fake"
    (leaf,) = (kv_results / "kv_cache/llama3.1-8b/run").iterdir()
    shutil.copytree(leaf, fake / "training/unet3d/run" / leaf.name)
    root = _tree(tmp_path, "open")
    capsys.readouterr()
    assert cli.main(["submission", "add", str(root), str(fake), "--system", "box1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "benchmark_type: expected training, as the folder it goes to" in err and "'kv_cache'" in err, err


def test_package_checks_the_kv_cache_results_with_their_kind(kv_results, tmp_path, capsys):
    from tests.submission.submission_helpers import fill_v3

    root = _tree(tmp_path, "open")
    fill_v3(root, division="open")
    assert cli.main(["submission", "add", str(root), str(kv_results), "--system", "box1"]) == 0
    capsys.readouterr()
    assert cli.main(["submission", "package", str(root), "--out", str(tmp_path / "open.tar.gz")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "open.tar.gz").is_file(), out
    listed = (root / "SHA256SUMS").read_text()
    assert "kv_cache/llama3.1-8b/run/" in listed and "/summary.json" in listed
