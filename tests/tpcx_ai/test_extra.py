"""suite/tpcx_ai/extra.py: a TPCx-AI run without the `tpcx-ai` extra is one line naming the install command."""

import sys

import pytest

from suite import cli
from suite.tpcx_ai import extra


def test_nothing_is_missing_in_the_test_venv():
    assert extra.missing() == []
    extra.require()


@pytest.mark.parametrize("module,dist", [("sklearn", "scikit-learn"), ("statsmodels", "statsmodels")])
def test_a_missing_library_is_one_line_exit_2_naming_the_extra(monkeypatch, capsys, tmp_path, module, dist):
    monkeypatch.setitem(sys.modules, module, None)      # what `import` and find_spec see when it is not installed
    assert extra.missing() == [dist]
    code = cli.main(["run", "--workload", "tpcx-ai", "--scale-factor", "0.01", "--results-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"{dist} not installed" in err and "pip install '.[tpcx-ai]'" in err
    assert not (tmp_path / "r").exists()
