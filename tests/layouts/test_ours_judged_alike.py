"""One result, one judgement, for our own runs (issue 44): a real `suite run` v3.0 training series, a
real checkpointing write+read pair, a kv_cache run and a vector-database run get the same verdict and
the same kind-level rule ids where they were written, copied alone into another results dir, and inside
an (open) pooled v3.0 tree made by `suite submission init`; the tree adds only its own findings (its system description, its code pool). These
miniatures are INVALID, so `submission add` refuses them (no invalid result enters a tree): they are
copied to where add puts leaves, results/<system>/<benchmark>/<model>/."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest

from suite import cli
from tests.layouts.test_one_judgement import LAYOUT_IDS, judged
from tests.ours3_builders import series


_MADE: dict[str, Path] = {}


def _make(bench: str, base: Path, request) -> Path:
    """Our own v3.0 result of one kind, made once per session: a retinanet series (R/training/...) and the
    session's `tiny_diskann` run (tests/conftest.py: a real DiskANN run of vdb-tiny, which tests/kinds,
    tests/history and tests/hostile read too; its workload is registered while a test judges it:
    `registered`; checkpointing and kv_cache: `_voiced`)."""
    if bench == "training":
        return series(base / "R")
    root = request.getfixturevalue("tiny_diskann") / "R"
    assert (root / "vector_database").is_dir()
    return root                                     # where it was written; the tests only read it or copy it


@contextlib.contextmanager
def registered(bench: str, request):
    """vector_database: the session run's workload (vdb-tiny, a test's) registered while the context holds."""
    if bench != "vector_database":
        yield
        return
    from tests.vector_database.conftest import tiny_workload

    with tiny_workload(request.getfixturevalue("tiny_diskann")):
        yield


VOICED = ("checkpointing", "kv_cache")     # the same miniatures as the session's `voiced` runs (tests/conftest.py)


def _voiced(voiced: dict, bench: str, base: Path) -> Path:
    """A copy of the session's own run of that kind (tests/test_one_voice.py: the llama3-8b miniature of
    8 ranks, a kv-cache run of option 1, one trial), made once for every test file that needs one."""
    got = voiced[bench]
    if isinstance(got, BaseException):
        raise got                                   # its skip, said once for the session
    results = Path(shutil.copytree(got[2], base / "R", symlinks=True))
    assert (results / bench).is_dir(), got[1][-2000:]
    return results


@pytest.fixture(scope="module")
def ours(tmp_path_factory, request):
    """ours(bench): the result of that kind, made (or copied from the session's) on first use."""
    def get(bench: str) -> Path:
        if bench not in _MADE:
            base = tmp_path_factory.mktemp(bench)
            _MADE[bench] = (_voiced(request.getfixturevalue("voiced"), bench, base) if bench in VOICED
                            else _make(bench, base, request))
        return _MADE[bench]
    return get


def _place(results: Path, sub: Path, bench: str) -> None:
    """The leaves of our results dir where `submission add` puts them: results/<system>/<benchmark>/<model>/."""
    for model in (results / bench).iterdir():
        shutil.copytree(model, sub / "open/ACME/results/box1" / bench / model.name)


def test_submission_add_refuses_our_invalid_results_of_either_kind(ours, tmp_path, capsys):
    """An INVALID miniature enters no tree: training and checkpointing alike (issue 46, class 10), graded by
    their own kind's check as the tree's check grades them; one line, the tree unchanged."""
    for division in ("open", "closed"):
        sub = tmp_path / division
        assert cli.main(["submission", "init", str(sub), "--org", "ACME", "--division", division, "--system",
                         "box1", "--ruleset", "v3.0", "--data-dir", str(tmp_path)]) == 0
        for bench in ("training", "checkpointing"):
            capsys.readouterr()
            assert cli.main(["submission", "add", str(sub), str(ours(bench)), "--system", "box1"]) == 2
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and bench in err, err
            assert "INVALID" in err or "results.json: " in err, err      # its kind's check, or its run's record
        assert not any((sub / division / "ACME/results").rglob("*"))


@pytest.mark.parametrize("bench", ["training", "checkpointing", "kv_cache", "vector_database"])
def test_our_results_are_judged_alike_in_their_results_dir_alone_and_in_a_pooled_tree(ours, bench, tmp_path,
                                                                                      capsys, request):
    with registered(bench, request):
        where_written = judged(ours(bench), capsys)
        copy = tmp_path / "copy"
        shutil.copytree(ours(bench), copy)
        alone = judged(copy, capsys)
        sub = tmp_path / "sub"
        assert cli.main(["submission", "init", str(sub), "--org", "ACME", "--division", "open", "--system", "box1",
                         "--ruleset", "v3.0", "--data-dir", str(tmp_path)]) == 0
        _place(ours(bench), sub, bench)
        in_tree = judged(sub / "open/ACME/results/box1" / bench, capsys)
    assert where_written[2], "our miniature results have kind-level findings to compare"
    assert alone == where_written
    assert (in_tree[0], in_tree[2]) == (where_written[0], where_written[2])


def test_a_pooled_tree_adds_only_its_own_rules_to_our_results(ours, tmp_path, capsys):
    sub = tmp_path / "sub"
    assert cli.main(["submission", "init", str(sub), "--org", "ACME", "--division", "open", "--system", "box1",
                     "--ruleset", "v3.0", "--data-dir", str(tmp_path)]) == 0
    _place(ours("training"), sub, "training")
    capsys.readouterr()
    cli.main(["check", str(sub), "--format", "json"])
    import json

    doc = json.loads(capsys.readouterr().out)
    tree_ids = {f["rule_id"] for f in doc["findings"]}
    assert tree_ids and all(i.startswith(LAYOUT_IDS) for i in tree_ids), tree_ids
    handed = [d for d in doc["delegated"] if d["kind"] == "training"]
    assert len(handed) == 1 and handed[0]["findings"]
    row = next(r for r in doc["benchmarks"] if r["benchmark"] == "training")
    assert row["verdict"] == handed[0]["verdict"] == "invalid"          # a miniature: never compliant


def test_our_checkpointing_pair_is_held_to_the_judges_rule_ids(ours, tmp_path, capsys):
    """Wherever it sits, our pair's kind-level findings carry the checkpointing judge's ids (one rule per
    Rules.md clause, rules/v3.0/checkpointing-leaves.yaml) or those of what only our runs record, never an id
    that held a clause for our pairs before (tests/rules/test_one_rule_per_clause.py)."""
    from suite.check import hostcpu
    from suite.checkpointing.reference import judge
    from tests.rules.test_one_rule_per_clause import (CHECKPOINTING, CHECKPOINTING_EVIDENCE,
                                                      CHECKPOINTING_OURS_ONLY)

    theirs = {r.id for r in judge.rules("v3.0").rules}
    ours_only = set(CHECKPOINTING_EVIDENCE) | CHECKPOINTING_OURS_ONLY | set(hostcpu.RULES)   # + the hosts' CPUs
    before = set().union(*(b for _, b in CHECKPOINTING.values()))
    sub = tmp_path / "sub"
    assert cli.main(["submission", "init", str(sub), "--org", "ACME", "--division", "open", "--system", "box1",
                     "--ruleset", "v3.0", "--data-dir", str(tmp_path)]) == 0
    _place(ours("checkpointing"), sub, "checkpointing")
    for where in (ours("checkpointing"), sub / "open/ACME/results/box1/checkpointing"):
        verdict, code, ids = judged(where, capsys)
        assert (verdict, code) == ("invalid", 1)
        assert "4.4.2-checkpointFilesystemCheck" in ids            # made with its checkpoints on the results' fs
        assert ids <= theirs | ours_only and not ids & before, ids
