"""suite.memo: what one command works out once, and nothing kept outside it (issue 47: `suite report` on
500 runs walked its tree four times and worked out each run's owner twice)."""

import pytest

from suite import memo

import paths


def test_kept_inside_held_only_and_an_error_is_not_kept():
    made = []

    def make():
        made.append(1)
        return len(made)

    assert memo.kept("k", make) == 1 and memo.kept("k", make) == 2          # outside: made every time
    with memo.held():
        assert memo.kept("k", make) == 3 and memo.kept("k", make) == 3
        with memo.held():                                                    # nested: the outer one's
            assert memo.kept("k", make) == 3
        assert memo.kept("other", make) == 4
        with pytest.raises(ZeroDivisionError):
            memo.kept("bad", lambda: 1 / 0)
        assert memo.kept("bad", lambda: "made again") == "made again"
    assert memo.kept("k", make) == 5                                         # the block's end forgets


def test_report_walks_its_input_once_and_a_changed_tree_is_read_again(run_cli, tmp_path, monkeypatch):
    """One `suite report` walks its input once for its results by owner, its figures and its check; the
    next command walks it again (a run added in between is in its page)."""
    import shutil

    from suite.layouts import walker

    src = tmp_path / "unet3d-h100"
    shutil.copytree(paths.DATA / "suite-run" / "unet3d-h100", src)
    walks = []
    real = walker._Walker.walk
    monkeypatch.setattr(walker._Walker, "walk", lambda self, d, depth=0: (walks.append(d) if depth == 0 else None,
                                                                         real(self, d, depth))[1])
    code, _, err = run_cli("report", src, "--out", tmp_path / "one")
    assert code == 0, err
    assert walks.count(src) == 1, walks
    runs = sorted(p.name for p in src.iterdir() if p.is_dir() and p.name.startswith("run"))
    shutil.copytree(src / runs[-1], src / "run-9")
    code, _, err = run_cli("report", src, "--out", tmp_path / "two")
    assert code == 0, err
    assert walks.count(src) == 2
    rows = [(tmp_path / out / "runs.csv").read_text().count("\n") for out in ("one", "two")]
    assert rows[1] == rows[0] + 1
