"""Render describe's content model as Markdown, HTML and (through headless chromium) PDF.

Blocks: ("p", text), ("list", [text]), ("table", header, rows). Every text is escaped for the
format it goes into; nothing in a description file becomes markup.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from suite.report.escape import html_text, markdown as md

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
    e = html_text
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


def rebuild(folder: Path, system: str, title: str, sections: list, root: Path) -> list[str]:
    """`package`: folder/<system>.{md,html,pdf} made again from the current system description, so a
    package never ships documents of an earlier one (issue 38). Markdown and HTML equal to what they
    would be now are left alone, and their PDF with them; the others are written (old copies kept
    aside, outside the tree) and the PDF printed again. Without chromium an existing PDF of an earlier
    description cannot be remade: refused in one line naming it, before anything is written."""
    from suite import files
    from suite.errors import SuiteError, expected_got
    from suite.submission import place

    fresh = {"md": markdown(title, sections).encode("utf-8"), "html": page(title, sections).encode("utf-8")}
    paths = {ext: folder / f"{system}.{ext}" for ext in ("md", "html", "pdf")}
    same = {ext: paths[ext].is_file() and not paths[ext].is_symlink() and paths[ext].read_bytes() == fresh[ext]
            for ext in fresh}
    has_pdf = paths["pdf"].exists() or paths["pdf"].is_symlink()
    if all(same.values()) and (has_pdf or browser() is None):
        return [f"  documents: {paths['md'].name}, {paths['html'].name}" + (f", {paths['pdf'].name}" if has_pdf else "")
                + ": current"]
    with tempfile.TemporaryDirectory(dir=folder, prefix=".package-") as tmp:
        work = Path(tmp)
        for ext, data in fresh.items():
            try:
                (work / f"doc.{ext}").write_bytes(data)
            except OSError as exc:         # a full disk, a file size limit: one line naming the document
                raise files.write_error(paths[ext], exc) from None
        why = pdf(work / "doc.html", work / "doc.pdf")
        if why and has_pdf and not all(same.values()):
            raise SuiteError(expected_got(paths["pdf"], "document", "a PDF of the current system description "
                                          f"(package prints it again: {why})", "one of an earlier description"))
        aside, lines = place.aside_root(root), []
        for ext, target in paths.items():
            if not (work / f"doc.{ext}").is_file() or same.get(ext):
                continue
            moved = place.move_aside(root, target, aside)
            (work / f"doc.{ext}").rename(target)
            lines.append(f"  documents: {target.name} made again from the current description"
                         + (f" (old copy kept at {moved})" if moved else ""))
    return lines + ([f"  no PDF: {why}"] if why else [])
