"""The issue's "done when", for real: init -> add 5 runs of a real closed `suite run` -> describe
(looked at in a headless-browser screenshot, the PDF opened) -> package -> `suite check` passes on
the unpacked tarball; one edited summary.json is then caught by the manifest and the integrity rules."""

import hashlib
import json
import re
import subprocess
import tarfile

import pytest

from suite.layouts import manifest
from suite.submission import document, system

from submission_helpers import fill_todos, snapshot

# the shared real run may be made here (a busy machine: slow); made once for all workers (conftest.once)
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def packaged(closed_results, tmp_path_factory):
    """(tree, tarball, outputs of each step) made through the CLI as a vendor would."""
    from suite import cli

    base = tmp_path_factory.mktemp("e2e-submission")
    root = base / "acme-v1.0"
    data_dir = json.loads((closed_results / "run-1" / "results.json").read_text())["dataset"]["data_dir"]
    assert cli.main(["submission", "init", str(root), "--org", "ACME", "--division", "closed",
                     "--system", "box1", "--data-dir", data_dir]) == 0
    assert cli.main(["submission", "add", str(root), str(closed_results), "--system", "box1"]) == 0
    fill_todos(root / "Closed" / "ACME" / "systems" / "box1.json")
    assert cli.main(["submission", "describe", str(root), "--system", "box1"]) == 0
    assert cli.main(["submission", "package", str(root)]) == 0
    return root, base / "acme-v1.0.tar.gz"


def test_description_has_the_sections_and_the_runs_evidence(packaged):
    root, _ = packaged
    text = (root / "Closed" / "ACME" / "systems" / "box1.md").read_text()
    assert [l for l in text.splitlines() if l.startswith("## ")] == [
        "## Cover", "## Hardware", "## Software", "## Settings", "## Misc"]
    assert "echo 3 \\> /proc/sys/vm/drop\\_caches" in text          # the cache-drop procedure (escaped)
    assert text.count("| done |") == 5                               # its outcome, per run
    assert "| 256 MiB | 256 MiB |" in text                           # cgroup limit requested and applied
    assert "benchmark: suite" in text and "generation\\_logs/box1/cosmoflow-a100" in text


def test_description_page_renders_in_a_headless_browser_and_the_pdf_opens(packaged, tmp_path):
    root, _ = packaged
    systems = root / "Closed" / "ACME" / "systems"
    if document.browser() is None:
        pytest.skip("chromium not installed (tools/install-debian-packages.sh installs it)")
    shot, dom = tmp_path / "page.png", tmp_path / "dom.html"
    done = subprocess.run(["bash", "tools/render-page.sh", str(systems / "box1.html"), str(shot), str(dom)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    from PIL import Image

    with Image.open(shot) as im:
        lo, hi = im.convert("L").getextrema()
    assert hi - lo > 100                                             # text on the page, not a blank one
    page = dom.read_text()
    for heading in ("Hardware", "Software", "Settings", "Misc"):
        assert f">{heading}</h2>" in page
    assert "uncaught" not in (tmp_path / "page.png.log").read_text().lower()
    pdf = (systems / "box1.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-1.") and pdf.rstrip().endswith(b"%%EOF")
    start = int(re.findall(rb"startxref\s+(\d+)", pdf)[-1])
    assert pdf[start:start + 4] == b"xref" or pdf[start:].lstrip()[:1].isdigit()   # the xref it points to
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf)) >= 2
    assert b"/Title (System description: box1)" in pdf


def test_unpacked_tarball_passes_check_and_its_manifest(packaged, tmp_path, run_cli):
    root, tarball = packaged
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path, filter="data")
    unpacked = tmp_path / root.name
    assert snapshot(unpacked) == snapshot(root)
    assert manifest.verify(unpacked) == [] and system.todo_findings(unpacked) == []
    code, out, err = run_cli("check", unpacked)
    assert code == 0, out + err
    assert "CLOSED" in out and "1 of 1 benchmarks compliant" in out
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=unpacked).returncode == 0
    code_dir = unpacked / "Closed" / "ACME" / "code"
    note = json.loads(next(code_dir.glob("suite-*-src.json")).read_text())
    archive = code_dir / note["archive"]
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == note["sha256"]
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert f"suite-{note['version']}/suite/cli.py" in names
    assert any(n.endswith("data/rules/v1.0/closed.yaml") for n in names)   # the rules as run


def test_an_edited_summary_is_caught_by_the_manifest_and_the_integrity_rules(packaged, tmp_path, run_cli):
    root, tarball = packaged
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path, filter="data")
    unpacked = tmp_path / root.name
    rel = "Closed/ACME/results/box1/cosmoflow-a100/run-2/summary.json"
    doc = json.loads((unpacked / rel).read_text())
    doc["metric"]["train_au_percentage"][1] += 1.5
    (unpacked / rel).write_text(json.dumps(doc, indent=4))
    (found,) = manifest.verify(unpacked)
    assert (found.rule_id, found.path, found.field) == ("submission-manifest-changed", rel, "sha256")
    code, out, _ = run_cli("check", unpacked)
    assert code == 1
    findings = re.sub(r"\n {18,}", " ", out).splitlines()      # a finding wraps at 100 columns: one again
    assert any("run-2/summary.json" in l and "train_au_percentage[1]" in l and "integrity" in l for l in findings)


def test_package_refuses_todos_a_non_compliant_tree_and_an_existing_tarball(packaged, tmp_path, run_cli):
    import shutil

    root, tarball = packaged
    copy = tmp_path / root.name
    shutil.copytree(root, copy)
    out_tar = tmp_path / "out.tar.gz"
    desc = copy / "Closed" / "ACME" / "systems" / "box1.json"
    good = desc.read_text()
    desc.write_text(good.replace('"Example value"', '"TODO: storage vendor"', 1))
    code, _, err = run_cli("submission", "package", copy, "--out", out_tar)
    assert code == 2 and "box1.json" in err and "got TODO" in err and not out_tar.exists()
    desc.write_text(good)
    summary = copy / "Closed/ACME/results/box1/cosmoflow-a100/run-1/summary.json"
    doc = json.loads(summary.read_text())
    doc["metric"]["train_au_mean_percentage"] = 10.0
    summary.write_text(json.dumps(doc))
    code, out, err = run_cli("submission", "package", copy, "--out", out_tar)
    assert code == 1 and "expected a compliant closed submission" in err and "run-1/summary.json" in out
    assert not out_tar.exists() and (copy / "SHA256SUMS").read_bytes() == (root / "SHA256SUMS").read_bytes()
    code, _, err = run_cli("submission", "package", root, "--out", tarball)
    assert code == 2 and "target: expected a new path" in err
