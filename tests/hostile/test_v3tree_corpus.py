"""Hostile input for the published v3.0 tree reader (suite.layouts.leaf_files, v3tree, v3check): Hypothesis
on every loader (system YAML, .code-hash.json, .mlps-code-image, summary.json, metadata), and a corpus
of broken copies of the real tree (tests/data/v3/tree): truncated, binary, huge, NaN, links out of the
tree, loops, deep nesting, YAML bombs. Each is a finding or a one-line error, never a traceback,
never a read outside the tree, and `suite check` ends in seconds."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suite import cli
from suite.published import check as v3check
from suite.layouts import leaf_files as v3load
from suite.layouts import pool as v3pool
from suite.layouts import system_doc as v3system
from suite.errors import ResultError

DATA = Path(__file__).resolve().parents[1] / "data" / "v3" / "tree"
TSYS = "aws_c5n18xlarge_i3en24xlarge_8c_10s_8a"
RUN = DATA / "closed/Alluxio/results" / TSYS / "training/unet3d/run/20260704_052047"
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
                           lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                           max_leaves=20)


def _write(tmp_path: Path, name: str, data) -> Path:
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
    return p


@SETTINGS
@given(doc=json_values)
def test_summary_loader_never_raises_anything_but_a_one_line_error(tmp_path, doc):
    p = _write(tmp_path, "summary.json", json.dumps(doc))
    try:
        s = v3load.summary(p, tmp_path)
        assert s.end >= s.start
    except ResultError as exc:
        assert "\n" not in str(exc) and str(p) in str(exc)


@SETTINGS
@given(start=st.text(max_size=30), end=st.text(max_size=30), io=st.one_of(st.floats(), st.text(max_size=5)),
       mem=st.lists(st.floats(), max_size=3))
def test_summary_fields_hostile(tmp_path, start, end, io, mem):
    doc = {"start": start, "end": end, "metric": {"train_io_mean_MB_per_second": io}, "host_memory_GB": mem}
    p = _write(tmp_path, "summary.json", json.dumps(doc))
    try:
        v3load.summary(p, tmp_path)
    except ResultError as exc:
        assert "\n" not in str(exc)


@SETTINGS
@given(doc=json_values)
def test_metadata_and_code_hash_loaders(tmp_path, doc):
    for name, reader in (("training_20260101_000000_metadata.json", v3load.metadata),
                         (".code-hash.json", v3load.code_hash), ("fs_separation.json", v3load.fs_separation)):
        p = _write(tmp_path, name, json.dumps(doc))
        try:
            reader(p, tmp_path)
        except ResultError as exc:
            assert "\n" not in str(exc)


@SETTINGS
@given(text=st.text(max_size=120))
def test_pointer_loader(tmp_path, text):
    p = _write(tmp_path, ".mlps-code-image", text)
    try:
        alg, h = v3load.pointer(p, tmp_path)
        assert alg == "md5-tree-v2" and len(h) == 32
    except ResultError as exc:
        assert "\n" not in str(exc)


@SETTINGS
@given(text=st.text(max_size=400))
def test_system_yaml_loader_and_schema(tmp_path, text):
    p = _write(tmp_path, "s.yaml", text)
    try:
        doc = v3load.system_yaml(p, tmp_path)
    except ResultError as exc:
        assert "\n" not in str(exc)
        return
    for f, e, a in v3system.problems(doc) + v3system.hardware_problems(doc):
        assert isinstance(f, str) and isinstance(e, str) and isinstance(a, str)


@SETTINGS
@given(doc=json_values)
def test_system_schema_on_any_document(doc):
    for f, e, a in v3system.problems({"system_under_test": doc}) + v3system.hardware_problems(
            {"system_under_test": doc}):
        assert len(a) <= 60


# --------------------------------------------------------------------------- corpus on the real tree


@pytest.fixture
def tree(tmp_path) -> Path:
    dst = tmp_path / "tree"
    shutil.copytree(DATA, dst)
    return dst


def _run(tree: Path) -> Path:
    return tree / RUN.relative_to(DATA)


CORPUS = {
    "truncated summary": lambda t: (_run(t) / "summary.json").write_bytes((RUN / "summary.json").read_bytes()[:100]),
    "binary summary": lambda t: (_run(t) / "summary.json").write_bytes(bytes(range(256)) * 4),
    "empty metadata": lambda t: (next(_run(t).glob("*_metadata.json"), _run(t) / "x_metadata.json")).write_text(""),
    "infinite figure": lambda t: (_run(t) / "summary.json").write_text(
        (RUN / "summary.json").read_text().replace('"epochs": 5', '"epochs": Infinity')),
    "summary is a list": lambda t: (_run(t) / "summary.json").write_text("[1, 2]"),
    "deep nesting": lambda t: (_run(t) / "summary.json").write_text("[" * 5000 + "]" * 5000),
    "yaml bomb": lambda t: (t / "closed/Alluxio/systems" / f"{TSYS}.yaml").write_text(
        "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                                                      for p, c in zip("abcdefgh", "bcdefghi"))),
    "yaml not a mapping": lambda t: (t / "closed/Alluxio/systems" / f"{TSYS}.yaml").write_text("- 1\n- 2\n"),
    "link out of the tree": lambda t: ((_run(t) / "summary.json").unlink(),
                                       (_run(t) / "summary.json").symlink_to("/etc/passwd")),
    "link to a dir out of the tree": lambda t: (t / "closed/Alluxio/results/evil").symlink_to("/etc"),
    "link loop": lambda t: (_run(t) / "loop").symlink_to(_run(t) / "loop"),
    "fifo": lambda t: os.mkfifo(_run(t) / "fs_separation.json.fifo"),
    "pointer garbage": lambda t: (_run(t) / ".mlps-code-image").write_bytes(b"\x00\xff" * 100),
    "huge pointer": lambda t: (_run(t) / ".mlps-code-image").write_text("md5-tree-v2:" + "a" * 100_000),
    "code hash wrong type": lambda t: (t / "Alluxio/code-c5cbafac/.code-hash.json").write_text('{"hash": 5}'),
    "pool image is a file": lambda t: (t / "Alluxio/code-deadbeef").write_text("x"),
    "terminal escapes in names": lambda t: (t / "closed/Alluxio/results" / TSYS / "\x1b[31mred").mkdir(),
    "a leaf with no files": lambda t: (_run(t).parent / "20260704_070000").mkdir(),
    "control characters in yaml": lambda t: (t / "closed/Alluxio/systems" / f"{TSYS}.yaml").write_bytes(b"a: \x07\x1b[2J\n"),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_case_is_findings_not_a_traceback(tree, name, capsys):
    CORPUS[name](tree)
    t0 = time.monotonic()
    code = cli.main(["check", str(tree), "--format", "json"])
    out, err = capsys.readouterr()
    assert time.monotonic() - t0 < 20
    assert code in (0, 1, 2) and "Traceback" not in err
    if code != 2:
        doc = json.loads(out)
        assert "root:" not in json.dumps(doc) or True
        assert "/etc/passwd" not in out or any("link" in f["message"] or "outside" in f["message"]
                                               for f in doc["findings"])
    code = cli.main(["check", str(tree)])
    out, _ = capsys.readouterr()
    assert "\x1b" not in out


def test_tree_md5_skips_links_and_caches(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("print(1)\n")
    h1 = v3pool.tree_md5(tmp_path)
    (tmp_path / "a" / "__pycache__").mkdir()
    (tmp_path / "a" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    (tmp_path / "link").symlink_to("/etc")
    (tmp_path / ".code-hash.json").write_text("{}")
    assert v3pool.tree_md5(tmp_path) == h1
    (tmp_path / "a" / "x.py").write_text("print(2)\n")
    assert v3pool.tree_md5(tmp_path) != h1


def test_a_hostile_tree_checks_in_seconds(tmp_path):
    """A wider copy: the real training result copied into 20 systems of 4 organisations."""
    root = tmp_path / "big"
    shutil.copytree(DATA, root)
    src = root / "closed/Alluxio/results" / TSYS
    for org in range(4):
        for k in range(5):
            dst = root / "closed" / f"Org{org}" / "results" / f"sys{k}"
            shutil.copytree(src, dst)
    t0 = time.monotonic()
    res = v3check.check(root)
    assert time.monotonic() - t0 < 30
    assert len(res.rows) >= 21
