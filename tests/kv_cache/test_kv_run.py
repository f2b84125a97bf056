"""`suite run --workload kv-cache`: a closed-parameter run of all three options at a reduced duration
(1 trial of 2 s each, 2 MPI ranks through real mpiexec, real files fsync'd on the cache dir, results
on a tmpfs: another file system), its published layout, suite check's verdict (OPEN: the reduced
duration and trial count noted, nothing invalid), suite metrics per option; then each rule of
rules/v3.0/kv_cache.yaml failing on a copy of that leaf with one thing broken."""

import json
import re
import os
import shutil
import subprocess

import pytest

from suite import files
from suite.kv_cache import check
from suite.kv_cache import leaf as kvleaf

DURATION_S = 2          # each trial; a run whose trial served nothing on a starved machine is run again
RETRY_DURATION_S = 8    # at this duration, once (closed_leaf)
CACHE_TMPFS = "18g"     # per rank 95 % / 2 = 8.55 GiB: the 70B option's largest entry (25,000 tokens x
                        # 327,680 B = 8.19 GB) fits, so no allocation is refused; pages only as written


def _closed_run(cache, results, duration_s: int):
    """One closed run of options 1-3 (1 trial each, 2 ranks) into `results`: (exit code, its leaf)."""
    from suite import cli

    code = cli.main(["run", "--workload", "kv-cache", "--cache-dir", str(cache), "--results-dir", str(results),
                     "--trials", "1", "--duration", str(duration_s), "--inter-option-delay", "0",
                     "--accelerators", "2", "--allow-no-cache-drop"])
    assert not [p for p in cache.rglob("*.kv")], "entry files are removed after each trial"
    leaves = list((results / "kv_cache").glob("*/run/*"))
    assert len(leaves) == 1
    return code, leaves[0]


@pytest.fixture(scope="module")
def closed_leaf(tmp_path_factory):
    """One closed run, options 1-3, reduced (~15 s), made once a session for every xdist worker that runs
    tests of this file (tests/conftest.py `once`; a module fixture was made by each): read it as it is,
    copy before changing anything."""
    from tests.conftest import once

    return once(tmp_path_factory, "kv-closed-leaf", _closed_leaf)


def _closed_leaf(tmp_path_factory):
    """The results on a tmpfs of their own (another file system than the cache's), mounted until the
    session's end (tests/conftest.py pytest_sessionfinish unmounts what lies under the session's temp dir:
    the other workers read the leaf). The cache dir a tmpfs (pages only as written, evicted at the per-rank
    capacity): on a disk beside other jobs no full-size request completes in seconds. On a machine other
    jobs starve, option 3's first 70B entries (84 MB-8 GB, four at a time) may not complete in DURATION_S:
    a trial that served none fails the run (issue 36, class 11), and the run is made again once at
    RETRY_DURATION_S, saying why (issue 47: a retry that measures and says why)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    results = tmp_path_factory.mktemp("kvres")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(results)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    cache = tmp_path_factory.mktemp("kvcache")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={CACHE_TMPFS}", "tmpfs", str(cache)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        code, leaf = _closed_run(cache, results / "R", DURATION_S)
        unserved = [f for f in check.assess(leaf)["findings"] if f.rule_id == "kvcache-trials-complete"]
        if unserved:
            print(f"closed_leaf: {unserved[0].message}; run again at {RETRY_DURATION_S} s a trial")
            shutil.rmtree(results / "R")
            code, leaf = _closed_run(cache, results / "R", RETRY_DURATION_S)
    finally:
        subprocess.run(["umount", "-l", str(cache)], check=False)
    return code, leaf


def test_closed_run_layout_and_verdict(closed_leaf):
    code, leaf = closed_leaf
    assert code == 1                                     # OPEN: reduced, so not compliant
    assert leaf.parent.parent.name == "llama3.1-8b"
    names = {p.name for p in leaf.iterdir()}
    assert {"summary.json", "fs_separation.json", "option_1", "option_2", "option_3"} <= names
    for o in (1, 2, 3):
        assert f"kvcache_opt{o}_trial0_{leaf.name}.stdout.log" in names
        assert f"kvcache_opt{o}_trial0_{leaf.name}.stderr.log" in names
        for r in (0, 1):
            assert sorted(p.name for p in (leaf / f"option_{o}" / "trial_0" / f"rank_{r}").iterdir()) == \
                [f"kvcache_requests_{leaf.name}.csv", f"kvcache_results_{leaf.name}.json"]
    meta = files.load_json(leaf / f"kv_cache_{leaf.name}_metadata.json")
    cmds = [c["command"] for c in meta["command_output_files"]]
    assert len(cmds) == 3 and all("-n 2" in c for c in cmds)
    assert "--num-users 200" in cmds[0] and "--cpu-mem-gb 4" in cmds[1] and "--model llama3.1-70b-instruct" in cmds[2]
    assert json.loads((leaf / "fs_separation.json").read_text())["separate"] is True
    a = check.assess(leaf)
    assert a["verdict"] == "open"
    assert not [f for f in a["findings"] if f.effect == "invalid"], [f.message for f in a["findings"]]
    assert {"kvcache-closed-duration", "kvcache-closed-sequence-locks"} <= {f.rule_id for f in a["findings"]}


def test_metrics_per_option(closed_leaf, run_cli):
    _code, leaf = closed_leaf
    code, out, err = run_cli("metrics", leaf, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert sorted(doc["options"]) == ["1", "2", "3"]
    assert all(s["status"] == "rederived" for s in doc["rederived"]), doc["rederived"]
    summary = files.load_json(leaf / "summary.json")
    for o in ("1", "2", "3"):
        assert doc["options"][o]["rank_count"] == 2 and doc["options"][o]["trial_count"] == 1
        assert doc["options"][o]["aggregated_avg_throughput_tokens_per_sec"] == \
            summary["options"][o]["aggregated_avg_throughput_tokens_per_sec"]
    code, out, err = run_cli("metrics", leaf)
    assert code == 0 and "suite: device read P95 ms" in out and "re-derived:" in out


def test_report_page(closed_leaf, run_cli, tmp_path):
    _code, leaf = closed_leaf
    code, out, err = run_cli("report", leaf, "--out", tmp_path / "rep")
    assert code == 0, err
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "<h2>Per option</h2>" in html and "<h2>Latency and tier occupancy</h2>" in html
    assert {p.name for p in (tmp_path / "rep" / "plots").iterdir()} == {"kvcache-latency-cdf.png", "kvcache-occupancy.png",
                                                                  "host-1.png", "host-2.png", "host-3.png"}
    assert "<h2>Host metrics (client CPU, disk, network)</h2>" in html       # a trial's host_metrics.json each
    assert sorted(p.parent.name for p in leaf.glob("option_*/trial_*/host_metrics.json")) == ["trial_0"] * 3
    assert (tmp_path / "rep" / "kvcache_options.csv").read_text().startswith("option,aggregated_avg_throughput")


def _copy(leaf, tmp_path):
    dst = tmp_path / "leaf"
    shutil.copytree(leaf, dst)
    return dst


def _meta(leaf):
    return next(leaf.glob("kv_cache_*_metadata.json"))


def _edit_json(path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _commands(leaf, old, new):
    _edit_json(_meta(leaf), lambda d: [c.update(command=c["command"].replace(old, new)) for c in d["command_output_files"]])


def _rank(leaf):
    return next((leaf / "option_1" / "trial_0" / "rank_0").glob("*.json"))


def _forge_records(leaf):
    """The first record's total_s a millisecond longer than its queue_s + device_s."""
    path = next((leaf / "option_1" / "trial_0" / "rank_0").glob("kvcache_requests_*.csv"))
    lines = path.read_text().splitlines()
    cells = lines[1].split(",")
    cells[-1] = f"{float(cells[-1]) + 0.001:.6f}"
    lines[1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")


BREAKS = {
    "kvcache-commands-recorded": lambda l: _edit_json(_meta(l), lambda d: d.update(command_output_files=[])),
    "kvcache-fixed-workload-per-option": lambda l: _commands(l, "--num-users 200", "--num-users 20"),
    "kvcache-autoscaling-prohibited": lambda l: _commands(l, "--generation-mode none", "--generation-mode none --enable-autoscaling"),
    "kvcache-per-client-isolation": lambda l: shutil.copytree(l / "option_1" / "trial_0" / "rank_1", l / "option_1" / "trial_0" / "rank_7"),
    "kvcache-shared-results-dir": lambda l: _rank(l).unlink(),
    "kvcache-trials-complete": lambda l: _edit_json(_meta(l), lambda d: d["suite"]["trials"][0].update(status="failed")),
    "kvcache-aggregate-figures": lambda l: _edit_json(l / "summary.json", lambda d: d["options"]["2"].update(aggregated_avg_throughput_tokens_per_sec=1e9)),
    "kvcache-rank-figures-rederived": lambda l: _edit_json(_rank(l), lambda d: d["summary"].update(avg_throughput_tokens_per_sec=1e9)),
    "kvcache-posix-cache-dir": lambda l: _edit_json(l / "fs_separation.json", lambda d: d.update(separate=False)),
    "kvcache-not-miniature": lambda l: _edit_json(_meta(l), lambda d: d["suite"].update(miniature=True)),
    "kvcache-summary-name": lambda l: (l / "summary.json").rename(l / "kvcache_run_summary_20260101_000000.json"),
    "kvcache-posix-io-model": lambda l: _commands(l, "python", "env LD_PRELOAD=/x/nofadvise.so python"),
    "kvcache-p95-split-rederived": lambda l: _edit_json(l / "summary.json", lambda d: d["options"]["1"]["suite_figures"]["request_split"].update(device_p95_ms=0.001)),
    "kvcache-request-records-add-up": lambda l: _forge_records(l),
    "kvcache-closed-duration": None,         # the run itself is reduced: fails as run
    "kvcache-closed-sequence-locks": None,
    "kvcache-latency-validity": lambda l: [_edit_json(p, lambda d: d["summary"]["cache_stats"].update(storage_entries=0))
                                           for p in l.glob("option_*/trial_*/rank_*/*.json")],
    "kvcache-open-allowances": lambda l: [_edit_json(_meta(l), lambda d: d["suite"].update(division="open")),
                                          _commands(l, "--max-concurrent-allocs 16", "--max-concurrent-allocs 64")],
}


def test_every_kv_cache_rule_has_a_failing_case():
    from suite.rules import engine

    ids = {r.id for r in engine.load_layers("v3.0", ("kv_cache.yaml",)).rules}
    assert ids == set(BREAKS)


@pytest.mark.parametrize("rule_id", sorted(k for k, v in BREAKS.items() if v is not None))
def test_rule_fails_when_broken(closed_leaf, tmp_path, rule_id):
    _code, leaf = closed_leaf
    before = {f.rule_id for f in check.assess(leaf)["findings"]}
    if rule_id != "kvcache-latency-validity":
        assert rule_id not in before
    copy = _copy(leaf, tmp_path)
    BREAKS[rule_id](copy)
    hit = [f for f in check.assess(copy)["findings"] if f.rule_id == rule_id]
    assert hit and hit[0].message.endswith(f"({rule_id})")


def test_reduced_rules_fail_on_the_reduced_run(closed_leaf):
    _code, leaf = closed_leaf
    found = {f.rule_id for f in check.assess(leaf)["findings"]}
    assert {"kvcache-closed-duration", "kvcache-closed-sequence-locks"} <= found


def test_the_leaf_loads_as_a_leaf(closed_leaf):
    _code, leaf = closed_leaf
    lf = kvleaf.load(leaf)
    assert len(lf.ranks) == 6 and len(lf.logs) == 6


def test_closed_cache_and_results_on_one_file_system_name_the_cache_dir(tmp_path, run_cli):
    """Rule 6.4.1 refused up front, in the option the user gave (--cache-dir, not --data-dir); nothing made."""
    code, _, err = run_cli("run", "--workload", "kv-cache", "--cache-dir", tmp_path / "c", "--results-dir", tmp_path / "r")
    line = err.strip().splitlines()[-1]
    assert code == 2 and line.startswith(f"suite run: error: --cache-dir {tmp_path / 'c'} and --results-dir"), err
    assert "file systems: expected different ones" in line and not (tmp_path / "c").exists()


def _labelled(ax, axis: str) -> list[str]:
    """The tick labels an axis shows inside its view (after a draw)."""
    lo, hi = sorted(getattr(ax, f"get_{axis}lim")())
    ticks = getattr(ax, f"get_{axis}ticklabels")(minor=False) + getattr(ax, f"get_{axis}ticklabels")(minor=True)
    return [t.get_text() for t in ticks if t.get_text() and lo <= getattr(t, f"get_position")()[0 if axis == "x" else 1] <= hi]


def test_the_plots_have_labelled_axes_and_name_trials_as_the_run_does(closed_leaf):
    """Issue 47: the latency CDF had no x tick labels (a log axis within one decade) and the occupancy
    legend said `option_1/trial_0/rank_0` where the run says "[option 1 trial 1/1]"."""
    _code, leaf = closed_leaf
    from suite.kv_cache import page

    doc = check.metrics(leaf)
    for fig in (page.latency_figure(doc["latencies_s"]), page.occupancy_figure(doc["occupancy"])):
        fig.canvas.draw()
        ax = fig.axes[0]
        assert ax.get_xlabel() and ax.get_ylabel()
        assert len(_labelled(ax, "x")) >= 2 and len(_labelled(ax, "y")) >= 2, (_labelled(ax, "x"), ax.get_xlim())
    names = sorted(doc["occupancy"])
    assert names and all(re.fullmatch(r"option [123] trial 1/1 rank [01]", n) for n in names), names
    one_decade = {"1": [0.0021, 0.0034, 0.0050, 0.0090]}            # 2.1..9 ms: a log axis labels no tick here
    fig = page.latency_figure(one_decade)
    fig.canvas.draw()
    assert fig.axes[0].get_xscale() == "linear" and len(_labelled(fig.axes[0], "x")) >= 2
