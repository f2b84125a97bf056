"""The Markdown twin of the HTML report: same content model, plots as plots/<name>.png beside it.
Every piece of text is escaped (report/escape.py): result files are untrusted."""

from suite.report import content as c
from suite.report.escape import markdown as md


def _block(b) -> str:
    if isinstance(b, c.Text):
        return md(b.text)
    if isinstance(b, c.Figures):
        return "\n".join(f"- **{md(label)}: {md(value)}**" + (f" — {md(note)}" if note else "")
                         for label, value, note in b.items)
    if isinstance(b, c.Table):
        lines = ["| " + " | ".join(md(h) for h in b.header) + " |", "|" + "---|" * len(b.header)]
        lines += ["| " + " | ".join(md(v) for v in row) + " |" for row in b.rows]
        return "\n".join(lines) + (f"\n\n_{md(b.caption)}_" if b.caption else "")
    if isinstance(b, c.Image):
        return f"![{md(b.alt)}](plots/{b.name}.png)"
    if isinstance(b, c.Verdict):
        return f"**Verdict: {md(b.verdict)}** — {md(b.text)}"
    raise TypeError(f"unknown report block {type(b).__name__}")


def render(page: c.Page, generated_by: str) -> str:
    parts = [f"# {md(page.title)}", md(page.subtitle)]
    for s in page.sections:
        parts.append(f"## {md(s.title)}")
        parts += [_block(b) for b in s.blocks]
    parts.append(f"---\n_{md(generated_by)}_")
    return "\n\n".join(parts) + "\n"
