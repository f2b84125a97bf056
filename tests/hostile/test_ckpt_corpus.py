"""Hostile corpus (issue 24) of the "ckpt" classes, on real results made by the suite then edited:

- class 1, checkpointing: a real llama3-8b miniature write+read pair (tests/data/checkpoint/, made by
  `suite run --workload llama3-8b`) whose run set, runs, summaries or rank records are edited, alone
  or with everything above them rewritten to agree (only the lowest level still tells);
- class 3: the same pair moved, its parent renamed, copied elsewhere, in the layout of results
  written before ids (absolute written_by.results_dir): it checks the same as the original;
- class 4: a tree holding storage, checkpointing and TPCx-AI results (a real SF 0.01 run's
  tpcxai-result.json) with one of them broken, or a result no kind takes;
- class 1, sweeps: the real find-max sweep (tests/data/sweep/) with a summary claim its points
  contradict: `suite sizing --from` refuses it (one line, exit 2), the report shows the finding.
"""

import json
import shutil
from pathlib import Path

import pytest

import paths
from check_builders import ours_results
from suite.checkpointing import results as ck_results

PAIR = paths.DATA / "checkpoint" / "llama3-8b-miniature"
TPCX = paths.DATA / "tpcxai-sf0.01" / "tpcxai-result.json"
SWEEP = paths.DATA / "sweep" / "resnet50-h100-tiny"


# --------------------------------------------------------------------------- helpers


def jedit(path: Path, fn) -> None:
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def pair(tmp: Path, name="ck") -> Path:
    root = tmp / name
    shutil.copytree(PAIR, root)
    return root


def rewrite_run(run_dir: Path) -> None:
    """A consistent forgery: results.json, summary.json, per_epoch_stats.json recomputed from the (edited) ranks."""
    doc = json.loads((run_dir / "results.json").read_text())
    ck_results.write_run(run_dir, doc, ck_results.load_ranks(run_dir, doc["processes"]))


def rewrite_set(phase: Path) -> None:
    """checkpoint_run_set.json recomputed from the runs' results.json (as the runner writes it)."""
    rs = json.loads((phase / "checkpoint_run_set.json").read_text())
    head = {k: v for k, v in rs.items() if k not in ("schema_version", "kind", "runs_requested", "command", "runs",
                                                    "overall")}
    done = [json.loads((phase / f"run-{k}" / "results.json").read_text()) for k in range(1, rs["runs_requested"] + 1)]
    ck_results.write_run_set(phase, head, done, rs["runs_requested"], rs["command"])


def edit_ranks(phase: str, fn, run=1, rank=0, chain=True):
    """Edit one rank's records; with `chain`, everything above rewritten to agree with them."""
    def edit(root):
        p = root / phase / f"run-{run}" / "ranks" / f"rank-{rank}.json"
        jedit(p, fn)
        if chain:
            rewrite_run(p.parent.parent)
            rewrite_set(root / phase)
    return edit


def edit_result(phase: str, fn, run=1, name="results.json", chain=False):
    def edit(root):
        jedit(root / phase / f"run-{run}" / name, fn)
        if chain:
            rewrite_set(root / phase)
    return edit


def edit_set(phase: str, fn):
    def edit(root):
        jedit(root / phase / "checkpoint_run_set.json", fn)
    return edit


def check_json(run_cli, path) -> tuple[int, dict]:
    code, out, err = run_cli("check", path, "--format", "json")
    assert code in (0, 1) and "Traceback" not in err, err
    return code, json.loads(out)


def all_findings(doc: dict) -> list[dict]:
    if doc.get("kind") == "tree":
        return [f for r in doc["results"] for f in all_findings(r["check"])]
    return doc["findings"] + [f for b in doc.get("benchmarks", []) for f in b["findings"]]


# --------------------------------------------------------------------------- class 1: checkpointing

def _scale(key, factor):
    return lambda d: d["overall"].update({key: d["overall"][key] * factor})


def _shift(c, dt):
    c["start_unix_s"] += dt
    c["end_unix_s"] += dt


CKPT_FORGERIES = {
    # the published figures (checkpoint_run_set.json overall) against the runs
    "overall-write-throughput-x2": (edit_set("W", _scale("write_throughput_mean_gib_s", 2)), "checkpoint-run-set-recomputed"),
    "overall-read-throughput-x10": (edit_set("R", _scale("read_throughput_mean_gib_s", 10)), "checkpoint-run-set-recomputed"),
    "overall-read-duration-halved": (edit_set("R", _scale("read_duration_mean_s", 0.5)), "checkpoint-run-set-recomputed"),
    "overall-stdev-zeroed": (edit_set("W", lambda d: d["overall"].update(write_throughput_stdev_over_runs_gib_s=0.0)),
                             "checkpoint-run-set-recomputed"),
    "overall-extra-figure": (edit_set("W", lambda d: d["overall"].update(read_throughput_mean_gib_s=99.0)),
                             "checkpoint-run-set-recomputed"),
    "runs-entry-throughput": (edit_set("R", lambda d: d["runs"][2].update(
        read_throughput_mean_gib_s=d["runs"][2]["read_throughput_mean_gib_s"] * 3)), "checkpoint-run-set-recomputed"),
    "runs-entry-status-failed": (edit_set("W", lambda d: d["runs"][0].update(status="failed")),
                                 "checkpoint-run-set-recomputed"),
    "runs-entry-dropped": (edit_set("W", lambda d: d["runs"].pop(4)), "checkpoint-run-set-recomputed"),
    "runs-entry-duplicated": (edit_set("R", lambda d: d["runs"].__setitem__(1, dict(d["runs"][0]))),
                              "checkpoint-run-set-recomputed"),
    # a run's results.json against its ranks (alone, or with the run set rewritten to agree)
    "run-metric-throughput-x2": (edit_result("W", lambda d: d["metric"]["write"].update(
        throughput_mean_gib_s=d["metric"]["write"]["throughput_mean_gib_s"] * 2)), "checkpoint-figures-recomputed"),
    "run-metric-and-set-agree": (edit_result("R", lambda d: d["metric"]["read"].update(
        throughput_mean_gib_s=d["metric"]["read"]["throughput_mean_gib_s"] * 2), run=3, chain=True),
        "checkpoint-figures-recomputed"),
    "run-checkpoint-duration": (edit_result("W", lambda d: d["checkpoints"][4].update(duration_s=1e-4), run=2),
                                "checkpoint-figures-recomputed"),
    "run-checkpoint-bytes": (edit_result("R", lambda d: d.update(checkpoint_bytes=d["checkpoint_bytes"] * 8)),
                             "checkpoint-figures-recomputed"),
    "run-per-rank-bandwidth": (edit_result("W", lambda d: d["ranks"][3].update(write_gib_s=123.0), run=4),
                               "checkpoint-figures-recomputed"),
    "summary-save-throughput": (edit_result("W", lambda d: d["metric"].update(
        save_checkpoint_io_mean_GB_per_second=d["metric"]["save_checkpoint_io_mean_GB_per_second"] * 4),
        name="summary.json"), "checkpoint-figures-recomputed"),
    "summary-load-duration": (edit_result("R", lambda d: d["metric"].update(load_checkpoint_duration_mean_seconds=1e-3),
                                          run=5, name="summary.json"), "checkpoint-figures-recomputed"),
    # a rank's records edited and everything above rewritten to agree: only the rank itself tells
    "rank-duration-shrunk-chain": (edit_ranks("W", lambda d: [c.update(duration_s=c["duration_s"] / 10)
                                                              for c in d["checkpoints"]]), "checkpoint-rank-records"),
    "rank-bytes-doubled-chain": (edit_ranks("R", lambda d: [c.update(bytes=c["bytes"] * 2) for c in d["checkpoints"]],
                                            run=2, rank=5), "checkpoint-rank-records"),
    "rank-outside-run-window-chain": (edit_ranks("W", lambda d: [_shift(c, -3600) for c in d["checkpoints"]], run=3),
                                      "checkpoint-rank-records"),
    "rank-negative-duration-chain": (edit_ranks("R", lambda d: d["checkpoints"][0].update(
        duration_s=-d["checkpoints"][0]["duration_s"]), run=4, rank=1, chain=False), "checkpoint-rank-records"),
    "rank-phase-relabelled": (edit_ranks("R", lambda d: [c.update(phase="write") for c in d["checkpoints"]],
                                         chain=False), "checkpoint-rank-records"),
    "rank-record-dropped": (edit_ranks("W", lambda d: d["checkpoints"].pop(), rank=7, chain=False),
                            "checkpoint-rank-records"),
    "rank-renumbered": (edit_ranks("W", lambda d: d.update(rank=3), rank=2, chain=False), "checkpoint-rank-records"),
    "rank-checkpoints-overlap-chain": (edit_ranks("R", lambda d: [_shift(c, -(c["start_unix_s"] - d["checkpoints"][0][
        "start_unix_s"]) * 0.99) for c in d["checkpoints"]], run=2, rank=4), "checkpoint-rank-records"),
    # the run set's and the runs' own descriptions against what sits below them
    "set-processes-relabelled": (edit_set("W", lambda d: d.update(processes=64)), "checkpoint-run-set-recomputed"),
    "set-mode-relabelled": (edit_set("R", lambda d: d.update(mode="subset")), "checkpoint-run-set-recomputed"),
    "set-miniature-hidden": (edit_set("W", lambda d: d.update(miniature=False)), "checkpoint-run-set-recomputed"),
    "run-processes-per-host": (edit_result("W", lambda d: d.update(processes_per_host={"a": 4, "b": 4}), run=3),
                               "checkpoint-figures-recomputed"),
    "run-processes-per-host-one-host": (edit_result("R", lambda d: d.update(processes_per_host={"vm": 4, "b": 4}),
                                                    run=2), "checkpoint-figures-recomputed"),
    "epoch-stats-throughput": (edit_result("W", lambda d: d["1"]["save_ckpt3"].update(throughput=50.0), run=5,
                                           name="per_epoch_stats.json"), "checkpoint-figures-recomputed"),
    "miniature-hidden-everywhere": (lambda root: [edit_set(ph, lambda d: d.update(miniature=False))(root) or
                                                  [edit_result(ph, lambda d: d.update(miniature=False), run=k)(root)
                                                   for k in range(1, 6)] for ph in ("W", "R")],
                                    "checkpoint-rank-records"),
}


@pytest.mark.parametrize("case", sorted(CKPT_FORGERIES))
def test_checkpoint_forgery_is_invalid_with_both_numbers(run_cli, tmp_path, case):
    forge, rule = CKPT_FORGERIES[case]
    root = pair(tmp_path)
    forge(root)
    code, doc = check_json(run_cli, root)
    hits = [f for f in all_findings(doc) if f["rule_id"] == rule]
    assert code == 1 and doc["verdict"] == "invalid" and hits, (case, [f["message"] for f in all_findings(doc)])
    assert all(f["expected"] is not None or f["actual"] is not None for f in hits)
    assert all(f["effect"] == "invalid" and f["path"] and f["field"] for f in hits)


def test_rank_file_removed_is_a_finding_not_a_traceback(run_cli, tmp_path):
    root = pair(tmp_path)
    (root / "R" / "run-2" / "ranks" / "rank-6.json").unlink()
    code, doc = check_json(run_cli, root)
    assert code == 1 and any(f["rule_id"] == "checkpoint-rank-records" for f in all_findings(doc))
    r = next(b for b in doc["benchmarks"] if b["path"].endswith("R"))
    assert {"figure": "run-2/results.json:checkpoints", "from": "ranks/rank-<r>.json", "status": "not-rederivable",
            "claimed": 10, "derived": None} in r["rederived"]


def test_the_real_pair_states_what_it_rederived(run_cli, tmp_path):
    code, doc = check_json(run_cli, pair(tmp_path))
    assert code == 1 and not doc["compliant"] and doc["miniature"]     # the pair is a miniature: never compliant
    for b in doc["benchmarks"]:
        st = b["rederived"]
        assert st and {s["status"] for s in st} == {"rederived"}
        assert set(st[0]) == {"figure", "from", "status", "claimed", "derived"}
        assert any("overall." in s["figure"] for s in st) and any("ranks" in s["from"] for s in st)


def test_a_forged_figure_is_a_mismatch_in_the_statement(run_cli, tmp_path):
    root = pair(tmp_path)
    edit_set("W", _scale("write_throughput_mean_gib_s", 2))(root)
    code, doc = check_json(run_cli, root)
    w = next(b for b in doc["benchmarks"] if b["path"].endswith("W"))
    bad = [s for s in w["rederived"] if s["status"] == "mismatch"]
    assert len(bad) == 1 and bad[0]["claimed"] == pytest.approx(2 * bad[0]["derived"])


# --------------------------------------------------------------------------- class 3: where the files sit


def _legacy(root: Path) -> None:
    """The layout of results written before ids: no phase_id, written_by.results_dir absolute, no write_id."""
    rs = root / "W" / "checkpoint_run_set.json"
    jedit(rs, lambda d: d.pop("phase_id", None))
    for k in range(1, 6):
        jedit(root / "R" / f"run-{k}" / "results.json",
              lambda d: (d["written_by"].pop("write_id", None),
                         d["written_by"].update(results_dir=str((root / "W").resolve()))))


def _moved(tmp: Path, root: Path, how: str) -> Path:
    if how == "parent-renamed":
        return root.rename(root.with_name("renamed-parent"))
    if how == "copied-elsewhere":
        dest = tmp / "reviewer" / "deep" / "copy"
        shutil.copytree(root, dest)
        shutil.rmtree(root)
        return dest
    if how == "phases-renamed":
        (root / "W").rename(root / "write-phase")
        (root / "R").rename(root / "read-phase")
        return root
    if how == "nested-deeper":
        dest = root / "a" / "b" / "c" / "d"
        dest.mkdir(parents=True)
        for name in ("W", "R"):
            (root / name).rename(dest / name)
        return root
    raise AssertionError(how)


@pytest.fixture(scope="module")
def unmoved(tmp_path_factory) -> dict:
    """{legacy: (exit code, check JSON)} of the pair where it was made, in each layout: checked once a module
    (per worker) instead of once per way of moving it; each case moves a copy of its own."""
    import contextlib
    import io

    from suite import cli

    checked = {}
    for legacy in (False, True):
        root = pair(tmp_path_factory.mktemp("unmoved"))
        if legacy:
            _legacy(root)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["check", str(root), "--format", "json"])
        assert code in (0, 1) and "Traceback" not in err.getvalue(), err.getvalue()
        checked[legacy] = (code, json.loads(out.getvalue()))
    return checked


@pytest.mark.parametrize("legacy", [False, True], ids=["ids", "legacy-absolute"])
@pytest.mark.parametrize("how", ["parent-renamed", "copied-elsewhere", "phases-renamed", "nested-deeper"])
def test_a_moved_pair_checks_the_same(run_cli, tmp_path, unmoved, how, legacy):
    root = pair(tmp_path)
    if legacy:
        _legacy(root)
    code0, doc0 = unmoved[legacy]
    moved = _moved(tmp_path, root, how)
    code, doc = check_json(run_cli, moved)
    assert (code, doc["verdict"], doc["compliant"]) == (code0, doc0["verdict"], doc0["compliant"]) == (1, "closed", False)   # a miniature
    assert sorted(f["rule_id"] for f in all_findings(doc)) == sorted(f["rule_id"] for f in all_findings(doc0))


LINK_FORGERIES = {
    "write-id-of-another-write": lambda root: edit_result("R", lambda d: d["written_by"].update(write_id="f" * 32),
                                                          run=2)(root),
    "legacy-end-before-the-write": lambda root: (_legacy(root), edit_result(
        "R", lambda d: d["written_by"].update(end_unix_s=d["written_by"]["end_unix_s"] - 86400), run=1)(root)),
    "legacy-other-layout": lambda root: (_legacy(root), edit_result(
        "R", lambda d: d["written_by"].update(processes=16), run=1)(root)),
    "written-by-missing": lambda root: edit_result("R", lambda d: d.update(written_by=None), run=5)(root),
}


@pytest.mark.parametrize("case", sorted(LINK_FORGERIES))
def test_a_read_that_names_no_write_here_is_invalid(run_cli, tmp_path, case):
    root = pair(tmp_path)
    LINK_FORGERIES[case](root)
    code, doc = check_json(run_cli, root)
    assert code == 1 and any(f["rule_id"] == "checkpoint-read-after-write" for f in all_findings(doc))


def test_a_read_next_to_another_write_of_the_same_layout_names_its_own(run_cli, tmp_path):
    """Two write phases beside one read: the id, not the position, says which one the read read."""
    root = pair(tmp_path)
    shutil.copytree(root / "W", root / "W-other")
    jedit(root / "W-other" / "checkpoint_run_set.json", lambda d: d.update(phase_id="e" * 32))
    code, doc = check_json(run_cli, root)
    assert not any(f["rule_id"] == "checkpoint-read-after-write" for f in all_findings(doc))


# --------------------------------------------------------------------------- class 4: trees checked in part


def mixed(tmp: Path) -> Path:
    root = tmp / "tree"
    ours_results(root / "storage" / "unet3d")
    pair(root, "checkpointing")
    (root / "tpcx" / "sf001").mkdir(parents=True)
    shutil.copy(TPCX, root / "tpcx" / "sf001" / "tpcxai-result.json")
    return root


def _tpcx_second_broken(root):
    d = root / "tpcx" / "sf001-b"
    d.mkdir()
    shutil.copy(TPCX, d / "tpcxai-result.json")
    jedit(d / "tpcxai-result.json", lambda doc: doc["metric"].update(aiucpm=doc["metric"]["aiucpm"] * 1000))


def _storage_second_broken(root):
    ours_results(root / "storage" / "resnet")
    shutil.rmtree(root / "storage" / "resnet" / "run-5")


def _tpcx_truncated(root):
    d = root / "tpcx" / "sf001-c"
    d.mkdir()
    (d / "tpcxai-result.json").write_text(TPCX.read_text()[:500])


TREE_FORGERIES = {
    "tpcx-truncated-beside-valid": _tpcx_truncated,
    "checkpoint-run-set-unreadable": lambda root: (root / "checkpointing" / "W" / "checkpoint_run_set.json").write_text(
        "{not json"),
    "tpcx-invalid-beside-valid": _tpcx_second_broken,
    "storage-invalid-beside-valid": _storage_second_broken,
    "storage-only-broken": lambda root: shutil.rmtree(root / "storage" / "unet3d" / "run-3"),
    "checkpoint-broken": lambda root: edit_set("W", _scale("write_throughput_mean_gib_s", 2))(root / "checkpointing"),
    "tpcx-broken": lambda root: jedit(root / "tpcx" / "sf001" / "tpcxai-result.json",
                                      lambda d: d["metric"].update(aiucpm=d["metric"]["aiucpm"] * 2)),
}


def test_a_mixed_tree_checks_every_result_and_counts_them(run_cli, tmp_path):
    root = mixed(tmp_path)
    code, out, err = run_cli("check", root)
    last = out.strip().splitlines()[-1]
    counted = " ".join(x.strip() for x in out[out.rindex("results checked:"):].strip().splitlines()[:-1])  # wrapped
    assert "training" in counted and "checkpointing" in counted and "tpcx-ai" in counted and "unclassified: 0" in counted, out
    assert last.startswith("verdict: ")                # the last line: the one verdict line (issue 38)
    code, doc = check_json(run_cli, root)
    assert doc["kind"] == "tree" and {r["kind"] for r in doc["results"]} == {"training", "checkpointing", "tpcx-ai"}
    # the tree's verdict is the worst of the results checked one by one
    parts = [check_json(run_cli, root / p) for p in ("storage", "checkpointing", "tpcx/sf001")]
    rank = {"closed": 0, "valid": 0, "open": 1, "invalid": 2}
    assert rank[doc["verdict"]] == max(rank[d["verdict"]] for _, d in parts)
    assert doc["compliant"] == all(d["compliant"] for _, d in parts) and code == (0 if doc["compliant"] else 1)


@pytest.mark.parametrize("case", sorted(TREE_FORGERIES))
def test_a_broken_result_in_a_mixed_tree_makes_it_invalid(run_cli, tmp_path, case):
    root = mixed(tmp_path)
    TREE_FORGERIES[case](root)
    code, doc = check_json(run_cli, root)
    assert code == 1 and doc["verdict"] == "invalid" and not doc["compliant"], doc["results"]
    assert [r for r in doc["results"] if r["verdict"] == "invalid"]


def _orphan_checkpoint_run(root):
    (root / "checkpointing" / "R" / "run-5").rename(root / "stray-run")


def _tpcx_renamed(root):
    shutil.copy(TPCX, root / "storage" / "results.json")


def _checkpoint_run_set_removed(root):
    (root / "checkpointing" / "R" / "checkpoint_run_set.json").unlink()


UNCLASSIFIED = {
    "orphan-checkpoint-run": _orphan_checkpoint_run,
    "tpcx-result-under-another-name": _tpcx_renamed,
    "checkpoint-run-set-removed": _checkpoint_run_set_removed,
}


@pytest.mark.parametrize("case", sorted(UNCLASSIFIED))
def test_what_no_kind_takes_is_listed_and_not_compliant(run_cli, tmp_path, case):
    root = mixed(tmp_path)
    UNCLASSIFIED[case](root)
    code, doc = check_json(run_cli, root)
    assert code == 1 and not doc["compliant"] and doc["unclassified"], doc
    code, out, err = run_cli("check", root)
    assert "unclassified (no benchmark kind takes these" in out and "not compliant" in out.splitlines()[-1]


def test_two_tpcx_runs_alone_are_both_checked(run_cli, tmp_path):
    root = tmp_path / "t"
    for name in ("a", "b"):
        (root / name).mkdir(parents=True)
        shutil.copy(TPCX, root / name / "tpcxai-result.json")
    jedit(root / "b" / "tpcxai-result.json", lambda d: d["metric"].update(aiucpm=d["metric"]["aiucpm"] * 3))
    code, doc = check_json(run_cli, root)
    assert code == 1 and doc["verdict"] == "invalid" and len(doc["results"]) == 2


# --------------------------------------------------------------------------- class 1: sweeps


def _sweep(tmp: Path, fn) -> Path:
    d = tmp / "sw"
    shutil.copytree(SWEEP, d)                 # with its runs: sizing re-derives every figure from them
    doc = json.loads((SWEEP / "sweep.json").read_text())
    fn(doc)
    (d / "sweep.json").write_text(json.dumps(doc))
    return d


def _below(doc):
    """The confirmation's runs made to miss the threshold while the answer still says confirmed."""
    c = doc["confirmations"][0]
    c["au_per_run"] = [a - 20 for a in c["au_per_run"]]


SWEEP_FORGERIES = {
    "max-raised": lambda d: d["max_accelerators"].update(accelerators=64),
    "max-au-per-run": lambda d: d["max_accelerators"].update(au_per_run=[99.0] * 5),
    "found-by-probes": lambda d: d["max_accelerators"].update(found_by_probes=32),
    "confirmation-below": _below,
    "point-meets-flipped": lambda d: d["points"][-1]["storage"].update(meets_threshold=True),
    "point-au-mean-edited": lambda d: d["points"][0]["storage"].update(au_percentage=99.99),
    "ceiling-ratio-edited": lambda d: d["points"][0].update(storage_to_ceiling=0.5),
    "knee-removed": lambda d: d.update(knee=None),
    "knee-moved": lambda d: d.update(knee={"accelerators": 64, "reason": "x"}),
    "point-duplicated": lambda d: d["points"].append(dict(d["points"][0])),
}


@pytest.mark.parametrize("case", sorted(SWEEP_FORGERIES))
def test_sizing_refuses_a_sweep_its_points_contradict(run_cli, tmp_path, case):
    d = _sweep(tmp_path, SWEEP_FORGERIES[case])
    code, out, err = run_cli("sizing", "--workload", "resnet50", "--accelerator-type", "h100", "--accelerators", 4,
                             "--from", d)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "sweep.json" in err and "contradicts its own points" in err and "expected" in err


@pytest.mark.parametrize("case", ["max-raised", "point-meets-flipped"])
def test_the_report_shows_the_contradiction(run_cli, tmp_path, case):
    d = _sweep(tmp_path, SWEEP_FORGERIES[case])
    code, out, err = run_cli("report", d, "--out", tmp_path / "rep")
    assert code == 0, err
    page = (tmp_path / "rep" / "index.html").read_text()
    assert 'id="sweep-findings"' in page and "contradicts its own points" in page and "CONTRADICTED" in page


def test_the_real_sweep_has_no_contradiction(run_cli, tmp_path):
    code, out, err = run_cli("sizing", "--workload", "resnet50", "--accelerator-type", "h100", "--accelerators", 4,
                             "--from", SWEEP)
    assert code == 0, err
    code, out, err = run_cli("report", SWEEP, "--out", tmp_path / "rep")
    assert code == 0 and 'id="sweep-findings"' not in (tmp_path / "rep" / "index.html").read_text()


@pytest.mark.parametrize("form", ["text", "json"])
def test_metrics_shows_the_rederived_overall_not_the_claim(run_cli, tmp_path, form):
    root = pair(tmp_path)
    code, before, _ = run_cli("metrics", root / "W", "--format", form)
    edit_set("W", _scale("write_throughput_mean_gib_s", 2))(root)
    code, out, err = run_cli("metrics", root / "W", "--format", form)
    assert code == 0, err
    if form == "json":
        doc, was = json.loads(out), json.loads(before)
        assert doc["overall"] == was["overall"] and doc["claims_differ"] == ["write_throughput_mean_gib_s"]
    else:
        assert out.splitlines()[1] == before.splitlines()[1] and "NOTE: checkpoint_run_set.json overall claims" in out


def _list_mode(d):
    d.update(mode="list", max_accelerators=None, confirmations=[], probes=[])


LIST_FORGERIES = {
    "list-point-meets-flipped": lambda d: (_list_mode(d), d["points"][-1]["storage"].update(meets_threshold=True)),
    "list-point-runs-below": lambda d: (_list_mode(d), d["points"][0]["storage"].update(
        au_per_run=[a - 30 for a in d["points"][0]["storage"]["au_per_run"]])),
}


@pytest.mark.parametrize("case", sorted(LIST_FORGERIES))
def test_a_list_sweep_contradicting_its_points_is_refused(run_cli, tmp_path, case):
    (tmp_path / "ok").mkdir()
    ok = _sweep(tmp_path / "ok", _list_mode)              # the real sweep read as a list: consistent
    argv = ["sizing", "--workload", "resnet50", "--accelerator-type", "h100", "--accelerators", 4, "--from"]
    code, out, err = run_cli(*argv, ok)
    assert code == 0, err
    code, out, err = run_cli(*argv, _sweep(tmp_path, LIST_FORGERIES[case]))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "contradicts its own points" in err, err


PAIRS_OF_KINDS = {
    "storage-and-broken-checkpoint": (lambda root: shutil.rmtree(root / "tpcx"),
                                      lambda root: edit_set("R", _scale("read_duration_mean_s", 3))(root / "checkpointing")),
    "checkpoint-and-broken-tpcx": (lambda root: shutil.rmtree(root / "storage"),
                                   lambda root: jedit(root / "tpcx" / "sf001" / "tpcxai-result.json",
                                                      lambda d: d["metric"].update(aiucpm=d["metric"]["aiucpm"] * 5))),
    "tpcx-and-broken-storage": (lambda root: shutil.rmtree(root / "checkpointing"),
                                lambda root: shutil.rmtree(root / "storage" / "unet3d" / "run-2")),
}


@pytest.mark.parametrize("case", sorted(PAIRS_OF_KINDS))
def test_two_kinds_one_broken(run_cli, tmp_path, case):
    keep_two, brk = PAIRS_OF_KINDS[case]
    root = mixed(tmp_path)
    keep_two(root)
    brk(root)
    code, doc = check_json(run_cli, root)
    assert code == 1 and doc["kind"] == "tree" and doc["verdict"] == "invalid" and len({r["kind"] for r in doc["results"]}) == 2


def test_unclassified_is_named_in_the_json(run_cli, tmp_path):
    root = mixed(tmp_path)
    _orphan_checkpoint_run(root)
    code, doc = check_json(run_cli, root)
    assert [u["path"] for u in doc["unclassified"]] == ["stray-run/results.json"]
    assert "checkpoint_run_set.json" in doc["unclassified"][0]["why"]
