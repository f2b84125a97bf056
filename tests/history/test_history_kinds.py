"""`suite history import` of results of every storage kind records each benchmark with the figures
`suite compare` reads (its kind's `measured`): our checkpointing phases, a published kv_cache leaf
(one entry per option), a published v3.0 tree's training and checkpointing phases; importing again
adds nothing. Real committed results, a real SQLite store, the CLI as users call it."""

import shutil
from pathlib import Path

import pytest

import paths
from suite.history import db


def imported(run_cli, store, path) -> list:
    code, out, err = run_cli("history", "import", path, "--history", store)
    assert code == 0, err
    with db.open_store(str(store)) as s:
        return s.entries()


def test_a_checkpointing_result_is_recorded_with_its_figures(run_cli, tmp_path):
    r = tmp_path / "R"
    shutil.copytree(paths.DATA / "checkpoint" / "llama3-8b-miniature" / "R", r)
    (e,) = imported(run_cli, tmp_path / "h.sqlite", r)
    figs = {f.name: f for f in e.figures}
    assert e.kind == "checkpointing" and e.workload == "llama3-8b" and e.identity["phase"] == "read"
    assert len(figs["read_gib_s"].per_run) == 5 and all(x > 0 for x in figs["read_gib_s"].per_run)
    assert not figs["read_duration_s"].higher_is_better and len(figs["read_duration_s"].per_epoch) == 5
    code, out, err = run_cli("history", "import", r, "--history", tmp_path / "h.sqlite")
    assert code == 0 and "0 recorded" in out


def test_a_kv_cache_leaf_is_recorded_per_option_with_its_figures(run_cli, tmp_path):
    (leaf,) = (paths.DATA / "v3" / "kv_cache_FarmGPU").glob("open/*/results/*/kv_cache/*/run/*")
    (e,) = imported(run_cli, tmp_path / "h.sqlite", leaf)
    figs = {f.name: f for f in e.figures}
    assert e.kind == "kv_cache" and e.identity["option"] == 3 and e.workload == "llama3.1-70b-instruct"
    assert e.division == "open" and e.results_path.endswith("option_3")
    assert figs["tokens_per_second"].per_run[0] > 0 and not figs["p95_latency_ms"].higher_is_better


def test_a_published_tree_records_training_and_each_checkpoint_phase(run_cli, tmp_path):
    got = imported(run_cli, tmp_path / "h.sqlite", paths.DATA / "v3" / "tree")
    kinds = sorted((e.kind, e.identity.get("phase")) for e in got)
    assert kinds == [("checkpointing", "read"), ("checkpointing", "write"), ("training", None)]
    (t,) = [e for e in got if e.kind == "training"]
    assert len({f.name: f for f in t.figures}["samples_per_second"].per_run) == 5       # the warm-up left out
    assert all(e.figures for e in got)


def test_a_tpcx_ai_run_is_recorded_with_aiucpm(run_cli, tmp_path):
    (e,) = imported(run_cli, tmp_path / "h.sqlite", paths.DATA / "tpcxai-sf0.01")
    figs = {f.name: f for f in e.figures}
    assert e.kind == "tpcx-ai" and figs["aiucpm"].per_run == pytest.approx((3.518,), abs=1e-3)


@pytest.mark.parametrize("workload, results, accelerator", [
    ("tpcx-ai", paths.DATA / "tpcxai-sf0.01", None),
    ("vdb-mini", None, None),
    ("llama3-8b", paths.DATA / "checkpoint" / "llama3-8b-miniature" / "R", None),
    ("resnet50", None, "h100"),
])
def test_a_run_without_accelerators_is_recorded_with_none(tmp_path, workload, results, accelerator):
    """A run's record (the hook `suite run` calls) with --accelerator-type at its default h100: kept for
    a training workload, none for a kind without accelerators (shown as -)."""
    import argparse

    from suite.history import record

    res = tmp_path / "r"
    if results is not None:
        shutil.copytree(results, res)
    else:
        res.mkdir()
        (res / "results.json").write_text("{}")
    args = argparse.Namespace(history=str(tmp_path / "h.sqlite"), results_dir=str(res), workload=workload,
                              accelerator_type="h100", argv=["run", "--workload", workload])
    record.RunRecord(args).finish(0, "ok")
    with db.open_store(str(tmp_path / "h.sqlite")) as s:
        got = s.entries()
    assert got and {e.accelerator for e in got} == {accelerator}


def test_list_shows_each_kinds_headline_and_what_it_runs_on(run_cli, tmp_path):
    """Every kind's headline (its first figure, in the kind's order) and what the kind counts it runs on:
    accelerators with their type (training), processes (checkpointing), nothing (kv_cache, vector
    database, TPCx-AI); no line past 100 columns."""
    store = tmp_path / "h.sqlite"
    (kv,) = (paths.DATA / "v3" / "kv_cache_FarmGPU").glob("open/*/results/*/kv_cache/*/run/*")
    for p in (paths.DATA / "v3" / "tree", paths.DATA / "checkpoint" / "llama3-8b-miniature" / "R", kv,
              paths.DATA / "tpcxai-sf0.01", paths.DATA / "v3" / "vector_database_TTA"):
        assert run_cli("history", "import", p, "--history", store)[0] == 0
    code, out, err = run_cli("history", "list", "--history", store)
    assert code == 0, err
    with db.open_store(str(store)) as s:
        kinds = {e.id: e.kind for e in s.entries(figures=False)}
    rows = {}
    for line in out.splitlines()[1:-1]:
        rows.setdefault(kinds[int(line.split()[0])], []).append(line)
    assert all(len(line) <= 100 for line in out.splitlines()) and len(rows) == 5
    (unet,) = rows["training"]
    assert " b200 x8 " in unet and " AU %" in unet
    assert all(" 8 processes " in r and "GiB/s" in r for r in rows["checkpointing"])
    assert all(" - " in r and "tokens/s" in r for r in rows["kv_cache"])
    assert all(" - " in r and " QPS" in r and "(vector_database)" in r for r in rows["vector_database"])
    assert all(" - " in r and " AIUCpm" in r for r in rows["tpcx-ai"])
    with db.open_store(str(store)) as s:
        assert {e.accelerators for e in s.entries() if e.kind != "training"} == {None}


def test_an_import_records_the_verdict_suite_check_gives(run_cli, tmp_path):
    for p in (paths.DATA / "checkpoint" / "llama3-8b-miniature" / "R", paths.DATA / "tpcxai-sf0.01",
              paths.DATA / "v3" / "tree"):
        check_code = run_cli("check", p)[0]
        store = tmp_path / f"{p.name}.sqlite"
        assert run_cli("history", "import", p, "--history", store)[0] == 0
        with db.open_store(str(store)) as s:
            verdicts = {e.verdict for e in s.entries()}
        assert verdicts == {{0: "compliant", 1: "non-compliant"}[check_code]}, p


HOST_KEYS = {"host.hostname", "host.cpu_count", "host.mem_total_bytes", "host.kernel", "versions.suite",
             "versions.python"}


@pytest.mark.timeout(600)
def test_checkpointing_and_kv_cache_runs_record_the_host_as_training_does(tmp_path):
    """Real runs recording themselves: a miniature checkpoint write (4 ranks: the open division's least on
    one host; 8 cost twice the CPU to say the same) and a kv-cache option (one rank, one trial); each
    entry's system has training's host and versions fields."""
    import os

    from suite import cli

    store = tmp_path / "h.sqlite"
    assert cli.main([str(a) for a in ("run", "--workload", "llama3-8b", "--ruleset", "v2.0", "--memory-limit", "1GiB",
                                      "--accelerators", 4, "--division", "open", "--checkpoints-read", 0, "--runs", 1,
                                      "--results-dir",
                                      tmp_path / "W", "--allow-no-cache-drop", "--history", store)]) in (0, 1)
    shm = Path("/dev/shm")
    cache = shm / f"suite-hist-{os.getpid()}" if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path / "cache"
    cache.mkdir()
    try:
        assert cli.main([str(a) for a in ("run", "--workload", "kv-cache", "--cache-dir", cache, "--results-dir",
                                          tmp_path / "K", "--option", "1", "--trials", 1, "--duration", 4,
                                          "--inter-option-delay", 0, "--accelerators", 1, "--allow-no-cache-drop",
                                          "--division", "open", "--history", store)]) in (0, 1)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    with db.open_store(str(store)) as s:
        got = {e.kind: e for e in s.entries() if e.figures}
    assert set(got) == {"checkpointing", "kv_cache"}
    for e in got.values():
        assert HOST_KEYS <= set(e.system), (e.kind, sorted(e.system))
        assert e.system["host.kernel"] == os.uname().release


@pytest.mark.timeout(600)
def test_a_vector_database_run_records_the_host_as_training_does(tmp_path_factory, run_cli, tiny_diskann):
    """A real DiskANN run of a tiny workload (the session's, copied): its entry's system has the host and
    versions fields a training run's has (hostname, CPUs, memory, kernel; suite, Python)."""
    from tests.vector_database.conftest import tiny_workload

    base = tmp_path_factory.mktemp("vdbhost")
    results = shutil.copytree(tiny_diskann / "R", base / "R")
    with tiny_workload(tiny_diskann):
        code, out, err = run_cli("history", "import", results, "--history", base / "h.sqlite")
    assert code == 0, err
    with db.open_store(str(base / "h.sqlite")) as s:
        (e,) = [e for e in s.entries() if e.figures]
    assert e.kind == "vector_database"
    assert HOST_KEYS <= set(e.system) and e.system["host.kernel"] and int(e.system["host.mem_total_bytes"]) > 0
