"""Results that lie, round three, class 9 (issue 46): provenance.

`suite submission add` stamped the code present when it added, not the code that ran: a run made by a
modified checkout got the clean checkout's image and no CHECK finding. Now a run records the code that
ran (provenance.json: the md5-tree-v2 hash of the package as a pool image holds it, so the pointer names
the image `add` makes of the same code), `add` compares it with the code it stamps and refuses (exit 1, one
line) unless --allow-code-mismatch, and `suite check` finds a leaf whose record and pointer differ
(TREE-04-codeThatRan). And a history entry of a kind without accelerators (tpcx-ai, vector database)
never carries an accelerator type (the --accelerator-type default h100).

The "modified checkout" is real: the installed package's code files copied and one line changed, hashed as
a run by it records itself (suite.harness.provenance.code_image). The `suite run` dir is the committed real
run tests/data/suite-run/unet3d-h100, moved to the v3.0 round as tests/submission/test_submission_v3.py does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import paths
from suite.harness import provenance
from tests.submission.submission_helpers import snapshot

SUITE_RUN = paths.DATA / "suite-run" / "unet3d-h100"
pytestmark = pytest.mark.timeout(900)


def _v3_run(tmp_path: Path, record: dict | None) -> Path:
    """Our real `suite run` dir of the v3.0 round, each run recording `record` as the code that ran."""
    src = tmp_path / "r"
    shutil.copytree(SUITE_RUN, src)
    (src / "run_set.json").write_text("{}")
    for run in src.glob("run-*"):
        doc = json.loads((run / "results.json").read_text())
        doc.update(ruleset="v3.0", accelerator="b200")
        (run / "results.json").write_text(json.dumps(doc))
        if record is not None:
            (run / "provenance.json").write_text(json.dumps(record))
    return src


@pytest.fixture
def sub(run_cli, tmp_path) -> Path:
    root = tmp_path / "sub"
    assert run_cli("submission", "init", root, "--org", "ACME", "--division", "open", "--system", "box1",
                   "--ruleset", "v3.0", "--data-dir", tmp_path)[0] == 0
    return root


def _leaves(sub: Path) -> list[Path]:
    return sorted((sub / "open/ACME/results/box1/training/unet3d/run").iterdir())


def _tree_findings(run_cli, sub: Path, rule_id: str) -> tuple[int, list[dict]]:
    code, out, err = run_cli("check", sub, "--format", "json")
    doc = json.loads(out)
    return code, [f for f in doc.get("findings", []) if f["rule_id"] == rule_id]


def test_a_run_records_the_code_it_ran_as_the_image_add_makes_of_it(run_cli, sub, tmp_path):
    """The genuine case: the runs' record is this code; add keeps it and the pointer resolves in the pool."""
    src = _v3_run(tmp_path, {"schema_version": 1, **provenance.for_run()})
    code, out, err = run_cli("submission", "add", sub, src, "--system", "box1")
    assert code == 0, err
    now = provenance.for_run()["hash"]
    for leaf in _leaves(sub):
        assert (leaf / ".mlps-code-image").read_text().strip() == f"md5-tree-v2:{now}"
    assert (sub / "ACME" / f"code-{now[:8]}" / "suite" / "numbers.py").is_file()
    for rule in ("TREE-04-codeThatRan", "CHECK-01-poolPointerResolution"):
        assert _tree_findings(run_cli, sub, rule)[1] == [], rule


def test_a_run_by_a_modified_checkout_is_refused_in_one_line(run_cli, sub, tmp_path, modified):
    src = _v3_run(tmp_path, modified)
    before = snapshot(sub)
    code, out, err = run_cli("submission", "add", sub, src, "--system", "box1")
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "provenance.json: hash: expected " + provenance.for_run()["hash"] in err
    assert f"got {modified['hash']} (the code that ran)" in err and "--allow-code-mismatch" in err
    assert snapshot(sub) == before


def test_told_to_stamp_it_anyway_check_finds_the_code_that_ran(run_cli, sub, tmp_path, modified):
    src = _v3_run(tmp_path, modified)
    code, out, err = run_cli("submission", "add", sub, src, "--system", "box1", "--allow-code-mismatch")
    assert code == 0, err
    code, hits = _tree_findings(run_cli, sub, "TREE-04-codeThatRan")
    assert code == 1 and len(hits) == 2
    assert hits[0]["expected"] == f"md5-tree-v2:{modified['hash']} (the code that ran: provenance.json)"
    assert hits[0]["actual"] == f"md5-tree-v2:{provenance.for_run()['hash']}"
    assert hits[0]["path"].endswith(".mlps-code-image") and hits[0]["severity"] == "error"


def test_a_run_that_recorded_no_code_is_refused(run_cli, sub, tmp_path):
    src = _v3_run(tmp_path, None)
    code, out, err = run_cli("submission", "add", sub, src, "--system", "box1")
    assert code == 1 and "provenance.json: expected the record of the code that ran" in err
    assert not (sub / "open/ACME/results/box1/training").exists()


def test_a_run_keeping_a_modified_pointer_without_its_image_is_refused(run_cli, sub, tmp_path, modified):
    """Our run's own pointer and record agree (the modified code ran) but no image of that code is at hand."""
    src = _v3_run(tmp_path, modified)
    for run in src.glob("run-*"):
        (run / ".mlps-code-image").write_text(f"md5-tree-v2:{modified['hash']}\n")
    code, out, err = run_cli("submission", "add", sub, src, "--system", "box1")
    assert code == 1 and ".mlps-code-image: image: expected the image of the code that ran" in err


def test_a_leaf_whose_record_was_changed_after_add_is_found(run_cli, sub, tmp_path):
    """A genuine add, then the leaf's provenance.json rewritten: the record and the pointer differ."""
    src = _v3_run(tmp_path, {"schema_version": 1, **provenance.for_run()})
    assert run_cli("submission", "add", sub, src, "--system", "box1")[0] == 0
    leaf = _leaves(sub)[1]
    doc = json.loads((leaf / "provenance.json").read_text())
    doc["hash"] = "0" * 32
    (leaf / "provenance.json").write_text(json.dumps(doc))
    code, hits = _tree_findings(run_cli, sub, "TREE-04-codeThatRan")
    assert code == 1 and len(hits) == 1 and leaf.name in hits[0]["path"]


def test_v1_add_refuses_a_run_by_other_code(run_cli, tmp_path, closed_results, modified):
    """The v1.0 layout ships the installed package at `package` time: a real closed run whose record says
    other code ran is refused at add (exit 1), and added when told."""
    root = tmp_path / "sub"
    assert run_cli("submission", "init", root, "--org", "ACME", "--division", "closed", "--system", "box1")[0] == 0
    src = tmp_path / "res"
    shutil.copytree(closed_results, src)
    assert all((r / "provenance.json").is_file() for r in src.glob("run-*"))      # a real run records its code
    (src / "run-3" / "provenance.json").write_text(json.dumps(modified))
    code, out, err = run_cli("submission", "add", root, src, "--system", "box1")
    assert code == 1 and "run-3/provenance.json: hash: expected" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli("submission", "add", root, src, "--system", "box1", "--allow-code-mismatch")
    assert code == 0, err


@pytest.mark.parametrize("result, kind", [(paths.DATA / "tpcxai-sf0.01", "tpcx-ai"),
                                          (paths.DATA / "v3" / "vector_database_TTA", "vector_database")])
def test_history_never_records_an_accelerator_type_for_a_kind_without_one(tmp_path, result, kind):
    """Whatever the caller knew (a run's --accelerator-type default h100, an import's guess), an entry of a
    kind that runs on no accelerators carries none: entries_for is how a run and an import record."""
    from suite.history import record

    entries = record.entries_for(result, {"source": "import", "status": "ok", "verdict": "compliant",
                                         "accelerator": "h100", "accelerators": 8})
    assert entries and {e.kind for e in entries} == {kind}
    assert {(e.accelerator, e.accelerators) for e in entries} == {(None, None)}
