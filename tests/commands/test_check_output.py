"""Issue 46, item 4: `suite check PATH --output FILE` never writes over a user's file by surprise. An
existing FILE is refused before the check runs (one line naming it, exit 2, the file as it was);
`--replace` (the flag `submission package --out` uses) lets the report replace it, in one rename:
the old file is never truncated (a hard link to it keeps the old bytes). A FILE that appears while
the check runs is refused at the write, not replaced (suite.output.write_file: the complete temp file
is linked, and link(2) never replaces). Before, any existing FILE was replaced silently."""

import json
import os

import pytest

import paths
from suite import output
from suite.errors import SuiteError

VALID = paths.DATA / "check" / "valid" / "dlio-unet3d-h100"


def state(d) -> dict:
    return {p.name: (p.read_bytes(), os.lstat(p).st_ino) for p in sorted(d.iterdir())}


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_existing_output_file_is_refused_and_left_as_it_was(run_cli, tmp_path, fmt):
    target = tmp_path / "mine.txt"
    target.write_text("my notes\n")
    before = state(tmp_path)
    code, out, err = run_cli("check", VALID, "--format", fmt, "--output", target)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.strip().splitlines() == [f"suite check: error: --output {target}: file: expected a new path "
                                         "(--replace replaces it), got an existing file"]
    assert state(tmp_path) == before                     # same bytes, same inode, no temp file beside it


def test_replace_replaces_it_whole_in_one_rename(run_cli, tmp_path):
    target, keep = tmp_path / "c.json", tmp_path / "keep"
    target.write_text("old report\n")
    os.link(target, keep)                                 # the old inode: a truncate would empty it too
    code, out, err = run_cli("check", VALID, "--format", "json", "--output", target, "--replace")
    assert code == 0 and err == "" and f"wrote {target}" in out
    assert json.loads(target.read_text())["compliant"] is True
    assert keep.read_text() == "old report\n" and os.lstat(keep).st_ino != os.lstat(target).st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "keep"]


def test_a_new_output_file_is_written_without_replace(run_cli, tmp_path):
    target = tmp_path / "new.txt"
    code, out, err = run_cli("check", VALID, "--output", target)
    assert code == 0 and err == "" and "CLOSED" in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt"]
    code, _, err = run_cli("check", VALID, "--output", target)             # the second time: refused
    assert code == 2 and "--replace replaces it" in err and "CLOSED" in target.read_text()


def test_a_file_that_appears_while_the_check_runs_is_refused_not_replaced(tmp_path):
    target = output.target_file(tmp_path / "late.txt", "--output")          # new when the command starts
    target.write_text("written by someone else meanwhile\n")
    with pytest.raises(SuiteError, match=r"^--output .*late\.txt: file: expected a new path \(--replace replaces "
                                         r"it\), got an existing file \(made while the command ran; left as it was\)$"):
        output.write_file(target, "the report\n", "--output")
    assert target.read_text() == "written by someone else meanwhile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late.txt"]
    output.write_file(target, "the report\n", "--output", replace=True)
    assert target.read_text() == "the report\n" and sorted(p.name for p in tmp_path.iterdir()) == ["late.txt"]


def test_a_link_or_a_directory_is_refused_even_with_replace(run_cli, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("user data")
    (tmp_path / "link").symlink_to(victim)
    (tmp_path / "dir").mkdir()
    for name, needle in (("link", "got a symbolic link"), ("dir", "got a directory")):
        code, _, err = run_cli("check", VALID, "--output", tmp_path / name, "--replace")
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert victim.read_text() == "user data" and (tmp_path / "link").is_symlink()


def test_help_says_an_existing_file_needs_replace(run_cli):
    code, out, _ = run_cli("check", "--help")
    text = " ".join(out.split())
    assert code == 0 and "--replace" in text and "an existing one is refused" in text
    docs = " ".join((paths.REPO / "docs" / "checker.md").read_text().split())
    assert "(--replace replaces it), got an existing file" in docs
