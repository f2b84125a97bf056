"""Results that lie, round three, class 2 (issue 46): figures shown as measured that were not re-derived.

Tripling the figures of a training run's summary.json and results.json (steps/ untouched) made `suite compare`
say "3.0x faster" and `report`, `metrics` and `history import` show the forged figure; the published tables
and the report page printed claimed checkpoint figures unmarked. Now every figure a command shows as
measured is re-derived from the lowest records (steps/rank-<r>.json, the ranks' per_epoch_stats) by the
kind's figures code, or marked claimed (suite.numbers: recomputed | claimed) in text, Markdown, HTML, CSV
and JSON; a claim the records contradict is named beside the re-derived figure.

Real fixtures: our `suite run` series tests/data/check/valid/suite-run-5x2ranks (5 runs x 2 ranks, steps/),
the published v1.0 simplyblock results (no per-rank records: claims only), the published Alluxio v3.0
checkpointing pair and vector-DB tree.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

import paths

OURS = paths.DATA / "check" / "valid" / "suite-run-5x2ranks"
SIMPLYBLOCK = paths.DATA / "storage" / "simplyblock"
ALLUXIO_CKPT = paths.DATA / "v3" / "checkpointing_alluxio"
VDB = paths.DATA / "v3" / "vector_database_TTA"
FORGED = ("train_throughput", "train_io_")


def _triple(metric: dict) -> None:
    for k in list(metric):
        if k.startswith(FORGED):
            metric[k] = [x * 3 for x in metric[k]] if isinstance(metric[k], list) else metric[k] * 3


def _forge(src: Path, dst: Path) -> Path:
    """A copy whose summary.json and results.json claim three times the throughput; steps/ untouched."""
    shutil.copytree(src, dst)
    for p in [*dst.glob("run-*/summary.json"), *dst.glob("run-*/results.json")]:
        doc = json.loads(p.read_text())
        if isinstance(doc.get("metric"), dict):
            _triple(doc["metric"])
        p.write_text(json.dumps(doc))
    return dst


@pytest.fixture
def pair(tmp_path) -> tuple[Path, Path]:
    a = tmp_path / "a"
    shutil.copytree(OURS, a)
    return a, _forge(OURS, tmp_path / "b")


def _metrics(run_cli, path) -> dict:
    code, out, err = run_cli("metrics", path, "--format", "json")
    assert code == 0, err
    return json.loads(out)["benchmarks"][0]


# --------------------------------------------------------------------------- training: re-derived from steps/


def test_genuine_series_is_recomputed_and_its_claims_agree(run_cli, pair):
    b = _metrics(run_cli, pair[0])
    assert {r["source"] for r in b["runs"]} == {"recomputed"} and b["overall"]["source"] == "recomputed"
    assert all(r["claims_differ"] == [] and r["rederived_from"] == "steps/rank-<r>.json" for r in b["runs"])


def test_compare_of_a_tripled_claim_is_not_faster(run_cli, pair):
    code, out, err = run_cli("compare", *pair, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    figs = {f["figure"]: f for f in doc["comparisons"][0]["figures"]}
    assert figs["samples_per_second"]["ratio"] == pytest.approx(1.0, abs=1e-9)
    assert figs["samples_per_second"]["verdict"] == "not significant" and figs["samples_per_second"]["source"] == "recomputed"
    assert figs["mib_per_second"]["ratio"] == pytest.approx(1.0, abs=1e-9)
    notes = doc["results"][1]["notes"]
    assert len(notes) == 5 and all("summary.json claims samples_per_second" in n and "re-derived from steps" in n
                                   for n in notes)
    code, text, _ = run_cli("compare", *pair)
    assert "faster" not in text and "claims the records contradict" in text


def test_metrics_shows_the_rederived_figure_and_names_the_claim(run_cli, pair):
    genuine, forged = _metrics(run_cli, pair[0]), _metrics(run_cli, pair[1])
    for g, f in zip(genuine["runs"], forged["runs"]):
        assert f["samples_per_second"] == pytest.approx(g["samples_per_second"], rel=1e-12)
        assert f["claimed"]["samples_per_second"] == pytest.approx(3 * g["samples_per_second"], rel=1e-9)
        assert f["claims_differ"] == ["samples_per_second", "mib_per_second"] and f["source"] == "recomputed"
    code, out, _ = run_cli("metrics", pair[1])
    assert "summary.json claims samples/s 129.83" in out and "the claim is not what the run's records give" in out


def test_report_csv_and_html_carry_source_and_claim(run_cli, pair, tmp_path):
    code, out, err = run_cli("report", pair[1], "--out", tmp_path / "rep")
    assert code == 0, err
    rows = list(csv.DictReader((tmp_path / "rep" / "runs.csv").open()))
    assert {r["source"] for r in rows} == {"recomputed"}
    for r in rows:
        assert float(r["claimed_samples_per_second"]) == pytest.approx(3 * float(r["samples_per_second"]), rel=1e-9)
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "the claim is not what the run&#x27;s records give" in html
    assert "re-derived from each run&#x27;s per-rank records" in html


def test_history_import_records_the_rederived_figure(run_cli, pair, tmp_path):
    from suite.history import db

    store = tmp_path / "h.sqlite"
    for p in pair:
        assert run_cli("history", "import", p, "--history", store)[0] == 0
    with db.open_store(str(store)) as s:
        entries = sorted(s.entries(), key=lambda e: e.results_path)
    (fa,), (fb,) = ([f for f in e.figures if f.name == "samples_per_second"] for e in entries)
    assert fb.per_run == pytest.approx(fa.per_run) and fb.label == "samples/s"


def test_steps_removed_the_figures_are_claimed_everywhere(run_cli, pair, tmp_path):
    a, b = pair
    for steps in b.glob("run-*/steps"):
        shutil.rmtree(steps)
    assert {r["source"] for r in _metrics(run_cli, b)["runs"]} == {"claimed"}
    code, out, err = run_cli("compare", a, b, "--format", "json")
    doc = json.loads(out)
    figs = {f["figure"]: f for f in doc["comparisons"][0]["figures"]}
    assert figs["samples_per_second"]["source"] == "claimed" and figs["samples_per_second"]["label"] == "samples/s (claimed)"
    assert any(n.startswith("figures claimed: run-1") for n in doc["results"][1]["notes"])
    code, text, _ = run_cli("compare", a, b)
    assert "samples/s (claimed)" in text


def test_a_published_result_without_rank_records_is_claimed(run_cli, tmp_path):
    b = _metrics(run_cli, SIMPLYBLOCK)
    assert {r["source"] for r in b["runs"]} == {"claimed"} and b["overall"]["source"] == "claimed"
    code, out, _ = run_cli("metrics", SIMPLYBLOCK)
    assert "figures: CLAIMED" in out
    code, out, err = run_cli("report", SIMPLYBLOCK, "--out", tmp_path / "rep")
    assert code == 0, err
    assert {r["source"] for r in csv.DictReader((tmp_path / "rep" / "runs.csv").open())} == {"claimed"}
    assert "Throughput (claimed)" in (tmp_path / "rep" / "report.md").read_text()


# --------------------------------------------------------------------------- published tables: checkpointing, vdb


def _results_csv(run_cli, tree: Path, out: Path) -> list[dict]:
    code, text, err = run_cli("report", tree, "--out", out)
    assert "Traceback" not in err
    return list(csv.DictReader((out / "results.csv").open()))


def test_checkpoint_table_shows_rederived_bandwidth_marked(run_cli, tmp_path):
    """The published Alluxio pair, its summary.json write and read GiB/s tripled (per-rank records
    untouched): the table's figures are the re-derived ones, marked recomputed."""
    genuine = _results_csv(run_cli, ALLUXIO_CKPT, tmp_path / "g")
    tree = tmp_path / "t"
    shutil.copytree(ALLUXIO_CKPT, tree)
    for p in tree.rglob("summary.json"):
        doc = json.loads(p.read_text())
        for k in list(doc["metric"]):
            if k.endswith("_GB_per_second"):
                v = doc["metric"][k]
                doc["metric"][k] = [x * 3 for x in v] if isinstance(v, list) else v * 3
        p.write_text(json.dumps(doc))
    (g,), (f,) = genuine, _results_csv(run_cli, tree, tmp_path / "f")
    col = "Checkpointing - Write B/W (GiB/s)"
    assert float(f[col]) == pytest.approx(float(g[col])) and f["Figures"] == g["Figures"] == "recomputed"
    doc = json.loads((tmp_path / "f" / "results.json").read_text())
    assert doc[0]["Figures"] == "recomputed"


def test_checkpoint_table_without_rank_records_is_claimed(run_cli, tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(ALLUXIO_CKPT, tree)
    for p in tree.rglob("*_per_epoch_stats.json"):
        p.unlink()
    (row,) = _results_csv(run_cli, tree, tmp_path / "r")
    assert row["Figures"] == "claimed"
    assert "Figures: claimed" in (tmp_path / "r" / "report.md").read_text()


def test_vector_database_runs_mark_their_claims(run_cli, tmp_path):
    """The published vector-DB runs keep their per-query records on the clients: the figures the records
    cannot give are blank in the runs table and named as claimed, not re-derivable, beside them."""
    code, out, err = run_cli("report", VDB, "--out", tmp_path / "v")
    assert code in (0, 1), err
    rows = list(csv.DictReader((tmp_path / "v" / "vdb_runs.csv").open()))
    assert rows and all("recall" in r["claimed_not_rederivable"].split() and r["recall"] == "" for r in rows)


# --------------------------------------------------------------------------- kv_cache: a trimmed rank file's P95


def test_kv_cache_p95_of_trimmed_rank_files_is_claimed_tokens_recomputed(run_cli):
    """FarmGPU's published rank files carry no latency array: their P95 cannot be re-derived (claimed), their
    tokens/s are (from each rank's totals)."""
    (leaf,) = (paths.DATA / "v3" / "kv_cache_FarmGPU").glob("open/*/results/*/kv_cache/*/run/*")
    code, out, err = run_cli("compare", leaf, leaf, "--format", "json")
    assert code == 0, err
    figs = {f["figure"]: f for f in json.loads(out)["comparisons"][0]["figures"]}
    assert figs["p95_latency_ms"]["source"] == "claimed" and figs["p95_latency_ms"]["label"] == "P95 latency ms (claimed)"
    assert figs["tokens_per_second"]["source"] == "recomputed" and figs["tokens_per_second"]["label"] == "tokens/s"
