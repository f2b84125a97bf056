"""suite.check.hostrun: a host_metrics.json re-checked against the run's own window and hosts (issue 46),
on documents built with a chosen window (tests/host_builders.py) and on a real series the real sampler
takes around a timed stretch; Hypothesis on the number paths (the CPU total, the times a run records)."""

import json
import math
import time

import host_builders
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.check import hostcpu, hostrun
from suite.harness import hostmetrics

T0 = hostrun.unix_s("2026-01-01T00:00:00.000000Z")


def _two_hosts(tmp_path, samples=None, names=("h1", "h2")):
    samples = samples or [host_builders.sample(float(t)) for t in range(1, 11)]
    one = {k: v for k, v in host_builders.doc(samples).items() if k not in ("schema_version", "scope")}
    host_builders.write(tmp_path, hostmetrics.document([dict(one, host=n) for n in names], "every host"))


def _rules(found) -> list[str]:
    return sorted(f.rule_id for f in found)


def test_a_series_covering_the_run_is_no_finding(tmp_path):
    _two_hosts(tmp_path)
    run = hostrun.run(tmp_path, T0 + 0.5, T0 + 9.5, ["h1", "h2"], "results.json: start, end, hosts")
    assert hostcpu.findings([run], tmp_path) == []


def test_a_window_the_series_misses_by_more_than_two_intervals(tmp_path):
    _two_hosts(tmp_path)
    late = hostrun.run(tmp_path, T0 - 5.0, T0 + 9.0, ["h1", "h2"], "results.json: start, end")
    found = hostcpu.findings([late], tmp_path)
    assert _rules(found) == [hostrun.WINDOW] * 2
    f = found[0]
    assert (f.severity, f.effect, f.path, f.field) == ("error", "invalid", hostmetrics.FILE,
                                                       "hosts[0].started_at+samples[0..9].t_s")
    assert f.expected.startswith("a series covering 2025-12-31T23:59:55.000Z .. 2026-01-01T00:00:09.000Z "
                                 "(the run's timed window, results.json: start, end), within 2.250 s")
    assert f.actual == "host h1: 2026-01-01T00:00:00.000Z .. 2026-01-01T00:00:10.000Z: starts 5.000 s after the run started"
    early = hostrun.run(tmp_path, T0 + 1.0, T0 + 14.0, ["h1", "h2"], "r")
    assert "ends 4.000 s before the run ended" in hostcpu.findings([early], tmp_path)[0].actual
    within = hostrun.run(tmp_path, T0 - 2.0, T0 + 12.0, ["h1", "h2"], "r")    # two intervals short: allowed
    assert hostcpu.findings([within], tmp_path) == []
    coarse = hostrun.run(tmp_path, T0 - 3.0, T0 + 13.0, ["h1", "h2"], "r", precision_s=1.0)   # whole seconds
    assert hostcpu.findings([coarse], tmp_path) == []


def test_hosts_renamed_dropped_added_and_a_series_emptied(tmp_path):
    _two_hosts(tmp_path, names=("h1", "h3"))
    run = hostrun.run(tmp_path, hosts=["h1", "h2"], source="results.json: hosts")
    (f,) = hostcpu.findings([run], tmp_path)
    assert (f.rule_id, f.field) == (hostrun.HOSTS, "hosts[].host")
    assert f.expected == "one series per host of the run: h1, h2 (results.json: hosts)"
    assert f.actual == "h1, h3: no series for h2; a series for h3, not a host of the run"
    at_least = hostrun.run(tmp_path, hosts=["h1"], all_hosts=False)           # a dask cluster's others unnamed
    assert hostcpu.findings([at_least], tmp_path) == []
    doc = json.loads((tmp_path / hostmetrics.FILE).read_text())
    doc["hosts"][1]["samples"] = []
    (tmp_path / hostmetrics.FILE).write_text(json.dumps(doc))
    found = hostcpu.findings([at_least], tmp_path)
    assert _rules(found) == [hostrun.HOSTS, hostcpu.UNSAMPLED]
    assert next(f for f in found if f.rule_id == hostrun.HOSTS).actual == "host h3: no samples and no warning"
    doc["warnings"] = ["host h3: not sampled through ssh: exit 255"]          # the run said why: a warning only
    (tmp_path / hostmetrics.FILE).write_text(json.dumps(doc))
    assert _rules(hostcpu.findings([at_least], tmp_path)) == [hostcpu.UNSAMPLED]


def test_cpu_totals_and_a_gap(tmp_path):
    samples = [dict(host_builders.sample(float(t)), cpu_steal_pct=0.0, cpu_idle_pct=84.0) for t in range(1, 11)]
    samples[3].update(cpu_user_pct=90.0, cpu_system_pct=60.0)
    samples[5].update(cpu_idle_pct=50.0)                      # 66%: short of 100, the same lie
    samples = samples[:7] + [dict(s, t_s=s["t_s"] + 5.0) for s in samples[7:]]      # 5 s without a sample
    host_builders.write(tmp_path, host_builders.doc(samples))
    found = hostcpu.findings([tmp_path], tmp_path)
    assert _rules(found) == [hostrun.CPU, hostrun.GAP]
    cpu, gap = sorted(found, key=lambda f: f.rule_id)
    assert cpu.field == "samples[3].cpu_user_pct+cpu_system_pct+cpu_iowait_pct+cpu_steal_pct+cpu_idle_pct"
    assert cpu.actual == "host h1: 235% (and 1 more sample(s))" and cpu.expected.startswith("100% of all CPUs")
    assert (gap.severity, gap.effect, gap.field) == ("warning", "closed", "samples[7].t_s")
    assert gap.actual == "host h1: 6.000 s without a sample after 7.000 s"


def test_a_file_from_before_steal_and_idle_may_sum_under_100_not_over(tmp_path):
    samples = [host_builders.sample(float(t)) for t in range(1, 4)]
    host_builders.write(tmp_path, host_builders.doc(samples))
    assert hostcpu.findings([tmp_path], tmp_path) == []
    samples[1].update(cpu_user_pct=70.0, cpu_system_pct=40.0)
    host_builders.write(tmp_path, host_builders.doc(samples))
    (f,) = hostcpu.findings([tmp_path], tmp_path)
    assert f.field == "samples[1].cpu_user_pct+cpu_system_pct+cpu_iowait_pct" and f.expected.startswith("at most 100%")


def test_a_run_without_the_file_its_sibling_has(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    host_builders.write(tmp_path / "a", host_builders.doc([host_builders.sample(1.0)]))
    runs = [hostrun.run(tmp_path / d, T0, T0 + 1.0, ["h1"], "r") for d in ("a", "b")]
    (f,) = hostcpu.findings(runs, tmp_path)
    assert (f.rule_id, f.path, f.actual) == (hostrun.MISSING, "b/host_metrics.json", "none")
    assert "a/host_metrics.json" in f.expected
    assert hostcpu.findings([tmp_path / "a", tmp_path / "b"], tmp_path) == []    # nothing recorded: not asked


def test_the_real_sampler_covers_the_stretch_it_was_around(tmp_path):
    """The real Sampler around a real timed stretch: the window the run would record is covered."""
    with hostmetrics.Sampler(interval_s=0.1) as s:
        start = time.time()
        time.sleep(0.6)
        end = time.time()
    s.write(tmp_path)
    import socket

    run = hostrun.run(tmp_path, start, end, [socket.gethostname()], "this test's clock")
    assert [f for f in hostcpu.findings([run], tmp_path) if f.rule_id != hostrun.GAP] == []
    shifted = hostrun.run(tmp_path, start + 1.0, end + 1.0, [socket.gethostname()], "a second later")
    assert _rules(hostcpu.findings([shifted], tmp_path)) in ([hostrun.WINDOW], [hostrun.GAP, hostrun.WINDOW])


PCT = st.floats(min_value=0, max_value=100, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(PCT, min_size=5, max_size=5), st.booleans())
def test_the_cpu_total_bound(parts, old):
    s = hostmetrics.Sample(1.0, *parts[:3], 0, 0, 0, 0, 0, 0, *([None, None] if old else parts[3:]))
    got = hostrun.cpu_total_problem(s)
    total = sum(parts[:3] if old else parts)
    if old:
        assert (got is None) == (total <= 100.5)
    else:
        assert (got is None) == (abs(total - 100.0) <= 0.5 or total == 0.0)
    assert got is None or got == pytest.approx(total)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True), st.integers(),
                 st.text(max_size=80), st.datetimes().map(lambda d: d.isoformat()), st.lists(st.integers(), max_size=2)))
def test_a_recorded_time_is_seconds_or_nothing(value):
    got = hostrun.unix_s(value)
    assert got is None or (isinstance(got, float) and math.isfinite(got))
    run = hostrun.run(".", value, value, value if isinstance(value, list) else ())
    assert run.hosts == () and run.start_unix_s == got
