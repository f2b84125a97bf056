"""Render describe's content model as Markdown, HTML and (through headless chromium) PDF.

Blocks: ("p", text), ("list", [text]), ("table", header, rows). Every text is escaped for the
format it goes into; nothing in a description file becomes markup.
"""

from __future__ import annotations

import html
import shutil
import subprocess
import tempfile
from pathlib import Path

from suite.report.escape import markdown as md

CSS = """body{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}
h1{border-bottom:2px solid #333}h2{margin-top:1.6em;border-bottom:1px solid #aaa}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:.2em .6em;text-align:left;
vertical-align:top;font-size:.9em}th{background:#eee}"""


def _md_cell(text) -> str:
    return md(text)   # escapes "|" too: a value never splits a table cell


def markdown(title: str, sections: list) -> str:
    out = [f"# {md(title)}", ""]
    for name, blocks in sections:
        out += [f"## {md(name)}", ""]
        for block in blocks:
            if block[0] == "p":
                out += [md(block[1]), ""]
            elif block[0] == "list":
                out += [f"- {md(item)}" for item in block[1]] + [""]
            else:
                _, header, rows = block
                out += ["| " + " | ".join(_md_cell(h) for h in header) + " |",
                        "|" + "---|" * len(header)]
                out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows] + [""]
    return "\n".join(out)


def page(title: str, sections: list) -> str:
    e = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{e(title)}</title><style>{CSS}</style></head><body>", f"<h1>{e(title)}</h1>"]
    for name, blocks in sections:
        out.append(f'<h2 id="{e(name.lower())}">{e(name)}</h2>')
        for block in blocks:
            if block[0] == "p":
                out.append(f"<p>{e(str(block[1]))}</p>")
            elif block[0] == "list":
                out.append("<ul>" + "".join(f"<li>{e(str(i))}</li>" for i in block[1]) + "</ul>")
            else:
                _, header, rows = block
                head = "".join(f"<th>{e(str(h))}</th>" for h in header) if any(header) else ""
                body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in rows)
                out.append(f"<table>{'<tr>' + head + '</tr>' if head else ''}{body}</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def browser() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def pdf(html_path: Path, out: Path) -> str | None:
    """Print html_path to out with headless chromium; None when done, else why not (one line)."""
    exe = browser()
    if exe is None:
        return "chromium not found (tools/install-debian-packages.sh installs it)"
    with tempfile.TemporaryDirectory() as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
               "--disable-background-networking", "--disable-component-update", f"--user-data-dir={profile}",
               "--no-pdf-header-footer", f"--print-to-pdf={out}", html_path.resolve().as_uri()]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"chromium failed: {exc}"
    if done.returncode != 0 or not out.is_file() or out.stat().st_size == 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or ["no output"]
        return f"chromium exited {done.returncode}: {tail[0][:200]}"
    return None
