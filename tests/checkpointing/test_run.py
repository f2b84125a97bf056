"""`suite run --workload llama3-8b` for real: 8 MPI ranks write a miniature checkpoint (fsync'd)
five times ten, in a memory cgroup; a second invocation drops the page cache and reads it back;
`suite check` accepts the pair and refuses what breaks the rules. The pair is docs/checkpointing.md's
two v2.0 lines, run once a session (tests/conftest.py `v2_checkpoint_pair`, in a 1 GiB cgroup): the
docs example and the reference tool read the same 80 rank processes' work. Tests that run more copy
it first. Slow (~1 min on 2 busy cores)."""

import json
import os
import shutil
from pathlib import Path

import pytest

from suite import files
from suite.checkpointing import workloads
from suite.checkpointing import model

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: a real cache drop and memory cgroup")


RUN = ["run", "--workload", "llama3-8b", "--ruleset", "v2.0", "--memory-limit", "1GiB"]


@pytest.fixture
def here(run_cli, monkeypatch):
    """`suite ARGV` in-process (cli.main, as a user's invocation but without a new interpreter) in `cwd`."""
    def call(cwd, *argv):
        monkeypatch.chdir(cwd)
        return run_cli(*argv)

    return call


MINIATURE_LINE = "verdict: CLOSED MINIATURE NOT PUBLISHABLE (not compliant)"


@pytest.fixture(scope="module")
def pair(v2_checkpoint_pair):
    """(ck, data, (exit, said) of W, (exit, said) of R): ck/W (write phase) and ck/R (read phase) of the
    miniature at data (--data-dir), as a user runs them; shared by the session: read, never change."""
    base, ran = v2_checkpoint_pair
    return base / "ck", base / "mnt" / "ckpt", *ran


def private(pair, into: Path) -> Path:
    """A copy of the pair to change: into/W, into/R, and the checkpoints at into's default miniature folder
    (results/checkpoint-data/llama3-8b-miniature, hard links: the runs here only read them)."""
    ck, data, *_ = pair
    shutil.copytree(ck, into, symlinks=True, dirs_exist_ok=True)
    shutil.copytree(data, into / "results" / "checkpoint-data" / "llama3-8b-miniature", copy_function=os.link)
    return into


def test_write_then_read_runs_eight_ranks_in_a_cgroup_with_a_real_drop(pair):
    tmp, folder, (wc, wout), (rc, rout) = pair
    # the miniature: complete, never compliant (suite.rules.verdict); the last line says so
    assert wc == 1 and "MINIATURE" in wout.splitlines()[-1], wout     # W alone: suite check W's line (no read yet)
    assert rc == 1 and "MINIATURE" in rout.splitlines()[-1], rout     # R alone: its write is in W (checked together below)
    assert "MINIATURE" in wout and "8 processes" in wout
    ck = model.from_workload(workloads.load("llama3-8b"), 8, miniature=True)
    for k in range(1, 11):
        for r in range(8):
            for s in ck.rank_shards(r):
                assert (folder / f"global_epoch1_step{k}" / s.name).stat().st_size == s.nbytes
    for phase in ("W", "R"):
        for k in range(1, 6):
            doc = files.load_json(tmp / phase / f"run-{k}" / "results.json", schema="checkpoint-results")
            enf = doc["enforcement"]
            assert enf["cache_drop"]["succeeded"] is True and enf["cache_drop"]["method"].startswith("sync")
            mem = enf["memory_limit"]
            assert mem["applied_bytes"] == 1 << 30 and mem["removed"] is True and mem["oom_kills"] == 0
            assert 0 < mem["peak_bytes"] <= 1 << 30
            assert doc["processes"] == 8 and doc["fsync"] is True and doc["host_memory_bytes"] == 1 << 30
            ranks = [json.loads(p.read_text()) for p in sorted((tmp / phase / f"run-{k}" / "ranks").glob("*.json"))]
            assert len({r["pid"] for r in ranks}) == 8                     # eight real processes
            assert len(doc["checkpoints"]) == 10
            for c in doc["checkpoints"]:
                assert c["bytes"] == ck.total_bytes
                # duration = max over ranks; throughput = size / that = min over ranks of size / own duration
                durs = [x["duration_s"] for r in ranks for x in r["checkpoints"] if x["index"] == c["index"]]
                assert c["duration_s"] == max(durs)
                assert c["throughput_gib_s"] == pytest.approx(ck.total_bytes / 2**30 / max(durs))
                assert c["rank_min_gib_s"] <= c["rank_max_gib_s"]
    reads = [files.load_json(tmp / "R" / f"run-{k}" / "results.json") for k in range(1, 6)]
    # the drop worked: next to nothing of the 10 checkpoints cached when the read starts (drop_caches may
    # leave a few pages a CPU's LRU batch still holds; the rule allows 1%)
    resident = [d["enforcement"]["resident_bytes_before_read"] for d in reads]
    assert all(r <= 0.01 * ck.total_bytes * 10 for r in resident), resident
    # issue 24 (class 3): the read names its write by id and a relative path, never an absolute one
    write_id = files.load_json(tmp / "W" / "checkpoint_run_set.json")["phase_id"]
    assert all(d["written_by"]["results_dir"] == "../W" and d["written_by"]["write_id"] == write_id for d in reads)


def test_dlio_shaped_summary_and_the_mean_over_five_runs(pair):
    tmp = pair[0]
    s = json.loads((tmp / "R" / "run-2" / "summary.json").read_text())
    assert {"load_checkpoint_io_mean_GB_per_second", "load_checkpoint_duration_mean_seconds",
            "checkpoint_size_GB"} <= set(s["metric"]) and "save_checkpoint_io_mean_GB_per_second" not in s["metric"]
    stats = json.loads((tmp / "W" / "run-1" / "per_epoch_stats.json").read_text())
    assert sorted(stats["1"]) == sorted([f"save_ckpt{k}" for k in range(1, 11)] + ["start", "end", "duration"])
    rs = json.loads((tmp / "W" / "checkpoint_run_set.json").read_text())
    per_run = [r["write_throughput_mean_gib_s"] for r in rs["runs"]]
    assert len(per_run) == 5 and rs["overall"]["write_throughput_mean_gib_s"] == pytest.approx(sum(per_run) / 5)


def test_check_accepts_the_pair(pair, run_cli):
    tmp = pair[0]
    code, out, err = run_cli("check", tmp)
    assert code == 1 and out.splitlines()[-1] == MINIATURE_LINE, out + err
    assert "CLOSED   R" in out and "CLOSED   W" in out and "checkpoint-miniature" in out


def test_metrics_show_bandwidth_per_run_and_per_rank(pair, run_cli):
    tmp = pair[0]
    code, out, err = run_cli("metrics", tmp / "R")
    assert code == 0, err
    assert "read" in out and "GiB/s" in out and "run-5" in out and "rank 7" in out
    code, out, err = run_cli("metrics", tmp / "W", "--format", "json")
    doc = json.loads(out)
    assert len(doc["runs"]) == 5 and len(doc["ranks"]) == 8 and doc["overall"]["write_throughput_mean_gib_s"] > 0


def test_a_read_without_a_drop_is_refused_in_closed_and_flagged_in_open(pair, here, tmp_path):
    tmp = private(pair, tmp_path / "ck")       # the reads here find the checkpoints without --data-dir
    code, _, err = here(tmp, *RUN, "--accelerators", 8, "--checkpoints-write", 0, "--no-cache-drop",
                        "--results-dir", "R1")
    assert code == 2 and "--no-cache-drop: expected --division open" in err
    code, out, err = here(tmp, *RUN, "--accelerators", 8, "--checkpoints-write", 0, "--checkpoints-read", 2, "--runs", 1,
                          "--no-cache-drop", "--division", "open", "--results-dir", "open-read")
    assert code == 1 and "MINIATURE" in out.splitlines()[-1], err
    code, out, err = here(tmp, "check", tmp, "--format", "json")
    assert code == 1
    found = {f["rule_id"]: f for b in json.loads(out)["benchmarks"] for f in b["findings"]
             if b["path"] == "open-read"}
    assert found["checkpoint-read-cache-drop"]["effect"] == "invalid"
    assert found["checkpoint-read-cache-drop"]["path"] == "open-read/run-1/results.json"


@pytest.mark.parametrize("argv,message", [
    (["--accelerators", 8, "--checkpoints-write", 2, "--checkpoints-read", 2], "expected one of them 0"),
    (["--accelerators", 16, "--checkpoints-read", 0], "expected 8 (TP x PP x DP of llama3-8b)"),
    (["--accelerators", 8, "--checkpoints-read", 0, "--hosts", "a,b,c"], "at least 4 processes per host"),
    (["--accelerators", 8, "--checkpoints-write", 0, "--data-dir", "nowhere"], "suite-checkpoint.json: expected"),
    (["--accelerators", 4, "--mode", "subset", "--checkpoints-write", 0], "mode: expected 'subset'"),
    (["--accelerators", 8, "--checkpoints-read", 0, "--param", "a.b=1"], "--param: expected only with a training workload"),
    (["--accelerators", 8, "--checkpoints-read", 0, "--data-dir", "W"], "expected a new or empty directory, or one "
                                                                        "a checkpoint write made"),
    (["--accelerators", 8, "--checkpoints-read", 0, "--data-dir", "/dev/shm/x"], "expected a checkpoint directory"),
])
def test_refusals_are_one_line_and_exit_2(pair, argv, message, here, tmp_path):
    tmp = private(pair, tmp_path)       # W, R and the checkpoints where a read without --data-dir looks
    code, out, err = here(tmp, *RUN, *argv, "--results-dir", "refused")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp / "refused").exists()


def test_subset_mode_is_refused_for_70b(tmp_path, here):
    code, out, err = here(tmp_path, "run", "--workload", "llama3-70b", "--accelerators", 8, "--mode", "subset",
                           "--checkpoints-read", 0)
    # v3.0 (the default round) names its rule; v2.0's message says "llama3-8b only"
    assert code == 2 and "llama3-8b" in err and "llama3-70b" in err and len(err.strip().splitlines()) == 1, err


def test_a_read_where_the_cache_cannot_be_dropped_is_refused_in_closed(tmp_path, here, monkeypatch):
    """As uid 65534 /proc/sys/vm/drop_caches is really not writable: the closed read refuses before
    anything starts; --allow-no-cache-drop reads, and `suite check` then refuses the result. One checkpoint
    written and read: the refusal and the default folder are the point, not how many."""
    import tempfile

    from tests.training.run.test_runner import as_nobody

    tmp = Path(tempfile.mkdtemp(prefix="suite-nobody-"))
    try:
        os.chmod(tmp, 0o777)
        code, out, err = here(tmp, *RUN, "--accelerators", 8, "--checkpoints-read", 0, "--checkpoints-write", 1,
                              "--runs", 1, "--results-dir", "W")
        assert code == 1 and "MINIATURE" in out.splitlines()[-1], err          # the miniature: never compliant
        # without --data-dir the miniature goes to ./results/checkpoint-data/<workload>-miniature
        ck = model.from_workload(workloads.load("llama3-8b"), 8, miniature=True)
        folder = tmp / "results" / "checkpoint-data" / "llama3-8b-miniature"
        assert [(folder / "global_epoch1_step1" / s.name).stat().st_size for r in range(8)
                for s in ck.rank_shards(r)] == [s.nbytes for r in range(8) for s in ck.rank_shards(r)]
        for p in [tmp, *tmp.rglob("*")]:
            os.chmod(p, 0o777 if p.is_dir() else 0o644)
        base = ["run", "--workload", "llama3-8b", "--ruleset", "v2.0", "--accelerators", 8, "--checkpoints-write", 0,
                "--checkpoints-read", 1, "--runs", 1]
        # the session's bytecode prefix is under pytest's 0700 temp dir: uid 65534 cannot read it, and with the
        # prefix set its interpreters (the CLI, 8 ranks) would compile every module again; without it they
        # read the venv's own __pycache__
        monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
        closed = as_nobody(base + ["--results-dir", tmp / "R"], tmp)
        assert closed.returncode == 2 and "cache drop: expected permission" in closed.stderr, closed.stderr
        assert not (tmp / "R").exists()
        allowed = as_nobody(base + ["--results-dir", tmp / "R", "--allow-no-cache-drop"], tmp)
        assert allowed.returncode == 1 and "MINIATURE" in allowed.stdout.splitlines()[-1], allowed.stderr
        doc = files.load_json(tmp / "R" / "run-1" / "results.json", schema="checkpoint-results")
        assert doc["enforcement"]["cache_drop"]["succeeded"] is False
        code, out, _ = here(tmp, "check", tmp, "--format", "json")
        ids = {f["rule_id"] for b in json.loads(out)["benchmarks"] for f in b["findings"]}
        assert code == 1 and "checkpoint-read-cache-drop" in ids
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
