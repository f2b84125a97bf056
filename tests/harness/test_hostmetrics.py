"""suite.harness.hostmetrics: the sampler on this host's real /proc (CPU burnt, bytes written and
fsync'd while it samples), the enforced loop writing each run's host_metrics.json, the loader on
hostile documents (Hypothesis: a HostMetrics or one ResultError line, never another exception),
the saturation spans the checks bound, and the report section's plot."""

import json
import math
import os
import threading
import time

import host_builders
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suite.check import hostrun
from suite.errors import ResultError, SuiteError
from suite.harness import enforced, hostmetrics, proc
from suite.harness.enforced import Series


def _burn_and_write(where, seconds: float) -> None:
    end = time.monotonic() + seconds
    with open(where / "blob", "wb") as f:
        while time.monotonic() < end:
            f.write(os.urandom(1 << 16))
            f.flush()
            os.fsync(f.fileno())
            sum(range(20000))


def test_the_sampler_records_this_hosts_load_with_sane_values(tmp_path):
    with hostmetrics.Sampler(interval_s=0.1) as s:
        _burn_and_write(tmp_path, 0.8)
    path = s.write(tmp_path)
    (hm,) = hostmetrics.load(path).hosts
    assert hm.host and hm.scope == hostmetrics.THIS_HOST and hm.interval_s == 0.1
    assert len(hm.samples) >= 5 and hm.duration_s == pytest.approx(hm.samples[-1].t_s)
    ts = [x.t_s for x in hm.samples]
    assert ts == sorted(ts) and len(set(ts)) == len(ts) and ts[-1] >= 0.8
    for x in hm.samples:
        for v in (x.cpu_user_pct, x.cpu_system_pct, x.cpu_iowait_pct):
            assert 0 <= v <= 100
        assert x.cpu_steal_pct is not None and x.cpu_idle_pct is not None     # issue 46: /proc/stat's steal and idle
        total = sum(getattr(x, k) for k in hostmetrics.CPU_PCTS)
        assert total == pytest.approx(100.0, abs=0.01) or total == 0.0
        assert x.mem_used_bytes > 0 and x.page_cache_bytes > 0
    assert max(x.cpu_user_pct + x.cpu_system_pct for x in hm.samples) > 0    # we burnt CPU
    for c in hostmetrics.COUNTERS:       # cumulative counters, never decreasing
        values = [getattr(x, c) for x in hm.samples]
        assert values == sorted(values)
    rates = hm.rates()
    assert all(r[k] >= 0 and math.isfinite(r[k]) for r in rates for k in r)
    if hm.disk_devices:                  # the fsync'd bytes reached a disk we count
        assert hm.samples[-1].disk_write_bytes > 0
    assert 0 < hm.sampler_cpu_s < 0.5    # what the sampling cost, recorded


def test_a_run_shorter_than_the_interval_still_has_one_sample(tmp_path):
    with hostmetrics.Sampler(interval_s=60) as s:
        pass
    (hm,) = hostmetrics.load(s.write(tmp_path)).hosts
    assert len(hm.samples) == 1


def test_past_max_points_the_interval_doubles_and_the_counters_stay_whole(monkeypatch, tmp_path):
    monkeypatch.setattr(hostmetrics, "MAX_POINTS", 8)
    s = hostmetrics.Sampler(interval_s=0.5)
    for _ in range(20):
        s.take()
    assert len(s.points) <= 8 and s.interval_s > 0.5
    (hm,) = hostmetrics.load(s.write(tmp_path)).hosts
    assert [x.t_s for x in hm.samples] == sorted(x.t_s for x in hm.samples)


class Toy:
    def __init__(self, results_dir, runs=2, where=None):
        self.given, self.runs, self.claimed, self.where = results_dir, runs, None, where

    def prepare(self):
        return Series(name="toy", results_dir=self.given, runs=self.runs, clear_cache=None,
                      write_run_set=lambda results: None, started=self.started,
                      host_metrics_dir=self.where and (lambda k: self.claimed / self.where))

    def started(self, path):
        self.claimed = path

    def run_once(self, k, drop):
        (self.claimed / f"run-{k}").mkdir()
        (self.claimed / "elsewhere").mkdir(exist_ok=True)
        time.sleep(0.25)
        return {"status": "complete", "error": None}


def test_the_enforced_loop_writes_each_runs_host_metrics(tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_HOST_METRICS_INTERVAL_S", "0.05")
    series, _ = enforced.run(Toy(tmp_path / "R"))
    for k in (1, 2):
        (hm,) = hostmetrics.load(series.results_dir / f"run-{k}" / hostmetrics.FILE).hosts
        assert len(hm.samples) >= 3 and hm.samples[-1].t_s >= 0.25


def test_a_kind_names_where_its_runs_host_metrics_go(tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_HOST_METRICS_INTERVAL_S", "0.05")
    series, _ = enforced.run(Toy(tmp_path / "R", runs=1, where="elsewhere"))
    assert (series.results_dir / "elsewhere" / hostmetrics.FILE).is_file()
    assert not (series.results_dir / "run-1" / hostmetrics.FILE).exists()


def test_interval_zero_samples_nothing_and_a_bad_interval_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_HOST_METRICS_INTERVAL_S", "0")
    series, _ = enforced.run(Toy(tmp_path / "R", runs=1))
    assert not (series.results_dir / "run-1" / hostmetrics.FILE).exists()
    for bad in ("fast", "-1", "nan", "inf"):
        monkeypatch.setenv("SUITE_HOST_METRICS_INTERVAL_S", bad)
        with pytest.raises(SuiteError, match="SUITE_HOST_METRICS_INTERVAL_S: expected") as exc:
            hostmetrics.interval_s()
        assert "\n" not in str(exc.value)


def test_the_sampling_thread_stops_with_the_run():
    before = threading.active_count()
    with hostmetrics.Sampler(interval_s=0.01):
        assert threading.active_count() == before + 1
    assert threading.active_count() == before


def test_proc_parsers():
    assert proc.cpu_jiffies("cpu  10 1 5 100 4 0 2 0 0 0\ncpu0 1 2 3\n") == {
        "user": 10, "nice": 1, "system": 5, "idle": 100, "iowait": 4, "irq": 0, "softirq": 2, "steal": 0}
    assert proc.cpu_jiffies("cpu 1 2 3\n")["idle"] == 0 and proc.cpu_jiffies("") ["user"] == 0
    assert hostmetrics.whole_disks(["sda", "sda1", "sda2", "nvme0n1", "nvme0n1p1", "loop0", "dm-0", "md127"]) == \
        ["nvme0n1", "sda"]


def test_saturated_spans_find_the_busy_stretch():
    hm = hostmetrics.load_doc(host_builders.saturated(busy_s=20, idle_s=5)).hosts[0]
    spans = hostmetrics.saturated_spans(hm, 95.0, 10.0)
    assert len(spans) == 1 and spans[0]["start_s"] == 5 and spans[0]["end_s"] == 25
    assert spans[0]["busy_mean_pct"] == 97.0 and spans[0]["disk_mean_mib_s"] == pytest.approx(1.0)
    assert hostmetrics.longest_saturated_s(hm) == 20
    assert hostmetrics.longest_saturated_s(hostmetrics.load_doc(host_builders.saturated(busy_s=0)).hosts[0]) == 0


# ------------------------------------------------------------------------- hostile input

def _one_line_or_record(path):
    try:
        rec = hostmetrics.load(path)
    except ResultError as exc:
        text = str(exc)
        assert "\n" not in text and str(path) in text
        return None
    assert len({hm.host for hm in rec.hosts}) == len(rec.hosts)
    for hm in rec.hosts:
        for x in hm.samples:
            assert all(math.isfinite(v) for v in (x.t_s, x.cpu_user_pct, x.cpu_system_pct, x.cpu_iowait_pct))
            assert 0 <= x.cpu_user_pct <= 100
            assert all(v is None or (math.isfinite(v) and 0 <= v <= 100) for v in (x.cpu_steal_pct, x.cpu_idle_pct))
        assert all(math.isfinite(v) for r in hm.rates() for v in r.values())
        hostmetrics.storage_waited_spans(hm)
    found = hostrun.of(rec, hostrun.run(path.parent, 1.7e9, 1.7e9 + 5, ["h1"], "a run"), "x")  # never raises
    assert all(f.rule_id in hostrun.RULES for f in found)
    return rec


numbers = st.one_of(st.integers(min_value=-10, max_value=10 ** 20), st.floats(allow_nan=True, allow_infinity=True),
                    st.none(), st.text(max_size=4), st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=st.lists(st.dictionaries(st.sampled_from([*host_builders.sample(1), *hostmetrics.CPU_PCTS[3:]]), numbers,
                                      max_size=4),
                       max_size=4),
       top=st.dictionaries(st.sampled_from(["interval_s", "duration_s", "sampler_cpu_s", "host", "schema_version"]),
                           numbers, max_size=2),
       hosts=st.sampled_from([0, 1, 2]), outer=st.dictionaries(st.sampled_from(["hosts", "warnings", "scope"]),
                                                                 st.one_of(numbers, st.lists(numbers, max_size=2)),
                                                                 max_size=1))
def test_any_edited_document_is_a_record_or_one_line(tmp_path, fields, top, hosts, outer):
    """Schema 1 (hosts 0: one host at the top level) or 2 (hosts 1 or 2: the edited host beside a
    good one, or alone), its fields, a sample's or the outer document's edited."""
    samples = [{**host_builders.sample(i + 1, disk_read=i), **edit} for i, edit in enumerate(fields)]
    doc = {**host_builders.doc(samples or [host_builders.sample(1)]), **top}
    if hosts:
        entry = {k: v for k, v in doc.items() if k not in ("schema_version", "scope")}
        good = dict(host_builders.doc([host_builders.sample(1)]), host="h0")
        good = {k: v for k, v in good.items() if k not in ("schema_version", "scope")}
        doc = {**hostmetrics.document([good, entry][2 - hosts:], "every host"), **outer}
    path = tmp_path / "host_metrics.json"
    path.write_text(json.dumps(doc))      # NaN and Infinity written bare, as a careless party would
    _one_line_or_record(path)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)))
def test_any_bytes_are_a_record_or_one_line(tmp_path, raw):
    path = tmp_path / "host_metrics.json"
    path.write_bytes(raw)
    _one_line_or_record(path)


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["samples"][1].update(t_s=0.5), "samples[1].t_s"),
    (lambda d: d["samples"][2].update(disk_read_bytes=0), "samples[2].disk_read_bytes"),
    (lambda d: d["samples"][0].update(cpu_user_pct=101), "cpu_user_pct"),
    (lambda d: d.update(interval_s=float("nan")), "interval_s"),
])
def test_broken_documents_are_named(tmp_path, edit, field):
    doc = host_builders.saturated(busy_s=3, idle_s=2)
    edit(doc)
    path = host_builders.write(tmp_path, doc)
    with pytest.raises(ResultError, match=field.replace("[", r"\[").replace("]", r"\]")) as exc:
        hostmetrics.load(path)
    assert "\n" not in str(exc.value) and str(path) in str(exc.value)


def test_an_oversized_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / hostmetrics.FILE
    path.write_bytes(b" " * (hostmetrics.MAX_FILE_BYTES + 1))
    with pytest.raises(ResultError):
        hostmetrics.load(path)


def test_the_report_section_holds_a_plot_per_run():
    from suite.report import hostplots
    from suite.report.content import Image, Table

    hm = hostmetrics.load_doc(host_builders.saturated(busy_s=5, idle_s=5)).hosts[0]
    sec = hostplots.section("host", [("run-1", hm, ("samples/s", [(0.0, 10.0), (9.0, 12.0)])), ("run-2", hm, None),
                                     ("run-3", None, None)])
    images = [b for b in sec.blocks if isinstance(b, Image)]
    assert [i.name for i in images] == ["host-1", "host-2"] and all(i.png.startswith(b"\x89PNG") for i in images)
    table = next(b for b in sec.blocks if isinstance(b, Table))
    assert [r[0] for r in table.rows] == ["run-1", "run-2"] and table.rows[0][4] == "97.0"
    assert table.header[-1] == "CPU saturated s" and table.rows[0][-1] == "0"     # 5 s: under MIN_SPAN_S
    long = hostplots.section("host", [("run-1", hostmetrics.load_doc(host_builders.saturated(busy_s=12)).hosts[0],
                                       None)])
    assert next(b for b in long.blocks if isinstance(b, Table)).rows[0][-1] == "12"  # host-cpu-saturated's span
    assert hostplots.section("host", [("run-1", None, None)]) is None


def test_a_vanishing_interface_or_disk_never_makes_a_count_fall():
    """Namespace hosts' veths come and go while a run is sampled: the sum over devices must not fall
    (the loader refuses a falling counter as forged). Each step adds only the increases of the devices
    present before and after it."""
    from suite.harness import hostmetrics

    s = hostmetrics.Sampler(interval_s=1.0)
    cpu = {k: 100 for k in hostmetrics.proc.CPU_FIELDS}
    mem = {"MemTotal": 1 << 20, "MemFree": 1 << 19, "Cached": 1 << 10}

    def point(t, rx):
        return (t, {k: v + int(t * 10) for k, v in cpu.items()}, mem, {}, {}, rx, {})
    s.points = [point(0.0, {"eth0": 100, "veth1": 5000}), point(1.0, {"eth0": 300, "veth1": 9000}),
                point(2.0, {"eth0": 400}), point(3.0, {"eth0": 450, "veth2": 7})]
    counts = [x.net_rx_bytes for x in s.samples()]
    assert counts == [200 + 4000, 4200 + 100, 4300 + 50]
    assert counts == sorted(counts)
    hostmetrics.load_doc(s.doc())                  # what the sampler writes, the loader takes
