"""suite.submission.manifest: SHA256SUMS written over a tree and every change, loss or addition found."""

import os
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from suite.errors import SuiteError
from suite.layouts import manifest

from submission_helpers import fill_todos, snapshot


def tree(tmp_path):
    root = tmp_path / "sub"
    (root / "Closed" / "ACME" / "results").mkdir(parents=True)
    (root / "Closed" / "ACME" / "results" / "summary.json").write_text('{"a": 1}')
    (root / "suite-submission.json").write_text("{}")
    (root / "SHA256SUMS").write_text(manifest.text(root))
    return root


def test_no_manifest_no_findings(tmp_path):
    assert manifest.verify(tmp_path) == []


def test_written_manifest_verifies_and_sha256sum_agrees(tmp_path):
    root = tree(tmp_path)
    assert manifest.verify(root) == []
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=root).returncode == 0


def test_changed_missing_and_extra_files_are_findings(tmp_path):
    root = tree(tmp_path)
    (root / "Closed" / "ACME" / "results" / "summary.json").write_text('{"a": 2}')
    (root / "suite-submission.json").unlink()
    (root / "Closed" / "new.txt").write_text("x")
    found = {(f.rule_id, f.path) for f in manifest.verify(root)}
    assert found == {("submission-manifest-changed", "Closed/ACME/results/summary.json"),
                     ("submission-manifest-missing", "suite-submission.json"),
                     ("submission-manifest-extra", "Closed/new.txt")}
    changed = next(f for f in manifest.verify(root) if f.rule_id == "submission-manifest-changed")
    assert changed.effect == "invalid" and changed.field == "sha256"
    assert changed.message.startswith("Closed/ACME/results/summary.json: sha256: expected ")


@pytest.mark.parametrize("text", ["not a manifest\n", "0" * 64 + "  ../outside\n", "0" * 64 + "  /etc/passwd\n"])
def test_a_bad_manifest_is_one_invalid_finding(tmp_path, text):
    root = tree(tmp_path)
    (root / "SHA256SUMS").write_text(text)
    (f,) = manifest.verify(root)
    assert f.rule_id == "submission-manifest-unreadable" and f.effect == "invalid"


def test_links_are_refused_when_listing_and_reported_when_verifying(tmp_path):
    root = tree(tmp_path)
    os.symlink("/etc/passwd", root / "Closed" / "link")
    with pytest.raises(SuiteError, match="symbolic link"):
        manifest.listing(root)
    assert [f.rule_id for f in manifest.verify(root)] == ["submission-manifest-extra"]


def test_package_refuses_a_tree_with_a_link_before_changing_anything(run_cli, tmp_path):
    root = tmp_path / "sub"
    run_cli("submission", "init", root, "--org", "ACME", "--division", "open", "--system", "box1")
    desc = root / "Open" / "ACME" / "systems" / "box1.json"
    fill_todos(desc)
    os.symlink("/etc/passwd", root / "Open" / "ACME" / "code" / "passwd")
    before = snapshot(root)
    code, _, err = run_cli("submission", "package", root)
    assert code == 2 and "code/passwd: file type: expected a regular file or directory, got a symbolic link" in err
    assert snapshot(root) == before and not (tmp_path / "sub.tar.gz").exists()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_parse_takes_any_bytes_as_a_manifest_or_a_value_error(data):
    try:
        listed = manifest.parse(data, "SHA256SUMS")
    except ValueError:
        return
    for rel, digest in listed.items():
        assert len(digest) == 64 and not rel.startswith("/") and ".." not in rel.split("/")
