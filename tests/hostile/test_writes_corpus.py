"""The hostile corpus of what the suite writes and what it reads through links (issue 24, classes
5, 6, 7 and the write/escape parts of 9), on real results made by the suite here (a tiny real
`suite run`, a real open submission tree, a TPCx-AI run of the toy kit) and then edited or pointed at
as a hostile submitter or a careless reviewer would:

- class 5: outputs never land inside the evidence (check --output, report --out, package --out),
  names never leave the tree (submission add/describe --system), nothing of the user's is deleted,
  a refusal after the results dir is claimed leaves nothing, runs started together never share a
  results dir, a SIGTERM during package leaves the manifest in place and no temp file;
- class 6: no file outside the tree is read through a link in it (SHA256SUMS, the submission
  marker, a system description, a run's summary, tpcxai-result.json);
- class 7: SHA256SUMS and sweep.json are bounded; a full file system (a real tmpfs), a file size
  limit (RLIMIT_FSIZE in a child) and a second `package` at once are one line naming the file;
- class 9: `check --output` never echoes a raw escape sequence; a resumed datagen's rate counts
  only what it wrote.
"""

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import paths
import pytest

from tests.conftest import once

SECRET = "0" * 64 + "  SECRET-LINE-FROM-OUTSIDE-THE-TREE"
PY = [sys.executable, "-m", "suite"]
ENV = {**os.environ, "PYTHONPATH": str(paths.REPO)}


def one_line(code, err, needle, exit_code=2):
    assert code == exit_code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert needle.lower() in err.lower(), err


def snapshot(root: Path) -> dict:
    """{relative path: bytes or '<dir>'} of everything under root (links as their target text)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel] = ("-> " + os.readlink(p)) if p.is_symlink() else "<dir>" if p.is_dir() else p.read_bytes()
    return out


def cli(*argv, timeout=300, **kw):
    """`python -m suite ...` in a process of its own: for what a process is the point of (a signal, a
    resource limit, two at once)."""
    done = subprocess.run([*PY, *map(str, argv)], capture_output=True, text=True, env=ENV, timeout=timeout, **kw)
    return done.returncode, done.stdout, done.stderr


def in_process(*argv):
    """cli.main(argv) here, its output captured: (exit code, stdout, stderr), for a session fixture's
    making (no capsys there)."""
    import contextlib
    import io

    from suite import cli as suite_cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = suite_cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- real results, made here

@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A tiny real dataset, a real 1-run open results dir and a real open submission tree holding it, made
    once a session for every xdist worker (tests/conftest.py `once`): tests copy before they change anything."""
    return once(tmp_path_factory, "writes-made", _made)


def _made(tmp_path_factory):
    """The dataset and run are tests/submission's `two_runs` h100 ones (the same datagen and 1-run open run
    this made), shared through `once`; the tree is made here."""
    from tests.submission.conftest import make_two_runs

    base = tmp_path_factory.mktemp("writes")
    shared, (run, _) = once(tmp_path_factory, "two-runs", make_two_runs)
    data = shared / "data-h100"
    assert (run / "run_set.json").is_file() and (data / "train").is_dir()
    tree = base / "sub"
    assert in_process("submission", "init", tree, "--org", "ACME", "--division", "open", "--system", "box1",
                      "--data-dir", data)[0] == 0
    assert in_process("submission", "add", tree, run, "--system", "box1")[0] == 0
    desc = tree / "Open" / "ACME" / "systems" / "box1.json"
    doc = json.loads(desc.read_text())
    desc.write_text(json.dumps(_filled(doc), indent=2))
    assert in_process("submission", "describe", tree, "--system", "box1")[0] == 0   # current documents: package keeps them
    return base, data, run, tree


def _filled(node):
    if isinstance(node, dict):
        return {k: ([] if k == "todo" else _filled(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_filled(v) for v in node]
    return "Example value" if isinstance(node, str) and node.startswith("TODO") else node


@pytest.fixture
def run_copy(made, tmp_path):
    return Path(shutil.copytree(made[2], tmp_path / "run", symlinks=True))


@pytest.fixture
def tree_copy(made, tmp_path):
    return Path(shutil.copytree(made[3], tmp_path / "sub", symlinks=True))


# --------------------------------------------------------------------------- class 5: outputs inside the evidence

CHECK_OUTPUT_CASES = [
    ("run-set", "run_set.json"),
    ("results-json", "run-1/results.json"),
    ("summary-json", "run-1/summary.json"),
    ("new-file-in-tree", "notes.txt"),
    ("new-file-in-run", "run-1/check.txt"),
    ("dotdot-back-in", "run-1/../run_set.json"),
    ("through-a-link-to-the-tree", "@link/run_set.json"),
    ("a-link-in-the-tree", "run-1/report-link"),
]


@pytest.mark.parametrize("case", CHECK_OUTPUT_CASES, ids=[c[0] for c in CHECK_OUTPUT_CASES])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_output_inside_the_checked_run_is_refused(run_cli, run_copy, tmp_path, case, fmt):
    _, rel = case
    if rel.startswith("@link/"):
        (tmp_path / "link").symlink_to(run_copy)
        target = tmp_path / "link" / rel[len("@link/"):]
    else:
        target = run_copy / rel
    if rel == "run-1/report-link":
        target.symlink_to(run_copy / "run_set.json")
    before = snapshot(run_copy)
    code, out, err = run_cli("check", run_copy, "--format", fmt, "--output", target)
    one_line(code, err, "--output")
    assert snapshot(run_copy) == before


def test_check_output_on_a_run_file_given_as_path_is_refused(run_cli, run_copy):
    before = snapshot(run_copy)
    code, _, err = run_cli("check", run_copy / "run-1" / "summary.json", "--output", run_copy / "run-1" / "x.txt")
    one_line(code, err, "expected a path outside")
    assert snapshot(run_copy) == before


def test_check_output_inside_a_tpcxai_result_is_refused(run_cli, tmp_path, tpcx_made):
    tpcx = _tpcx_run(tmp_path, tpcx_made)
    before = snapshot(tpcx)
    for target in (tpcx / "tpcxai-result.json", tpcx / "report.txt"):
        code, _, err = run_cli("check", tpcx, "--output", target)
        one_line(code, err, "expected a path outside")
    assert snapshot(tpcx) == before


def test_check_output_of_a_tpcxai_result_to_a_read_only_fs_is_one_line(run_cli, tmp_path, tpcx_made):
    tpcx = _tpcx_run(tmp_path, tpcx_made)
    with _tmpfs(tmp_path / "ro", "size=64k,ro") as ro:
        code, _, err = run_cli("check", tpcx, "--output", ro / "c.txt")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "c.txt" in err


@pytest.fixture
def tpcx_made(tpcx_toy_run) -> Path:
    """A real TPCx-AI run of the toy kit (tests/hostile/conftest.py `tpcx_toy_run`: made once a session,
    shared with test_lies_tpcx_provenance); each test takes a copy (`_tpcx_run`)."""
    return tpcx_toy_run


def _tpcx_run(tmp_path, tpcx_made) -> Path:
    """This test's own copy of the session's real TPCx-AI run of the toy kit."""
    return Path(shutil.copytree(tpcx_made, tmp_path / "tpcx", symlinks=True))


def test_tpcxai_run_into_a_dir_holding_a_complete_result_is_refused(tmp_path, tpcx_made):
    tpcx = _tpcx_run(tmp_path, tpcx_made)
    before = snapshot(tpcx)
    toy = paths.TESTS / "tpcx_ai" / "tpcx_toy.py"
    done = subprocess.run([sys.executable, str(toy), str(tmp_path / "kit"), "--scale-factor", "0.01", "--use-cases",
                           "2", "--results-dir", str(tpcx), "--processes", "1"],
                          capture_output=True, text=True, env=ENV, timeout=300)
    one_line(done.returncode, done.stderr, "expected a new or empty directory")
    assert snapshot(tpcx) == before


REPORT_OUT_CASES = [
    ("inside-the-run", lambda run, tmp: run / "report", []),
    ("the-run-itself-forced", lambda run, tmp: run, ["--force"]),
    ("a-parent-of-the-run-forced", lambda run, tmp: tmp, ["--force"]),
]


@pytest.mark.parametrize("case", REPORT_OUT_CASES, ids=[c[0] for c in REPORT_OUT_CASES])
def test_report_out_over_the_evidence_is_refused(run_cli, run_copy, tmp_path, case):
    _, where, extra = case
    before = snapshot(run_copy)
    code, _, err = run_cli("report", run_copy, "--out", where(run_copy, tmp_path), *extra)
    one_line(code, err, "--out")
    assert snapshot(run_copy) == before


# --------------------------------------------------------------------------- class 5: the submission tree

BAD_SYSTEMS = ["../../..", "..", "../box1", "a/b", ".hidden", "", "x" * 101, "box1/../../x", "/etc/x", "box\n1"]


@pytest.mark.parametrize("system", BAD_SYSTEMS, ids=[repr(s)[1:-1][:20] or "empty" for s in BAD_SYSTEMS])
@pytest.mark.parametrize("action", ["add", "describe"])
def test_a_system_name_never_leaves_the_tree(run_cli, made, tree_copy, tmp_path, system, action):
    argv = ["submission", action, tree_copy] + ([made[2]] if action == "add" else []) + ["--system", system]
    before = snapshot(tmp_path)
    code, _, err = run_cli(*argv)
    one_line(code, err, "--system")
    assert snapshot(tmp_path) == before


def test_an_org_in_the_marker_that_leaves_the_tree_is_refused(run_cli, tree_copy, tmp_path):
    marker = tree_copy / "suite-submission.json"
    doc = json.loads(marker.read_text())
    marker.write_text(json.dumps({**doc, "org": "../../escape"}))
    before = snapshot(tmp_path)
    code, _, err = run_cli("submission", "package", tree_copy)
    one_line(code, err, "org")
    assert snapshot(tmp_path) == before


USER_CODE_FILES = [
    ("look-alike-archive", {"suite-mine-src.tar.gz": b"my own archive"}),
    ("look-alike-note", {"suite-notes-src.json": b'{"mine": true}'}),
    ("note-naming-a-user-file", {"suite-0.0.1-src.json": None, "suite-0.0.1-src.tar.gz": b"the user's bytes"}),
    ("user-scripts", {"run.sh": b"#!/bin/sh\n", "suite-0.9-src.tar.gz": b"x"}),
]


@pytest.mark.parametrize("case", USER_CODE_FILES, ids=[c[0] for c in USER_CODE_FILES])
def test_package_never_deletes_user_files_in_code(run_cli, tree_copy, tmp_path, case):
    _, put = case
    code_dir = tree_copy / "Open" / "ACME" / "code"
    code_dir.mkdir(parents=True, exist_ok=True)
    for name, data in put.items():
        if data is None:       # a note of the right shape whose archive bytes are not what it records
            data = json.dumps({"schema_version": 1, "name": "suite", "version": "0.0.1",
                               "archive": "suite-0.0.1-src.tar.gz", "sha256": "0" * 64, "files": 1,
                               "how": "x"}).encode()
        (code_dir / name).write_bytes(data)
    for _ in range(2):         # a second package replaces only what the first one wrote
        code, _, err = run_cli("submission", "package", tree_copy, "--out", tmp_path / "t.tar.gz", "--replace")
        assert code == 0, err
        for name, data in put.items():
            assert (code_dir / name).is_file()
            if data is not None:
                assert (code_dir / name).read_bytes() == data


def test_package_refuses_a_user_file_where_its_archive_goes(run_cli, tree_copy, tmp_path):
    from suite import __version__

    code_dir = tree_copy / "Open" / "ACME" / "code"
    code_dir.mkdir(parents=True, exist_ok=True)
    (code_dir / f"suite-{__version__}-src.tar.gz").write_bytes(b"the user's own")
    code, _, err = run_cli("submission", "package", tree_copy, "--out", tmp_path / "t.tar.gz")
    one_line(code, err, "a file of yours")
    assert (code_dir / f"suite-{__version__}-src.tar.gz").read_bytes() == b"the user's own"


def test_the_code_archive_is_made_again_when_the_source_changes(tmp_path, monkeypatch):
    """package keeps the last source archive it made in a process (gzipping the source is most of its CPU):
    a source file changed or added since makes it again, so code/ never ships stale code."""
    import io
    import tarfile

    import suite
    from suite.submission import package

    copy = tmp_path / "suite"
    for name, src in package.source_files(Path(suite.__file__).resolve().parent):
        dest = copy / name.split("/suite/", 1)[1]
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    monkeypatch.setattr(suite, "__file__", str(copy / "__init__.py"))

    def member(data: bytes, rel: str) -> bytes:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            return tar.extractfile(next(m for m in tar.getmembers() if m.name.endswith("/suite/" + rel))).read()

    first, count = package.source_archive()
    assert package.source_archive() == (first, count)
    (copy / "numbers.py").write_text((copy / "numbers.py").read_text() + "\nCHANGED = True\n")
    changed, same_count = package.source_archive()
    assert same_count == count and member(changed, "numbers.py").endswith(b"CHANGED = True\n")
    (copy / "added.py").write_text("ADDED = 1\n")
    added, more = package.source_archive()
    assert more == count + 1 and member(added, "added.py") == b"ADDED = 1\n"


@pytest.mark.parametrize("where", ["its-own-target", "elsewhere-in-the-tree", "holding-the-tree"])
def test_add_of_results_inside_or_holding_the_tree_is_refused(run_cli, made, tree_copy, tmp_path, where):
    bench = tree_copy / "Open" / "ACME" / "results" / "box1" / "cosmoflow-h100"
    if where == "elsewhere-in-the-tree":
        shutil.copytree(made[2], tree_copy / "incoming")
        source = tree_copy / "incoming"
    else:
        source = bench if where == "its-own-target" else tmp_path
    before = snapshot(tree_copy)
    code, _, err = run_cli("submission", "add", tree_copy, source, "--system", "box1", "--replace")
    one_line(code, err, "RESULTS")
    assert snapshot(tree_copy) == before and not (tmp_path / "sub.replaced").exists()


def test_datagen_never_echoes_a_raw_escape_sequence(run_cli, tmp_path):
    d = tmp_path / "d\x1b]0;owned\x07"
    code, out, err = run_cli("datagen", "--workload", "cosmoflow", "--accelerator-type", "h100", "--files", "2",
                         "--data-dir", d, "--processes", "1")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out


def test_package_out_inside_the_tree_is_refused(run_cli, tree_copy):
    before = snapshot(tree_copy)
    code, _, err = run_cli("submission", "package", tree_copy, "--out", tree_copy / "Open" / "x.tar.gz")
    one_line(code, err, "--out")
    assert snapshot(tree_copy) == before


@pytest.fixture(scope="module")
def packaged(made, tmp_path_factory):
    """The tree with a big user file in code/, packaged once a session (its manifest current): what each
    SIGTERM case starts from, copied, instead of packaging 96 MiB once more per case (or per worker)."""
    return once(tmp_path_factory, "writes-packaged", lambda factory: _packaged(made, factory))


def _packaged(made, tmp_path_factory):
    """Packaged for real before big.bin is put in (its code/, documents and SHA256SUMS), then SHA256SUMS made
    current with big.bin as package makes it (manifest.text, written atomically): the tree a package of it
    leaves, without gzipping 96 MiB of random bytes (~3 CPU s) into a tarball no case reads."""
    from suite import files
    from suite.layouts import manifest

    tree = Path(shutil.copytree(made[3], tmp_path_factory.mktemp("packaged") / "sub", symlinks=True))
    assert in_process("submission", "package", tree, "--out", tree.parent / "first.tar.gz")[0] == 0
    big = tree / "Open" / "ACME" / "code" / "big.bin"
    big.write_bytes(os.urandom(1 << 20) * 96)
    files.write_atomic(tree / "SHA256SUMS", manifest.text(tree))
    assert manifest.verify(tree) == [] and "Open/ACME/code/big.bin" in (tree / "SHA256SUMS").read_text()
    return tree


@pytest.mark.parametrize("delay_s", [0.05, 0.4, 0.8, 1.5, 2.5])
def test_sigterm_during_package_leaves_the_manifest_and_no_temp_file(packaged, tmp_path, delay_s):
    """A big user file in code/ makes the hashing and the tarball slow enough to be stopped part-way."""
    from suite.layouts import manifest

    tree_copy = Path(shutil.copytree(packaged, tmp_path / "sub", symlinks=True))
    old_manifest = (tree_copy / "SHA256SUMS").read_bytes()
    assert manifest.verify(tree_copy) == []                  # the copy starts from a current manifest
    p = subprocess.Popen([*PY, "submission", "package", str(tree_copy), "--out", str(tmp_path / "t.tar.gz")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    time.sleep(delay_s)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    assert "Traceback" not in err, err
    leftovers = [p for p in [*tree_copy.rglob(".*"), *tmp_path.glob(".*")]
                 if p.name not in (".matplotlib", ".mlps-code-image")]     # the runs' v3.0 code pointer
    assert leftovers == [], leftovers
    assert (tree_copy / "SHA256SUMS").is_file()             # never lost or hidden
    assert manifest.verify(tree_copy) == []                  # the old one (the same code bytes) or the new one
    if p.returncode == 0:
        assert (tmp_path / "t.tar.gz").is_file()
    else:
        assert p.returncode in (130, -signal.SIGTERM), err     # -15: stopped before any handler (nothing begun)
        assert not (tmp_path / "t.tar.gz").exists()
    assert old_manifest


def _flocked(path: Path) -> bool:
    """Whether some process holds a flock on `path` (/proc/locks, read only: no lock taken to find out)."""
    st = os.stat(path)
    for line in Path("/proc/locks").read_text().splitlines():
        parts = line.split()
        if len(parts) > 5 and parts[1] == "FLOCK" and parts[5].count(":") == 2:
            major, minor, inode = parts[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino):
                return True
    return False


def test_a_second_package_at_once_is_one_line(run_cli, made, tree_copy, tmp_path):
    big = tree_copy / "Open" / "ACME" / "code" / "big.bin"
    big.parent.mkdir(parents=True, exist_ok=True)
    big.write_bytes(os.urandom(1 << 20) * 32)
    first = subprocess.Popen([*PY, "submission", "package", str(tree_copy), "--out", str(tmp_path / "a.tar.gz")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    deadline = time.monotonic() + 120                # until the first holds the tree's lock, not a fixed 1 s: on
    while not _flocked(tree_copy) and first.poll() is None and time.monotonic() < deadline:   # a busy machine
        time.sleep(0.02)                             # the second could otherwise take the lock first
    first.send_signal(signal.SIGSTOP)                # the first stays under way, holding the lock, while the
    try:                                             # second runs (instead of hashing and packing 128 MiB)
        assert first.poll() is None and _flocked(tree_copy), \
            "the first package ended before the second started: make big.bin bigger"
        code, _, err = run_cli("submission", "package", tree_copy, "--out", tmp_path / "b.tar.gz")
    finally:
        first.send_signal(signal.SIGCONT)
    _, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err
    one_line(code, err, "one under way")
    assert not (tmp_path / "b.tar.gz").exists()


# --------------------------------------------------------------------------- class 5: results dirs

def test_two_runs_started_together_into_one_new_dir_one_runs(made, tmp_path):
    _, data, _, _ = made
    r = tmp_path / "R"
    argv = [*PY, "run", "--workload", "cosmoflow", "--accelerators", "1", "--data-dir", str(data),
            "--results-dir", str(r), "--division", "open", "--runs", "1"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes[0] in (0, 1) and codes[1] == 2, outs
    loser = next(err for p, (_, err) in zip(procs, outs) if p.returncode == 2)
    one_line(2, loser, "--results-dir")
    doc = json.loads((r / "run_set.json").read_text())
    assert len(doc["runs"]) == 1 and sorted(os.listdir(r)) == ["mlperf_storage_report.json", "run-1", "run_set.json"]


def test_a_refused_memory_limit_leaves_nothing_and_the_corrected_run_goes(run_cli, made, tmp_path):
    """Each refused limit leaves nothing (no results dir), so one corrected run after all three stands for
    the run after each: the same command into the same, still absent, dir."""
    _, data, _, _ = made
    r = tmp_path / "R"
    base = ["run", "--workload", "cosmoflow", "--accelerators", "1", "--data-dir", data, "--results-dir", r,
            "--division", "open", "--runs", "1"]
    for limit in ("1KiB", "1000", "1PiB"):
        code, _, err = run_cli(*base, "--memory-limit", limit)
        one_line(code, err, "--memory-limit")
        assert not r.exists(), limit
    code, _, err = run_cli(*base)
    assert code in (0, 1) and (r / "run_set.json").is_file(), err


@pytest.mark.parametrize("rel", ["train/results", "results", "valid/../r"])
def test_a_results_dir_inside_the_dataset_is_refused(run_cli, made, tmp_path, rel):
    data = Path(shutil.copytree(made[1], tmp_path / "data"))
    before = snapshot(data)
    code, _, err = run_cli("run", "--workload", "cosmoflow", "--accelerators", "1", "--data-dir", data,
                       "--results-dir", data / rel, "--division", "open", "--runs", "1")
    one_line(code, err, "--results-dir")
    assert snapshot(data) == before


# --------------------------------------------------------------------------- class 6: links out of the tree

def _outside(tmp_path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    return secret


LINKED_READS = [
    ("sha256sums-to-a-file-outside", "SHA256SUMS", "file"),
    ("sha256sums-to-a-dir-outside", "SHA256SUMS", "dir"),
    ("sha256sums-to-dev-zero", "SHA256SUMS", "/dev/zero"),
    ("sha256sums-through-a-linked-dir", "SHA256SUMS", "via-dir"),
    ("system-description-outside", "Open/ACME/systems/box1.json", "file"),
]


@pytest.mark.parametrize("case", LINKED_READS, ids=[c[0] for c in LINKED_READS])
def test_nothing_outside_the_tree_is_read_through_a_link(run_cli, tree_copy, tmp_path, case):
    _, rel, how = case
    secret = _outside(tmp_path)
    target = tree_copy / rel
    target.unlink(missing_ok=True)
    if how == "file":
        target.symlink_to(secret)
    elif how == "dir":
        target.symlink_to(secret.parent)
    elif how == "via-dir":
        (tree_copy / "sums").symlink_to(secret.parent)
        os.rename(secret, secret.with_name("SHA256SUMS"))
        target.symlink_to(Path("sums") / "SHA256SUMS")
    else:
        target.symlink_to(how)
    for fmt in ("text", "json"):
        t0 = time.monotonic()
        code, out, err = run_cli("check", tree_copy, "--format", fmt)
        assert time.monotonic() - t0 < 60 and "Traceback" not in err
        assert "SECRET-LINE" not in out + err and code in (1, 2)


def test_a_linked_marker_is_never_read(run_cli, tree_copy, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    real = outside / "suite-submission.json"
    shutil.move(tree_copy / "suite-submission.json", real)
    (tree_copy / "suite-submission.json").symlink_to(real)
    code, _, err = run_cli("submission", "package", tree_copy)
    one_line(code, err, "outside")


def test_a_linked_tpcxai_result_is_never_read(run_cli, tmp_path, tpcx_made):
    tpcx = _tpcx_run(tmp_path, tpcx_made)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(tpcx / "tpcxai-result.json", outside / "tpcxai-result.json")
    (tpcx / "tpcxai-result.json").symlink_to(outside / "tpcxai-result.json")
    code, out, err = run_cli("check", tpcx)
    assert code == 2 and "Traceback" not in err and "outside" in err, err


# --------------------------------------------------------------------------- class 7: bounds and resources

def test_a_63mb_sha256sums_is_one_finding_fast(run_cli, tree_copy):
    line = ("ab" * 32 + "  " + "missing/" + "x" * 80 + "\n").encode()
    with open(tree_copy / "SHA256SUMS", "wb") as f:
        for k in range(63 * 2**20 // len(line)):
            f.write(line[:-5] + b"%04x\n" % (k % 65536))
    t0 = time.monotonic()
    code, out, err = run_cli("check", tree_copy, "--format", "json")
    assert time.monotonic() - t0 < 30 and code == 1, err
    found = [f for f in json.loads(out)["findings"] if f["rule_id"].startswith("submission-manifest")]
    assert [f["rule_id"] for f in found] == ["submission-manifest-unreadable"] and "bytes" in found[0]["actual"]


def test_many_missing_lines_are_bounded_findings(run_cli, tree_copy):
    from suite.layouts import manifest

    with open(tree_copy / "SHA256SUMS", "a") as f:
        for k in range(5000):
            f.write("cd" * 32 + f"  gone/{k}.json\n")
    code, out, _ = run_cli("check", tree_copy, "--format", "json")
    found = [f for f in json.loads(out)["findings"] if f["rule_id"] == "submission-manifest-missing"]
    assert code == 1 and len(found) == manifest.MAX_FINDINGS + 1 and "4950 more" in found[-1]["actual"]


def test_too_many_manifest_lines_is_one_finding(run_cli, tree_copy):
    from suite.layouts import manifest

    (tree_copy / "SHA256SUMS").write_bytes(b"\n" * (manifest.MAX_LINES + 1))
    code, out, _ = run_cli("check", tree_copy, "--format", "json")
    found = [f for f in json.loads(out)["findings"] if f["rule_id"].startswith("submission-manifest")]
    assert code == 1 and len(found) == 1 and "lines" in found[0]["actual"]


@pytest.mark.parametrize("content", [b"h" * (2 << 20), b"\xff\xfe host\n"], ids=["2MiB", "not-utf8"])
def test_a_hostfile_is_bounded_and_one_line(run_cli, made, tmp_path, content):
    hostfile = tmp_path / "hosts"
    hostfile.write_bytes(content)
    t0 = time.monotonic()
    code, _, err = run_cli("run", "--workload", "cosmoflow", "--accelerators", "2", "--data-dir", made[1],
                           "--results-dir", tmp_path / "r", "--division", "open", "--hostfile", hostfile)
    assert time.monotonic() - t0 < 20 and not (tmp_path / "r").exists()
    one_line(code, err, "hosts")


def _sweep(tmp_path, n: int) -> Path:
    doc = json.loads((paths.DATA / "sweep" / "resnet50-h100-tiny" / "sweep.json").read_text())
    doc["points"] = [dict(doc["points"][0], accelerators=k + 1) for k in range(n)]
    d = tmp_path / f"sweep-{n}"
    d.mkdir()
    (d / "sweep.json").write_text(json.dumps(doc))
    return d


@pytest.mark.parametrize("n,needle", [(300, "points: expected at most"), (9000, "size: expected at most")])
@pytest.mark.parametrize("command", ["report", "sizing"])
def test_a_sweep_of_too_many_points_is_one_line_fast(run_cli, tmp_path, n, needle, command):
    d = _sweep(tmp_path, n)
    t0 = time.monotonic()
    argv = (["report", d, "--out", tmp_path / "rep"] if command == "report" else
            ["sizing", "--workload", "resnet50", "--accelerators", "4", "--from", d])
    code, _, err = run_cli(*argv)
    assert time.monotonic() - t0 < 20
    one_line(code, err, needle)
    assert not (tmp_path / "rep").exists()


class _tmpfs:
    """A small real tmpfs mounted at `path` (root only: skipped otherwise)."""

    def __init__(self, path: Path, options: str):
        self.path, self.options = Path(path), options

    def __enter__(self) -> Path:
        self.path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", self.options, "tmpfs", str(self.path)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        return self.path

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", str(self.path)], check=False)


def _fill(d: Path) -> None:
    try:
        with open(d / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 65536)
    except OSError:
        pass


def test_check_output_on_a_real_full_tmpfs_is_one_line(run_cli, run_copy, tmp_path):
    with _tmpfs(tmp_path / "full", "size=128k") as full:
        _fill(full)
        code, _, err = run_cli("check", run_copy, "--output", full / "check.txt")
        one_line(code, err, "ENOSPC")
        assert "check.txt" in err and sorted(os.listdir(full)) == ["filler"]


def test_report_on_a_real_full_tmpfs_is_one_line(run_cli, run_copy, tmp_path):
    with _tmpfs(tmp_path / "full", "size=256k") as full:
        _fill(full)
        code, _, err = run_cli("report", run_copy, "--out", full / "rep")
        assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert sorted(os.listdir(full)) == ["filler"]


def test_package_onto_a_real_full_tmpfs_is_one_line(run_cli, tree_copy, tmp_path):
    with _tmpfs(tmp_path / "full", "size=64k") as full:
        code, _, err = run_cli("submission", "package", tree_copy, "--out", full / "t.tar.gz")
        one_line(code, err, "ENOSPC")
        assert "t.tar.gz" in err and os.listdir(full) == []
    assert (tree_copy / "SHA256SUMS").is_file()


def test_a_run_onto_a_real_full_tmpfs_is_one_line_and_failed(run_cli, made, tmp_path):
    _, data, _, _ = made
    with _tmpfs(tmp_path / "full", "size=64k") as full:
        code, _, err = run_cli("run", "--workload", "cosmoflow", "--accelerators", "1", "--data-dir", data,
                           "--results-dir", full / "r", "--division", "open", "--runs", "3")
        one_line(code, err, "ENOSPC", exit_code=1)
        assert "the run failed" in err or "incomplete" in err


def test_datagen_onto_a_real_full_tmpfs_is_one_line(run_cli, tmp_path):
    with _tmpfs(tmp_path / "full", "size=1m") as full:
        code, _, err = run_cli("datagen", "--workload", "cosmoflow", "--accelerator-type", "h100", "--files", "4",
                           "--data-dir", full / "d", "--processes", "1")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def _fsize(limit):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return set_limit


@pytest.mark.parametrize("command", ["check-output", "package"])
def test_a_file_size_limit_is_one_line_naming_the_file(made, run_copy, tree_copy, tmp_path, command):
    if command == "check-output":
        argv, target = ["check", run_copy, "--format", "json", "--output", tmp_path / "c.json"], tmp_path / "c.json"
    else:
        argv, target = ["submission", "package", tree_copy, "--out", tmp_path / "t.tar.gz"], tmp_path / "t.tar.gz"
    code, _, err = cli(*argv, preexec_fn=_fsize(200))
    one_line(code, err, "EFBIG")
    assert ("src.tar.gz" in err or target.name in err or "box1.md" in err) and not target.exists()  # the file it
    #                                           could not write (package makes the system documents again first)
    temp = [p for p in [*run_copy.rglob(".*"), *tree_copy.rglob(".*")] if p.name != ".mlps-code-image"]
    assert temp == [] and [p for p in tmp_path.glob(".*")] == []      # (.mlps-code-image: the runs' code pointer)


# --------------------------------------------------------------------------- class 9: escapes, progress

def test_check_output_never_echoes_a_raw_escape_sequence(run_cli, run_copy, tmp_path):
    target = tmp_path / "\x1b[31mred\x07.txt"
    code, out, err = run_cli("check", run_copy, "--output", target)
    assert code in (0, 1) and target.is_file()
    assert "\x1b" not in out + err and "\x07" not in out + err and "\\x1b" in out


def test_a_resumed_datagen_rate_counts_only_what_it_wrote(run_cli, tmp_path):
    d = tmp_path / "d"
    argv = ["datagen", "--workload", "cosmoflow", "--accelerator-type", "h100", "--files", "16", "--data-dir", d,
            "--processes", "1"]
    assert run_cli(*argv)[0] == 0
    victim = sorted((d / "train").rglob("*.tfrecord"))[0]
    victim.unlink()
    code, out, err = run_cli(*argv)
    assert code == 0, err
    progress = [l for l in err.splitlines() if l.startswith("datagen: ") and "files" in l]
    assert progress and "(15 kept)" in progress[-1] and "MB/s written" in progress[-1]
    log = json.loads((d / "generation_log.json").read_text())
    assert log["files_written"] == 1 and log["files_kept"] == 15


# --------------------------------------------------------------------------- properties (Hypothesis)

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_SEG = st.sampled_from(["a", "b", "..", ".", "out", "f.json"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(links=st.lists(st.tuples(st.sampled_from(["a/l1", "l2", "a/b/l3"]), st.lists(_SEG, min_size=1, max_size=5)),
                      max_size=3),
       rel=st.lists(st.sampled_from(["a", "b", "l1", "l2", "l3", "f.json", ".."]), min_size=1, max_size=5))
def test_a_guarded_read_never_returns_bytes_from_outside_the_tree(tmp_path_factory, links, rel):
    """Whatever links a tree holds and whatever path is asked for, files.read_bytes(root=) returns
    only the bytes of a regular file inside the tree, or raises a one-line SuiteError."""
    from suite import files
    from suite.errors import SuiteError

    base = tmp_path_factory.mktemp("prop")
    root = base / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.json").write_bytes(b"inside")
    (base / "out").mkdir()
    (base / "out" / "f.json").write_bytes(b"OUTSIDE")
    (base / "f.json").write_bytes(b"OUTSIDE")
    for where, target in links:
        link = root / where
        if not os.path.lexists(link):
            link.symlink_to("/".join(target))
    try:
        data = files.read_bytes(root.joinpath(*rel), root=root)
    except SuiteError as exc:
        assert "\n" not in str(exc)
        return
    assert data == b"inside"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["x", "run", "..", ".", "tree", "sub"]), min_size=1, max_size=6))
def test_an_output_is_outside_its_input_or_refused(parts):
    """output.outside refuses exactly the paths whose real location is the tree, below it or above it."""
    import tempfile

    from suite import output
    from suite.errors import SuiteError

    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base" / "tree"
        (tree / "run").mkdir(parents=True)
        target = Path(tmp, "base", *parts)
        real, base = os.path.realpath(target), os.path.realpath(tree)
        clash = real == base or real.startswith(base + os.sep) or base.startswith(real.rstrip(os.sep) + os.sep)
        try:
            output.outside(target, "--out", [tree])
            assert not clash
        except SuiteError:
            assert clash
