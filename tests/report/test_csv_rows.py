"""Issue 46, item 2: a CR, a LF or another control character in a value never breaks a CSV the suite
writes (every one goes through suite.report.escape.csv_text: RFC 4180, CRLF between records, such a
field quoted). Before, runs.csv ended its records with a bare LF and left a lone CR unquoted: the csv
module read one run as two records and pandas / pyarrow read a broken row. Read back here with the
csv module, pandas and pyarrow: the same rows, formulas neutralised."""

import csv
import io
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import paths
from suite.report import escape, export
from suite.published import tables

RUN = paths.DATA / "suite-run" / "unet3d-h100"
RUN_NAMES = ("a\rb\x1b[2K\x07=c", "=x\r\ny\x85\u202e\x7f")        # a dir name holds no NUL: the property test does


def read_all_three(path: Path) -> list:
    """The file's rows (header first) as the csv module, pandas and pyarrow read them: one answer."""
    import pandas as pd
    import pyarrow.csv as pcsv

    with open(path, newline="", encoding="utf-8") as f:
        by_csv = list(csv.reader(f))
    header = by_csv[0]
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    by_pandas = [list(frame.columns), *frame.values.tolist()]
    table = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(newlines_in_values=True),
                          convert_options=pcsv.ConvertOptions(column_types={h: "string" for h in header},
                                                              strings_can_be_null=False))
    by_arrow = [table.column_names, *[[r[h] for h in header] for r in table.to_pylist()]]
    assert by_csv == by_pandas == by_arrow
    return by_csv


@pytest.fixture
def named(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(RUN, tree / "b")
    for old, new in zip(("run-1", "run-2"), RUN_NAMES):
        (tree / "b" / old).rename(tree / "b" / new)
    return tree


def test_runs_csv_of_runs_named_with_cr_lf_and_controls_reads_back_whole(run_cli, named, tmp_path):
    out = tmp_path / "out"
    assert run_cli("report", named, "--out", out)[0] == 0
    rows = read_all_three(out / "runs.csv")
    assert len(rows) == 3                                   # the header and one row per run, no more
    runs = sorted(r[rows[0].index("run")] for r in rows[1:])
    assert runs == sorted(["a\rb\x1b[2K\x07=c", "'=x\r\ny\x85\u202e\x7f"])
    assert all(r[rows[0].index("path")].endswith(r[rows[0].index("run")].lstrip("'")) for r in rows[1:])
    assert (out / "runs.csv").read_bytes().count(b"\r\n") >= 3          # RFC 4180 record ends


def test_published_results_csv_goes_through_the_same_writer():
    row = {c: None for c in tables.COLUMNS}
    row[tables.COLUMNS[0]] = "=cmd\r|x"
    row[tables.COLUMNS[1]] = 1.5
    text = tables.csv_text([row])
    got = list(csv.reader(io.StringIO(text, newline="")))
    assert got[0] == list(tables.COLUMNS) and got[1][:2] == ["'=cmd\r|x", "1.5"] and len(got) == 2


CELLS = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(CELLS, min_size=3, max_size=3), max_size=5))
def test_any_rows_round_trip_through_every_reader(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_bytes(export.csv_text(["a", "b", "c"], [dict(zip("abc", r)) for r in rows]).encode("utf-8"))
    got = read_all_three(path)
    assert got == [["a", "b", "c"], *[[escape.csv_value(v) for v in r] for r in rows]]
    for r in got[1:]:                        # no cell a spreadsheet runs, but numbers
        assert all(c[:1] not in ("=", "+", "-", "@", "\t", "\r", "\n") or escape._NUMBER.fullmatch(c) for c in r)
