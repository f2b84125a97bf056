"""`suite submission package` never ships stale system documents (issue 38): after init -> add -> describe,
an edit of the system description (JSON, YAML) is in the <system>.md/.html/.pdf the package hashes and
tars, TODOs of an earlier description are gone with it, and without chromium a PDF of an earlier
description is refused in one line (exit 2, nothing written). Through the CLI, on real results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import paths
import pytest

from suite.submission import document

from submission_helpers import fill_todos, fill_v3_yaml

PY = [sys.executable, "-m", "suite"]
TRAIN = paths.DATA / "v3/tree/closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"

needs_chromium = pytest.mark.skipif(document.browser() is None, reason="chromium not installed (no PDF to compare)")


def cli(*argv, path_env: str | None = None):
    env = {**os.environ, "PYTHONPATH": str(paths.REPO), **({"PATH": path_env} if path_env else {})}
    done = subprocess.run([*PY, *map(str, argv)], capture_output=True, text=True, env=env, timeout=300)
    return done.returncode, done.stdout, done.stderr


def tarred(tarball: Path, name: str) -> str:
    with tarfile.open(tarball) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/" + name))
        return tar.extractfile(member).read().decode()


def tree_state(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): "<dir>" if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


@pytest.fixture
def described(run_cli, two_runs, tmp_path):
    """An open v1.0 tree: init -> add -> describe while the description still holds its TODOs."""
    tree = tmp_path / "sub"
    assert run_cli("submission", "init", tree, "--org", "ACME", "--division", "open", "--system", "box1",
                   "--data-dir", two_runs[0])[0] == 0
    assert run_cli("submission", "add", tree, two_runs[1][0], "--system", "box1")[0] == 0
    code, _, err = run_cli("submission", "describe", tree, "--system", "box1")
    assert code == 0, err
    return tree, tree / "Open/ACME/systems"


@needs_chromium
def test_v1_package_ships_documents_of_the_current_description_not_the_todos(run_cli, described, tmp_path):
    tree, systems = described
    assert "TODO" in (systems / "box1.md").read_text()                # describe ran before the description was filled
    old_pdf = (systems / "box1.pdf").read_bytes()
    fill_todos(systems / "box1.json")
    desc = json.loads((systems / "box1.json").read_text())
    desc["storage_system"]["vendor_name"] = "Vendor B"
    (systems / "box1.json").write_text(json.dumps(desc, indent=2))
    code, out, _ = run_cli("check", tree)                  # the stale documents' TODOs are findings, not notes
    assert code == 1 and "submission-document-todo" in out and "Open/ACME/systems/box1.md: TODO" in out
    code, out, err = run_cli("submission", "package", tree, "--out", tmp_path / "sub.tar.gz")
    assert code in (0, 1) and "Traceback" not in err, err       # open: OPEN is fine, and never refused
    assert "box1.md made again" in out and "old copy kept at" in out
    for name in ("box1.md", "box1.html"):
        text = (systems / name).read_text()
        assert "Vendor B" in text and "TODO" not in text, name
        assert tarred(tmp_path / "sub.tar.gz", name) == text
    assert (systems / "box1.pdf").read_bytes() != old_pdf and (systems / "box1.pdf").read_bytes()[:5] == b"%PDF-"
    sums = (tree / "SHA256SUMS").read_text()
    assert "Open/ACME/systems/box1.md" in sums
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=tree).returncode == 0
    code, out, _ = run_cli("submission", "package", tree, "--out", tmp_path / "again.tar.gz")   # nothing stale now
    assert code in (0, 1) and "box1.md, box1.html, box1.pdf: current" in out


@needs_chromium
def test_v1_without_chromium_a_stale_pdf_is_refused_in_one_line(described, tmp_path):
    tree, systems = described
    fill_todos(systems / "box1.json")
    before = tree_state(tree)
    no_chromium = str(Path(sys.executable).parent)                # python only: no chromium on this PATH
    code, _, err = cli("submission", "package", tree, "--out", tmp_path / "sub.tar.gz", path_env=no_chromium)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "box1.pdf" in err and "an earlier description" in err
    assert tree_state(tree) == before and not (tmp_path / "sub.tar.gz").exists()


@needs_chromium
def test_v3_package_ships_documents_of_the_current_yaml(run_cli, tmp_path):
    tree = tmp_path / "sub3"
    systems = tree / "closed/ACME/systems"
    assert run_cli("submission", "init", tree, "--org", "ACME", "--division", "closed", "--system", "box1",
               "--ruleset", "v3.0", "--data-dir", tmp_path)[0] == 0
    assert run_cli("submission", "add", tree, TRAIN, "--system", "box1")[0] == 0
    assert run_cli("submission", "describe", tree, "--system", "box1")[0] == 0
    assert "TODO" in (systems / "box1.md").read_text()
    fill_v3_yaml(systems / "box1.yaml", "preview")
    code, out, _ = run_cli("check", tree)                  # the stale documents' TODOs are findings, not notes
    assert code == 1 and "submission-document-todo" in out
    code, out, err = run_cli("submission", "package", tree, "--out", tmp_path / "a.tar.gz")
    assert code == 0 and "CLOSED" in out, out + err
    md = (systems / "box1.md").read_text()
    assert "TODO" not in md and "| availability | preview |" in md and tarred(tmp_path / "a.tar.gz", "box1.md") == md
    fill_v3_yaml(systems / "box1.yaml", "available")                   # edited after a package: the next one follows
    code, out, err = run_cli("submission", "package", tree, "--out", tmp_path / "b.tar.gz")
    assert code == 0, out + err
    assert "| availability | available |" in tarred(tmp_path / "b.tar.gz", "box1.md")
    code, out, err = run_cli("check", tree)
    assert code == 0 and "submission-document-todo" not in out, out + err
    assert "available" in tarred(tmp_path / "b.tar.gz", "box1.html")
