"""The report as one self-contained HTML page: inline CSS, PNGs embedded as base64, no scripts,
nothing fetched. Everything taken from result files is escaped."""

import base64
from html import escape

from suite.report import content as c

CSS = """
:root { --ink:#1d2330; --muted:#5b6475; --line:#e3e6ec; --bg:#f6f7f9; --card:#fff; --accent:#2f6db5; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
       color:var(--ink); background:var(--bg); }
header { background:#1d2330; color:#fff; padding:22px 40px 18px; }
header h1 { margin:0 0 4px; font-size:24px; font-weight:600; }
header .sub { color:#b9c2d3; font-size:13px; word-break:break-all; }
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
table { border-collapse:collapse; width:100%; margin:8px 0; font-size:13.5px; }
th, td { text-align:left; padding:5px 10px; border-bottom:1px solid var(--line); vertical-align:top;
         overflow-wrap:anywhere; }  /* a long path or message wraps inside its cell, never past the page */
th { background:#f0f2f5; font-weight:600; overflow-wrap:normal; }   /* headers break between words only */
td:first-child { min-width:6ch; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
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


def _block(b) -> str:
    if isinstance(b, c.Text):
        return f"<p>{escape(b.text)}</p>"
    if isinstance(b, c.Figures):
        cards = "".join(f'<div class="figure"><div class="label">{escape(str(label))}</div>'
                        f'<div class="value">{escape(str(value))}</div><div class="note">{escape(str(note))}</div></div>'
                        for label, value, note in b.items)
        return f'<div class="figures">{cards}</div>'
    if isinstance(b, c.Table):
        head = "".join(f"<th>{escape(str(h))}</th>" for h in b.header)
        body = "".join("<tr>" + "".join(
            f'<td class="num">{escape(str(v))}</td>' if b.numbers_right and _is_num(str(v))
            else f"<td>{escape(str(v))}</td>"
            for v in row) + "</tr>" for row in b.rows)
        cap = f'<p class="caption">{escape(b.caption)}</p>' if b.caption else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{cap}"
    if isinstance(b, c.Image):
        data = base64.b64encode(b.png).decode("ascii")
        return f'<img alt="{escape(b.alt)}" src="data:image/png;base64,{data}">'
    if isinstance(b, c.Verdict):
        cls = "v-" + "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in b.verdict.lower())
        return f'<p><span class="verdict {cls}">{escape(b.verdict)}</span>{escape(b.text)}</p>'
    raise TypeError(f"unknown report block {type(b).__name__}")


def render(page: c.Page, generated_by: str) -> str:
    sections = "\n".join(
        f'<section id="{escape(s.id)}"><h2>{escape(s.title)}</h2>\n' + "\n".join(_block(b) for b in s.blocks)
        + "</section>" for s in page.sections)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
            f"style-src 'unsafe-inline'\">\n"
            f"<title>{escape(page.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f'<header><h1>{escape(page.title)}</h1><div class="sub">{escape(page.subtitle)}</div></header>\n'
            f"<main>\n{sections}\n</main>\n<footer>{escape(generated_by)}</footer>\n</body>\n</html>\n")
