"""Issue 38: one verdict vocabulary, one exit-code rule, one verdict line, honest headlines, for every kind.

For each kind of suite.kinds.registry.KINDS a real small `suite run` through the CLI (real mpiexec, the
embedded DiskANN engine, the TPCx-AI kit at SF 0.01); then `suite check` and `suite report` on what it
wrote. Each must: end the run with the verdict line (suite.rules.verdict), exit 0 exactly when that line
says compliant, say the same line and code in `suite check`, and carry MINIATURE / OPEN / INVALID / NOT
PUBLISHABLE in the report page's title (HTML and Markdown) where they apply. The published v3.0 tree is
a layout (registry.LAYOUTS), not a kind: it runs nothing and is not walked here.
"""

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

from suite import cli
from suite.kinds import registry
from suite.rules.verdict import MINIATURE, NOT_PUBLISHABLE, parse
from tests.vector_database.conftest import TINY, engine_or_skip

pytestmark = pytest.mark.timeout(900)   # the voiced runs: made once

FAST = ["--param", "train.epochs=1", "--param", "train.computation_time=0.001", "--param", "reader.read_threads=2"]
RUNS_NOTHING: set = set()          # a kind with no `suite run` of its own (none: the published tree is a layout)


def _suite(*argv) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    assert code in (0, 1), (argv, code, err.getvalue())
    return code, out.getvalue()


def _training(base: Path):
    # the retinanet miniature: ~0.3 GiB of data (unet3d's and resnet50's are ~5 GiB, more than CI's /tmp holds)
    return ["--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1, "--runs", 1,
            "--division", "open", *FAST]


def _checkpointing(base: Path):
    return ["--workload", "llama3-8b", "--accelerators", 8, "--ruleset", "v3.0"]                   # the miniature


def _kv_cache(base: Path):
    return ["--workload", "kv-cache", "--option", 1, "--trials", 1, "--duration", 2, "--inter-option-delay", 0,
            "--accelerators", 1, "--allow-no-cache-drop", "--division", "open"]                   # the miniature


def _vector_database(base: Path):
    from suite.storage import workloads
    from suite.vector_database import dataset, workload

    engine_or_skip("diskann")
    (base / "wl").mkdir()
    (base / "wl" / "vdb-voice.yaml").write_text(TINY.format(name="vdb-voice", dim=16))
    workloads.add_dir(base / "wl")
    dataset.generate(workload.load("vdb-voice"), base / "D", processes=1, say=lambda *a: None)
    return ["--workload", "vdb-voice", "--index", "diskann", "--data-dir", base / "D", "--runs", 1,
            "--division", "open", "--allow-no-cache-drop"]


def _tpcx_ai(base: Path):
    return ["--workload", "tpcx-ai", "--scale-factor", 0.01, "--use-cases", 1, "--processes", 1]


RUNS = {"training": _training, "checkpointing": _checkpointing, "kv_cache": _kv_cache,
        "vector_database": _vector_database, "tpcx-ai": _tpcx_ai}


def test_every_kind_is_walked():
    """A new kind gets a run here (or says, in RUNS_NOTHING, why it has none)."""
    assert {k.name for k in registry.KINDS} == set(RUNS) | RUNS_NOTHING


# kinds whose run here is a docs example's line (tests/docs_hooks.py SHARED_LINES: made once for both)
SHARED = {"tpcx-ai": "docs-tpcx-ai", "checkpointing": "docs-v3-miniature"}


def made(tmp_path_factory):
    """{kind: (run's exit code, its stdout, its results dir, check's code and text, report's HTML, Markdown)}:
    the session fixture `voiced` (tests/conftest.py: made once, shared with tests/harness/test_cpu_saturation.py)."""
    from suite.storage import workloads

    base = tmp_path_factory.mktemp("voice")
    here, out = os.getcwd(), {}
    os.chdir(base)                              # the miniatures' data go under ./results
    try:
        for name, argv in RUNS.items():
            where = base / name
            where.mkdir()
            try:
                extra = argv(where)
            except pytest.skip.Exception as exc:
                out[name] = exc
                continue
            if name in SHARED:          # the same command as a docs example's line: its one run serves both
                from tests.docs_hooks import SHARED_LINES, shared_docs_line

                ran, argv, code, text, err = shared_docs_line(tmp_path_factory, SHARED[name])
                assert {str(a) for a in extra} <= set(argv), (extra, argv)      # this kind's run, as given here
                assert code in (0, 1), (argv, code, err)
                results = ran / SHARED_LINES[SHARED[name]][2]
            else:
                code, text = _suite("run", *extra, "--results-dir", where / "R", "--no-history")
                results = where / "R"
            ccode, ctext = _suite("check", results)
            _suite("report", results, "--out", where / "rep")
            out[name] = (code, text, results, ccode, ctext, (where / "rep" / "index.html").read_text(),
                         (where / "rep" / "report.md").read_text())
    finally:
        os.chdir(here)
        if (base / "vector_database" / "wl").is_dir():
            workloads.remove_dir(base / "vector_database" / "wl")
    return out


def _got(voiced, kind):
    got = voiced[kind]
    if isinstance(got, BaseException):
        pytest.skip(str(got))
    return got


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_a_run_ends_with_the_verdict_line_and_its_exit_code(voiced, kind):
    code, text, *_ = _got(voiced, kind)
    last = text.rstrip("\n").splitlines()[-1]
    said = parse(last)
    assert said is not None, (kind, last)
    verdict, labels, compliant = said
    assert code == (0 if compliant else 1), (kind, last, code)
    if MINIATURE in labels:                                   # a miniature is never compliant
        assert not compliant and NOT_PUBLISHABLE in labels, last


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_check_says_what_the_run_said(voiced, kind):
    code, text, _, ccode, ctext, *_ = _got(voiced, kind)
    assert ctext.rstrip("\n").splitlines()[-1] == text.rstrip("\n").splitlines()[-1], kind
    assert ccode == code, (kind, ctext[-400:])


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_the_report_title_carries_the_labels(voiced, kind):
    code, text, _, _, _, html, md = _got(voiced, kind)
    verdict, labels, _ = parse(text.rstrip("\n").splitlines()[-1])
    wanted = {*labels, *([verdict.upper()] if verdict != "closed" else [])}
    h1 = re.search(r"<h1>(.*?)</h1>", html, re.S).group(1)
    md_title = md.splitlines()[0]
    for label in wanted:
        assert label in h1 and label in md_title, (kind, label, h1, md_title)
    assert "v2.0" not in h1                                   # the result's round, never a hard-coded one


def test_the_miniatures_and_the_open_run_say_so(voiced):
    """The cases of issue 38: a checkpointing miniature is not "CLOSED (compliant)"; training, kv_cache
    miniatures say MINIATURE; an OPEN result asked as open is compliant (exit 0) in run and check alike."""
    for kind in ("training", "checkpointing", "kv_cache"):
        code, text, *_ = _got(voiced, kind)
        last = text.rstrip("\n").splitlines()[-1]
        assert MINIATURE in last and last.endswith("(not compliant)") and code == 1, (kind, last)
    code, text, _, ccode, *_ = _got(voiced, "vector_database")
    last = text.rstrip("\n").splitlines()[-1]
    if last.startswith("verdict: OPEN"):
        assert code == ccode == 0 and last.endswith("(compliant)")


RAW_FLOAT = re.compile(r"(?<![\w.])\d+\.\d{5,}(?![\w.])")     # 16.875482969390337: not a figure for people


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_one_verdict_word_per_result_in_every_format(voiced, kind):
    """Issue 47: report.md said "Verdict: invalid" twice, then "Verdict: open" for a warning; the HTML an
    orange "open" badge. One result, one verdict: the run's, in the Markdown, the HTML badge, check's text
    (its one verdict line) and check's JSON; figures for people rounded (no raw float)."""
    code, text, results, _, ctext, html, md = _got(voiced, kind)
    verdict, _, _ = parse(text.rstrip("\n").splitlines()[-1])
    assert re.findall(r"\*\*Verdict: ([\w, -]+)\*\*", md) == [verdict], (kind, md[:2000])
    assert re.findall(r'<span class="verdict v-([\w-]+)">', html) == [verdict], kind
    assert [parse(line)[0] for line in ctext.splitlines() if parse(line)] == [verdict], (kind, ctext[-1000:])
    import json
    _, js = _suite("check", results, "--format", "json")
    assert json.loads(js)["verdict"] == verdict, kind
    assert RAW_FLOAT.findall(md) == [] and RAW_FLOAT.findall(ctext) == [], (kind, RAW_FLOAT.findall(md + ctext))
