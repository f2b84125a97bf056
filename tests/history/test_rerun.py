"""`suite history rerun` runs only what its user agreed to, on real stores and real processes: the command
shown shell-quoted with control characters escaped and confirmed on a terminal (a real pty), or --yes;
no terminal and no --yes is refused; a recorded --launcher or --hostfile is refused unless repeated on the
rerun's own command line; a gone working directory is refused; the store's URL (and its password) reaches
the child through its environment, never its argv."""

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

import paths
from suite.history import db
from suite.history.entry import Entry

ENV = {**os.environ, "PYTHONPATH": str(paths.REPO)}


def _recorded(where: str, command, cwd) -> None:
    with db.open_store(where) as s:
        s.add(Entry(recorded_at="2026-01-01T00:00:00", source="run", status="ok", kind="training",
                    workload="resnet50", accelerator="h100", accelerators=1, ruleset=None, division=None,
                    verdict="compliant", system_fp="fp", system_label="h", results_path=None, content_hash=None,
                    command=tuple(command), cwd=str(cwd)))


# the child stops at argparse (exit 2): nothing runs, yet the child was started with this argv
BAD_RUN = ["suite", "run", "--workload", "resnet50", "--accelerators", "0"]


def one_line(code, err, *said):
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for s in said:
        assert s in err, err


def test_without_a_terminal_or_yes_it_is_refused(tmp_path, run_cli):
    store = str(tmp_path / "h.sqlite")
    _recorded(store, [*BAD_RUN, "--results-dir", str(tmp_path / "r")], tmp_path)
    code, out, err = run_cli("history", "rerun", "1", "--history", store)
    one_line(code, err, "--yes: expected --yes or a terminal to confirm on, got neither", "suite run --workload")
    assert not list(tmp_path.glob("r-rerun-*"))


@pytest.mark.parametrize("option", ["--launcher", "--hostfile"])
def test_a_recorded_launcher_or_hostfile_is_refused_unless_repeated(tmp_path, run_cli, option):
    store = str(tmp_path / "h.sqlite")
    _recorded(store, [*BAD_RUN, option, "/tmp/evil program"], tmp_path)
    code, out, err = run_cli("history", "rerun", "1", "--yes", "--history", store)
    one_line(code, err, f"{option}: expected it on this command line", "'/tmp/evil program'",
             f"--yes {option} '/tmp/evil program'")
    code, out, err = run_cli("history", "rerun", "1", "--yes", "--history", store, option, "/bin/true")
    assert code == 2 and f"{option} /bin/true" in err and "evil" not in err       # the child ran, with ours


def test_a_gone_working_directory_is_refused(tmp_path, run_cli):
    store = str(tmp_path / "h.sqlite")
    _recorded(store, BAD_RUN, tmp_path / "gone")
    code, out, err = run_cli("history", "rerun", "1", "--yes", "--history", store)
    one_line(code, err, "cwd: expected the recorded working directory", str(tmp_path / "gone"))


def test_on_a_terminal_the_quoted_command_is_shown_and_no_runs_nothing(tmp_path):
    store = str(tmp_path / "h.sqlite")
    _recorded(store, [*BAD_RUN, "--param", "a=b c\x1b[31m", "--results-dir", str(tmp_path / "r")], tmp_path)
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "suite", "history", "rerun", "1", "--history", store],
                         stdin=slave, stdout=slave, stderr=slave, env=ENV, close_fds=True)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 60
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 1)[0]:
            seen += os.read(master, 4096)
    os.write(master, b"n\n")
    p.wait(timeout=60)
    try:
        while select.select([master], [], [], 0.5)[0]:
            seen += os.read(master, 4096)
    except OSError:
        pass
    os.close(master)
    text = seen.decode(errors="replace")
    flat = " ".join(text.split())                     # the shown command wraps at 100 columns (issue 47)
    assert "suite run --workload resnet50 --accelerators 0 --param 'a=b c\\x1b[31m' --results-dir" in flat, text
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "\x1b" not in text and "not run" in text and p.returncode == 1
    assert not list(tmp_path.glob("r-rerun-*"))


def test_the_store_url_and_its_password_reach_the_child_by_environment_only(tmp_path, run_cli, monkeypatch,
                                                                           postgres_url):
    """A real PostgreSQL store named with ?password= (trust authentication ignores it); the child is a real
    process whose argv a sitecustomize module writes down as it starts."""
    url = postgres_url + "?sslmode=disable&password=SEKRIT9"
    _recorded(url, [*BAD_RUN, "--history", "/tmp/recorded.sqlite"], tmp_path)
    spy = tmp_path / "spy"
    spy.mkdir()
    (spy / "sitecustomize.py").write_text(
        "import os, sys\n"
        f"open({str(tmp_path / 'argv.txt')!r}, 'a').write(repr(sys.argv) + ' ' + os.environ.get('SUITE_HISTORY', '') + '\\n')\n")
    monkeypatch.setenv("PYTHONPATH", f"{spy}{os.pathsep}{paths.REPO}")
    code, out, err = run_cli("history", "rerun", "1", "--yes", "--history", url)
    assert code == 2 and "SEKRIT9" not in err, err
    (line,) = (tmp_path / "argv.txt").read_text().splitlines()
    argv, _, env = line.rpartition(" ")
    assert "SEKRIT9" not in argv and "recorded.sqlite" not in argv and "--history" not in argv
    assert env == url
