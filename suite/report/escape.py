"""Escaping per output format: text from result trees and FDR files is untrusted.

- terminal: no control characters (nor a file name's non-UTF-8 bytes) reach the screen (an ESC sequence or a carriage return in an
  overrides.yaml could repaint the verdict line); they are shown as \\xNN / \\uNNNN escapes;
- CSV: every CSV the suite writes goes through `csv_text` (RFC 4180: CRLF between records, a field
  holding a comma, a quote, a CR or a LF quoted, so a raw CR in a name no longer splits a record: the
  csv module quotes only what its line terminator holds, and "\\n" left a lone CR bare); a cell that a
  spreadsheet would run as a formula (=, +, -, @, tab, CR, LF first) gets a leading apostrophe
  (OWASP's advice), except plain numbers;
- Markdown: characters that make markup, math ("$") or raw HTML are backslash-escaped, newlines become
  spaces;
- HTML: `html_text` (html.py, the submission documents and the published tables' links use it
  throughout): every control character but tab and newline (C0, DEL, C1, the line separators, the
  bidi overrides and isolates, a lone surrogate) shown as \\xNN / \\uNNNN, as on a terminal, then
  html.escape; a raw ESC or U+202E from a result file never reaches a page.
"""

import csv
import io
import re

from suite import terminal as width

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_CONTROL_BUT_LAYOUT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]#|<>&~$])")      # "$": no math where a renderer has it (GitHub)
_MD_LINE_START = re.compile(r"^(\s*)(\d*)([-+=]|(?<=\d)[.)])(?=\s|$)")


def _show(match: re.Match) -> str:
    code = ord(match.group(0))
    if 0xDC80 <= code <= 0xDCFF:          # a file name's non-UTF-8 byte (surrogateescape): show the byte
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text) -> str:
    """One line of terminal text with every control character made visible."""
    return _CONTROL.sub(_show, str(text))


def terminal_lines(text) -> str:
    """Several lines: newlines kept, every other control character made visible, each line wrapped
    at suite.terminal.WIDTH columns."""
    return "\n".join(out for line in str(text).split("\n") for out in width.wrap(terminal(line)))


def visible(text) -> str:
    """`text` with every control character but tab and newline made visible (as `terminal` shows it)."""
    return _CONTROL_BUT_LAYOUT.sub(_show, str(text))


def html_text(text, quote: bool = True) -> str:
    """Text for HTML (element content or a quoted attribute): controls visible, then html.escape."""
    import html

    return html.escape(visible(text), quote=quote)


def csv_cell(value) -> str:
    """A text cell no spreadsheet runs as a formula."""
    text = str(value)
    if text and text[0] in "=+-@\t\r\n" and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_value(value) -> str:
    """One cell: "" for None, a float as Python writes it (repr: every digit), an int as it is, any
    other value as text; all through csv_cell but the int."""
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return csv_cell(repr(value) if isinstance(value, float) else value)     # "-inf" is no number to a spreadsheet


def csv_text(header: list, rows) -> str:
    """A whole CSV file (RFC 4180): the header, then each row (a list of values, through csv_value);
    read back by the csv module, pandas or pyarrow (newlines_in_values) as the same rows."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow([csv_cell(h) for h in header])
    w.writerows([csv_value(v) for v in row] for row in rows)
    return out.getvalue()


def markdown(text) -> str:
    """Inline Markdown text that renders as the characters given, never as markup or HTML."""
    flat = terminal(str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    return _MD_LINE_START.sub(r"\1\2\\\3", _MD_SPECIAL.sub(r"\\\1", flat))
