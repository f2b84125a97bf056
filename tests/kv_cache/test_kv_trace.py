"""Issue 48, KV cache: `suite run --workload kv-cache --io-trace FILE` writes every cache operation
(option, trial, rank, time_s, op, key, bytes, tier) as CSV, and `--replay FILE --cache-dir D` replays
one; one trace replayed on two file systems (a tmpfs mount and the ext4 disk) makes the same operation
stream: the same operations, keys, bytes and tiers in the same order per rank. Real runs: the
miniature, 2 MPI ranks, options 1 (storage only) and 2 (CPU tier first), 2 s each."""

import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import files
from suite.errors import SuiteError
from suite.kv_cache import trace


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    from suite import cli

    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    res = tmp_path_factory.mktemp("kvres")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(res)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    work = tmp_path_factory.mktemp("kvtrace")
    cwd = os.getcwd()
    os.chdir(work)
    try:
        for option in ("1", "2"):
            code = cli.main(["run", "--workload", "kv-cache", "--results-dir", str(res / f"R{option}"), "--option", option,
                             "--duration", "2", "--accelerators", "2", "--allow-no-cache-drop",
                             "--io-trace", str(work / f"trace{option}.csv")])
            assert code == 1              # the miniature: never compliant
    finally:
        os.chdir(cwd)
    leaves = [next((res / f"R{o}" / "kv_cache").glob("*/run/*")) for o in ("1", "2")]
    yield work, leaves
    subprocess.run(["umount", "-l", str(res)], check=False)


def test_the_trace_holds_every_cache_operation(traced):
    work, leaves = traced
    for option, leaf in zip(("1", "2"), leaves):
        rows = trace.load(work / f"trace{option}.csv")
        assert rows and {r[0] for r in rows} == {int(option)} and {r[2] for r in rows} == {0, 1}
        per = trace.streams(rows)
        for (o, t, r), ops in per.items():
            rank = files.load_json(next((leaf / f"option_{o}" / f"trial_{t}" / f"rank_{r}").glob("kvcache_results_*.json")))
            s = rank["suite_figures"]["storage_ops"]
            storage = [x for x in ops if x[3] == "storage"]
            assert sum(x[0] == "read" for x in storage) == s["reads"]
            assert sum(x[0] in ("write", "evict_write") for x in storage) == s["writes"]
            assert sum(x[0] == "delete" for x in storage) == s["eviction_deletes"]
            # and the storage rows are the rank's per-request records, op for op and byte for byte
            from suite.kv_cache import requests
            recs = requests.load(next((leaf / f"option_{o}" / f"trial_{t}" / f"rank_{r}").glob("kvcache_requests_*.csv")))
            assert [(x[2], x[3]) for x in recs] == [(x[0], x[2]) for x in storage]
            times = [x[3] for x in rows if x[:3] == (o, t, r)]
            assert times == sorted(times)
    tiers = {r[7] for r in trace.load(work / "trace2.csv")}
    assert "cpu" in tiers                    # option 2 holds 4 GB of CPU tier per rank: its entries go there first


def test_two_replays_on_two_file_systems_make_one_stream(traced, run_cli, tmp_path):
    work, _ = traced
    tmpfs = tmp_path / "tmpfs"
    tmpfs.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", str(tmpfs)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        disk = tmp_path / "disk"                 # tmp_path: the ext4 root disk
        for name in ("trace1.csv", "trace2.csv"):
            made = {}
            for where, cache in (("tmpfs", tmpfs / "cache"), ("disk", disk)):
                out = tmp_path / f"{where}-{name}"
                code, said, err = run_cli("run", "--workload", "kv-cache", "--replay", work / name, "--cache-dir", cache,
                                          "--io-trace", out)
                assert code == 0, err
                assert "kv-cache replay" in said and f"in {out}" in said
                made[where] = trace.load(out)
                assert not list(cache.rglob("*.kv")), "entry files are removed after the replay"
            original = trace.streams(trace.load(work / name))
            assert trace.streams(made["tmpfs"]) == trace.streams(made["disk"]) == original
            assert len(made["tmpfs"]) == sum(map(len, original.values()))
    finally:
        subprocess.run(["umount", "-l", str(tmpfs)], check=False)


def test_a_replay_that_cannot_match_the_trace_fails(traced, run_cli, tmp_path):
    """A read whose file holds other bytes than the trace says: exit 2, one line, not a silent replay."""
    work, _ = traced
    rows = trace.load(work / "trace1.csv")
    k = next(i for i, r in enumerate(rows) if r[4] == "read" and r[7] == "storage")
    rows[k] = (*rows[k][:6], rows[k][6] + 4096, rows[k][7])
    bad = tmp_path / "bad.csv"
    bad.write_text(trace.csv_text(rows))
    code, _, err = run_cli("run", "--workload", "kv-cache", "--replay", bad, "--cache-dir", tmp_path / "c")
    assert code == 2 and err.count("\n") == 1 and "expected" in err and "read" in err, err


def test_refusals(run_cli, tmp_path):
    code, _, err = run_cli("run", "--workload", "kv-cache", "--replay", tmp_path / "none.csv")
    assert code == 2 and "--cache-dir" in err
    code, _, err = run_cli("run", "--workload", "kv-cache", "--io-trace", tmp_path / "no" / "t.csv", "--results-dir", tmp_path / "r")
    assert code == 2 and "--io-trace" in err and "expected an existing folder" in err
    (tmp_path / "t.csv").write_text("option,trial\n")
    code, _, err = run_cli("run", "--workload", "kv-cache", "--replay", tmp_path / "t.csv", "--cache-dir", tmp_path / "c")
    assert code == 2 and "header: expected option,trial,rank,time_s,op,key,bytes,tier" in err
    code, _, err = run_cli("run", "--workload", "unet3d", "--io-trace", tmp_path / "t2.csv", "--data-dir", tmp_path)
    assert code == 2 and "--io-trace" in err
    many = tmp_path / "many.csv"          # a thread per rank: a trace of more ranks than that is refused, nothing made
    many.write_text(trace.csv_text([(1, 0, r, 0.0, "delete", "k", 0, "storage") for r in range(trace.MAX_REPLAY_RANKS + 1)]))
    code, _, err = run_cli("run", "--workload", "kv-cache", "--replay", many, "--cache-dir", tmp_path / "c2")
    assert code == 2 and f"expected at most {trace.MAX_REPLAY_RANKS}" in err and not list((tmp_path / "c2").glob("rank_*"))


trace_row = st.tuples(st.integers(0, 99), st.integers(0, 9999), st.integers(0, trace.MAX_RANK),
                      st.floats(0, 1e6, allow_nan=False).map(lambda x: round(x, 6)), st.sampled_from(trace.OPS),
                      st.from_regex(trace.KEY, fullmatch=True), st.integers(0, 1 << 44), st.sampled_from(trace.TIERS))


@given(st.lists(trace_row, max_size=30))
@settings(max_examples=60, deadline=None)
def test_trace_round_trip(rows):
    assert trace.parse(trace.csv_text(rows), "t.csv") == rows


@given(st.text(max_size=300))
@settings(max_examples=200, deadline=None)
def test_trace_loader_takes_any_text(text):
    try:
        rows = trace.parse(trace.csv_text([]) + text, "t.csv")
    except SuiteError as exc:
        assert str(exc).startswith("t.csv: ") and "\n" not in str(exc)
        return
    for r in rows:
        assert trace.KEY.fullmatch(r[5]) and "/" not in r[5] and r[4] in trace.OPS and r[7] in trace.TIERS
