"""Issue 48, KV cache: the P95 split of every storage request into device and queueing time (recorded
per request by each rank, re-derived by suite check: a forged figure or a record set that does not add
up is a finding), the break-even of reading a cached prefix against recomputing it (every model of the
workload's data), and the loaders of the per-request records. Real runs: the miniature (entries 1/256
of their size), 2 MPI ranks, options 1 and 3, 2 s each, cache on the disk, results on a tmpfs."""

import json
import os
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import files
from suite.errors import ResultError
from suite.kv_cache import breakeven, check, model, requests


@pytest.fixture(scope="module")
def leaf(tmp_path_factory):
    from suite import cli

    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    res = tmp_path_factory.mktemp("kvres")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(res)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    cache = tmp_path_factory.mktemp("kvcache")
    cwd = os.getcwd()
    os.chdir(cache)                       # the miniature's cache dir is results/kvcache-data/miniature under it
    try:
        code = cli.main(["run", "--workload", "kv-cache", "--results-dir", str(res / "R"), "--option", "1",
                         "--duration", "2", "--accelerators", "2", "--allow-no-cache-drop"])
    finally:
        os.chdir(cwd)
    assert code == 1                      # the miniature: never compliant
    found = list((res / "R" / "kv_cache").glob("*/run/*"))
    assert len(found) == 1
    yield found[0]
    subprocess.run(["umount", "-l", str(res)], check=False)


def _records(leaf, rank=0):
    return next((leaf / "option_1" / "trial_0" / f"rank_{rank}").glob("kvcache_requests_*.csv"))


def _rankfile(leaf, rank=0):
    return next((leaf / "option_1" / "trial_0" / f"rank_{rank}").glob("kvcache_results_*.json"))


def test_every_request_is_recorded_and_adds_up(leaf):
    for r in (0, 1):
        rows = requests.load(_records(leaf, r))
        doc = files.load_json(_rankfile(leaf, r))
        split = doc["suite_figures"]["request_split"]
        ops = doc["suite_figures"]["storage_ops"]
        # every storage operation of the rank is a record: its reads, writes and eviction deletes
        assert split["storage_requests"] == len(rows) == ops["reads"] + ops["writes"] + ops["eviction_deletes"]
        assert [r_[0] for r_ in rows] == list(range(len(rows)))
        assert [r_[1] for r_ in rows] == sorted(r_[1] for r_ in rows)          # in issue order
        assert not requests.not_adding_up(rows)
        assert sum(1 for r_ in rows if r_[2] == "read") == ops["reads"]
        # the rank's reads in its records are the reads its device latency array holds
        assert sorted(r_[5] for r_ in rows if r_[2] == "read") == pytest.approx(
            sorted(doc["suite_figures"]["device_read_latencies_s"]), abs=2e-6)
        assert split["device_p95_ms"] <= split["total_p95_ms"] + 1e-9
        assert split["device_share"] + split["queue_share"] == pytest.approx(1.0, abs=1e-3)
        queued = doc["suite_figures"]["requests_queued_at_end"]
        assert queued["count"] >= 0 and queued["max_wait_s"] >= 0 and (queued["count"] > 0 or queued["max_wait_s"] == 0)


def test_check_rederives_the_split(leaf, run_cli):
    code, out, err = run_cli("metrics", leaf, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    split = doc["p95_split"]["1"]
    assert sorted(split["ranks"]) == ["option_1/trial_0/rank_0", "option_1/trial_0/rank_1"] == sorted(doc["queued_at_end"])
    pooled = requests.load(_records(leaf, 0)) + requests.load(_records(leaf, 1))
    assert split["overall"] == requests.split(pooled)
    summary = files.load_json(leaf / "summary.json")
    assert summary["options"]["1"]["suite_figures"]["request_split"] == pytest.approx(split["overall"])
    ids = {f["rule_id"] for f in doc["findings"]}
    assert not ids & {"kvcache-p95-split-rederived", "kvcache-request-records-add-up"}
    code, out, _ = run_cli("metrics", leaf)
    out = " ".join(out.split())           # the 100-column wrap breaks a line where the figures' widths put it
    assert "P95 split." in out and "P95 queue ms" in out and "do not add" in out


@pytest.mark.parametrize("where,key", [("rank", "device_p95_ms"), ("rank", "queue_p95_ms"),
                                       ("summary", "queue_p95_ms"), ("summary", "device_share")])
def test_a_forged_split_figure_is_caught(leaf, tmp_path, where, key):
    copy = tmp_path / "leaf"
    shutil.copytree(leaf, copy)
    path = _rankfile(copy, 1) if where == "rank" else copy / "summary.json"
    doc = json.loads(path.read_text())
    split = doc["suite_figures"]["request_split"] if where == "rank" else doc["options"]["1"]["suite_figures"]["request_split"]
    true = split[key]
    split[key] = true / 2 if true else 0.5
    path.write_text(json.dumps(doc))
    hits = [f for f in check.assess(copy)["findings"] if f.rule_id == "kvcache-p95-split-rederived"]
    assert len(hits) == 1 and hits[0].effect == "invalid"
    assert hits[0].field.endswith(f"request_split.{key}")
    assert hits[0].expected == round(true, 6) and hits[0].actual == split[key]
    assert check.assess(copy)["verdict"] == "invalid"


def test_records_that_do_not_add_up_or_are_gone_are_caught(leaf, tmp_path):
    copy = tmp_path / "leaf"
    shutil.copytree(leaf, copy)
    rec = _records(copy, 0)
    lines = rec.read_text().splitlines()
    cells = lines[3].split(",")
    cells[4] = f"{float(cells[4]) + 0.25:.6f}"         # a quarter second of queueing the total does not hold
    lines[3] = ",".join(cells)
    rec.write_text("\n".join(lines) + "\n")
    found = check.assess(copy)["findings"]
    hit = [f for f in found if f.rule_id == "kvcache-request-records-add-up"]
    assert len(hit) == 1 and "line 4 total_s" in hit[0].field and hit[0].actual == cells[6]
    rec.unlink()
    hit = [f for f in check.assess(copy)["findings"] if f.rule_id == "kvcache-p95-split-rederived"]
    assert any(f.actual == "absent" for f in hit)


def test_break_even_for_every_model(leaf, run_cli, tmp_path):
    code, out, err = run_cli("metrics", leaf, "--format", "json")
    be = json.loads(out)["break_even"]["1"]
    doc = model.load()
    assert be["reads"] > 0 and be["model"] == "llama3.1-8b" and be["token_bytes_divisor"] == 256
    assert sorted(be["models"]) == sorted(doc["models"])
    for name, m in be["models"].items():
        p, q = doc["models"][name]["prefill"]["s_per_token"], doc["models"][name]["prefill"]["s_per_token_squared"]
        for L, at in m["at_context_tokens"].items():
            L = int(L)
            assert at["prefill_s"] == pytest.approx(p * L + q * L * L)
            assert at["read_s"] == pytest.approx(be["read_fixed_s"] + L * m["read_s_per_token"])
            assert at["faster"] == ("read" if at["read_s"] < at["prefill_s"] else "recompute")
            since = m["read_beats_recompute_from_tokens"]
            assert (at["faster"] == "read") == (since is not None and L >= since)
    code, out, _ = run_cli("metrics", leaf)
    assert "Break-even" in out and all(name in out.split("Break-even")[1] for name in doc["models"])
    code, _, err = run_cli("report", leaf, "--out", tmp_path / "rep")
    html = (tmp_path / "rep" / "index.html").read_text()
    assert code == 0, err
    assert "P95 device ms" in html and "reading beats recomputing from (tokens)" in html
    assert all(name in html for name in doc["models"])
    exported = (tmp_path / "rep" / "kvcache_break_even.csv").read_text().splitlines()
    assert len(exported) == 1 + len(doc["models"]) and exported[0].startswith("option,model,own_model")
    assert (tmp_path / "rep" / "kvcache_p95_split.csv").read_text().count("\n") == 1 + 1 + 2   # header, all, 2 ranks


def test_break_even_arithmetic():
    # read 1 ms + 10 us/token, recompute 30 us/token: reading wins from 50 tokens on (0.001 + 10e-6 L < 30e-6 L)
    assert breakeven.from_tokens(0.001, 10e-6, 30e-6, 0.0) == 51
    assert breakeven.from_tokens(0.0, 10e-6, 30e-6, 0.0) == 1
    assert breakeven.from_tokens(0.001, 40e-6, 30e-6, 0.0) is None
    # the attention term makes recomputing lose in the end: 40 L + L^2/1000 > 30 L + 1000 (in us) from L = 95
    L = breakeven.from_tokens(1e-3, 40e-6, 30e-6, 1e-9)
    assert 1e-3 + 40e-6 * L < 30e-6 * L + 1e-9 * L * L and not 1e-3 + 40e-6 * (L - 1) < 30e-6 * (L - 1) + 1e-9 * (L - 1) ** 2
    fixed, per_byte = breakeven.fit([(1000, 0.002), (2000, 0.003), (4000, 0.005)])
    assert fixed == pytest.approx(0.001) and per_byte == pytest.approx(1e-6)


row = st.tuples(st.integers(0, requests.MAX_RECORDS), st.floats(0, 1e6, allow_nan=False).map(lambda x: round(x, 6)),
                st.sampled_from(requests.OPS), st.integers(0, 1 << 40),
                st.floats(0, 1e3, allow_nan=False).map(lambda x: round(x, 6)),
                st.floats(0, 1e3, allow_nan=False).map(lambda x: round(x, 6)))


@given(st.lists(row, max_size=30))
@settings(max_examples=60, deadline=None)
def test_records_round_trip(rows):
    full = [(*r, round(r[4] + r[5], 6)) for r in rows]
    back = requests.parse(requests.csv_text(full), "x.csv")
    assert back == full
    assert not requests.not_adding_up(back)


@given(st.text(max_size=300))
@settings(max_examples=200, deadline=None)
def test_records_loader_takes_any_text(text):
    try:
        rows = requests.parse(requests.csv_text([]) + text, "x.csv")
    except ResultError as exc:
        assert str(exc).startswith("x.csv: ") and "\n" not in str(exc)
        return
    for r in rows:
        assert r[2] in requests.OPS and all(v >= 0 for v in (r[0], r[1], r[3], r[4], r[5], r[6]))


@pytest.mark.parametrize("text,field", [("seq,issue_s\n", "header"), (requests.csv_text([]) + "0,1,read,5,0,0\n", "columns"),
                                        (requests.csv_text([]) + "0,1,peek,5,0,0,0\n", "op"),
                                        (requests.csv_text([]) + "0,1,read,5,nan,0,0\n", "queue_s"),
                                        (requests.csv_text([]) + "0,1,read,-5,0,0,0\n", "bytes")])
def test_records_loader_names_the_bad_field(text, field):
    with pytest.raises(ResultError) as e:
        requests.parse(text, "r.csv")
    assert f": {field}: expected" in str(e.value)
