"""Issue 38, output people can read: HTML cells that never break a word, Markdown tables that fit 100
columns (or become a list), plot tick labels on real lines. The browser's view of the same pages is
tests/report/test_pages_in_a_browser.py."""

import re
from types import SimpleNamespace

from suite.compare.page import across_labels
from suite.report import content as c
from suite.report import escape, html, markdown
from suite.report.plots import tick_label

LONG = "closed/TTA/results/seahorse-storage/vector_database/milvus/DISKANN/run/20260724_090536/summary.json"


def test_html_wraps_between_words_and_long_paths_after_a_slash_only():
    assert "break-all" not in html.CSS and "anywhere" not in html.CSS
    cell = html.text(f"{LONG}: expected 5, got 1 <b>")
    assert "<wbr>" in cell and cell.count("<wbr>") == LONG.count("/")
    assert cell.startswith('<span class="nb">closed/</span><wbr><span class="nb">TTA/</span><wbr>')
    assert "&lt;b&gt;" in cell and "<b>" not in cell
    assert html.text("run-1/summary.json") == "run-1/summary.json"          # a short path stays one piece
    page = html.render(c.Page("t", LONG, [c.Section("s", "S", [
        c.Verdict("invalid", "verdict: INVALID (not compliant)"), c.Figures([("a", "1", "")]),
        c.Table(["rule", "effect", "message"], [["vdb-ground-truth-recorded", "invalid", f"{LONG}: x (y-z)"]]),
        c.Verdict("open", "second"), c.Figures([("b", "2", "")])])]), "gen")
    assert '<td class="nb">vdb-ground-truth-recorded</td>' in page          # one hyphenated token: whole
    assert '<div class="table-wrap"><table>' in page                        # a wide table scrolls in its section
    assert page.count('id="page-verdict"') == 1 and page.count('id="page-headline"') == 1


def test_a_markdown_table_fits_100_columns_or_is_a_list():
    narrow = c.Table(["run", "status"], [["run-1", "complete"], ["run-2", "-"]])
    assert markdown._block(narrow) == "| run | status |\n|---|---|\n| run-1 | complete |\n| run-2 | \\- |"
    wide = c.Table(["rule", "effect", "where", "message"],
                   [["dataset-size", "invalid", LONG, "num_files_train: expected >= 3500, got 42 " * 3],
                    ["x", "–", "", "1. starts like a list when wrapped " + "- " * 60]])
    out = markdown._block(wide)
    lines = out.splitlines()
    assert all(len(line) <= markdown.WIDTH or " " not in line.strip() for line in lines), out
    assert lines[0].startswith("- **dataset-size** — effect: invalid; where:") and "|" not in out
    assert any(escape.markdown(LONG) in line for line in lines)               # a long path is never cut
    assert "expected \\>= 3500" in out and "effect: –" not in out           # escaped; empty cells left out
    assert sum(line.startswith("- ") for line in lines) == 2                 # one item per row, nothing else a list


def test_tick_labels_are_lines_not_escaped_newlines():
    assert tick_label("A", "2026-11-27T13:53") == "A\n2026-11-27T13:53"
    assert tick_label("B", "evil\n\x1b[31m") == "B\nevil\\x0a\\x1b[31m"       # a result's own control chars: shown
    results = [SimpleNamespace(when="2026-11-27T13:53:10"), SimpleNamespace(when="2026-11-26T08:00:00")]
    assert across_labels(results, [1, 0], dated=True) == ["B\n2026-11-26T08:00", "A\n2026-11-27T13:53"]
    assert across_labels(results, [0, 1], dated=False) == ["A", "B"]


def test_a_terminal_table_fits_100_columns_its_cells_wrapping_inside_their_column():
    """suite compare's figures table (a long 'values' note): every line at most 100 columns, each cell's
    words kept whole, the separator never broken by the terminal's wrap; a table whose words cannot fit
    side by side (kv_cache's twelve columns) is a list, each row's name on its own line."""
    from suite.report.text import table

    note = "per epoch (2 vs 2 epochs of 1 vs 1 runs; runs are few: the interval covers epoch-to-epoch noise)"
    rows = [["AU %", "68.90", "99.62", "1.446", "[1.233, 1.696]", "faster", note],
            ["samples/s", "50,996.87", "35,581.08", "0.698", "[0.566, 0.861]", "slower", "per run"]]
    text = table(rows, ["figure", "A", "B", "B/A", "interval", "verdict", "values"])
    lines = text.splitlines()
    assert max(len(x) for x in lines) <= 100 and len(lines) > 4, text
    assert set(lines[1].replace(" ", "")) == {"-"} and lines[2].startswith("AU %")   # one separator line, whole
    words = " ".join(lines).split()
    assert "epoch-to-epoch" in words and "noise)" in words                          # no word cut
    wide = table([["1 (storage only)", *[f"{k},234.5" for k in range(11)]]], ["option", *[f"figure {k}" for k in range(11)]])
    assert wide.splitlines()[0] == "1 (storage only)" and max(len(x) for x in wide.splitlines()) <= 100, wide
    assert "figure 10 10,234.5" in " ".join(wide.split())
    assert table([["a", "b"]], ["x", "y"]) == "x  y\n-  -\na  b"     # a narrow table as it always was


def test_a_numeric_column_is_right_aligned_whole_header_too():
    """Issue 47: right-aligned figures under left-aligned headers read as the next column's (the
    checkpoint and compare pages). A column of numbers is aligned whole; a mixed one is left whole."""
    t = c.Table(["run", "status", "s/checkpoint", "GiB/s", "note"],
                [["run-1", "complete", "1.25", "3,402.10", "12"], ["run-2", "failed", "–", "2.50", "see log"]])
    assert html.numeric_columns(t) == {2, 3}
    page = html._block(t, set())
    heads = re.findall(r"<th( class=\"num\")?>", page)
    assert [bool(h) for h in heads] == [False, False, True, True, False]
    for row in re.findall(r"<tr>(.*?)</tr>", page.split("</thead>")[1]):
        cells = re.findall(r"<td( class=\"num\")?[^>]*>", row)
        assert [bool(x) for x in cells] == [False, False, True, True, False], row
    assert 'class="num">12<' not in page           # a number in a mixed column stays with its column


def test_a_table_no_1280_px_page_holds_is_a_list():
    """Issue 47: the training evidence and published-tree tables were cut at 1280 px."""
    cols = [f"column-number-{k}" for k in range(14)]
    wide = c.Table(cols, [[f"value-{k}-{'x' * 12}" for k in range(14)]])
    assert html.min_width_px(wide) > html.TABLE_BUDGET_PX
    page = html._block(wide, set())
    assert "<table>" not in page and page.startswith('<ul class="rows"><li><b>')
    assert page.count("column-number-") == 13                     # every other header beside its value
    narrow = c.Table(["run", "status"], [["run-1", "complete"]])
    assert html.min_width_px(narrow) < html.TABLE_BUDGET_PX and "<table>" in html._block(narrow, set())
