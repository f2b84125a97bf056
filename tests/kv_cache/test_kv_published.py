"""kv_cache figures on a real published leaf (tests/data/v3/kv_cache_FarmGPU, trimmed as its README
says), the formulas against its own per-rank files; the workload's bytes per token; Hypothesis on
every loader of outside input (commands, rank files, summary.json, metadata)."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import paths
from suite.errors import ResultError
from suite.kv_cache import check
from suite.kv_cache import figures
from suite.kv_cache import leaf as kvleaf
from suite.kv_cache import model

LEAF = (paths.DATA / "v3" / "kv_cache_FarmGPU" / "open" / "FarmGPU" / "results" / "potato8-qlc-np6-open-tnf-70b"
        / "kv_cache" / "llama3.1-70b-instruct" / "run" / "20260709_215001")


def test_bytes_per_token_from_the_workload_file():
    doc = model.load()
    assert model.bytes_per_token(doc, "llama3.1-8b") == 131072
    assert model.bytes_per_token(doc, "llama3.1-70b-instruct") == 327680
    assert model.entry_bytes(doc, model.closed_params(doc, 1), 4096) == 512 << 20


def test_published_rank_formulas_rederive_from_their_own_files():
    lf = kvleaf.load(LEAF)
    assert len(lf.ranks) == 48                             # option 3's every rank (options 1, 2: none copied)
    for (o, t, r), (path, doc) in lf.ranks.items():
        s = doc["summary"]
        assert s["avg_throughput_tokens_per_sec"] == pytest.approx(s["total_tokens"] / s["elapsed_time"], rel=1e-12)
        assert s["storage_throughput_tokens_per_sec"] == pytest.approx(s["total_tokens"] / s["total_storage_io_time"], rel=1e-12)
        assert doc["seed"] == 42 + r                       # seed-base 42 + rank
        got = {x["figure"]: x["status"] for x in figures.rederive_rank(doc, path)}
        assert set(got.values()) - {"not-rederivable"} == {"rederived"}
        assert (got["storage_io_latency_ms.p95"] == "not-rederivable") is ("storage_latencies" not in doc)  # trimmed


def test_published_option_aggregate_is_the_sum_over_ranks_and_the_max_p95():
    lf = kvleaf.load(LEAF)
    ranks = [d for (_o, _t, _r), (_p, d) in sorted(lf.ranks.items())]
    got = figures.option(lf, 3)
    cs = [d["summary"]["cache_stats"] for d in ranks]
    assert got["aggregated_read_bandwidth_gbps"] == pytest.approx(sum(c["tier_storage_read_bandwidth_gbps"] for c in cs))
    assert got["aggregated_write_bandwidth_gbps"] == pytest.approx(sum(c["tier_storage_write_bandwidth_gbps"] for c in cs))
    assert got["aggregated_avg_throughput_tokens_per_sec"] == pytest.approx(
        sum(d["summary"]["avg_throughput_tokens_per_sec"] for d in ranks))
    assert got["aggregated_p95_latency_ms"] == max(d["summary"]["storage_io_latency_ms"]["p95"] for d in ranks)
    # all 48 ranks copied: the published summary is the sum over them and the max of their P95s
    claimed = lf.summary["options"]["3"]
    for k in figures.REFERENCE_KEYS:
        assert got[k] == pytest.approx(claimed[k], rel=1e-12), k
    assert got["aggregated_p95_latency_ms"] == claimed["aggregated_p95_latency_ms"]      # the max: exact
    assert got["rank_count"] == 48 and not got["partial_failure"] and got["cpu_tier_ranks"] == []


def test_published_headline_p95_is_one_ranks_own_p95_not_a_pooled_one():
    """The headline P95 is the largest per-rank P95 (rank 20's), not a P95 of all ranks' requests and not a
    mean: with one rank left out the max moves to the next rank's P95, the sums drop by that rank's share."""
    lf = kvleaf.load(LEAF)
    p95 = {r: d["summary"]["storage_io_latency_ms"]["p95"] for (_o, _t, r), (_p, d) in lf.ranks.items()}
    top = max(p95, key=p95.get)
    assert top == 20 and p95[top] == lf.summary["options"]["3"]["aggregated_p95_latency_ms"]
    assert sum(p95.values()) / 48 < p95[top]
    path, doc = lf.ranks[(3, 0, top)]
    without = kvleaf.Leaf(**{**vars(lf), "ranks": {k: v for k, v in lf.ranks.items() if k[2] != top}})
    got = figures.option(without, 3, expected_ranks=48)
    assert got["aggregated_p95_latency_ms"] == sorted(p95.values())[-2]
    assert got["missing_files"] == [f"option_3/trial_0/rank_{top}"] and got["partial_failure"]
    assert got["aggregated_read_bandwidth_gbps"] == pytest.approx(
        lf.summary["options"]["3"]["aggregated_read_bandwidth_gbps"]
        - doc["summary"]["cache_stats"]["tier_storage_read_bandwidth_gbps"], rel=1e-12)


def test_option_figures_are_means_over_trials_of_sums_over_ranks_and_the_p95_a_max_over_both(tmp_path):
    """The FarmGPU leaf has one trial per option, so the mean over trials is tested by regrouping its 48
    real rank files as 3 trials of 16 ranks (ranks 0-15, 16-31, 32-47): each figure is then the mean of
    the three 16-rank sums (= the published 48-rank sum / 3), the P95 still the largest of all 48."""
    import shutil

    leaf = tmp_path / "kv_cache" / "llama3.1-70b-instruct" / "run" / "20260709_215001"
    for r in range(48):
        src = LEAF / "option_3" / "trial_0" / f"rank_{r}"
        shutil.copytree(src, leaf / "option_3" / f"trial_{r // 16}" / f"rank_{r % 16}")
    lf = kvleaf.load(leaf)
    got = figures.option(lf, 3, expected_ranks=16)
    claimed = kvleaf.load(LEAF).summary["options"]["3"]
    for k in ("aggregated_read_bandwidth_gbps", "aggregated_write_bandwidth_gbps",
              "aggregated_avg_throughput_tokens_per_sec", "aggregated_storage_throughput_tokens_per_sec"):
        assert got[k] == pytest.approx(claimed[k] / 3, rel=1e-12), k
        sums = [sum(figures.rank_figures(d, p)[{"aggregated_read_bandwidth_gbps": "read_gibps",
                                                 "aggregated_write_bandwidth_gbps": "write_gibps",
                                                 "aggregated_avg_throughput_tokens_per_sec": "avg_tps",
                                                 "aggregated_storage_throughput_tokens_per_sec": "storage_tps"}[k]]
                    for (_o, t, _r), (p, d) in lf.ranks.items() if t == trial) for trial in range(3)]
        assert len(set(sums)) == 3 and got[k] == pytest.approx(sum(sums) / 3, rel=1e-12)   # three distinct sums
    assert got["aggregated_p95_latency_ms"] == claimed["aggregated_p95_latency_ms"]     # rank 20: trial 1's rank 4
    assert (got["trial_count"], got["rank_count"], got["partial_failure"]) == (3, 16, False)


def test_published_p95_from_the_rank_array_of_the_headline_rank():
    """Rank 20 (the headline P95's) keeps its published per-request storage latency array: its mean, P50,
    P95, P99, P99.9, P99.99 and sum are numpy's over the array's first total_requests entries, in ms; the array holds one
    entry more than the summary counted (a request ended after the figures were taken), which counted in
    would move the P95 by 7 s."""
    import numpy as np

    path, doc = kvleaf.load(LEAF).ranks[(3, 0, 20)]
    lat, s = doc["storage_latencies"], doc["summary"]
    assert (len(lat), s["total_requests"]) == (279, 278)
    ms = np.asarray(lat[:278]) * 1000.0
    for q, key in ((50, "p50"), (95, "p95"), (99, "p99"), (99.9, "p999"), (99.99, "p9999")):
        assert float(np.percentile(ms, q)) == pytest.approx(s["storage_io_latency_ms"][key], rel=1e-12), key
    assert float(ms.mean()) == pytest.approx(s["storage_io_latency_ms"]["mean"], rel=1e-12)
    assert float(np.percentile(np.asarray(lat) * 1000.0, 95)) > s["storage_io_latency_ms"]["p95"] + 6000
    assert sum(lat[:278]) == pytest.approx(s["total_storage_io_time"], rel=1e-12)
    statuses = {x["figure"]: x["status"] for x in figures.rederive_rank(doc, path)}
    assert statuses == {"storage_io_latency_ms.p95": "rederived", "total_storage_io_time": "rederived",
                        "total_requests": "rederived", "total_requests (latency array)": "rederived",
                        "avg_throughput_tokens_per_sec": "rederived", "storage_throughput_tokens_per_sec": "rederived"}


def test_published_leaf_metrics_and_check(run_cli):
    code, out, err = run_cli("metrics", LEAF, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["division"] == "open" and doc["expected_ranks"] == 48
    assert sorted(doc["claimed"]) == ["1", "2", "3"]
    assert doc["claimed"]["3"]["aggregated_avg_throughput_tokens_per_sec"] == 30896.10482689294
    statuses = {s["figure"]: s["status"] for s in doc["rederived"] if "rank" not in s}
    assert {v for k, v in statuses.items() if not k.startswith("options.3.")} == {"not-rederivable"}   # options 1, 2:
    assert len([k for k in statuses if not k.startswith("options.3.")]) == 2 * len(figures.REFERENCE_KEYS)  # no rank files
    assert {v for k, v in statuses.items() if k.startswith("options.3.")} == {"rederived"}
    assert len([k for k in statuses if k.startswith("options.3.")]) == len(figures.REFERENCE_KEYS)
    a = check.assess(LEAF)
    ids = {f.rule_id for f in a["findings"]}
    assert "kvcache-shared-results-dir" in ids and "kvcache-open-allowances" not in ids
    assert a["facts"]["kvcache.commands"] == 3               # the fs probe is not a trial
    assert len(a["facts"]["kvcache.io_model_changes"]) == 3  # LD_PRELOAD=...nofadvise.so (open division: allowed)
    assert "kvcache-posix-io-model" not in ids
    code, out, err = run_cli("metrics", LEAF)
    assert code == 0 and "summary.json says:" in out and "30,896.1" in out


def test_parse_command_reads_what_ran():
    c = json.loads((LEAF / "kv_cache_20260709_215001_metadata.json").read_text())["command_output_files"][3]["command"]
    f = kvleaf.parse_command(c)
    assert f["--model"] == "llama3.1-70b-instruct" and f["--num-users"] == 200 and f["--max-concurrent-allocs"] == 4
    assert f["--duration"] == 60.0 and f["--seed-base"] == 42 and "--config" in f
    assert kvleaf.option_of(c) == 3


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_parse_command_never_raises(text):
    flags = kvleaf.parse_command(text)
    assert isinstance(flags, dict)
    kvleaf.option_of(text)


JSONS = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=8),
                     lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                     max_leaves=20)


def _leaf(tmp: Path, summary, rank, meta) -> Path:
    import shutil

    d = tmp / "leaf"
    shutil.rmtree(d, ignore_errors=True)
    (d / "option_1" / "trial_0" / "rank_0").mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps(summary))
    (d / "option_1" / "trial_0" / "rank_0" / "kvcache_results_1.json").write_text(json.dumps(rank))
    (d / "kv_cache_1_metadata.json").write_text(json.dumps(meta))
    return d


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(JSONS, JSONS, JSONS | st.fixed_dictionaries({"suite": JSONS, "num_processes": JSONS, "command_output_files": JSONS}))
def test_any_leaf_content_is_metrics_or_one_line_error(tmp_path, summary, rank, meta):
    d = _leaf(tmp_path, summary, rank, meta)
    try:
        from suite.kv_cache import page as kvcache_page

        kvcache_page.text(check.metrics(d))
    except ResultError as exc:
        assert "\n" not in str(exc) and str(d) in str(exc)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=5) | st.none() | st.booleans())
def test_a_rank_figure_that_is_not_a_finite_number_is_refused(tmp_path, bad):
    good = json.loads(json.dumps({"summary": {"total_tokens": 10, "elapsed_time": 1.0, "total_storage_io_time": 1.0,
                                              "avg_throughput_tokens_per_sec": 10.0, "storage_throughput_tokens_per_sec": 10.0,
                                              "storage_io_latency_ms": {"p95": 1.0},
                                              "cache_stats": {"storage_entries": 1, "tier_storage_read_bandwidth_gbps": 1.0,
                                                              "tier_storage_write_bandwidth_gbps": 1.0}}}))
    good["summary"]["cache_stats"]["tier_storage_read_bandwidth_gbps"] = bad
    d = _leaf(tmp_path, {}, good, {})
    if isinstance(bad, float) and bad == bad and abs(bad) != float("inf"):
        assert figures.option(kvleaf.load(d), 1)["aggregated_read_bandwidth_gbps"] == bad
    else:
        with pytest.raises(ResultError, match="tier_storage_read_bandwidth_gbps: expected a finite number"):
            figures.option(kvleaf.load(d), 1)


@pytest.mark.parametrize("extra, says", [
    (["--kv-users", "10"], "--kv-users: expected only in the open division"),
    (["--seed", "7"], "--seed: expected 42 in the closed division"),
    (["--kv-model", "nope", "--division", "open"], "--model: expected one of"),
])
def test_closed_locks_and_bad_values_are_one_line_refusals(run_cli, tmp_path, extra, says):
    code, out, err = run_cli("run", "--workload", "kv-cache", "--cache-dir", tmp_path / "c", "--results-dir",
                             tmp_path / "r", *extra)
    assert code == 2 and says in err and err.count("\n") == 1, err
    assert not (tmp_path / "r").exists()


def test_an_option_of_another_kind_is_refused(run_cli, tmp_path):
    code, out, err = run_cli("run", "--workload", "kv-cache", "--cache-dir", tmp_path, "--runs", "2")
    assert code == 2 and "--runs: expected only with" in err


def test_list_names_the_workload(run_cli):
    code, out, err = run_cli("list", "workloads")
    assert code == 0 and "kv-cache" in out and "KV-cache offload" in out


def test_mlpstorage_fs_separation_file_is_read(tmp_path):
    import shutil

    leaf = tmp_path / "leaf"
    shutil.copytree(LEAF, leaf)
    (leaf / "fs_separation.json").write_text(json.dumps({"version": 1, "method": "link_exdev", "same_filesystem": True}))
    assert check.assess(leaf)["facts"]["kvcache.cache_results_separate"] is False
    (leaf / "fs_separation.json").write_text(json.dumps({"version": 1, "method": "link_exdev", "same_filesystem": False}))
    assert "kvcache-posix-cache-dir" not in {f.rule_id for f in check.assess(leaf)["findings"]}
