"""Issue 46, item 1: a "$" in a name (run, system, host, workload) is drawn as a dollar sign, never
parsed as mathtext. "$x^2$" drew x squared; "run $^$" raised ValueError inside matplotlib, which
dropped every plot of a report ("Not plotted ... (ValueError)") and crashed `suite history trend
--out`. Real result trees renamed, the CLI as users call it; then the figures' own texts."""

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import paths
from suite.report import plots

RUN = paths.DATA / "suite-run" / "unet3d-h100"
CKPT = paths.DATA / "checkpoint" / "llama3-8b-miniature" / "R"
NAMES = ("$x^2$", "run $^$")            # valid mathtext, and mathtext that does not parse
HOST = "$x^2$ and $^$ on $"


def _named_runs(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(RUN, tree / "b")
    for old, new in zip(("run-1", "run-2"), NAMES):
        (tree / "b" / old).rename(tree / "b" / new)
    return tree


def test_a_report_of_runs_named_with_dollars_has_its_plots(run_cli, tmp_path):
    out = tmp_path / "out"
    code, _, err = run_cli("report", _named_runs(tmp_path), "--out", out)
    assert code == 0 and err == ""
    assert sorted(p.name for p in (out / "plots").iterdir()) == ["b1-epochs.png", "b1-runs.png"]
    assert all((out / "plots" / n).read_bytes().startswith(b"\x89PNG") for n in ("b1-epochs.png", "b1-runs.png"))
    page, md = (out / "index.html").read_text(), (out / "report.md").read_text()
    assert "Not plotted" not in page and "Not plotted" not in md
    for name in NAMES:                  # Markdown escapes "$" (no math on GitHub): it renders as given
        assert name in page and name.replace("$", "\\$") in md and "plots/b1-runs.png" in md


def _hosted(tmp_path: Path) -> Path:
    """The committed checkpointing result with its host named HOST (every file that names it)."""
    r = tmp_path / "R"
    shutil.copytree(CKPT, r)
    for f in r.rglob("*.json"):
        f.write_text(f.read_text().replace('"vm"', f'"{HOST}"'))
    return r


def test_history_trend_of_a_system_named_with_dollars_writes_its_page(run_cli, tmp_path):
    store = tmp_path / "h.sqlite"
    assert run_cli("history", "import", _hosted(tmp_path), "--history", store)[0] == 0
    code, out, err = run_cli("history", "trend", "--history", store, "--out", tmp_path / "page")
    assert code == 0 and "Traceback" not in err, err
    png = tmp_path / "page" / "plots" / "trend-1.png"
    assert png.is_file() and png.read_bytes().startswith(b"\x89PNG")
    page = (tmp_path / "page" / "index.html").read_text()
    assert HOST in page and HOST.replace("$", "\\$") in (tmp_path / "page" / "report.md").read_text()


def _drawn(text) -> tuple:
    """What matplotlib makes of a Text when it draws it: (string, is mathtext)."""
    return text._preprocess_math(text.get_text())


def test_every_text_of_a_figure_is_drawn_as_given():
    from suite.training.plots import storage_runs_figure

    runs = [{"name": n, "samples_per_second": 1.0 + i, "samples_per_second_stdev": 0.1, "au_mean_percentage": 95.0,
             "au_stdev_percentage": 1.0} for i, n in enumerate(NAMES)]
    fig = storage_runs_figure({"runs": runs, "overall": {"samples_per_second": 1.5}, "au_threshold_percentage": 90})
    fig.axes[0].set_title("$5 for $x^2$")
    fig.axes[0].legend(["$x^2$ mean"])
    assert plots._png(fig).startswith(b"\x89PNG")
    ticks = [_drawn(t) for t in fig.axes[0].get_xticklabels()]
    assert ticks == [(n, False) for n in NAMES]
    assert _drawn(fig.axes[0].title) == ("$5 for $x^2$", False)
    assert [_drawn(t) for t in fig.axes[0].get_legend().get_texts()] == [("$x^2$ mean", False)]


def test_a_log_axis_keeps_its_numbers():
    """Only text is made plain: a log axis's 10^2 stays mathtext (its formatter's own)."""
    fig, (ax,) = plots._figure()
    ax.plot([1, 1000], [1, 2])
    ax.set_xscale("log")
    ax.set_xlabel("$ per query")
    plots._png(fig)
    assert any(math for _, math in (_drawn(t) for t in ax.get_xticklabels() if t.get_text()))
    assert _drawn(ax.xaxis.label) == ("$ per query", False)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_plain_text_is_never_mathtext_and_shows_no_raw_control(text):
    from matplotlib.text import Text

    shown = plots.plain(text)
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", shown)
    assert _drawn(Text(text=shown))[1] is False
    if not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]", text):
        assert _drawn(Text(text=shown))[0] == text                  # drawn as the characters given


def test_every_plot_is_drawn_through_report_plots():
    """One place draws PNGs (suite.report.plots._png, which makes every text plain): no other savefig."""
    found = [str(p.relative_to(paths.REPO)) for p in (paths.REPO / "suite").rglob("*.py")
             if "savefig(" in p.read_text() and p.name != "plots.py"]
    assert found == []
    assert [p for p in (paths.REPO / "suite").rglob("plots.py") if "savefig(" in p.read_text()] == \
        [paths.REPO / "suite" / "report" / "plots.py"]
