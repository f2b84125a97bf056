"""A store is input like any other, on real SQLite files (and a real PostgreSQL server for the race):
a bad JSON cell, NaN or a cell of the wrong type is one line naming the store, entry, field, expected and
actual (exit 2); a read-only store is still listed and shown; an empty --history and a mistyped path for
a command that reads are errors, and no empty store is made; % and _ in a filter are literal; imports of
one result at once, from real processes, record it once."""

import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

import paths
from suite.history import db
from tests.history.test_store import entry

ENV = {**os.environ, "PYTHONPATH": str(paths.REPO)}


def one_line(code, err, *said):
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for s in said:
        assert s in err, err


def _store(path: Path, *entries) -> Path:
    with db.open_store(str(path)) as s:
        for e in entries:
            s.add(e)
    return path


@pytest.mark.parametrize("table, column, value, field, expected", [
    ("entries", "system", "{not json", "system", "a JSON object"),
    ("entries", "identity", "[1, 2]", "identity", "a JSON object"),
    ("entries", "command", '["suite", 7]', "command", "a JSON list of strings"),
    ("entries", "accelerators", "eight", "accelerators", "an integer or nothing"),
    ("entries", "hash_scope", '{"root": 1}', "hash_scope", "{root: text, exclude: [text]}"),
    ("figures", "per_run", "[NaN, 1.0]", "figures.samples_per_second.per_run", "a JSON list of finite numbers"),
    ("figures", "per_run", "[Infinity]", "figures.samples_per_second.per_run", "a JSON list of finite numbers"),
    ("figures", "per_epoch", "[[1.0], 2]", "figures.samples_per_second.per_epoch", "a JSON list of lists of finite numbers"),
])
def test_a_bad_cell_is_one_line_naming_store_entry_field_expected_and_actual(tmp_path, run_cli, table, column,
                                                                            value, field, expected):
    path = _store(tmp_path / "h.sqlite", entry(1))
    conn = sqlite3.connect(path)
    conn.execute(f"UPDATE {table} SET {column} = ?", (value,))
    conn.commit()
    conn.close()
    for command in (("list",), ("list", "--format", "json"), ("show", "1"), ("regressions",)):
        code, out, err = run_cli("history", *command, "--history", path)
        one_line(code, err, str(path), "entry 1", f"{field}: expected {expected}", repr(value)[:20])


def _as_nobody(argv: list[str]) -> subprocess.CompletedProcess:
    """`suite ARGV` in a child that drops root first (root may write a 0444 file): the modules it needs
    are imported before, since the interpreter may live where nobody can read."""
    code = textwrap.dedent("""
        import importlib.readers, importlib.resources.readers, json, os, sqlite3, sys
        from suite import cli
        from suite.history import db, decode, digest, record, render, series
        from suite.report import escape
        import suite.commands.history
        cli.build_parser()
        if os.getuid() == 0:
            os.setgid(65534)
            os.setuid(65534)
        sys.exit(cli.main(sys.argv[1:]))
        """)
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120, env=ENV)


@pytest.mark.parametrize("where", ["file", "dir"])
def test_a_read_only_store_is_still_listed_and_shown(where):
    top = Path(tempfile.mkdtemp(prefix="suite-ro-"))
    try:
        os.chmod(top, 0o755)
        path = _store(top / "h.sqlite", entry(1), entry(2, when="2026-01-02T00:00:00"))
        for extra in top.glob("h.sqlite-*"):
            extra.unlink()
        os.chmod(path, 0o444)
        if where == "dir":
            os.chmod(top, 0o555)
        before = path.read_bytes()
        out = _as_nobody(["history", "list", "--history", str(path)])
        assert out.returncode == 0 and out.stdout.strip().endswith("2 entries"), out.stderr
        out = _as_nobody(["history", "show", "2", "--history", str(path)])
        assert out.returncode == 0 and "#2" in out.stdout or "2" in out.stdout.splitlines()[0], out.stderr
        assert path.read_bytes() == before
        out = _as_nobody(["history", "rm", "1", "--history", str(path)])
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    finally:
        os.chmod(top, 0o755)
        subprocess.run(["rm", "-rf", str(top)], check=False)


def test_an_empty_history_is_an_error_not_the_default_store(tmp_path, run_cli, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUITE_HISTORY", raising=False)
    for command in (("list",), ("import", paths.DATA / "suite-run")):
        code, out, err = run_cli("history", *command, "--history", "")
        one_line(code, err, "--history: expected a store's path or postgresql:// URL, got an empty string")
    assert not (tmp_path / "xdg").exists()


@pytest.mark.parametrize("command", [("list",), ("show", "1"), ("trend",), ("regressions",), ("rm", "1"), ("gc",)])
def test_a_mistyped_store_path_for_a_read_is_an_error_and_makes_no_store(tmp_path, run_cli, command):
    path = tmp_path / "typo" / "histroy.sqlite"
    code, out, err = run_cli("history", *command, "--history", path)
    one_line(code, err, str(path), "expected an existing history store")
    assert not path.exists() and not path.parent.exists()
    code, out, err = run_cli("history", "import", paths.DATA / "suite-run", "--history", path)
    assert code == 0 and path.is_file()                            # import creates it


def test_percent_and_underscore_in_a_filter_are_literal(tmp_path, run_cli):
    path = _store(tmp_path / "h.sqlite", entry(1, fp="node_1"), entry(2, fp="nodeX1"), entry(3, fp="n100%"))
    with db.open_store(str(path)) as s:
        assert [e.system_fp for e in s.entries(system="node_1")] == ["node_1"]
        assert [e.system_fp for e in s.entries(system="%")] == ["n100%"]
        assert [e.system_fp for e in s.entries(system="_")] == ["node_1"]
        assert s.entries(system="n!") == []
    code, out, err = run_cli("history", "list", "--history", path, "--system", "_")
    assert code == 0 and out.strip().endswith("1 entries")


IMPORTER = """
import os, sys, time
from suite import cli
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.005)
sys.exit(cli.main(["history", "import", sys.argv[2], "--history", sys.argv[3]]))
"""


def test_imports_of_one_result_at_once_record_it_once(store_location, tmp_path):
    """Six real processes import the same results at the same moment (a file they all wait for)."""
    go = tmp_path / "go"
    with db.open_store(store_location):
        pass                                                         # the store exists: the race is the import's
    procs = [subprocess.Popen([sys.executable, "-c", IMPORTER, str(go), str(paths.DATA / "v3" / "tree"),
                               store_location], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
             for _ in range(6)]
    time.sleep(3)                                                    # each has imported suite and waits
    go.write_text("")
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [o[1] for o in outs]
    with db.open_store(store_location) as s:
        got = s.entries()
    assert len(got) == 3, [(e.id, e.kind, e.results_path) for e in got]
    assert sum(int(o[0].rsplit("import: ", 1)[1].split()[0]) for o in outs) == 3
