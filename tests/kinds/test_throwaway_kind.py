"""A new benchmark kind is one folder plus one registry line (issue 35): tests/kinds/toyio/ is copied into a
copy of suite/ as suite/toyio/, the one line naming it is added to suite/kinds/registry.py, and the real
command line (a subprocess on that copy) lists, runs, checks, measures, reports and compares it — results
dirs and leaves alike. Nothing else in the copy differs from suite/ (compared file by file)."""

import filecmp
import json
import os
import shutil
import subprocess
import sys

import pytest

import paths

KIND_LINE = '    "suite.toyio.kind",\n'


def _copy_with_kind(dst):
    shutil.copytree(paths.REPO / "suite", dst / "suite", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(paths.TESTS / "kinds" / "toyio", dst / "suite" / "toyio",
                    ignore=shutil.ignore_patterns("__pycache__"))
    registry = dst / "suite" / "kinds" / "registry.py"
    lines = registry.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("KIND_MODULES"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(")"))
    lines.insert(end, KIND_LINE)                       # the registry line: the kinds' list, one module a line
    registry.write_text("".join(lines))


def _differences(a, b) -> list[str]:
    """Files that differ or exist on one side only, relative to the two suite/ roots."""
    out = []
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])

    def walk(c, rel):
        out.extend(f"{rel}{n}" for n in c.left_only + c.right_only + c.diff_files + c.funny_files)
        for name, sub in c.subdirs.items():
            walk(sub, f"{rel}{name}/")
    walk(cmp, "")
    return sorted(out)


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("throwaway")
    _copy_with_kind(root)
    return root


def _suite(copy, *argv, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(copy)}
    p = subprocess.run([sys.executable, "-m", "suite", *map(str, argv)], cwd=cwd or copy, env=env,
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_the_kind_is_its_folder_and_one_registry_line(copy):
    assert _differences(paths.REPO / "suite", copy / "suite") == ["kinds/registry.py", "toyio"]
    ours = (paths.REPO / "suite" / "kinds" / "registry.py").read_text().splitlines(keepends=True)
    theirs = (copy / "suite" / "kinds" / "registry.py").read_text().splitlines(keepends=True)
    added = list(theirs)
    added.remove(KIND_LINE)
    assert added == ours and len(theirs) == len(ours) + 1


def test_list_run_check_metrics_report_compare(copy, tmp_path):
    code, out, err = _suite(copy, "list", "workloads")
    assert code == 0 and "toyio-mini" in out, err
    r1, r2 = tmp_path / "R1", tmp_path / "R2"
    for r in (r1, r2):
        code, out, err = _suite(copy, "run", "--workload", "toyio-mini", "--toyio-files", 4, "--results-dir", r)
        assert code == 0 and "verdict: CLOSED" in out, (out, err)
    (leaf,) = (r1 / "toyio").iterdir()
    for path in (r1, leaf):                          # the results dir and the leaf alike
        code, out, err = _suite(copy, "check", path, "--format", "json")
        assert code == 0, (out, err)
        assert "toyio" in out and '"closed"' in out
        code, out, err = _suite(copy, "metrics", path, "--format", "json")
        assert code == 0 and "throughput_mib_s" in out, (out, err)
    code, out, err = _suite(copy, "report", r1, "--out", tmp_path / "page")
    assert code == 0, (out, err)
    assert "toyio" in (tmp_path / "page" / "index.html").read_text()
    code, out, err = _suite(copy, "compare", r1, r2, "--format", "json")
    assert code == 0, (out, err)
    assert "throughput_mib_s" in out


def test_a_forged_figure_is_caught_by_the_kinds_own_check(copy, tmp_path):
    r = tmp_path / "R"
    assert _suite(copy, "run", "--workload", "toyio-mini", "--toyio-files", 2, "--results-dir", r)[0] == 0
    (leaf,) = (r / "toyio").iterdir()
    doc = json.loads((leaf / "toyio_result.json").read_text())
    doc["throughput_mib_s"] *= 10
    (leaf / "toyio_result.json").write_text(json.dumps(doc))
    code, out, err = _suite(copy, "check", leaf)
    assert code == 1 and "toyio-rederived" in out, (out, err)


def test_without_its_line_the_kind_does_not_exist(tmp_path):
    shutil.copytree(paths.REPO / "suite", tmp_path / "suite", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(paths.TESTS / "kinds" / "toyio", tmp_path / "suite" / "toyio")
    code, out, err = _suite(tmp_path, "run", "--workload", "toyio-mini", "--results-dir", tmp_path / "R")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "toyio-mini" in err


def test_its_leaves_are_judged_alike_in_a_results_dir_alone_and_in_a_pooled_tree(copy, tmp_path):
    """One judgement wherever a result sits (issue 44), for a kind the suite never heard of: the same
    forged leaf where it was written, copied alone into another results dir, and inside a pooled v3.0 tree
    (closed/<Org>/results/<system>/toyio/), with no edit outside its folder; the tree adds only its own
    finding (the system description it lacks)."""
    r = tmp_path / "R"
    assert _suite(copy, "run", "--workload", "toyio-mini", "--toyio-files", 2, "--results-dir", r)[0] == 0
    (leaf,) = (r / "toyio").iterdir()
    doc = json.loads((leaf / "toyio_result.json").read_text())
    doc["throughput_mib_s"] *= 10
    (leaf / "toyio_result.json").write_text(json.dumps(doc))
    alone = tmp_path / "A"
    shutil.copytree(leaf, alone / "toyio" / leaf.name)
    tree = tmp_path / "T"
    shutil.copytree(leaf, tree / "closed" / "ACME" / "results" / "box1" / "toyio" / leaf.name)
    for where in (r, alone, tree):
        code, out, err = _suite(copy, "check", where, "--format", "json")
        assert code == 1 and "toyio-rederived" in out, (where, out, err)
        assert ("2.1.7-systemDescriptionPresent" in out) == (where == tree), (where, out)


def test_its_facts_and_its_engine_come_from_its_folder(copy):
    """toyio/facts.yaml joins the fact vocabulary and toyio/engines.py's engine `suite engine`'s list, by the one
    registry line alone (issue 44: each kind's facts and engine entry in its folder)."""
    code, out, err = _suite(copy, "engine", "list", "--format", "json")
    assert code == 0, err
    rows = {r["engine"]: r for r in json.loads(out)}
    assert list(rows)[:4] == ["suite", "dlio", "diskann", "milvus"]
    assert rows["toyio-reader"]["status"] == "not installed (suite engine install toyio-reader)"
    probe = ("import suite.kinds.registry\n"
             "from suite.rules import vocabulary\n"
             "vocabulary.check('toyio.passes', ('run',), 'probe')\n"
             "print(vocabulary.lookup('toyio.throughput_mib_s').unit)\n")
    p = subprocess.run([sys.executable, "-c", probe], cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)},
                       capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stdout) == (0, "MiB/s\n"), p.stderr
    bad = subprocess.run([sys.executable, "-c", probe.replace("toyio.passes", "toyio.nothing")], cwd=copy,
                         env={**os.environ, "PYTHONPATH": str(copy)}, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "probe: toyio.nothing: expected a fact declared" in bad.stderr
