"""`suite report` with hostile input and hostile --out directories: nothing written outside --out,
no user file overwritten, no stale files, text escaped per format."""

import csv
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import paths
from suite.report import escape, export

RUN = paths.DATA / "suite-run" / "unet3d-h100"


def one_line_exit_2(code, err, needle):
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_users_directory_is_refused_and_untouched(run_cli, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "index.html").write_text("my page")
    code, _, err = run_cli("report", RUN, "--out", out)
    one_line_exit_2(code, err, "--force replaces it whole")
    assert [p.name for p in out.iterdir()] == ["index.html"] and (out / "index.html").read_text() == "my page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_force_replaces_it_whole(run_cli, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("x")
    code, _, _ = run_cli("report", RUN, "--out", out, "--force")
    assert code == 0 and not (out / "notes.txt").exists() and (out / "index.html").is_file()


def test_an_earlier_report_is_replaced_without_stale_files(run_cli, tmp_path):
    out = tmp_path / "r"
    assert run_cli("report", RUN, "--out", out)[0] == 0
    (out / "plots" / "stale.png").write_bytes(b"old")
    assert run_cli("report", RUN, "--out", out)[0] == 0
    assert not (out / "plots" / "stale.png").exists() and (out / "index.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def test_a_link_inside_an_earlier_report_is_never_followed(run_cli, tmp_path):
    out, elsewhere = tmp_path / "r", tmp_path / "elsewhere"
    assert run_cli("report", RUN, "--out", out)[0] == 0
    elsewhere.mkdir()
    (elsewhere / "keep.png").write_bytes(b"user")
    shutil.rmtree(out / "plots")
    (out / "plots").symlink_to(elsewhere)
    assert run_cli("report", RUN, "--out", out)[0] == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.png"]
    assert (elsewhere / "keep.png").read_bytes() == b"user" and not (out / "plots").is_symlink()


def test_out_as_a_symlink_is_refused(run_cli, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    code, _, err = run_cli("report", RUN, "--out", tmp_path / "link")
    one_line_exit_2(code, err, "not a symbolic link")
    assert list(real.iterdir()) == []


def test_a_refused_report_leaves_no_out(run_cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 1\nkind: tpcx-ai-fdr\n")
    code, _, err = run_cli("report", bad, "--out", tmp_path / "out")
    assert code == 2 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


def test_read_only_parent_is_one_line_exit_2(run_cli, tmp_path):
    parent = tmp_path / "ro"
    parent.mkdir()
    os.chmod(parent, 0o555)
    try:
        if os.access(parent, os.W_OK) and os.geteuid() == 0:
            # root writes anyway: use a read-only bind instead of a mode (root, as CI)
            if subprocess.run(["mount", "--bind", "-o", "ro", str(parent), str(parent)]).returncode:
                pytest.skip("cannot make a read-only directory for root here")
            subprocess.run(["mount", "-o", "remount,ro,bind", str(parent)], check=False)
        code, _, err = run_cli("report", RUN, "--out", parent / "out")
        one_line_exit_2(code, err, "--out")
    finally:
        subprocess.run(["umount", str(parent)], capture_output=True)
        os.chmod(parent, 0o755)


def test_sigterm_leaves_no_temp_dirs(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "suite", "report", str(RUN), "--out", str(out)],
                            cwd=paths.REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(tmp_path.glob(".out.report-*")):
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_formula_cells_are_neutralised_in_csv(run_cli, tmp_path):
    tree = tmp_path / '=HYPERLINK("http://x")'
    shutil.copytree(RUN, tree / "unet3d-h100")
    out = tmp_path / "out"
    assert run_cli("report", tree, "--out", out)[0] in (0, 1)
    cells = [c for row in csv.reader((out / "runs.csv").open()) for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@")]
    text = export.csv_text(["a", "b"], [{"a": "=1+2", "b": -1.5}])
    assert text.splitlines()[1] == "'=1+2,-1.5"


def test_markdown_escapes_html_and_markup(run_cli, tmp_path):
    tree = tmp_path / "<script>alert(1)<|script>"
    shutil.copytree(RUN, tree / "unet3d-h100")
    out = tmp_path / "out"
    assert run_cli("report", tree, "--out", out)[0] in (0, 1)
    md = (out / "report.md").read_text()
    assert "<script>" not in md and "\\<script\\>" in md
    assert "<script>" not in (out / "index.html").read_text()


@pytest.mark.parametrize("raw, shown", [
    ("a\x1b[2K\rCLOSED (compliant)", "a\\x1b[2K\\x0dCLOSED (compliant)"),
    ("tab\there", "tab\\x09here"), ("bidi\u202eevil", "bidi\\u202eevil"), ("plain é ✓", "plain é ✓"),
])
def test_terminal_escape(raw, shown):
    assert escape.terminal(raw) == shown
