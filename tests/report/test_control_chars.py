"""Issue 46, item 3: no control character from a result (C0 but tab and newline, DEL, C1, the bidi
overrides U+202A-202E and isolates U+2066-2069) reaches an HTML or Markdown page raw: each is shown as
\\xNN / \\uNNNN (suite.report.escape.html_text / markdown). Before, html.escape let an ESC sequence, a
CR or a U+202E through into index.html (a CR and a VT even as the "space" between words)."""

import re
import shutil

from hypothesis import given, settings, strategies as st

import paths
from suite.report import content, escape, html, markdown
from suite.submission import document

RUN = paths.DATA / "suite-run" / "unet3d-h100"
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
NAMES = ("red\x1b[31m run\x07", "cr\rvt\x0bff\x0c next\x85csi\x9b", "bidi\u202eevil\u2066x\u2069 \x7f")


def test_a_report_of_runs_named_with_controls_shows_them_escaped(run_cli, tmp_path):
    tree = tmp_path / "tree\x1b]0;title\x07"
    shutil.copytree(RUN, tree / "b")
    for old, new in zip(("run-1", "run-2"), NAMES[:2]):
        (tree / "b" / old).rename(tree / "b" / new)
    (tree / "b" / NAMES[0] / "summary.json").write_text(
        (tree / "b" / NAMES[0] / "summary.json").read_text().replace('"ci-host"', '"host\\u202e\\u0085\\u001b[2J"'))
    out = tmp_path / "out"
    code, _, err = run_cli("report", tree, "--out", out)
    assert code in (0, 1) and "Traceback" not in err, err
    page, md = (out / "index.html").read_text(), (out / "report.md").read_text()
    assert RAW.findall(page) == [] and RAW.findall(md) == []
    assert "red\\x1b[31m run\\x07" in page and "cr\\x0dvt\\x0bff\\x0c next\\x85csi\\x9b" in page
    assert "red\\\\x1b\\[31m run\\\\x07" in md            # Markdown escapes the "\\" and the "[" too
    assert "tree\\x1b]0;title\\x07" in page


def test_every_block_of_a_page_escapes_controls():
    bad = "a\x1b[2Kb\r\x0b\u202ec\x85\u2066d\x00e\x7f"
    page = content.Page(bad, bad, [content.Section("s\x1b", bad, [
        content.Text(bad), content.Figures([(bad, bad, bad)]), content.Table([bad, "n"], [[bad, bad], [bad, "1"]], bad),
        content.Image("p", b"\x89PNG", bad), content.Verdict("closed", bad)])], labels=())
    for text in (html.render(page, bad), markdown.render(page, bad)):
        assert RAW.findall(text) == []
        assert "\\x1b" in text and "\\u202e" in text and "\\x85" in text


def test_submission_documents_escape_controls():
    bad = "sys\x1b[2K\u202e\x9b"
    sections = [(bad, [("p", bad), ("list", [bad]), ("table", [bad], [[bad]])])]
    for text in (document.page(bad, sections), document.markdown(bad, sections)):
        assert RAW.findall(text) == [] and "sys\\x1b" in text.replace("\\\\", "\\")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_html_and_markdown_text_hold_no_raw_control(text):
    for shown in (escape.html_text(text), html.text(text), html._td(text), escape.markdown(text)):
        assert RAW.findall(shown) == []
        assert not re.search(r"[\u2028\u2029\ud800-\udfff]", shown)
    assert "\n" not in escape.markdown(text) and "<" not in escape.html_text(text)
