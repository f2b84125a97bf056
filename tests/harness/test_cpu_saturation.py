"""Issue 37: `suite check` warns (host-cpu-saturated, suite.check.hostcpu) where a host's CPUs were
saturated while the storage waited, for every kind with host metrics, from one place.

Each kind's real small leaf (the session's `voiced` runs, tests/conftest.py) is copied and its
host_metrics.json edited: a stretch of its real samples made busy (user+system 98%, iowait 0.2%)
gives the warning, naming the file, the samples, the % and the interval; the same samples calm, a
busy stretch shorter than MIN_SPAN_S, or one where the CPUs also waited on I/O give none. Then a
real kv_cache run under a real CPU hog (a busy loop on every core) gives it with nothing edited.
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import host_builders
import pytest

from suite import cli
from suite.check import hostcpu
from suite.harness import hostmetrics
from suite.kinds.tree import findings_of

pytestmark = pytest.mark.timeout(900)   # the voiced runs: made once

KINDS = ("training", "checkpointing", "kv_cache", "vector_database", "tpcx-ai")


def _leaf(voiced, kind, tmp_path) -> tuple[Path, Path]:
    """A copy of the kind's real results dir, and its first host_metrics.json (relative to the copy)."""
    copy, found = host_builders.copied_results(voiced, kind, tmp_path / "R")
    for path in found[1:]:
        _edit(path, busy=0)
    return copy, found[0].relative_to(copy)


def _edit(path: Path, busy: int, user: float = 80.0, system: float = 18.0, iowait: float = 0.2) -> None:
    """The run's real samples, every one calmed (user+system at most 60%: this machine is shared, the
    run's own may have been busy), then `busy` of them from the second on set to user/system/iowait. A
    run shorter than that gets more samples at its interval, its cumulative counters held (still a
    valid file: t_s increasing, counters never falling)."""
    doc = json.loads(path.read_text())
    host = doc["hosts"][0]              # the file's first host (a single-host run: its only one)
    samples = host["samples"]
    assert samples, path
    while len(samples) < busy + 2:
        samples.append(dict(samples[-1], t_s=round(samples[-1]["t_s"] + host["interval_s"], 6)))
    for s in samples:
        s.update(cpu_user_pct=min(s["cpu_user_pct"], 40.0), cpu_system_pct=min(s["cpu_system_pct"], 20.0))
        _balance(s)
    for s in samples[1:1 + busy]:
        s.update(cpu_user_pct=user, cpu_system_pct=system, cpu_iowait_pct=iowait)
        _balance(s, steal=0.0)
    host["duration_s"] = samples[-1]["t_s"]
    path.write_text(json.dumps(doc))
    hostmetrics.load(path)                       # still a valid host_metrics.json


def _balance(s: dict, steal: float | None = None) -> None:
    """A sample's idle (and steal, where given) set so its CPU percentages add up to 100 again, as the
    sampler records them (host-metrics-cpu: an edit that broke the sum would be a lie of its own). A
    file from before steal and idle were recorded is left as it is."""
    if "cpu_idle_pct" not in s:
        return
    if steal is not None:
        s["cpu_steal_pct"] = steal
    rest = 100.0 - sum(s[k] for k in ("cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_steal_pct"))
    s["cpu_idle_pct"] = round(max(0.0, rest), 3)
    s["cpu_steal_pct"] = round(s["cpu_steal_pct"] + min(0.0, rest), 3)


def _warnings(root: Path, rule: str = hostcpu.RULE) -> list[dict]:
    """The `rule` (host-cpu-saturated) findings of `suite check ROOT --format json` (every kind's JSON), run
    in this process (`cli.main`, its output taken as the console script prints it)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["check", str(root), "--format", "json"])
    assert code in (0, 1), err.getvalue()[-2000:]
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("rule_id") == rule:
                found.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(json.loads(out.getvalue()))
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_planted_saturation_warns_and_calm_samples_do_not(voiced, kind, tmp_path):
    root, rel = _leaf(voiced, kind, tmp_path)
    _edit(root / rel, busy=0)
    assert _warnings(root) == [], kind
    _edit(root / rel, busy=12)
    got = _warnings(root)
    assert len(got) == 1, (kind, got)
    w = got[0]
    assert w["severity"] == "warning" and w["effect"] == "closed"
    assert (root / rel).as_posix().endswith("/" + w["path"]) or w["path"].endswith(str(rel)), (w["path"], rel)
    assert w["field"] == "hosts[0].samples[1..12].cpu_user_pct+cpu_system_pct+cpu_steal_pct"   # steal: busy too
    assert w["expected"].startswith("below 95% of all CPUs")
    assert _warnings(root, "host-metrics-cpu") == [], kind       # the edit kept each sample's total at 100%
    assert w["actual"].startswith("host ") and "98.0% of all CPUs over " in w["actual"] and "iowait 0.2%" in w["actual"]


@pytest.mark.parametrize("kind", ("training", "tpcx-ai"))
def test_a_short_or_storage_bound_busy_stretch_is_no_warning(voiced, kind, tmp_path):
    root, rel = _leaf(voiced, kind, tmp_path)
    _edit(root / rel, busy=5)                             # 5 s busy: under MIN_SPAN_S
    assert _warnings(root) == [], kind
    _edit(root / rel, busy=12, user=78.0, system=17.0, iowait=4.0)   # the CPUs waited on I/O too: both at their limit
    assert _warnings(root) == [], kind


@pytest.mark.parametrize("kind", ("training", "tpcx-ai"))
def test_a_host_the_run_could_not_sample_is_a_warning_that_says_why(voiced, kind, tmp_path):
    """A host in the file with no series (its sampler failed; the run wrote the warning beside it):
    host-unsampled names the host, where in the file, and why; the verdict does not move."""
    root, rel = _leaf(voiced, kind, tmp_path)
    _edit(root / rel, busy=0)
    doc = json.loads((root / rel).read_text())
    doc["hosts"].append(hostmetrics.empty_host("suite-h9", 1.0))
    doc["warnings"].append("host suite-h9: not sampled through ssh: exit 255, no series: Connection refused")
    (root / rel).write_text(json.dumps(doc))
    (w,) = _warnings(root, hostcpu.UNSAMPLED)
    assert (w["severity"], w["effect"], w["field"]) == ("warning", "closed", "hosts[1].samples"), w
    assert w["actual"].startswith("host suite-h9: none (host suite-h9: not sampled through ssh: exit 255"), w
    assert _warnings(root) == []


def test_the_verdict_stays_what_it_was(voiced, tmp_path):
    """A warning is a note (effect closed): the kind's verdict line and exit code do not move."""
    root, rel = _leaf(voiced, "tpcx-ai", tmp_path)
    code, text, *_ = voiced["tpcx-ai"]
    _edit(root / rel, busy=12)
    out = subprocess.run([sys.executable, "-m", "suite", "check", str(root)], capture_output=True, text=True, timeout=300)
    assert out.returncode == code and hostcpu.RULE in out.stdout
    assert out.stdout.rstrip("\n").splitlines()[-1] == text.rstrip("\n").splitlines()[-1]


def test_a_real_run_under_a_cpu_hog_is_warned(tmp_path, monkeypatch, capsys):
    """kv_cache, 3 s of trial with a python busy loop on every core it may use: the sampled host was saturated, and
    the check says so from the real samples (1 s apart: the trial and the run's start, 4 s and more). The
    span the warning needs is cut to 2 s (MIN_SPAN_S: a threshold, not what is under test; the hogs burn a
    core each for as long as the run lasts, so the trial is no longer than that span needs)."""
    monkeypatch.setattr(hostmetrics, "MIN_SPAN_S", 2.0)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in os.sched_getaffinity(0)]
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = cli.main(["run", "--workload", "kv-cache", "--option", "1", "--trials", "1", "--duration", "3",
                         "--inter-option-delay", "0", "--accelerators", "1", "--allow-no-cache-drop",
                         "--division", "open", "--results-dir", str(tmp_path / "R"), "--no-history"])
    finally:
        os.chdir(here)
        for h in hogs:
            h.kill()
            h.wait()
    assert code in (0, 1)
    capsys.readouterr()
    assert cli.main(["check", str(tmp_path / "R"), "--format", "json"]) in (0, 1)     # in this process: the cut span
    got = [f for f in findings_of(json.loads(capsys.readouterr().out)) if f["rule_id"] == hostcpu.RULE]
    assert got and all(w["path"].endswith(hostmetrics.FILE) for w in got), got


def test_a_host_metrics_link_out_of_the_run_is_bad_input(voiced, tmp_path):
    """Results come from other parties: a host_metrics.json that is a link out of its run's directory is
    refused as every other file (exit 2, one line naming it), never read."""
    root, rel = _leaf(voiced, "checkpointing", tmp_path)
    outside = tmp_path / "elsewhere.json"
    shutil.copy(root / rel, outside)
    (root / rel).unlink()
    (root / rel).symlink_to(outside)
    out = subprocess.run([sys.executable, "-m", "suite", "check", str(root)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and hostmetrics.FILE in out.stderr, out.stderr


def test_across_hosts_the_warning_names_the_host_that_saturated(tmp_path):
    """A run across hosts: one series per host (schema 2); only h2's CPUs saturated, and the warning says
    which host, where in the file."""
    calm, busy = (host_builders.saturated(busy_s=b) for b in (0, 12))
    entries = [{k: v for k, v in d.items() if k not in ("schema_version", "scope")} for d in (calm, busy)]
    doc = hostmetrics.document([dict(entries[0], host="h1"), dict(entries[1], host="h2")], "every host")
    host_builders.write(tmp_path, doc)
    (w,) = hostcpu.findings([tmp_path], tmp_path)
    assert w.path == hostmetrics.FILE and w.field == "hosts[1].samples[5..16].cpu_user_pct+cpu_system_pct"
    assert w.actual.startswith("host h2: 97.0% of all CPUs over 5.0-17.0 s")


def test_steal_counts_as_busy(tmp_path):
    """Issue 46: a VM's steal time is CPU its host took from it, not CPU left over. user+system at 70% and
    steal at 28% is saturated, and the warning says so, naming steal; the same with nothing stolen is not."""
    busy = [dict(host_builders.sample(t, user=60.0, system=10.0, iowait=0.2, disk_read=t << 20),
                 cpu_steal_pct=28.0, cpu_idle_pct=1.8) for t in range(1, 16)]
    host_builders.write(tmp_path, host_builders.doc(busy))
    (w,) = hostcpu.findings([tmp_path], tmp_path)
    assert w.rule_id == hostcpu.RULE and w.field == "samples[0..14].cpu_user_pct+cpu_system_pct+cpu_steal_pct"
    assert w.actual.startswith("host h1: 98.0% of all CPUs"), w.actual
    calm = [dict(s, cpu_steal_pct=0.0, cpu_idle_pct=29.8) for s in busy]     # the same user+system, nothing stolen
    host_builders.write(tmp_path, host_builders.doc(calm))
    assert hostcpu.findings([tmp_path], tmp_path) == []


def test_a_real_cpu_hog_under_the_real_sampler_is_warned(tmp_path, monkeypatch):
    """A real hog on every core this process may use (stress-ng where installed, else a python busy loop
    per core) for ~4 s, sampled by the real Sampler at 0.2 s: every sample records steal and idle, the
    five CPU percentages add up to 100, and the check warns host-cpu-saturated from those samples. The
    span the warning needs is cut to 2 s (MIN_SPAN_S: a threshold, not what is under test) to keep
    the test short; a loaded 2-core machine only makes the CPUs busier."""
    cores = len(os.sched_getaffinity(0))
    stress = shutil.which("stress-ng")
    argv = ([stress, "--cpu", str(cores), "--timeout", "6s", "--quiet"] if stress else None)
    hogs = ([subprocess.Popen(argv)] if argv else
            [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(2, cores))])
    try:
        time.sleep(0.5)                                   # the hog at full speed before the baseline
        with hostmetrics.Sampler(interval_s=0.2) as sampler:
            time.sleep(4.0)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    sampler.write(tmp_path)
    (hm,) = hostmetrics.load(tmp_path / hostmetrics.FILE).hosts
    assert len(hm.samples) >= 10
    for s in hm.samples:
        assert s.cpu_steal_pct is not None and s.cpu_idle_pct is not None
        total = sum(getattr(s, k) for k in hostmetrics.CPU_PCTS)
        assert total == pytest.approx(100.0, abs=0.1) or total == 0.0, s
        assert s.busy_pct == pytest.approx(100.0 - s.cpu_idle_pct - s.cpu_iowait_pct, abs=0.1)
    monkeypatch.setattr(hostmetrics, "MIN_SPAN_S", 2.0)
    got = [f for f in hostcpu.findings([tmp_path], tmp_path) if f.rule_id == hostcpu.RULE]
    assert len(got) == 1 and got[0].field.endswith("cpu_user_pct+cpu_system_pct+cpu_steal_pct"), \
        [(s.busy_pct, s.cpu_iowait_pct) for s in hm.samples]
