"""The report as one self-contained HTML page: inline CSS, PNGs embedded as base64, no scripts,
nothing fetched. Everything taken from result files is escaped (suite.report.escape.html_text: control
characters shown as \\xNN, never raw).

Words never break inside (issue 38: "invali d"): text wraps between words only, a cell of one
hyphenated token (a rule id, a host name) stays whole, and a long path wraps after a "/" only (<wbr>);
a table wider than its section scrolls inside it. The page's first verdict and first headline
figures carry the ids `page-verdict` and `page-headline` (sections have their own ids): the first
screen shows them (tests/report/test_pages_in_a_browser.py).
"""

import base64
import re
from suite.report import content as c
from suite.report.escape import html_text as escape, visible

CSS = """
:root { --ink:#1d2330; --muted:#5b6475; --line:#e3e6ec; --bg:#f6f7f9; --card:#fff; --accent:#2f6db5; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
       color:var(--ink); background:var(--bg); }
header { background:#1d2330; color:#fff; padding:22px 40px 18px; }
header h1 { margin:0 0 4px; font-size:24px; font-weight:600; }
header .sub { color:#b9c2d3; font-size:13px; overflow-wrap:break-word; }
main { max-width:1180px; margin:0 auto; padding:12px 32px 40px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:16px 22px;
          margin:18px 0; }
h2 { margin:0 0 10px; font-size:18px; font-weight:600; }
h3 { margin:14px 0 6px; font-size:15px; font-weight:600; }
p { margin:6px 0; }
.muted, .caption { color:var(--muted); font-size:13px; }
.figures { display:grid; grid-template-columns:repeat(auto-fit,minmax(220px,1fr)); gap:12px; margin:10px 0; }
.figure { border:1px solid var(--line); border-radius:6px; padding:10px 14px; background:#fbfcfd; }
.figure .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.figure .value { font-size:21px; font-weight:650; margin:2px 0; font-variant-numeric:tabular-nums; }
.figure .note { color:var(--muted); font-size:12px; }
.table-wrap { overflow-x:auto; margin:8px 0; }    /* a table wider than its section scrolls inside it */
table { border-collapse:collapse; width:100%; font-size:13.5px; }
th, td { text-align:left; padding:5px 10px; border-bottom:1px solid var(--line); vertical-align:top;
         overflow-wrap:normal; word-break:normal; }  /* between words only: never "invali d" */
th { background:#f0f2f5; font-weight:600; min-width:7ch; }
td { min-width:6ch; }
.nb { white-space:nowrap; }       /* a hyphenated token or a path's piece: whole, never split at "-" */
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
th.num { text-align:right; }
ul.rows { margin:8px 0; padding-left:20px; font-size:13.5px; } ul.rows li { margin:3px 0; }      /* a numeric column's header over its figures */
img { max-width:100%; height:auto; display:block; margin:10px 0; }
.verdict { display:inline-block; padding:3px 12px; border-radius:12px; font-weight:650; font-size:14px;
           margin-right:10px; color:#fff; }
.v-closed, .v-compliant { background:#2e8b57; }
.v-open, .v-closed--fix-required { background:#c77c1a; }
.v-invalid, .v-non-compliant { background:#b5443a; }
.v-unknown { background:#7b8494; }
footer { color:var(--muted); font-size:12px; text-align:center; padding:10px; }
"""


def _is_num(text: str) -> bool:
    t = text.replace(",", "").replace("±", "").replace(" ", "").replace(".", "").replace("-", "").replace("+", "")
    return bool(t) and t.isdigit()


TABLE_BUDGET_PX = 1060     # a section's inside at a 1280 px window (main 1180 less its and the section's padding)
CHAR_PX, CELL_PAD_PX = 7.5, 21     # 13.5 px text: a character at most ~7.5 px; a cell's padding and border


def _pieces(value: str) -> list[str]:
    """What a cell cannot break inside: the whole of a one-token hyphenated cell or a number, else its
    words (a long path's pieces after each "/")."""
    if _is_num(value) or (value and not _SPACE.search(value) and "-" in value and "/" not in value):
        return [value]
    return [p for w in value.split() for p in (re.findall(r"[^/]*/|[^/]+$", w) if len(w) > LONG_PATH_CHARS else [w])]


def min_width_px(b) -> float:
    """The narrowest the table can be laid out: per column its longest unbreakable piece (header too)."""
    total = 0.0
    for k, h in enumerate(b.header):
        cells = [str(h)] + [str(row[k]) for row in b.rows if k < len(row)]
        total += max((len(p) for v in cells for p in _pieces(v)), default=0) * CHAR_PX + CELL_PAD_PX
    return total


def _as_list(b) -> str:
    """A table no 1280 px page can show whole, as a list (issue 47: cut at the page's edge): per row its
    first cell, then "header: value" pairs, as the Markdown twin does for a terminal."""
    items = []
    for row in b.rows:
        pairs = "; ".join(f"{escape(str(h))}: {text(str(v))}" for h, v in zip(b.header[1:], row[1:])
                          if str(v) != "")         # "-": the table's own word (not published), kept
        lead = f"<b>{text(str(row[0]))}</b>" if row else ""
        items.append(f"<li>{lead}{' — ' + pairs if pairs else ''}</li>")
    cap = f'<p class="caption">{escape(b.caption)}</p>' if b.caption else ""
    return f'<ul class="rows">{"".join(items)}</ul>{cap}'


def numeric_columns(b) -> set:
    """The columns whose every filled cell is a number: right-aligned whole, header too, so a figure
    stands under its own header (issue 47: right-aligned cells under left-aligned headers read as the
    next column's). A column of numbers and words stays left-aligned throughout."""
    out = set()
    for k in range(len(b.header)):
        cells = [str(row[k]) for row in b.rows if k < len(row) and str(row[k]) not in ("", "–", "-")]
        if cells and all(_is_num(v) for v in cells):
            out.add(k)
    return out


LONG_PATH_CHARS = 24                 # a token with "/" longer than this may wrap after a "/"
_SPACE = re.compile(r"(\s+)")


def _token(tok: str) -> str:
    if "/" in tok and len(tok) > LONG_PATH_CHARS:
        pieces = re.findall(r"[^/]*/|[^/]+$", tok)
        return "<wbr>".join(f'<span class="nb">{escape(p)}</span>' for p in pieces)
    return escape(tok)


def text(value) -> str:
    """Escaped text that breaks between words, and inside a long path after a "/" only."""
    parts = _SPACE.split(visible(value))       # a CR, a VT or U+2028 is no space: shown as \\x0d, never raw
    return "".join(part if _SPACE.fullmatch(part) else _token(part) for part in parts if part)


def _td(value: str) -> str:
    """A cell of one hyphenated token (a rule id, a host, "run-1") stays whole: no break after its "-"."""
    one = value and not _SPACE.search(value) and "-" in value and not ("/" in value and len(value) > LONG_PATH_CHARS)
    return f'<td class="nb">{escape(value)}</td>' if one else f"<td>{text(value)}</td>"


def _block(b, ids: set) -> str:
    if isinstance(b, c.Text):
        return f"<p>{text(b.text)}</p>"
    if isinstance(b, c.Figures):
        cards = "".join(f'<div class="figure"><div class="label">{escape(str(label))}</div>'
                        f'<div class="value">{escape(str(value))}</div><div class="note">{escape(str(note))}</div></div>'
                        for label, value, note in b.items)
        return f'<div class="figures"{_first("page-headline", ids)}>{cards}</div>'
    if isinstance(b, c.Table) and min_width_px(b) > TABLE_BUDGET_PX:
        return _as_list(b)
    if isinstance(b, c.Table):
        num = numeric_columns(b) if b.numbers_right else set()
        head = "".join(f'<th class="num">{escape(str(h))}</th>' if k in num else f"<th>{escape(str(h))}</th>"
                       for k, h in enumerate(b.header))
        body = "".join("<tr>" + "".join(
            f'<td class="num">{escape(str(v))}</td>' if k in num else _td(str(v))
            for k, v in enumerate(row)) + "</tr>" for row in b.rows)
        cap = f'<p class="caption">{escape(b.caption)}</p>' if b.caption else ""
        return f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{cap}'
    if isinstance(b, c.Image):
        data = base64.b64encode(b.png).decode("ascii")
        return f'<img alt="{escape(b.alt)}" src="data:image/png;base64,{data}">'
    if isinstance(b, c.Verdict):
        cls = "v-" + "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in b.verdict.lower())
        return f'<p{_first("page-verdict", ids)}><span class="verdict {cls}">{escape(b.verdict)}</span>{text(b.text)}</p>'
    raise TypeError(f"unknown report block {type(b).__name__}")


def _first(name: str, ids: set) -> str:
    """` id="NAME"` on the page's first block of its type (the verdict, the headline figures), once."""
    if name in ids:
        return ""
    ids.add(name)
    return f' id="{name}"'


def render(page: c.Page, generated_by: str) -> str:
    ids: set = set()
    sections = "\n".join(
        f'<section id="{escape(s.id)}"><h2>{escape(s.title)}</h2>\n' + "\n".join(_block(b, ids) for b in s.blocks)
        + "</section>" for s in page.sections)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
            f"style-src 'unsafe-inline'\">\n"
            f"<title>{escape(page.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f'<header><h1>{escape(page.title)}</h1><div class="sub">{text(page.subtitle)}</div></header>\n'
            f"<main>\n{sections}\n</main>\n<footer>{escape(generated_by)}</footer>\n</body>\n</html>\n")
