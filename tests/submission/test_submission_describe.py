"""`suite submission describe`: every value escaped (Markdown and HTML), no overwrite without --replace."""

import json
import re

from suite.submission import document

from submission_helpers import snapshot

HOSTILE = "<script>alert(1)</script> | *bold* [x](http://e) \x1b[31m"


def test_hostile_values_are_shown_as_text(run_cli, tmp_path, monkeypatch):
    monkeypatch.setattr(document, "pdf", lambda html, out: "skipped in this test")
    root = tmp_path / "sub"
    run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")
    desc = root / "Closed" / "ACME" / "systems" / "box1.json"
    doc = json.loads(desc.read_text())
    doc["storage_system"]["vendor_name"] = HOSTILE
    desc.write_text(json.dumps(doc))
    code, out, err = run_cli("submission", "describe", root, "--system", "box1")
    assert code == 0, err
    assert "no PDF: skipped in this test" in out
    page = (root / "Closed" / "ACME" / "systems" / "box1.html").read_text()
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    md = (root / "Closed" / "ACME" / "systems" / "box1.md").read_text()
    row = next(l for l in md.splitlines() if l.startswith("| vendor\\_name |"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 3             # the value's "|" does not split the cell
    assert "\\<script\\>" in row and "\x1b" not in md
    assert "## TODO" in md and "none added yet" in md


def test_existing_documents_need_replace_and_are_kept_aside(run_cli, tmp_path, monkeypatch):
    monkeypatch.setattr(document, "pdf", lambda html, out: "skipped in this test")
    root = tmp_path / "sub"
    run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")
    assert run_cli("submission", "describe", root, "--system", "box1")[0] == 0
    before = snapshot(root)
    code, _, err = run_cli("submission", "describe", root, "--system", "box1")
    assert code == 2 and "box1.md: target: expected a new path (or --replace" in err
    assert snapshot(root) == before
    code, out, _ = run_cli("submission", "describe", root, "--system", "box1", "--replace")
    assert code == 0 and "old copy kept at" in out
    assert len(list(tmp_path.glob("sub.replaced/*/Closed/ACME/systems/box1.md"))) == 1


def test_unknown_system(run_cli, tmp_path):
    root = tmp_path / "sub"
    run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")
    code, _, err = run_cli("submission", "describe", root, "--system", "nobox")
    assert code == 2 and "nobox.json: file: expected the system description of 'nobox', got none" in err
