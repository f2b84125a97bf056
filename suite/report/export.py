"""Exports of report tables: CSV (RFC 4180, header row) and parquet (pyarrow), written atomically."""

import os

from suite.files import write_atomic
from suite.report.escape import csv_text as csv_text_of


def csv_text(columns: list, rows: list[dict]) -> str:
    """The rows' `columns`, in order (suite.report.escape.csv_text: quoted, no formula runs)."""
    return csv_text_of(columns, [[row.get(k) for k in columns] for row in rows])


def _unicode(value):
    """Strings as valid Unicode: a file name's non-UTF-8 byte (a lone surrogate) becomes \\udcff."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def parquet_bytes(columns: list, rows: list[dict]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({k: pa.array([_unicode(r.get(k)) for r in rows]) for k in columns})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def write_report(page, out, generated_by: str) -> list:
    """index.html, report.md, plots/*.png, every table as CSV and parquet and the page's own files (plain
    names, its kind's escaping done), under `out` only."""
    from pathlib import Path

    from suite.report import html, markdown

    out = Path(out)
    written = []

    def put(rel, data):
        write_atomic(out / rel, data)
        os.chmod(out / rel, 0o644)   # a report is for reading, whatever the umask
        written.append(out / rel)

    put("index.html", html.render(page, generated_by))
    put("report.md", markdown.render(page, generated_by))
    for img in page.images():
        put(f"plots/{img.name}.png", img.png)
    for name, (columns, rows) in page.tables.items():
        put(f"{name}.csv", csv_text(columns, rows))
        put(f"{name}.parquet", parquet_bytes(columns, rows))
    for name, text in page.files.items():
        put(name, text)
    return written
