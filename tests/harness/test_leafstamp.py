"""suite.harness.leafstamp: the one leaf stamp, its clock (Rules.md's local time), both clocks read."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from suite.harness import leafstamp

SUITE = Path(__file__).resolve().parents[2] / "suite"
SPELLINGS = re.compile(r"%Y%m%d_%H%M%S|\\d\{8\}_\\d\{6\}|\[0-9\]\{8\}_\[0-9\]\{6\}")


@pytest.fixture
def tz_plus_5(monkeypatch):
    """The process's local zone five and a half hours east of UTC (no DST), restored afterwards."""
    monkeypatch.setenv("TZ", "XST-05:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_round_trip_in_both_clocks(tz_plus_5):
    t = 1_783_493_173.75                                 # 2026-07-08T06:46:13.75Z
    utc, local = leafstamp.stamp(t, "utc"), leafstamp.stamp(t, "local")
    assert utc == "20260708_064613" and local == "20260708_121613"
    assert leafstamp.parse(utc, "utc").timestamp() == int(t)
    assert leafstamp.parse(local, "local").timestamp() == int(t)
    assert leafstamp.stamp(t) == local                   # the rules' clock is local time


def test_both_clocks_are_accepted_when_read(tz_plus_5):
    """A stamp written on either clock is a stamp; the instant it means depends on the clock named."""
    t = 1_783_493_173
    for name in (leafstamp.stamp(t, "utc"), leafstamp.stamp(t, "local")):
        assert leafstamp.is_stamp(name)
        assert leafstamp.parse(name, "utc") is not None and leafstamp.parse(name, "local") is not None
    name = leafstamp.stamp(t, "utc")
    assert leafstamp.parse(name, "utc") - leafstamp.parse(name, "local") == timedelta(hours=5, minutes=30)


def test_of_a_wall_clock_reading_keeps_it_as_it_stands():
    assert leafstamp.of(datetime(2026, 7, 4, 5, 1, 6, 695935)) == "20260704_050106"
    assert leafstamp.of(datetime(2026, 7, 4, 5, 1, 6, tzinfo=timezone(timedelta(hours=-7)))) == "20260704_050106"


@pytest.mark.parametrize("name", ["20261399_999999", "20260230_120000", "20260101_240000", "2026010_1120000",
                                  "20260101-120000", " 20260101_120000", "20260101_120000\n", "٢٠٢٦٠١٠١_١٢٠٠٠٠",
                                  "20260101_120000_metadata.json", "", None, 20260101])
def test_what_is_no_stamp(name):
    assert not leafstamp.is_stamp(name)
    assert leafstamp.parse(name, "utc") is None and leafstamp.parse(name, "local") is None


def test_an_unknown_clock_is_refused():
    with pytest.raises(ValueError, match="clock"):
        leafstamp.stamp(0.0, "tai")


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=40) | st.from_regex(r"\A[0-9]{8}_[0-9]{6}\Z"))
def test_the_parser_never_raises_and_accepts_exactly_the_stamps(text):
    """Any string: parse answers (never raises); what it accepts is exactly what `of` writes."""
    accepted = leafstamp.is_stamp(text)
    utc, local = leafstamp.parse(text, "utc"), leafstamp.parse(text, "local")
    assert (utc is not None) == accepted
    assert local is None or accepted            # local: None too where the platform cannot place the year
    for dt in (utc, local):
        if dt is not None:
            assert leafstamp.of(dt) == text and dt.tzinfo is not None


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)))
def test_every_written_stamp_is_accepted(dt):
    name = leafstamp.of(dt)
    assert leafstamp.is_stamp(name)
    assert leafstamp.parse(name, "utc") == dt.replace(microsecond=0, tzinfo=timezone.utc)


def test_metadata_names_build_on_the_stamp():
    assert leafstamp.metadata_re().fullmatch("kv_cache_20260709_215001_metadata.json")
    assert leafstamp.metadata_re("training|checkpointing").fullmatch("checkpointing_20260708_064613_metadata.json")
    assert not leafstamp.metadata_re("checkpointing").fullmatch("training_20260708_064613_metadata.json")
    assert not leafstamp.metadata_re().fullmatch("training_2026070_064613_metadata.json")


def test_fresh_is_later_than_the_leaves_there(tmp_path):
    (tmp_path / leafstamp.now()).mkdir()
    name = leafstamp.fresh(tmp_path)
    assert all(name > p.name for p in tmp_path.iterdir())


def test_fresh_does_not_wait_for_a_leaf_made_on_the_other_clock(tmp_path):
    """A newest leaf far ahead (an older suite's UTC stamp in a zone west of UTC) is not waited for."""
    ahead = leafstamp.stamp(time.time() + 5 * 3600)
    (tmp_path / ahead).mkdir()
    t0 = time.monotonic()
    name = leafstamp.fresh(tmp_path)
    assert time.monotonic() - t0 < 1.5 and name != ahead


def test_no_module_outside_leafstamp_spells_the_format_or_its_pattern():
    """The format and its regex live in suite/harness/leafstamp.py only; every other module builds on it."""
    offenders = [f"{p.relative_to(SUITE)}:{i}" for p in sorted(SUITE.rglob("*.py")) if p.name != "leafstamp.py"
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if SPELLINGS.search(line)]
    assert offenders == []
    assert SPELLINGS.search((SUITE / "harness" / "leafstamp.py").read_text(encoding="utf-8"))


def test_the_suite_reads_the_published_leaves_stamps():
    """Every timestamp directory of the committed v3.0 trees is a stamp (the published clock reads)."""
    root = Path(__file__).resolve().parents[1] / "data" / "v3"
    leaves = [p for p in root.rglob("*") if p.is_dir() and re.fullmatch(r"[0-9_]{15}", p.name)]
    assert leaves and all(leafstamp.is_stamp(p.name) for p in leaves)


def test_a_checkpointing_leaf_and_a_training_leaf_made_at_one_instant_share_the_stamp(tmp_path, tz_plus_5):
    """Both kinds name their leaves on the rules' clock (checkpointing used local time, training UTC)."""
    from suite.checkpointing import leaf as ckleaf
    from suite.training import leaf as trleaf

    for attempt in range(5):                             # both inside one second (retry across a boundary)
        t0 = time.time()
        tr = trleaf.make(tmp_path / f"training-{attempt}" / "run")
        ck = ckleaf.new_leaf(tmp_path / f"checkpointing-{attempt}")
        t1 = time.time()
        if int(t0) == int(t1):
            break
    assert tr.name == ck.name == leafstamp.stamp(t0, "local")
    assert tr.name != leafstamp.stamp(t0, "utc")         # in a zone 5:30 east of UTC the clocks differ


def test_a_local_time_checkpointing_leaf_of_an_older_run_still_reads(tmp_path, tz_plus_5):
    """A leaf named in either clock is a checkpointing leaf to the reader (the published one, renamed)."""
    import shutil

    from suite.checkpointing import leaf as ckleaf

    src = next((Path(__file__).resolve().parents[1] / "data" / "v3" / "tree").rglob("checkpointing/llama3-8b"))
    t = leafstamp.parse(sorted(p.name for p in src.iterdir() if leafstamp.is_stamp(p.name))[0], "utc").timestamp()
    for clock in leafstamp.CLOCKS:
        model = tmp_path / clock / "checkpointing" / "llama3-8b"
        old = sorted(p for p in src.iterdir() if leafstamp.is_stamp(p.name))[0]
        name = leafstamp.stamp(t, clock)
        shutil.copytree(old, model / name)
        for f in (model / name).glob(f"checkpointing_{old.name}_*.json"):
            f.rename(f.with_name(f.name.replace(old.name, name)))
        assert [p.name for p in ckleaf.leaves(model)] == [name]
        assert ckleaf.read(model / name)["phase"] == "write"
