"""The Markdown twin of the HTML report: same content model, plots as plots/<name>.png beside it."""

from suite.report import content as c


def _cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _block(b) -> str:
    if isinstance(b, c.Text):
        return b.text
    if isinstance(b, c.Figures):
        return "\n".join(f"- **{label}: {value}**" + (f" — {note}" if note else "") for label, value, note in b.items)
    if isinstance(b, c.Table):
        lines = ["| " + " | ".join(_cell(h) for h in b.header) + " |", "|" + "---|" * len(b.header)]
        lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in b.rows]
        return "\n".join(lines) + (f"\n\n_{b.caption}_" if b.caption else "")
    if isinstance(b, c.Image):
        return f"![{b.alt}](plots/{b.name}.png)"
    if isinstance(b, c.Verdict):
        return f"**Verdict: {b.verdict}** — {b.text}"
    raise TypeError(f"unknown report block {type(b).__name__}")


def render(page: c.Page, generated_by: str) -> str:
    parts = [f"# {page.title}", f"`{page.subtitle}`"]
    for s in page.sections:
        parts.append(f"## {s.title}")
        parts += [_block(b) for b in s.blocks]
    parts.append(f"---\n_{generated_by}_")
    return "\n\n".join(parts) + "\n"
