"""Results that lie about their hosts (issue 46, class 8 "Host metrics not cross-checked"): each kind's
real small run (the session's `voiced` runs, tests/conftest.py: one real `suite run` per kind, shared
with tests/harness/test_cpu_saturation.py) copied, and its host_metrics.json tampered with: a series
truncated, shifted by an hour, a host renamed, a host's series deleted, a host added, a CPU total of
150%, a run's file deleted. Each must be a finding of suite.check.hostrun's rules (error, effect
invalid: evidence contradicting the run's own record) naming the file, the field, what the run
recorded and what the series says; the untampered copy has none. A percentage outside 0..100 is no
host_metrics.json at all: one line, exit 2."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from host_builders import copied_results
from suite.check import hostrun
from suite.harness import hostmetrics

pytestmark = pytest.mark.timeout(900)   # the voiced runs: made once

KINDS = ("training", "checkpointing", "kv_cache", "vector_database", "tpcx-ai")
RULES = (hostrun.WINDOW, hostrun.HOSTS, hostrun.CPU, hostrun.MISSING, hostrun.GAP)


def _copy(voiced, kind, tmp_path) -> tuple[Path, list[Path]]:
    """A copy of the kind's real results, and its host_metrics.json files (sorted)."""
    return copied_results(voiced, kind, tmp_path / "R")


def _edit(path: Path, fn) -> None:
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def _found(run_cli, root: Path) -> tuple[int, list[dict]]:
    """suite check's exit code and its findings of issue 46's rules (every kind's JSON, walked)."""
    code, out, err = run_cli("check", root, "--format", "json")
    assert code in (0, 1), err
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("rule_id") in RULES:
                found.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(json.loads(out))
    return code, found


def _one(run_cli, root: Path, rule: str) -> dict:
    code, found = _found(run_cli, root)
    got = [f for f in found if f["rule_id"] == rule]
    assert got, found
    f = got[0]
    assert (f["severity"], f["effect"]) == ("error", "invalid"), f
    assert f["path"].endswith(hostmetrics.FILE) and code == 1, (f, code)
    return f


def _host(doc: dict) -> dict:
    return doc["hosts"][0]


@pytest.mark.parametrize("kind", KINDS)
def test_the_real_runs_host_metrics_agree_with_the_run(voiced, kind, tmp_path, run_cli):
    root, _ = _copy(voiced, kind, tmp_path)
    assert _found(run_cli, root)[1] == [], kind


def _truncate(doc):
    """The series' last 6 sampling intervals cut off (a short run's series: all of it). A cut within
    hostrun.GRACE_INTERVALS of the end is within what a sampler's timing allows: no lie to catch."""
    h = _host(doc)
    h["samples"] = [s for s in h["samples"] if s["t_s"] <= h["samples"][-1]["t_s"] - 6 * h["interval_s"]]


@pytest.mark.parametrize("kind", KINDS)
def test_a_truncated_series(voiced, kind, tmp_path, run_cli):
    root, (path, *_) = _copy(voiced, kind, tmp_path)
    _edit(path, _truncate)
    left = _host(json.loads(path.read_text()))["samples"]
    f = _one(run_cli, root, hostrun.WINDOW if left else hostrun.HOSTS)
    if left:                    # what is left ends before the run did
        assert "s before the run ended" in f["actual"] and f["expected"].startswith("a series covering "), f
    else:                       # nothing left, and no warning of the run's saying why
        assert f["field"] == "hosts[0].samples" and "no samples and no warning" in f["actual"], f


@pytest.mark.parametrize("kind", ("training", "kv_cache", "tpcx-ai"))
@pytest.mark.parametrize("how", ("started_at", "t_s"))
def test_a_series_shifted_by_an_hour(voiced, kind, how, tmp_path, run_cli):
    root, (path, *_) = _copy(voiced, kind, tmp_path)

    def shift(doc):
        h = _host(doc)
        if how == "started_at":
            t = datetime.strptime(h["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ") + timedelta(hours=1)
            h["started_at"] = t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        else:
            for s in h["samples"]:
                s["t_s"] += 3600.0
            h["duration_s"] += 3600.0
    _edit(path, shift)
    f = _one(run_cli, root, hostrun.WINDOW)
    host = _host(json.loads(path.read_text()))["host"]
    assert f["field"].startswith("hosts[0].started_at+samples[0..") and f["field"].endswith("].t_s"), f
    assert f["actual"].startswith(f"host {host}: ") and "s after the run started" in f["actual"], f
    assert "the run's timed window" in f["expected"], f


@pytest.mark.parametrize("kind", KINDS)
def test_a_renamed_host(voiced, kind, tmp_path, run_cli):
    root, (path, *_) = _copy(voiced, kind, tmp_path)
    host = _host(json.loads(path.read_text()))["host"]
    _edit(path, lambda doc: _host(doc).update(host="elsewhere"))
    f = _one(run_cli, root, hostrun.HOSTS)
    assert f["field"] == "hosts[].host" and f["expected"].startswith(f"one series per host of the run: {host} ("), f
    assert f"no series for {host}" in f["actual"] and "a series for elsewhere, not a host of the run" in f["actual"], f


@pytest.mark.parametrize("kind", ("training", "checkpointing", "vector_database"))
def test_a_hosts_series_deleted_or_a_host_added(voiced, kind, tmp_path, run_cli):
    root, (path, *_) = _copy(voiced, kind, tmp_path)
    host = _host(json.loads(path.read_text()))["host"]
    _edit(path, lambda doc: doc.update(hosts=doc["hosts"][1:]))
    f = _one(run_cli, root, hostrun.HOSTS)
    assert f["actual"] == f"none: no series for {host}", f
    root2, (path2, *_) = _copy(voiced, kind, tmp_path / "added")
    _edit(path2, lambda doc: doc["hosts"].append(dict(_host(doc), host="suite-h9")))
    f = _one(run_cli, root2, hostrun.HOSTS)
    assert f["actual"] == f"{host}, suite-h9: a series for suite-h9, not a host of the run", f


@pytest.mark.parametrize("kind", ("training", "vector_database", "tpcx-ai"))
def test_a_cpu_total_of_150_percent(voiced, kind, tmp_path, run_cli):
    root, (path, *_) = _copy(voiced, kind, tmp_path)
    _edit(path, lambda doc: _host(doc)["samples"][0].update(cpu_user_pct=90.0, cpu_system_pct=60.0))
    f = _one(run_cli, root, hostrun.CPU)
    assert f["field"].startswith("hosts[0].samples[0].cpu_user_pct+cpu_system_pct+cpu_iowait_pct"), f
    assert f["expected"].startswith("100% of all CPUs"), f          # this suite's files record all five
    total = re.match(r"host [^:]+: ([0-9.]+)%", f["actual"])
    assert total and float(total.group(1)) >= 150.0, f


@pytest.mark.parametrize("kind", ("training", "kv_cache"))
def test_one_percentage_of_150_is_no_host_metrics_file(voiced, kind, tmp_path, run_cli):
    """Outside 0..100 the file fails its schema: bad input, never a traceback. Training: one line naming
    it, exit 2. kv_cache's check goes through the tree of parts (suite/kinds/tree.py), which shows a part
    it cannot read as unusable, naming the file and the field, and is INVALID, exit 1."""
    root, (path, *_) = _copy(voiced, kind, tmp_path)
    _edit(path, lambda doc: _host(doc)["samples"][0].update(cpu_user_pct=150.0))
    code, out, err = run_cli("check", root)
    assert "Traceback" not in out + err, err
    if kind == "training":
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        said = err
    else:
        said = " ".join(out.split())          # the terminal's wrap undone
        assert code == 1 and "unusable: " in said and out.rstrip().splitlines()[-1].startswith("verdict: INVALID"), out
    assert hostmetrics.FILE in said and "cpu_user_pct: expected maximum 100, got 150.0" in said, said


def test_a_runs_file_deleted_where_its_sibling_kept_one(voiced, tmp_path, run_cli):
    """Training's warm-up and measured run are sampled alike: one of them without host_metrics.json
    had it removed."""
    root, found = _copy(voiced, "training", tmp_path)
    assert len(found) >= 2, found
    found[0].unlink()
    f = _one(run_cli, root, hostrun.MISSING)
    assert f["path"] == str(found[0].relative_to(root)) and f["actual"] == "none", f
    assert str(found[1].relative_to(root)) in f["expected"], f
