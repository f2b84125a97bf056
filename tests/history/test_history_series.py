"""A history series is one kind + identity (workload, accelerator, dataset, round, division) + system,
the identity `suite compare` refuses to mix (issue 47 item 2). Real runs: two datasets made by
`suite datagen --files 12` and `--files 24`, ten short `suite run`s recorded in a real SQLite store,
interleaved in time, the runner's hidden read delay planted on the 12-file runs from their 6th on.
Also: `compare --baseline history` names exactly the entries it used and why others were left out;
an older (schema 3) store is migrated; every line of output fits in 100 columns."""

import json
import sqlite3

import pytest

from suite.history import db, series
from tests.compare.test_compare import TINY, run_args

DELAY_S = 0.25          # a sleep per read: the slowed level is ~1/3 of the other, however busy the CPU is
# (dataset, delay planted): 9 runs on 12 files (slowed from the 6th), 3 on 24 files between them. Five
# before the change: one run a busy machine stalls (an epoch at 40 % AU) leaves four steady ones, where three
# (a t of 2 degrees of freedom) could not carry the change past the detector's 0.999 level
ORDER = [(12, False), (12, False), (24, False), (12, False), (12, False), (12, False), (12, True), (24, False),
         (12, True), (12, True), (24, False), (12, True)]
BEFORE = sum(1 for n, slowed in ORDER if n == 12 and not slowed)      # 12-file entries before the change
TWELVE = sum(1 for n, _ in ORDER if n == 12)
DATA_KEYS = ("dataset.num_samples_per_file", "dataset.record_length", "dataset.record_length_stdev")


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    from suite import cli

    tmp = tmp_path_factory.mktemp("two")
    data, runs = {}, {12: [], 24: []}
    for n in (12, 24):
        data[n] = tmp / f"d{n}"
        params = [a for p in TINY if p.split("=")[0] in DATA_KEYS for a in ("--param", p)]
        assert cli.main(["datagen", "--workload", "resnet50", "--files", str(n), "--data-dir", str(data[n]),
                         "--processes", "1", *params]) == 0
    store = tmp / "history.sqlite"
    for k, (n, slowed) in enumerate(ORDER, start=1):
        out = tmp / f"r{k}-{n}"
        extra = ("--debug-read-delay", str(DELAY_S)) if slowed else ()
        assert cli.main([str(x) for x in run_args(tmp, data[n], out, 1, *extra, "--history", store)]) in (0, 1)
        runs[n].append(out)
    with db.open_store(str(store)) as s:
        ids = {n: [e.id for e in s.entries() if e.identity.get("dataset_size", "").startswith(f"{n} files")]
               for n in (12, 24)}
    return {"tmp": tmp, "store": store, "runs": runs, "ids": ids}


def narrow(text: str) -> None:
    wide = [line for line in text.splitlines() if len(line) > 100]
    assert wide == [], wide


@pytest.mark.timeout(600)
def test_two_datasets_are_two_series_and_the_slowdown_is_a_regression_of_one(two, run_cli):
    assert [len(two["ids"][12]), len(two["ids"][24])] == [TWELVE, 3]
    code, out, err = run_cli("history", "trend", "--history", two["store"], "--figure", "samples_per_second",
                             "--format", "json")
    assert code == 0, err
    found = {len(s["points"]): s for s in json.loads(out)["series"]}
    assert sorted(found) == [3, TWELVE]                     # one series per dataset, not one of all entries
    assert "12 files x 20 samples" in found[TWELVE]["series"] and "24 files x 20 samples" in found[3]["series"]
    assert [p["id"] for p in found[TWELVE]["points"]] == two["ids"][12] and found[3]["changes"] == []
    code, out, err = run_cli("history", "regressions", "--history", two["store"], "--format", "json")
    assert code == 1, err
    docs = json.loads(out)
    by_figure = {d["figure"]: d for d in docs if d["verdict"] == "regression"}
    for figure in ("samples_per_second", "mib_per_second"):          # both drops said, not only AU's
        d = by_figure[figure]
        assert d["entry_id"] == two["ids"][12][BEFORE] and d["position"] == BEFORE + 1 and d["change_percent"] < -20
        assert d["identity"]["dataset_size"] == "12 files x 20 samples" and d["identity"]["record_size"] == "1000 B"
    assert not [d for d in docs if d["identity"].get("dataset_size", "").startswith("24 files")]
    for argv in (("trend",), ("regressions",), ("list",), ("show", str(two["ids"][12][0]))):
        code, out, err = run_cli("history", *argv, "--history", two["store"])
        assert code in (0, 1), err
        narrow(out)
    assert "24 files x 20 samples" in run_cli("history", "trend", "--history", two["store"])[1]


@pytest.mark.timeout(300)
def test_compare_with_the_history_names_the_entries_it_used_and_why_others_not(two, run_cli):
    newest = two["runs"][24][-1]
    code, out, err = run_cli("compare", newest, "--baseline", "history", "--history", two["store"], "--format", "json")
    assert code == 0, err
    base = json.loads(out)["results"][0]
    earlier, itself = two["ids"][24][:2], two["ids"][24][2]
    assert base["label"] == f"history: 2 entries, #{earlier[0]}, #{earlier[1]}"
    assert base["path"].startswith(f"history store {two['store']}, series resnet50 h100 (24 files x 20 samples")
    assert f"#{itself}: the result itself" in base["notes"]
    other = [n for n in base["notes"] if "other series" in n]
    assert len(other) == 1 and all(f"#{i}" in other[0] for i in two["ids"][12][:3])
    code, out, err = run_cli("compare", newest, "--baseline", "history", "--history", two["store"])
    assert code == 0 and "history:" not in out.replace("A = history: 2 entries", "")
    narrow(out)
    slowed, a = two["runs"][12][-1], two["ids"][12]     # the slowed level: the entries since the change point
    code, out, err = run_cli("compare", slowed, "--baseline", "history", "--history", two["store"], "--format", "json")
    assert code == 0, err
    base = json.loads(out)["results"][0]
    assert all(f"#{i}" in base["label"] for i in a[BEFORE:-1]) and f"#{a[-1]}: the result itself" in base["notes"]
    assert f"{series.ids(a[:BEFORE])}: before the last change point of samples/s (at #{a[BEFORE]})" in base["notes"]


@pytest.mark.timeout(300)
def test_an_older_store_is_migrated_its_series_recomputed_or_kept_apart(two, run_cli, tmp_path):
    """A schema-3 store (the same entries, made as an older suite left them: no series key, no figure
    order) opens as schema 4: each entry's series recomputed from its recorded identity;
    one with no identity recorded is a series of its own, and trend says so."""
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(two["store"]) as src, sqlite3.connect(old) as dst:
        src.backup(dst)
    with sqlite3.connect(old) as conn:
        conn.execute("DROP INDEX entries_series_key")
        conn.execute("ALTER TABLE entries DROP COLUMN series_key")
        conn.execute("ALTER TABLE figures DROP COLUMN position")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        lone = two["ids"][24][0]
        conn.execute("UPDATE entries SET identity = '{}' WHERE id = ?", (lone,))
    conn.close()
    code, out, err = run_cli("history", "trend", "--history", old, "--figure", "samples_per_second", "--format", "json")
    assert code == 0, err
    got = {tuple(p["id"] for p in s["points"]): s["series"] for s in json.loads(out)["series"]}
    assert set(got) == {tuple(two["ids"][12]), tuple(two["ids"][24][1:]), (lone,)}
    assert "a series of its own" in got[(lone,)]
    with sqlite3.connect(old) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("4",)
        keys = dict(conn.execute("SELECT id, series_key FROM entries").fetchall())
    conn.close()
    with db.open_store(str(two["store"])) as s:
        fresh = {e.id: e.series() for e in s.entries(figures=False)}
    assert {i: k for i, k in keys.items() if i != lone} == {i: k for i, k in fresh.items() if i != lone}
    assert keys[lone] == f"apart:{lone}"
    code, out, err = run_cli("history", "list", "--history", old)
    assert code == 0 and out.strip().endswith(f"{len(ORDER)} entries") and " AU %" in out
    narrow(out)


@pytest.mark.timeout(300)
def test_an_import_of_our_runs_records_the_verdict_suite_check_gives(two, run_cli, tmp_path):
    r = two["runs"][12][0]
    check_code, _, _ = run_cli("check", r)
    code, out, err = run_cli("history", "import", r, "--history", tmp_path / "h.sqlite")
    assert code == 0, err
    narrow(out)
    with db.open_store(str(tmp_path / "h.sqlite")) as s:
        (e,) = s.entries()
    assert e.verdict == {0: "compliant", 1: "non-compliant"}[check_code]
