"""Results that lie by where they sit (issue 46, class 3), planted into real fixtures:

1. a published tree holding vector-database results only, with no systems/ and no code pool: the tree is
   the layout's (its system description is required whatever kinds lie below), the leaves the kind's;
2. another kind's result file dropped into one of our training runs: two claims on one directory, neither
   more specific; before, the other kind took the run and it vanished from the series (5 runs became 4).
"""

from __future__ import annotations

import re
import shutil

from suite import cli
import paths
from tests.ours3_builders import leaves, series

TTA = paths.DATA / "v3" / "vector_database_TTA"


def test_a_vector_database_only_tree_without_systems_is_not_closed(tmp_path, capsys):
    tree = tmp_path / "tree"
    shutil.copytree(TTA, tree)
    assert not (tree / "closed" / "TTA" / "systems").exists()
    for where in (tree, tree / "closed", tree / "closed" / "TTA"):       # the tree, a division, an organisation
        assert cli.main(["check", str(where)]) == 1
        out = capsys.readouterr().out
        assert "2.1.7-systemDescriptionPresent" in out and "closed/TTA/results/seahorse-storage" in out, out
        assert "vdb-run-count" in out                                     # the kind's own findings, still there
    (tree / "closed" / "TTA" / "systems").mkdir()                         # a system: still the kind's alone
    assert cli.main(["check", str(tree / "closed" / "TTA" / "results" / "seahorse-storage")]) == 1
    assert "2.1.7-systemDescriptionPresent" not in capsys.readouterr().out


def test_another_kinds_result_file_in_a_training_run_is_two_claims_not_a_vanished_run(tmp_path, capsys):
    root = series(tmp_path / "R")
    run = leaves(root)[2]
    shutil.copy(paths.DATA / "tpcxai-sf0.01" / "tpcxai-result.json", run)
    for cmd in (["check", str(root)], ["metrics", str(root)]):
        assert cli.main(cmd) == 2, cmd
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and run.name in err[0] and "training run" in err[0] and "tpcxai-result.json" in err[0], err
    (run / "tpcxai-result.json").unlink()
    assert cli.main(["metrics", str(root)]) == 0
    rows = [x for x in capsys.readouterr().out.splitlines() if re.match(r"\d{8}_\d{6}\s+complete", x)]
    assert len(rows) == 5 and run.name in "\n".join(rows)         # the five measured runs, this one among them
