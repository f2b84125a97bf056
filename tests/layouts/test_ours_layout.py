"""Our own `suite run` results dirs as a layout plugin (suite/layouts/ours/layout.py, issue 44 item 1): it
claims a folder holding several kinds' results below it and none of its own, with the weakest claim a
layout has (WITHIN), so every path a kind claims stays that kind's, a folder of one kind's results stays
that kind's, and nothing inside a published tree is its; its results dirs are parted among their kinds
exactly as without it (no check of its own), whatever the order of registration."""

import argparse
import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import paths
from check_builders import ours_results, submission
from suite import cli
from suite.benchmark import Claim
from suite.errors import ExitCode, SuiteError
from suite.kinds import dispatch, registry
from suite.layouts import marks
from suite.layouts.ours import layout as ours

DATA = paths.DATA
V3 = DATA / "v3"
KV_LEAF = (V3 / "kv_cache_FarmGPU" / "open/FarmGPU/results/potato8-qlc-np6-open-tnf-70b/kv_cache/"
           "llama3.1-70b-instruct/run/20260709_215001")


@pytest.fixture
def mixed(tmp_path) -> Path:
    """A results dir of several kinds: our training runs, a checkpointing write+read pair, a TPCx-AI run
    and a kv_cache leaf, each in a folder of its own; and one folder holding two kinds."""
    root = tmp_path / "R"
    shutil.copytree(DATA / "suite-run" / "unet3d-h100", root / "train" / "unet3d-h100")
    shutil.copytree(DATA / "checkpoint" / "llama3-8b-miniature", root / "pair")
    (root / "tpcx").mkdir()
    shutil.copy(DATA / "tpcxai-sf0.01" / "tpcxai-result.json", root / "tpcx" / "tpcxai-result.json")
    shutil.copytree(KV_LEAF, root / "kv" / "20260709_215001")
    ours_results(root / "both" / "unet3d")
    shutil.copytree(KV_LEAF, root / "both" / "kv-leaf")
    return root


def _dirs(root: Path) -> list[Path]:
    out = []
    for d, dirs, _ in os.walk(root):
        dirs.sort()
        out.append(Path(d))
    return out


def _plain(split: dispatch.Parts) -> tuple:
    return ([(p.kind.name, str(p.path), p.exclude) for p in split.parts], split.single,
            [(str(f), why) for f, why in split.unclassified])


def _layout():
    return registry.owner(ours.NAME)


def test_it_is_registered_and_claims_a_mixed_results_dir_and_the_folders_above_two_kinds(mixed):
    assert registry.is_layout(_layout()) and _layout().check is None
    assert registry.for_result(mixed / "both").name == ours.NAME
    # a kind's own claim outranks it: checkpointing claims any folder above one of its phases
    assert ours.claims(mixed) == Claim.WITHIN and registry.for_result(mixed).name == "checkpointing"
    assert ours.claims(mixed / "pair") == Claim.NONE and registry.for_result(mixed / "pair").name == "checkpointing"
    shutil.rmtree(mixed / "pair")
    assert registry.for_result(mixed).name == ours.NAME
    # a folder of one kind's results is that kind's, as its own results dir (the catch-all's too)
    assert registry.for_result(mixed / "train").name == "training"
    assert registry.for_result(mixed / "train" / "unet3d-h100").name == "training"
    assert registry.for_result(mixed / "both" / "unet3d").name == "training"
    assert registry.for_result(mixed / "tpcx").name == "tpcx-ai"
    assert registry.for_result(mixed / "kv" / "20260709_215001").name == "kv_cache"
    # a kv_cache leaf's summary.json is run output, not a second kind; a checkpointing pair's runs are its
    for one_kind in (mixed / "kv", mixed / "train"):
        assert ours.claims(one_kind) == Claim.NONE, one_kind
    # a result (a kind's result files in it) is never the layout's
    for d in _dirs(mixed):
        if marks.any_kind(set(os.listdir(d))):
            assert ours.claims(d) == Claim.NONE, d
    (mixed / "file").write_text("x")
    assert ours.claims(mixed / "file") == Claim.NONE


def test_every_owner_but_its_own_folders_is_as_without_it(mixed):
    """A path it does not claim has the owner it has with the layout set aside; a path it claims is parted,
    for every command, as that owner parts it without the layout."""
    layout = _layout()
    args = argparse.Namespace(format="json", ruleset="auto")
    for d in _dirs(mixed):
        mine = ours.claims(d) == Claim.WITHIN
        got = (registry.for_result(d).name, _plain(dispatch.parts(d)), _plain(dispatch.parts(d, args)))
        with registry.aside(layout):
            before = (registry.for_result(d).name, _plain(dispatch.parts(d)), _plain(dispatch.parts(d, args)))
        assert got[1:] == before[1:], d
        assert got[0] == before[0] or (mine and got[0] == ours.NAME), d


def test_a_mixed_results_dir_is_checked_as_without_it(mixed, capsys):
    outs = []
    for aside in (False, True):
        with registry.aside(_layout()) if aside else contextlib.nullcontext():
            for command in ("check", "metrics"):
                code = cli.main([command, str(mixed), "--format", "json"])
                captured = capsys.readouterr()
                outs.append((command, code, captured.out, captured.err))
    assert outs[:2] == outs[2:]
    doc = json.loads(outs[0][2])
    assert {r["kind"] for r in doc["results"]} >= {"training", "checkpointing", "tpcx-ai", "kv_cache"}


def test_the_order_of_registration_changes_nothing(mixed, monkeypatch):
    def seen():
        return [(str(d), registry.for_result(d).name, _plain(dispatch.parts(d))) for d in _dirs(mixed)]

    before = seen()
    monkeypatch.setattr(registry, "KINDS", list(reversed(registry.KINDS)))
    monkeypatch.setattr(registry, "LAYOUTS", list(reversed(registry.LAYOUTS)))
    assert seen() == before
    monkeypatch.setattr(registry, "LAYOUTS", [_layout()] + [x for x in registry.LAYOUTS if x is not _layout()])
    assert seen() == before


@pytest.mark.parametrize("tree", ["tree", "kv_cache_FarmGPU", "vector_database_TTA", "checkpointing_alluxio"])
def test_nothing_in_a_published_tree_is_its(tree):
    for d in _dirs(V3 / tree):
        assert ours.claims(d) == Claim.NONE, d


def test_nothing_in_a_tree_of_benchmark_dirs_is_its(tmp_path):
    root = submission(tmp_path / "tree")
    shutil.copytree(KV_LEAF, root / "closed" / "Org" / "results" / "sys1" / "kv-leaf")
    for d in _dirs(root):
        assert ours.claims(d) == Claim.NONE, d


NAMES = st.sampled_from(["run-1", "run-2", "results.json", "summary.json", "run_set.json", "tpcxai-result.json",
                         "checkpoint_run_set.json", "option_1", "code", "x", "training", "kv_cache",
                         "vector_database_a_metadata.json", "closed"])
SHAPES = st.recursive(st.dictionaries(NAMES, st.sampled_from(["", "{}", "{\"kind\": \"tpcx-ai\"}", "[1", "\x00"]),
                                      max_size=3),
                      lambda kids: st.dictionaries(NAMES, kids, max_size=3), max_leaves=10)


def _write(d: Path, shape) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for name, sub in shape.items():
        if isinstance(sub, dict):
            _write(d / name, sub)
        else:
            (d / name).write_text(sub)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.dictionaries(NAMES, SHAPES, max_size=4))
def test_any_folder_shape_is_claimed_or_not_and_never_raises_past_one_line(shape, capsys):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "R"
        _write(root, shape)
        for d in _dirs(root):
            assert ours.claims(d) in (Claim.NONE, Claim.WITHIN)
        try:
            owner = registry.for_result(root)
        except SuiteError as exc:
            assert "\n" not in str(exc)
        else:
            assert owner is not None
        code = cli.main(["check", str(root), "--format", "json"])
        err = capsys.readouterr().err
        assert code in (ExitCode.OK, ExitCode.FAILED, ExitCode.BAD_INPUT)
        assert "Traceback" not in err and (code != ExitCode.BAD_INPUT or err.strip().count("\n") == 0)


def test_a_folder_too_long_to_tell_is_never_its(mixed):
    """A listing past its bound could hide a result file of the folder's own: the layout claims nothing."""
    shutil.rmtree(mixed / "pair")
    assert ours.claims(mixed) == Claim.WITHIN
    for n in range(ours.MAX_NAMES):
        (mixed / f"f{n:03d}.txt").write_text("")
    assert ours.claims(mixed) == Claim.NONE and registry.for_result(mixed).name == "training"


@pytest.mark.parametrize("first", [True, False])
def test_two_catch_alls_marking_one_run_are_a_one_line_error_whatever_their_order(tmp_path, first):
    """A run folder marked only by catch-alls' files (training's summary.json) went to the first one
    registered; with a second catch-all that marks it too, the walk refuses it alike in either order
    (two equal claims: one line, exit 2), and training takes it again once the rival is gone."""
    from suite.benchmark import Checked, Kind
    from suite.errors import ResultError

    run = tmp_path / "R" / "run-1"
    shutil.copytree(paths.DATA / "suite-run" / "unet3d-h100" / "run-1", run)
    rival = Kind(name="rival-catch-all", run=lambda args: 0, result_files=("summary.json",),
                 recognises=lambda p: Claim.ANY if Path(p).is_dir() else Claim.NONE,
                 check=lambda p, a: Checked("", "", ExitCode.OK, "closed"), metrics=lambda p, f: 0,
                 report_page=lambda p, a: None)
    if first:
        registry.KINDS.insert(0, rival)
    else:
        registry.register(rival)
    try:
        with pytest.raises(ResultError, match="claim it alike"):
            registry.results_under(tmp_path / "R")
    finally:
        registry.unregister("rival-catch-all")
    assert registry.results_under(tmp_path / "R").by_kind["training"] == [run.resolve()]
