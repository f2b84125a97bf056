"""The Markdown twin of the HTML report: same content model, plots as plots/<name>.png beside it.
Every piece of text is escaped (report/escape.py): result files are untrusted.

A table is a pipe table when every line of it fits WIDTH columns, else a list (one
item per row: its first cell, then "header: value" pairs, wrapped at WIDTH between words): read as text, never wider
than a terminal (issue 38)."""

import re
import textwrap

from suite.report import content as c
from suite.report.escape import markdown as md


def _block(b) -> str:
    if isinstance(b, c.Text):
        return md(b.text)
    if isinstance(b, c.Figures):
        return "\n".join(f"- **{md(label)}: {md(value)}**" + (f" — {md(note)}" if note else "")
                         for label, value, note in b.items)
    if isinstance(b, c.Table):
        return _table(b) + (f"\n\n_{md(b.caption)}_" if b.caption else "")
    if isinstance(b, c.Image):
        return f"![{md(b.alt)}](plots/{b.name}.png)"
    if isinstance(b, c.Verdict):
        return f"**Verdict: {md(b.verdict)}** — {md(b.text)}"
    raise TypeError(f"unknown report block {type(b).__name__}")


WIDTH = 100
EMPTY = ("", "–", "\\-")           # md("-") is "\\-"
_LINE_START = re.compile(r"^([-+=*]|\d+[.)])(\s|$)")     # what would start a list or a heading at a line's start


def _table(b) -> str:
    header = [md(h) for h in b.header]
    rows = [[md(v) for v in row] for row in b.rows]
    lines = ["| " + " | ".join(line) + " |" for line in [header, *rows]]
    lines.insert(1, "|" + "---|" * len(header))
    if all(len(line) <= WIDTH for line in lines):
        return "\n".join(lines)
    return "\n".join(_item(header, row) for row in rows)


def _item(header: list, row: list) -> str:
    """A row as one list item, "**first cell** — header: value; ...", wrapped between words at WIDTH columns."""
    parts = [f"{h}: {v}" if h else v for h, v in zip(header[1:], row[1:]) if v not in EMPTY]
    lead = f"**{row[0]}**" if row and row[0] not in EMPTY else "–"
    lines = textwrap.wrap(" — ".join([lead, "; ".join(parts)]) if parts else lead, width=WIDTH, initial_indent="- ", subsequent_indent="  ",
                          break_long_words=False, break_on_hyphens=False)
    # a wrapped line that starts like a list item or a setext underline would become markup: escape it
    return "\n".join(lines[:1] + ["  " + _LINE_START.sub(r"\\\1\2", line[2:]) for line in lines[1:]])


def render(page: c.Page, generated_by: str) -> str:
    parts = [f"# {md(page.title)}", md(page.subtitle)]
    for s in page.sections:
        parts.append(f"## {md(s.title)}")
        parts += [_block(b) for b in s.blocks]
    parts.append(f"---\n_{md(generated_by)}_")
    return "\n\n".join(parts) + "\n"
