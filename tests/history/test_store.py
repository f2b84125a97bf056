"""The results store on a real SQLite file and a real PostgreSQL server: what is added comes back,
filters, import idempotent by hash, removal; the schema version table and a migration from version 1;
a newer, foreign, corrupt or locked database refused in one line, untouched; two processes at once."""

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from suite.history import db
from suite.history.entry import Entry, Figure
from suite.history.store import MIGRATIONS, SCHEMA_VERSION, HistoryError

import paths


def entry(n=1, workload="unet3d", fp="fp1", when="2026-01-01T00:00:00", value=100.0, content=None, **kw):
    return Entry(recorded_at=when, started_at=when, source="run", status="ok", kind="training", workload=workload,
                 accelerator="h100", accelerators=1, ruleset="v1.0", division="open", verdict="compliant",
                 system_fp=fp, system_label=f"host-{fp}", results_path=f"/r/{n}", content_hash=content or f"h{n}",
                 command=("suite", "run", "--workload", workload), system={"host.hostname": f"host-{fp}"},
                 identity={"workload": workload}, figures=(Figure("samples_per_second", "samples/s", True,
                                                                  (value, value * 1.01), ((value, value),)),), **kw)


def test_what_is_added_comes_back_filtered_and_removed(store_location):
    with db.open_store(store_location) as s:
        ids = [s.add(entry(1, when="2026-01-02T00:00:00"))[0], s.add(entry(2, workload="resnet50", fp="fp2",
                                                                             when="2026-01-01T00:00:00"))[0],
               s.add(entry(3, when="2026-01-03T00:00:00"))[0]]
        assert len(set(ids)) == 3
        got = s.entries()
        assert [e.results_path for e in got] == ["/r/2", "/r/1", "/r/3"]         # oldest first
        one = s.get(ids[0])
        assert one.figures[0].per_run == (100.0, 101.0) and one.command[-1] == "unet3d"
        assert one.system == {"host.hostname": "host-fp1"} and one.identity == {"workload": "unet3d"}
        assert [e.id for e in s.entries(workload="unet3d")] == [ids[0], ids[2]]
        assert [e.id for e in s.entries(system="fp2")] == [ids[1]]
        assert [e.id for e in s.entries(system="host-fp1")] == [ids[0], ids[2]]
        assert [e.id for e in s.entries(since="2026-01-02")] == [ids[0], ids[2]]
        assert s.add(entry(9, content="h1"), unique_hash=True) == (ids[0], False)
        assert s.remove([ids[0]]) == 1 and s.get(ids[0]) is None and len(s.entries()) == 2


def test_a_version_1_store_is_migrated_keeping_its_entries(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("app", "suite-history"), ("schema_version", "1")])
    for sql in MIGRATIONS[1]:
        conn.execute(sql.format(id="INTEGER PRIMARY KEY AUTOINCREMENT", float="REAL"))
    conn.commit()
    conn.close()
    with db.open_store(str(path)) as s:                # version 1 has no indexes yet
        s.add(entry(1))
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert {"entries_series", "entries_hash", "figures_name"} <= {
        r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    conn.close()


def _bytes(path):
    return path.read_bytes()


@pytest.mark.parametrize("make, said", [
    (lambda p: p.write_bytes(b"not a database at all\n" * 10), "another kind of file"),
    (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000), "suite history store"),
    (lambda p: _foreign(p), "another application's"),
    (lambda p: _newer(p), "a newer suite wrote it"),
])
def test_a_foreign_corrupt_or_newer_store_is_one_line_exit_2_and_untouched(tmp_path, run_cli, make, said):
    path = tmp_path / "history.sqlite"
    make(path)
    before = _bytes(path)
    code, out, err = run_cli("history", "list", "--history", path)
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert _bytes(path) == before


def _foreign(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
    conn.execute("INSERT INTO customers VALUES (1, 'kept')")
    conn.commit()
    conn.close()


def _newer(path):
    with db.open_store(str(path)) as s:
        s.add(entry(1))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_a_locked_store_is_one_line_exit_2_and_loses_nothing(tmp_path, run_cli, monkeypatch):
    path = tmp_path / "history.sqlite"
    with db.open_store(str(path)) as s:
        s.add(entry(1))
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sqlite3, sys, time
        c = sqlite3.connect({str(path)!r}, isolation_level=None)
        c.execute("BEGIN EXCLUSIVE")
        print("locked", flush=True)
        sys.stdin.readline()
        c.execute("ROLLBACK")
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        monkeypatch.setenv("SUITE_HISTORY_TIMEOUT_S", "0.5")
        code, out, err = run_cli("history", "import", paths.DATA / "suite-run", "--history", path)
        assert code == 2 and "locked by another process" in err and len(err.strip().splitlines()) == 1
    finally:
        holder.communicate("\n", timeout=30)
    with db.open_store(str(path)) as s:
        assert [e.results_path for e in s.entries()] == ["/r/1"]


WRITER = """
import sys
from suite.history import db
from suite.history.entry import Entry, Figure
where, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for k in range(n):
    e = Entry(recorded_at="2026-01-01T00:00:00", source="run", status="ok", kind="training", workload="w",
              accelerator="h100", accelerators=1, ruleset=None, division=None, verdict="compliant", system_fp="fp",
              system_label="h", results_path=f"/{who}/{k}", content_hash=f"{who}-{k}",
              figures=(Figure("samples_per_second", "samples/s", True, (1.0 + k,)),))
    with db.open_store(where) as s:
        s.add(e)
"""


def test_processes_recording_at_once_all_land(store_location, tmp_path):
    """Four real processes, 25 entries each, into one new store at once (its creation raced too)."""
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, store_location, f"p{i}", "25"], stderr=subprocess.PIPE,
                              text=True) for i in range(4)]
    errors = [p.communicate(timeout=240)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    with db.open_store(store_location) as s:
        got = s.entries()
    assert sorted(e.results_path for e in got) == sorted(f"/p{i}/{k}" for i in range(4) for k in range(25))
    assert all(len(e.figures) == 1 for e in got)


def test_an_unreachable_postgres_is_one_line_exit_2_without_the_password(run_cli):
    code, out, err = run_cli("history", "list", "--history", "postgresql://who:sekrit@127.0.0.1:1/none")
    assert code == 2 and "sekrit" not in err and len(err.strip().splitlines()) == 1


def test_json_list_is_sorted_and_complete(tmp_path, run_cli):
    path = tmp_path / "h.sqlite"
    with db.open_store(str(path)) as s:
        s.add(entry(1))
    code, out, err = run_cli("history", "list", "--history", path, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc[0]["figures"][0]["per_run"] == [100.0, 101.0] and doc[0]["workload"] == "unet3d"


def test_a_schema_3_store_gets_series_keys_from_what_its_entries_recorded(store_location):
    """Real results recorded, then the store put back as schema 3 left it (no series key, no figure
    order): opened again, each entry's series is recomputed from its recorded identity (the same key as
    before), one that recorded no identity is kept apart, and every entry reads as it was."""
    from suite.history import record

    base = {"source": "import", "status": "ok", "verdict": "unknown", "command": ()}
    with db.open_store(store_location) as s:
        for p in (paths.DATA / "checkpoint" / "llama3-8b-miniature" / "R", paths.DATA / "tpcxai-sf0.01"):
            for e in record.entries_for(p, base):
                s.add(e)
        before = {e.id: e for e in s.entries()}
        lone = max(before)
        s._exec("DROP INDEX entries_series_key")
        s._exec("ALTER TABLE entries DROP COLUMN series_key")
        s._exec("ALTER TABLE figures DROP COLUMN position")
        s._exec("UPDATE entries SET identity = ? WHERE id = ?", ("{}", lone))
        s._exec("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    with db.open_store(store_location) as s:
        after = {e.id: e for e in s.entries()}
        assert s._exec("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert after[lone].series_key == f"apart:{lone}" and len(before) >= 2
    for i, e in before.items():
        if i != lone:
            assert after[i].series_key == e.series() and set(after[i].figures) == set(e.figures)
            if not db.is_url(store_location):        # SQLite knows the order they were written in (the rowid)
                assert after[i].figures == e.figures
