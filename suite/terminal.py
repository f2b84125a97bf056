"""Terminal lines people can read (issue 38): none wider than WIDTH columns.

A longer line is wrapped at spaces, its continuation lines indented under it (`hang`: their indent,
default the line's own indent + 4); a word longer than the width (a path) is kept whole, never cut.
Below every layer that speaks to a terminal (suite.harness's `say`, suite.report's text), so each
wraps the same way.
"""

from __future__ import annotations

import re

WIDTH = 100
# a headline's labels (suite.rules.verdict.headline: "title — MINIATURE · INVALID · NOT PUBLISHABLE"):
# never broken inside
_LABELS = re.compile(r" — ([A-Z][A-Z ]*(?: · [A-Z][A-Z ]*)*)$")


def wrap(line: str, hang: int | None = None, width: int = WIDTH) -> list[str]:
    """One line as lines of at most `width` columns (a word longer than that stays whole; a headline's
    labels stay on one line)."""
    line = line.rstrip()
    if len(line) <= width:
        return [line]
    lead = len(line) - len(line.lstrip(" "))
    hang = lead + 4 if hang is None else hang
    labels = _LABELS.search(line)
    if labels and labels.start() > lead:
        out = wrap(line[:labels.start()], hang, width)
        tail = f" — {labels.group(1)}"
        if len(out[-1]) + len(tail) <= width:
            return out[:-1] + [out[-1] + tail]
        return out + [" " * hang + tail.lstrip()]
    words = line[lead:].split(" ")             # "" for each extra space of a run: kept inside a line
    out, current = [], " " * lead + words[0]
    for word in words[1:]:
        if len(current) + 1 + len(word) <= width:
            current += " " + word
        elif word:                             # a run of spaces at a break is dropped
            out.append(current.rstrip())
            current = " " * hang + word
    return out + [current]


def fit(text: str, width: int = WIDTH) -> str:
    """Several lines (newlines kept, a trailing one too), each longer one wrapped."""
    end = "\n" if text.endswith("\n") else ""
    body = text[:-1] if end else text
    return "\n".join(out for line in body.split("\n") for out in wrap(line, width=width)) + end


def headed(headline: str, reasons, bullet: str = "  - ") -> list[str]:
    """A short headline and one indented, wrapped line per reason under it (no 700-column line)."""
    out = wrap(headline)
    for reason in reasons:
        out += wrap(f"{bullet}{reason}", hang=len(bullet) + 2)
    return out


def say(*parts) -> None:
    """A run's line to the terminal, wrapped, flushed at once (a long run shows where it is)."""
    for line in " ".join(map(str, parts)).split("\n"):
        out("\n".join(wrap(line)) + "\n")


def out(text: str) -> None:
    """Text to stdout, flushed. A reader that left (`suite run ... | head`) does not stop the run: what
    it would have read goes to /dev/null from then on."""
    import os
    import sys

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
