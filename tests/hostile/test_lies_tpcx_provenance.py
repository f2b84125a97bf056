"""Results that lie, round three, class 9 (issue 46) for TPCx-AI: the code that ran.

TPCx-AI runs recorded no provenance: a result made by a modified checkout looked like any other. Now
`suite run --workload tpcx-ai` records the code that ran as the storage kinds' runs do
(suite.harness.provenance: `.mlps-code-image` and `provenance.json` beside tpcxai-result.json, which
names the same code in `code_image`), and `suite check` finds a run whose record of the code that ran
differs from the code its pointer or result names (tpcxai-code-that-ran, effect invalid).

The run is real: the driver over the toy use cases (tests/tpcx_ai/tpcx_toy.py, use cases 2 and 3, SF
0.01), through `suite run`'s own TPCx-AI path. The "modified checkout" is real too: the installed
package's code files copied, one line changed, hashed as a run by it records itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from suite.harness import provenance

RULE = "tpcxai-code-that-ran"


@pytest.fixture
def toy_run(tpcx_toy_run) -> Path:
    """The session's real `suite run --workload tpcx-ai` of two toy use cases (tests/hostile/conftest.py
    `tpcx_toy_run`, shared with test_writes_corpus); tests copy it (`_copy`)."""
    return tpcx_toy_run


def _copy(toy_run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "r"
    shutil.copytree(toy_run, dst, ignore=shutil.ignore_patterns("data"))
    return dst


def _code_findings(run_cli, run_dir: Path) -> tuple[int, list[dict]]:
    code, out, err = run_cli("check", run_dir, "--format", "json")
    assert code in (0, 1), err
    return code, [f for f in json.loads(out)["findings"] if f["rule_id"] == RULE]


def test_a_tpcx_ai_run_records_the_code_that_ran(toy_run, run_cli):
    """The pointer, the record and the result name one code: the code this package is (the run's)."""
    ran = provenance.pointer(provenance.for_run())
    assert (toy_run / provenance.POINTER_FILE).read_text() == ran + "\n"
    record = json.loads((toy_run / provenance.RECORD_FILE).read_text())
    assert record["hash"] == provenance.for_run()["hash"] and record["algorithm"] == "md5-tree-v2"
    assert json.loads((toy_run / "tpcxai-result.json").read_text())["code_image"] == ran
    assert _code_findings(run_cli, toy_run)[1] == []


def test_a_record_of_other_code_than_the_pointer_names_is_found(toy_run, run_cli, tmp_path, modified):
    """A run made by a modified checkout whose pointer and result were set to the clean code's image."""
    run = _copy(toy_run, tmp_path)
    (run / provenance.RECORD_FILE).write_text(json.dumps(modified))
    code, hits = _code_findings(run_cli, run)
    assert code == 1 and len(hits) == 2, hits
    want = f"md5-tree-v2:{modified['hash']} (provenance.json)"
    assert {h["expected"] for h in hits} == {want}
    assert {h["actual"] for h in hits} == {provenance.pointer(provenance.for_run())}
    assert any(h["path"].endswith(".mlps-code-image") for h in hits)
    assert all(h["severity"] == "error" and h["effect"] == "invalid" for h in hits)


def test_a_pointer_moved_to_other_code_is_found(toy_run, run_cli, tmp_path, modified):
    run = _copy(toy_run, tmp_path)
    (run / provenance.POINTER_FILE).write_text(f"md5-tree-v2:{modified['hash']}\n")
    code, hits = _code_findings(run_cli, run)
    assert code == 1 and [h["actual"] for h in hits] == [f"md5-tree-v2:{modified['hash']}"]


def test_a_deleted_record_is_found_where_the_result_names_its_code(toy_run, run_cli, tmp_path):
    run = _copy(toy_run, tmp_path)
    (run / provenance.RECORD_FILE).unlink()
    (run / provenance.POINTER_FILE).unlink()
    code, hits = _code_findings(run_cli, run)
    assert code == 1 and len(hits) == 1 and hits[0]["path"].endswith("provenance.json")
    assert hits[0]["actual"] == "none"


def test_a_malformed_record_is_a_finding_not_a_traceback(toy_run, run_cli, tmp_path):
    run = _copy(toy_run, tmp_path)
    (run / provenance.RECORD_FILE).write_text('{"hash": "not hex"}')
    code, hits = _code_findings(run_cli, run)
    assert code == 1 and len(hits) == 1 and "provenance.json" in hits[0]["actual"]
