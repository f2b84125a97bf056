import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tpcx_ai.test_fdr import DELL, jobs_doc, write

import paths

REPO = paths.REPO
DATA = paths.DATA
RUN = DATA / "suite-run" / "unet3d-h100"
SIMPLYBLOCK = DATA / "storage" / "simplyblock"


def _report(source: Path, out: Path) -> tuple[int, str, str, Path]:
    """`suite report SOURCE --out OUT` in this process, as run_cli calls it: (exit code, stdout, stderr, OUT)."""
    import contextlib
    import io

    from suite import cli

    said, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(err):
        code = cli.main(["report", str(source), "--out", str(out)])
    return code, said.getvalue(), err.getvalue(), out


@pytest.fixture(scope="session")
def run_page(tmp_path_factory):
    """`suite report` of RUN, made once a session (tests/conftest.py `once`): read it as it is, copy it before
    changing anything. Its --out is as long as a test's own tmp_path/out (the width of its "wrote" line)."""
    from tests.conftest import once

    return once(tmp_path_factory, "report-run-page",
                lambda f: _report(RUN, f.mktemp("test_the_runs_own_verdict_is_", numbered=True) / "out"))


@pytest.fixture(scope="session")
def dell_page(tmp_path_factory):
    """`suite report` of the DELL FDR, made once a session, as run_page."""
    from tests.conftest import once

    return once(tmp_path_factory, "report-dell-page", lambda f: _report(DELL, f.mktemp("dell-page") / "out"))


def snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def test_storage_report_of_a_suite_run_result(run_page):
    code, stdout, err, out = run_page
    assert code == 0 and err == "" and "index.html" in stdout
    assert sorted(p.name for p in out.iterdir()) == [".suite-report", "index.html", "plots", "report.md", "runs.csv", "runs.parquet"]
    page = (out / "index.html").read_text()
    for sid in ("b1-headline", "b1-compliance", "b1-runs", "b1-evidence"):
        assert f'id="{sid}"' in page
    assert "20.85 samples/s" in page and "2,914.49 MiB/s" in page and "96.19 %" in page
    # suite check's verdict and findings, and what the runner itself recorded
    # 9: ours-self-verdict in both runs (issue 24: their results.json say not compliant; 7 before)
    # one verdict for the one result (issue 47): the page's, above its numbers; the compliance section counts
    assert page.count('<span class="verdict ') == 1 and "<p>suite check: 9 finding(s)</p>" in page
    assert re.search(r'id="b1-headline".*?<span class="verdict v-invalid">invalid</span>verdict: INVALID', page, re.S)
    assert "ours-not-miniature" in page and "structure-run-count" in page
    assert "miniature: the 500-step minimum is not applied" in page
    assert "enforcement.memory_limit.applied_bytes" in page and "268435456" in page
    assert page.count("data:image/png;base64,") == 2 and "<script" not in page and "http://" not in page
    md = (out / "report.md").read_text()
    assert "**Throughput: 20.85 samples/s**" in md and "![per-epoch AU and throughput](plots/b1-epochs.png)" in md
    for png in (out / "plots").iterdir():
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_several_benchmarks_get_an_overview(run_cli, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(SIMPLYBLOCK, tree / "a")
    shutil.copytree(RUN, tree / "b" / "unet3d-h100")
    code, _, _ = run_cli("report", tree, "--out", tmp_path / "out")
    page = (tmp_path / "out" / "index.html").read_text()
    assert code == 0 and page.index('id="overview"') < page.index('id="b1-headline"') < page.index('id="b2-headline"')
    assert "<title>2 storage benchmarks — MINIATURE · INVALID · NOT PUBLISHABLE</title>" in page and "1,778.69" in page and "20.85" in page
    assert len(list(csv.DictReader((tmp_path / "out" / "runs.csv").open()))) == 7


def test_exports_agree_with_each_other_and_the_metrics(run_cli, tmp_path):
    import pyarrow.parquet as pq

    from suite.training import aggregate

    run_cli("report", SIMPLYBLOCK, "--out", tmp_path)
    rows = list(csv.DictReader((tmp_path / "runs.csv").open()))
    table = pq.read_table(tmp_path / "runs.parquet").to_pylist()
    expected = aggregate.run_table(aggregate.summarise(SIMPLYBLOCK))
    assert len(rows) == len(table) == 5
    assert [r["run"] for r in rows] == [r["run"] for r in table] == ["run1", "run2", "run3", "run4", "run5"]
    for c, p, e in zip(rows, table, expected):
        assert float(c["samples_per_second"]) == p["samples_per_second"] == e["samples_per_second"]
        assert p["num_accelerators"] == 1 and p["hosts"] == "ip-172-31-74-102"
    assert list(rows[0]) == list(aggregate.RUN_TABLE_COLUMNS)


def test_tpcxai_report_of_the_dell_fdr(dell_page):
    code, _, err, tmp_path = dell_page
    page = (tmp_path / "index.html").read_text()
    assert code == 0 and err == ""
    assert "425.30" in page and "113.83 USD/AIUCpm" in page and "Recomputed − published = -0.01" in page
    assert 'id="use-cases"' in page and "4,928.427" in page and page.count("data:image/png;base64,") == 2
    uc = list(csv.DictReader((tmp_path / "use_cases.csv").open()))
    assert len(uc) == 10 and uc[7]["training_s"] == "4928.427"
    (row,) = csv.DictReader((tmp_path / "runs.csv").open())
    assert row["aiucpm"] == "425.297" and row["price_per_aiucpm"] == "113.83"
    md = (tmp_path / "report.md").read_text()
    assert "- **AIUCpm@10: 425.30** — kit value 425.297" in md and "| UC08 | 4,928.427 | 396.486 | 396.099 | – |" in md


def test_tpcxai_report_of_a_subset_says_why_there_is_no_metric(run_cli, tmp_path):
    doc = __import__("yaml").safe_load(DELL.read_text())
    doc["training_s"] = doc["training_s"][:9]
    code, _, _ = run_cli("report", write(tmp_path, "subset.yaml", doc), "--out", tmp_path / "out")
    page = (tmp_path / "out" / "index.html").read_text()
    assert code == 0 and "training_s: expected 10 use-case times, got 9 (missing use case 10)" in page
    assert "113.83 USD/AIUCpm" not in page


def test_tpcxai_report_with_jobs_and_quality(run_cli, tmp_path):
    path = write(tmp_path, "run.yaml", jobs_doc("1.0.3"))
    code, _, _ = run_cli("report", path, "--out", tmp_path / "out")
    page = (tmp_path / "out" / "index.html").read_text()
    assert code == 0 and 'id="jobs"' in page and "this result uses kit 1.0.3" in page
    assert "word_error_rate 0.41 (threshold 0.5, pass)" in page and "150.00" in page


def test_tpcxai_report_shows_the_check_verdict(run_cli, tmp_path):
    """Issue 24: the TPCx-AI page has suite check's verdict, and a result that is not valid never
    shows a bare AIUCpm headline."""
    code, _, _ = run_cli("report", write(tmp_path, "ok.yaml", jobs_doc("1.0.3")), "--out", tmp_path / "ok")
    page = (tmp_path / "ok" / "index.html").read_text()
    assert code == 0 and 'id="compliance"' in page and "suite check: CLOSED" in page and "suite check: INVALID" not in page
    doc = jobs_doc("1.0.3")
    tput = [j for j in doc["jobs"] if j["phase"] == "throughput" and j.get("stream") == 1]
    for j in tput:   # every job of stream 1 at once
        j["end_s"], j["start_s"] = tput[0]["start_s"] + j["end_s"] - j["start_s"], tput[0]["start_s"]
    doc["scale_factor"] = 0.5
    code, _, _ = run_cli("report", write(tmp_path, "bad.yaml", doc), "--out", tmp_path / "bad")
    md = (tmp_path / "bad" / "report.md").read_text()
    assert code == 0 and "**Verdict: invalid**" in md and "tpcxai-fdr-jobs-sequential" in md
    assert "**AIUCpm@0.5: 75.00 — INVALID NOT PUBLISHABLE**" in md and "AIUCpm@0.5 — INVALID: jobs\\[33\\]" in md
    assert "tpcxai-fdr-sf-publishable" in md
    head = md.split("## ", 2)[1]
    assert "INVALID" in head and "VALID" not in head.replace("INVALID", "")     # one vocabulary (issue 47)


def test_report_of_a_published_fixture(run_cli, tmp_path, fixtures_dir):
    code, _, _ = run_cli("report", fixtures_dir / "mlperf-storage-v0.5", "--out", tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert code == 0 and "unet3d v100" in page and "406.78 MiB/s" in page and "DDN" in page


def test_out_is_the_only_place_written(tmp_path):
    """A fresh process (no matplotlib cache) with HOME and cwd in tmp: nothing lands outside --out."""
    home, cwd, src = tmp_path / "home", tmp_path / "cwd", tmp_path / "src"
    home.mkdir(), cwd.mkdir()
    shutil.copytree(RUN, src)
    before = snapshot(src)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MPL", "XDG_"))}
    env.update(HOME=str(home), PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "suite", "report", str(src), "--out", str(tmp_path / "out")],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert list(home.iterdir()) == [] and list(cwd.iterdir()) == [] and snapshot(src) == before
    assert not any(p.name.startswith(".matplotlib") for p in (tmp_path / "out").iterdir())


@pytest.mark.parametrize("argv,needle", [
    (["nope", "--out", "{tmp}/o"], "nope: path: expected an existing file or directory, got nothing there"),
    ([str(RUN), "--out", "{tmp}/file"], "--out: expected a directory, got a file"),
    ([str(REPO / "README.md"), "--out", "{tmp}/o"], "file kind: expected a .yaml, .yml, .json or .csv data file"),
    ([str(RUN)], "the following arguments are required: --out"),
])
def test_bad_input_is_one_line_exit_2(run_cli, tmp_path, argv, needle):
    (tmp_path / "file").write_text("x")
    code, out, err = run_cli("report", *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o").exists() or "file kind" in err


def test_bad_fdr_field_named(run_cli, tmp_path):
    bad = write(tmp_path, "bad.yaml", {**__import__("yaml").safe_load(DELL.read_text()), "throughput_elapsed_s": -1})
    code, _, err = run_cli("report", bad, "--out", tmp_path / "o")
    assert code == 2 and "throughput_elapsed_s: expected a positive number, got -1" in err


# --------------------------------------------------------------------------- real headless browser


PROBE = ("addEventListener('load', () => {"
         "const imgs=[...document.images];"
         "document.body.dataset.images=imgs.length;"
         "document.body.dataset.broken=imgs.filter(i=>!(i.complete&&i.naturalWidth>0)).length;"
         "document.body.dataset.sections=document.querySelectorAll('section').length;"
         "document.body.dataset.overflow=document.documentElement.scrollWidth"
         "-document.documentElement.clientWidth;"
         "});")
CSP = re.compile(r'(<meta http-equiv="Content-Security-Policy" content=")([^"]*)(">)')


def probe_page(page: Path) -> Path:
    """A probe copy of the page: the page itself has no script (and a CSP forbidding one); the copy keeps
    the page's CSP whole and lets exactly one script more run, PROBE (by its hash), which marks in the DOM
    whether every image decoded, how many sections there are and how far the page overflows. Whatever
    else the page holds is judged by its own CSP as before: a violation is a console message."""
    import base64
    import hashlib

    text = page.read_text()
    digest = base64.b64encode(hashlib.sha256(PROBE.encode()).digest()).decode()
    text, n = CSP.subn(lambda m: f"{m.group(1)}{m.group(2)}; script-src 'sha256-{digest}'{m.group(3)}", text, count=1)
    assert n == 1, f"{page}: no Content-Security-Policy meta tag"
    probe = page.with_name("probe.html")
    probe.write_text(text.replace("</body>", f"<script>{PROBE}</script></body>"))
    return probe


def chromium_render(page: Path, tmp_path: Path):
    """The page in headless Chromium: (its screenshot, chromium's log: console messages are its CONSOLE
    lines, the DOM after load). One render-page.sh of the probe copy (probe_page): its screenshot is the
    page's (the probe's script sets data attributes only) and its log holds both of chromium's runs."""
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("chromium is not installed (tools/install-debian-packages.sh)")
    shot = tmp_path / "shot.png"
    subprocess.run([str(REPO / "tools" / "render-page.sh"), str(probe_page(page)), str(shot),
                    str(tmp_path / "dom.html")], check=True, timeout=180)
    return shot, (Path(str(shot) + ".log")).read_text(), (tmp_path / "dom.html").read_text()


def assert_real_screenshot(shot: Path):
    from PIL import Image

    assert shot.stat().st_size > 50_000
    with Image.open(shot) as im:
        assert im.size == (1280, 2000)
        colours = im.convert("RGB").resize((320, 500)).getcolors(maxcolors=1 << 20)
        assert len(colours) > 200    # text, cards, plots; a blank or error page has a handful


def rendered_dom(run_cli, source, tmp_path: Path) -> str:
    """`suite report SOURCE` rendered in headless Chromium: a real screenshot, no console message; the DOM."""
    run_cli("report", source, "--out", tmp_path / "out")
    return _rendered(tmp_path / "out", tmp_path)


def rendered_shared(page, tmp_path: Path) -> str:
    """rendered_dom of a page made once (run_page, dell_page), copied here first (the probe lands beside it)."""
    code, _, err, out = page
    assert code == 0, err
    shutil.copytree(out, tmp_path / "out")
    return _rendered(tmp_path / "out", tmp_path)


def _rendered(out: Path, tmp_path: Path) -> str:
    shot, log, dom = chromium_render(out / "index.html", tmp_path)
    assert_real_screenshot(shot)
    assert "CONSOLE" not in log                 # no console message of any kind (CSP violations included)
    return dom


@pytest.mark.timeout(300)
def test_storage_page_renders_in_headless_chromium(run_page, tmp_path):
    dom = rendered_shared(run_page, tmp_path)
    assert 'data-images="2"' in dom and 'data-broken="0"' in dom and 'data-sections="4"' in dom
    assert "Host and enforcement evidence" in dom


@pytest.mark.timeout(300)
def test_tpcxai_page_renders_in_headless_chromium(dell_page, tmp_path):
    dom = rendered_shared(dell_page, tmp_path)
    assert 'data-images="2"' in dom and 'data-broken="0"' in dom and "AIUCpm@10" in dom


def test_the_runs_own_verdict_is_said_once_and_shortly(run_page):
    """Issue 47: `ours-self-verdict` repeated a ~1,000-character reason per run; now one finding line for
    the runs (its reasons are counted: each is its own finding, and the page's compliance table lists them)."""
    code, out, _, page = run_page
    md = (page / "report.md").read_text()
    said = [item for item in md.split("\n- ") if item.startswith("**ours-self-verdict**")]
    assert code == 0 and len(said) == 1 and len(said[0]) < 500 and "reason(s)" in said[0], said
    assert "same in 1 more" in said[0]
    lines = out.splitlines()
    assert lines[0].startswith("suite report: wrote ") and all(len(x) <= 100 for x in lines), out


def test_a_results_dir_given_as_dot_is_named_by_its_path(run_cli, tmp_path, monkeypatch):
    """Issue 47: `suite report . --out X` named the benchmark `.`."""
    shutil.copytree(RUN, tmp_path / "unet3d-h100")
    monkeypatch.chdir(tmp_path / "unet3d-h100")
    code, _, _ = run_cli("report", ".", "--out", tmp_path / "out")
    md = (tmp_path / "out" / "report.md").read_text().splitlines()
    assert code == 0 and md[2] == md_escape(str(tmp_path / "unet3d-h100")), md[:3]
    assert not any(line.strip() in (".", "\\.") for line in md)


def md_escape(text: str) -> str:
    from suite.report.escape import markdown
    return markdown(text)
